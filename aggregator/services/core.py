"""The aggregator service: the domain operations one server process offers, over one storage.

:class:`AggregatorService` wires the parts (mechanism catalog, collections, publishing,
ingestion, estimates, design jobs) to one storage and one :class:`ServiceEvents` sink. The HTTP
layer (rldp.aggregator.http) only decodes requests, calls these methods and encodes their
results or refusals.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from rldp.aggregator.storage import (
    CollectionRecord,
    IngestResult,
    JobRecord,
    MechanismRecord,
    Storage,
    StorageError,
    StoreFull,
)
from rldp.shared.collection import drift_policy
from rldp.shared.notions import NOTIONS

from .collections import Collections, check_policy
from .drift import DriftWatch
from .errors import DatabaseUnavailable, ServiceError
from .estimates import estimate, window_counts
from .events import ServiceEvents
from .ingest import AsyncCommit, CheckedBatch, Ingest, Receipt
from .jobs import DesignRunner
from .labels import check_label
from .mechanisms import MechanismCatalog
from .pauses import Pauses
from .pilots import auto_switch_body, pilot_switch, switch_policy
from .publish import publish_document
from .upload_credentials import UploadCredentials
from .watch import CollectionWatch

__all__ = ["AggregatorService", "WRITE_FAILURE_SECONDS"]

log = logging.getLogger("rldp.aggregator")

#: For how long a failed upload makes /readyz report the store unwritable (unless one succeeds).
WRITE_FAILURE_SECONDS = 10.0


class AggregatorService:
    """State shared by the requests of one server process: config, storage, caches, design jobs."""

    def __init__(self, config: Mapping[str, Any], storage: Storage, events: ServiceEvents | None = None) -> None:
        self.config = config
        self.storage = storage
        self.events = events or ServiceEvents()
        self.catalog = MechanismCatalog(storage)
        self.drift = DriftWatch(storage, self.catalog, self.events, self._drift_policy)
        self.collections = Collections(storage, self.catalog)
        self.pauses = Pauses(storage)
        self.upload_credentials = UploadCredentials(storage)
        self.watch = CollectionWatch(self.collections, self.catalog, self.drift, self._auto_switch)
        self.ingest = Ingest(
            storage,
            self.catalog,
            config["MAX_BATCH_REPORTS"],
            self.events,
            pauses=self.pauses,
            credentials=self.upload_credentials,
        )
        self.designs = DesignRunner(
            storage,
            self.publish_bytes,
            concurrency=config["DESIGN_CONCURRENCY"],
            timeout=config["DESIGN_TIMEOUT"],
            stale_seconds=config["JOB_STALE_SECONDS"],
            events=self.events,
            max_beta=config["MAX_BETA"],
        )
        self._write_failure: tuple[float, StorageError] | None = None  # (monotonic time, why) of the last failed upload

    def publish_bytes(self, body: bytes, kind: str, label: Any = None) -> tuple[MechanismRecord, bool]:
        """Validate, audit and store a document sent as ``kind`` ("json" or "msgpack"); (record, created).
        ``label``: the mechanism's label (checked before the document; set even when it was published before)."""
        text = check_label(label)
        record, created = publish_document(
            self.storage,
            body,
            kind,
            self.events,
            public_data=self.config["PUBLIC_DATA"],
            max_beta=self.config["MAX_BETA"],
        )
        if text is not None:
            record = self.catalog.set_label(record.id, text)
        return record, created

    def submit_reports(self, data: Any, maybe_bool: bool = True, *, authorization: str | None = None) -> Receipt:
        """Store one decoded report batch, blocking on :meth:`Storage.commit`; its receipt once committed.

        ``maybe_bool=False``: the encoded body holds no boolean (:meth:`~.ingest.Ingest.check`).
        ``authorization``: the upload's Authorization header, if any (a collection's upload credential)."""
        checked = self.ingest.check(data, maybe_bool=maybe_bool, authorization=authorization)
        del data
        try:
            result = self.storage.commit(checked.item)
        except StorageError as exc:  # e.g. the disk is full: /readyz says so for a while
            self._write_failure = (time.monotonic(), exc)
            raise
        return self._stored(checked, result)

    async def write_reports(
        self, data: Any, maybe_bool: bool = True, *, authorization: str | None = None, commit: AsyncCommit
    ) -> Receipt:
        """:meth:`submit_reports` on an event loop: check the batch, await ``commit`` (the writer
        process's group commit, or the storage's in a thread), return its receipt."""
        checked = self.ingest.check(data, maybe_bool=maybe_bool, authorization=authorization)
        del data  # not kept while the commit is awaited (see CheckedBatch)
        try:
            result = await commit(checked.item)
        except StorageError as exc:  # e.g. the disk is full: /readyz says so for a while
            self._write_failure = (time.monotonic(), exc)
            raise
        return self._stored(checked, result)

    def _stored(self, checked: CheckedBatch, result: IngestResult) -> Receipt:
        """The receipt of a committed batch (or its refusal: a conflict, a retired mechanism); tells the
        collection watch of new reports."""
        self._write_failure = None
        receipt = self.ingest.receipt(checked, result)
        if not receipt.duplicate:
            try:
                self.watch.observe(checked.mechanism, receipt.accepted)
            except (ServiceError, StorageError) as exc:  # the batch is stored: this is logged, not refused
                log.warning("collection watch: %s", getattr(exc, "detail", exc))
        return receipt

    def create_collection(self, data: Any) -> tuple[CollectionRecord, bool]:
        """Create a collection (:meth:`Collections.create`); an automatic switch (``policy.switch``) is
        checked first as a switch body would be (:func:`.pilots.switch_policy`)."""
        if isinstance(data, Mapping) and isinstance(data.get("policy"), Mapping) and "switch" in data["policy"]:
            switch_policy(check_policy(data["policy"]), self.config["MAX_BETA"])
        return self.collections.create(data)

    def _auto_switch(self, name: str) -> None:
        """The pilot of collection ``name`` has its ``policy.switch.after`` reports: start its switch."""
        body = auto_switch_body(self.collections.get(name).policy)
        try:
            job = self.switch_collection(name, body)
        except ServiceError as exc:
            log.warning("pilot switch: collection %s did not switch: %s", name, exc.detail)
        else:
            log.warning("pilot switch: collection %s has its pilot's reports; switching (job %s)", name, job.id)

    def estimate(self, mechanism_id: str, args: Mapping[str, str]) -> dict[str, Any]:
        """The estimate of a mechanism's input distribution (see :func:`estimates.estimate`)."""
        return estimate(self.storage, self.catalog, mechanism_id, args, self.drift, self.config["MIN_REPORTS"])

    def estimate_collection(self, name: Any, args: Mapping[str, str]) -> dict[str, Any]:
        """The estimate of a collection's input distribution (see :meth:`Collections.estimate`)."""
        return self.collections.estimate(name, args, self.config["MIN_REPORTS"])

    def refresh_drift(self) -> None:
        """Run the drift watch on every mechanism's reports (before a /metrics scrape; cached by report count)."""
        self.drift.refresh()

    def windows(self, mechanism_id: str) -> dict[str, Any]:
        """A mechanism's collection windows: ``{"mechanism", "collection": <length> | None,
        "windows": [{"window": label, "reports": n}, …]}``, most recent first (UnknownMechanism)."""
        record = self.catalog.get(mechanism_id)
        window = self.catalog.window(record.id)
        return {
            "mechanism": record.id,
            "collection": None if window is None else window.text,
            "windows": window_counts(self.storage, self.catalog, record),
        }

    def submit_design(self, data: Any) -> JobRecord:
        """Validate a decoded design request and start it as a job."""
        return self.designs.submit(data)

    def _drift_policy(self, record: MechanismRecord, drift: Mapping[str, Any]) -> None:
        """Apply the drift policy of every collection whose current mechanism drifted: ``warn`` (the
        default: the event and the banner only), ``pause`` (its reports are refused until the operator
        resumes the collection: :mod:`.pauses`) or ``redesign`` (a design job over the confidence set of
        the live reports, as after a pilot; clients follow the rotation).

        A redesign pauses the collection first: until a new mechanism is published and rotated to, the
        drifted mechanism's claim may not hold, so its reports are not taken. A redesign that cannot start
        or fails leaves the pause in force with the reason (the 423 problem, the dashboard's banner, the
        log and ``rldp_redesign_failures_total`` say it); "redesigned" is said only once a new mechanism is
        the collection's current one."""
        statement = str(drift.get("statement", "its population drifted"))
        for name in self.storage.collections_of(record.id):
            collection = self.collections.get(name)
            policy = drift_policy(collection.policy)
            if collection.current != record.id or collection.status != "active" or policy == "warn":
                continue
            if policy == "pause":
                if self.pauses.pause(name, record.id, statement):
                    log.warning("drift: collection %s is paused: %s", name, statement)
                continue
            self.pauses.pause(name, record.id, f"{statement}; redesigning over the live reports")
            try:
                method = NOTIONS[collection.policy["notion"]].recommended  # the notion's recommended designer
                job = self.switch_collection(
                    name,
                    {"method": method},
                    redesign=True,
                    failed=functools.partial(self._redesign_failed, name, record.id),
                )
            except ServiceError as exc:
                self._redesign_failed(name, record.id, exc.detail)
            else:
                log.warning(
                    "drift: collection %s is paused while a redesign over its live reports runs (job %s)", name, job.id
                )

    def _redesign_failed(self, name: str, drifted: str, why: str) -> None:
        """A drift redesign of collection ``name`` away from mechanism ``drifted`` published nothing: the pause
        of ``drifted`` stays, saying why. If the collection has moved on meanwhile (another redesign — another
        server process, or a second detection — rotated it), nothing is paused: the new mechanism is not the
        one that drifted."""
        record = self.collections.get(name)
        if record.current != drifted:
            log.warning(
                "drift: a redesign of collection %s ended without rotating, but it already moved on to %s: %s",
                name,
                record.current,
                why,
            )
            return
        reason = (
            f"its population drifted and the redesign failed ({why}); nothing new was published: rotate the "
            "collection to a mechanism designed by hand (rldp collection rotate), or resume it if the claim is "
            "judged fine"
        )
        self.pauses.replace_reason(name, drifted, reason)
        self.events.redesign_failed(name, why)
        log.warning("drift: collection %s could not be redesigned and stays paused: %s", name, why)

    def resume_collection(self, name: Any) -> CollectionRecord:
        """Lift a paused collection's pause: its current mechanism takes reports again (idempotent)."""
        record = self.collections.get(name)
        lifted = self.pauses.resume(record.name)
        if lifted:
            log.warning("collection %s resumed by its operator (%d pause(s) lifted)", record.name, lifted)
        return record

    def rotate_upload_token(self, name: Any) -> tuple[str, bool]:
        """A new upload token for collection ``name`` (returned once; see :mod:`.upload_credentials`) and
        whether the previous one stays valid until the next rotation or a revoke."""
        record = self.collections.get(name)
        token, previous = self.upload_credentials.rotate(record.name)
        log.warning("collection %s: upload token rotated by its operator", record.name)
        return token, previous

    def revoke_upload_token(self, name: Any) -> bool:
        """Drop collection ``name``'s upload credential (its uploads need no token again); whether it had one."""
        record = self.collections.get(name)
        revoked = self.upload_credentials.revoke(record.name)
        if revoked:
            log.warning("collection %s: upload token revoked by its operator", record.name)
        return revoked

    def switch_collection(
        self, name: Any, data: Any, *, redesign: bool = False, failed: Callable[[str], None] | None = None
    ) -> JobRecord:
        """End a collection's pilot: a design job over the pilot's confidence set, whose mechanism is
        published and made the collection's current one if it beats the pilot (:mod:`.pilots`).
        ``failed(reason)`` runs if the job ends without a rotation (a drift redesign keeps its pause)."""
        payload, summary = pilot_switch(
            self.collections, name, data, max_beta=self.config["MAX_BETA"], redesign=redesign
        )
        collection = summary["collection"]

        def rotate(record: MechanismRecord) -> None:  # only from the mechanism the switch was designed for
            self.collections.rotate(collection, {"mechanism": record.id}, expected=summary["pilot"])
            if redesign:
                log.warning(
                    "drift: collection %s is redesigned: its current mechanism is now %s", collection, record.id
                )

        return self.designs.start(payload, summary, rotate, failed)

    def design_status(self, job_id: str) -> JobRecord:
        """A design job's current state."""
        return self.designs.status(job_id)

    def ready(self) -> str:
        """The storage dialect if the database answers and can take writes; DatabaseUnavailable otherwise.

        Writable means: the store's own check passes (SQLite: free space on its disk) and no
        upload failed on this process in the last WRITE_FAILURE_SECONDS without one succeeding
        since — uploads learn that the disk is full from their failed commit, and so does /readyz.
        """
        try:
            self.storage.ping()
        except StorageError as exc:
            raise DatabaseUnavailable(f"the database does not answer: {exc}") from None
        try:
            self.storage.check_writable()
        except StoreFull:
            raise  # named as such: the problem store-full
        except StorageError as exc:
            raise DatabaseUnavailable(f"the store is not writable: {exc}") from None
        failure = self._write_failure
        if failure is not None and time.monotonic() - failure[0] < WRITE_FAILURE_SECONDS:
            kind = StoreFull if isinstance(failure[1], StoreFull) else DatabaseUnavailable
            raise kind(f"the store is not writable: the last upload failed ({failure[1]})")
        return self.storage.dialect

    def close(self) -> None:
        """Close the storage."""
        self.storage.close()
