"""Ingesting a report batch: check it against its mechanism, store it once.

A batch is refused whole (nothing stored) when anything in it is wrong; the checks of its
form, window and reports are :func:`rldp.shared.reports.parse_batch`,
:func:`~rldp.shared.reports.check_window` and :func:`~rldp.shared.reports.check_reports`.
A batch of a mechanism that collects by window is counted in the window it is labelled
with. Storage makes a batch idempotent by (mechanism, batch id): a retry with the same
reports and window is answered as a duplicate, the same id with other reports or another
window is a conflict.

An upload is two calls around its commit: :meth:`Ingest.check` (the batch to commit, or its
refusal) and :meth:`Ingest.receipt` (the committed batch's receipt, or a conflict); the service's
``write_reports`` awaits the commit between them, ``submit_reports`` blocks on it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from rldp.aggregator.storage import BatchItem, IngestResult, Storage
from rldp.shared.reports import BatchError, check_reports, check_window, parse_batch

from .errors import BatchConflict, MechanismRetired, ServiceError, UnknownMechanism
from .events import ServiceEvents
from .mechanisms import MechanismCatalog
from .pauses import Pauses
from .upload_credentials import UploadCredentials

__all__ = ["AsyncCommit", "CheckedBatch", "Ingest", "Receipt"]

#: What an event loop awaits to commit one batch (the result of :meth:`Storage.commit`).
AsyncCommit = Callable[[BatchItem], Awaitable[IngestResult]]


@dataclass(frozen=True, slots=True)
class CheckedBatch:
    """A batch that passed its checks: what storage commits (``item``) and what its receipt names.

    Only the encoded item is kept, not the decoded batch (one object per report): with many uploads
    waiting for their commit, their lists would push the next decode out of the CPU's caches."""

    mechanism: str
    batch: str
    window: str
    item: BatchItem


@dataclass(frozen=True)
class Receipt:
    """A stored batch: its id, its number of reports, whether it had been stored before, and
    the window it is counted in ('' when its mechanism has no windows)."""

    batch: str
    accepted: int
    duplicate: bool
    window: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The answer's body; ``window`` only for a mechanism with windows."""
        out: dict[str, Any] = {"batch": self.batch, "accepted": self.accepted, "duplicate": self.duplicate}
        if self.window:
            out["window"] = self.window
        return out


class Ingest:
    """Validates report batches and hands them to storage; ``clock`` (Unix seconds) dates the
    windows a batch may claim (the current one, past ones, the next one)."""

    def __init__(
        self,
        storage: Storage,
        catalog: MechanismCatalog,
        max_reports: int,
        events: ServiceEvents | None = None,
        clock: Callable[[], float] = time.time,
        pauses: Pauses | None = None,
        credentials: UploadCredentials | None = None,
    ) -> None:
        self.storage = storage
        self.pauses = pauses
        self.credentials = credentials
        self.catalog = catalog
        self.max_reports = max_reports
        self.events = events or ServiceEvents()
        self.clock = clock

    def check(self, data: Any, *, maybe_bool: bool = True, authorization: str | None = None) -> CheckedBatch:
        """Check one decoded batch; the :class:`CheckedBatch` to commit (then :meth:`receipt`).

        ``maybe_bool=False``: the caller saw no boolean in the encoded body (see
        :func:`~rldp.shared.reports.check_reports`). ``authorization``: the upload's Authorization header
        (:mod:`.upload_credentials`: a collection may require an upload token). Raises a
        :class:`~rldp.shared.reports.BatchError` (window refusals included),
        :class:`UnknownMechanism`, :class:`~.errors.UploadCredentialRequired`,
        :class:`~.errors.CollectionPaused` or :class:`~.errors.MechanismWithdrawn` (:mod:`.pauses`).
        """
        mechanism_id, batch, values = parse_batch(data, self.max_reports)
        outputs = self.catalog.outputs(mechanism_id)  # UnknownMechanism unless published here
        try:
            if self.credentials is not None:  # the mechanism's collection may require an upload token
                self.credentials.check(mechanism_id, authorization)
            if self.pauses is not None:  # a collection's drift policy may have paused this mechanism
                self.pauses.check(mechanism_id)
            window = check_window(data, self.catalog.window(mechanism_id), self.clock())
            item = BatchItem.encode(
                mechanism_id, batch, check_reports(values, outputs, maybe_bool=maybe_bool), outputs, window
            )
        except (BatchError, ServiceError) as exc:
            self.events.batch_refused(mechanism_id, exc)
            raise
        return CheckedBatch(mechanism_id, batch, window, item)

    def receipt(self, checked: CheckedBatch, result: IngestResult) -> Receipt:
        """The :class:`Receipt` of a committed batch; :class:`BatchConflict` (the same batch id with other
        reports or another window), :class:`MechanismRetired` or :class:`UnknownMechanism` if refused."""
        try:
            return self._receipt(checked.mechanism, checked.batch, checked.window, result)
        except ServiceError as exc:
            self.events.batch_refused(checked.mechanism, exc)
            raise

    def _receipt(self, mechanism_id: str, batch: str, window: str, result: IngestResult) -> Receipt:
        if result.status == "accepted":
            self.events.batch_stored(result.accepted, mechanism_id)
            return Receipt(batch, result.accepted, False, window)
        if result.status == "duplicate":
            self.events.batch_duplicate()
            return Receipt(batch, result.accepted, True, window)
        if result.status == "conflict":
            raise BatchConflict(
                f"batch {batch!r} was already stored for this mechanism with different reports or in another "
                "window; use a new batch id for new reports (a retry must resend the same reports and window)",
                batch=batch,
            )
        if result.status == "retired":
            raise MechanismRetired(
                f"mechanism {mechanism_id} is retired and accepts no more reports; "
                "fetch the current mechanism list (GET /v1/mechanisms)",
                mechanism=mechanism_id,
            )
        raise UnknownMechanism(f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)
