"""The HTTP client: fetch and verify mechanisms, privatise, upload with retries and a queue.

    client = Client("https://agg.example", timeout=10)   # memoises in the user's data folder
    receipt = client.collection("app-usage").submit(record)  # its current mechanism, verified
    mech = client.mechanism(mechanism_id)          # downloaded, id checked, audited (cached)
    receipt = client.submit(mechanism_id, records, owners=user_ids)  # privatise (memoised) + upload

Retries and the mapping of answers to errors are the transport's (:mod:`.transport`):
transient failures are retried with backoff, POST included (uploads are idempotent by
batch id); any other 4xx is permanent: :class:`ProblemError`. Verification rules live in
:mod:`.policy`; reporting over time (memo, budget, windows) in :mod:`.reporting`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import requests

from rldp.shared.document import DocumentError, from_json, from_msgpack
from rldp.shared.errors import ValidationError

from .budget import DEFAULT_BUDGET, PrivacyBudget, budget_for
from .collections import Collection
from .defaults import DEFAULT_STATE, DefaultState, default_state_path, require_owners
from .doc_cache import DocumentCache, cache_folder
from .errors import MechanismRejected, ProblemError, ServiceUnavailable
from .ids import full_mechanism_id
from .ledger import PreparedBatch, outbox_pending, outbox_remove, release_batch
from .mechanism import Mechanism
from .policy import VerificationPolicy
from .queue import DEFAULT_LIMIT_BYTES, OfflineQueue
from .reads import MSGPACK, ReadCalls
from .receipt import Receipt
from .reporting import Reporter, make_batches
from .sampling import RandomSource
from .state import StateFile
from .transport import Transport, check_not_a_page, json_object

__all__ = ["Client", "Receipt", "DEFAULT_BATCH_SIZE", "DEFAULT_RETRIES"]

DEFAULT_BATCH_SIZE = 10_000
#: Attempts after the first for a transient failure (connection error, 429, 5xx).
DEFAULT_RETRIES = 5


class Client(ReadCalls):
    """A client of one rldp aggregator (thread-safe; reuse it).

    ``timeout``: seconds per HTTP attempt (connect and read). ``retries``: attempts after the first for transient
    failures; ``backoff_factor``: the exponential backoff base (seconds; sleeps ≈ factor·2^k plus up to
    ``backoff_factor`` of jitter, at most ``backoff_max``). ``token``: bearer token for the reads that need one
    (estimate, windows: a read token); ``upload_token``: the collection's upload token (sent as ``Authorization: Bearer`` on report
    uploads only), if its operator requires one. ``queue_path``: keep batches that could not be sent in this SQLite
    file (bounded by ``queue_limit_bytes``) and send them with :meth:`flush`. ``rng``: the random source for
    privatisation (default: the OS CSPRNG).

    What the app accepts (:class:`~rldp.client.policy.VerificationPolicy`): ``pinned``, the only mechanism ids it
    uses; ``max_epsilon``, refuse a larger claimed ε; ``min_radius`` and ``max_public_n``, refuse a confidence set
    smaller than the app accepts.

    Reporting over time (:mod:`.reporting`): ``state_path``, a private SQLite file (created with mode 0600) holding
    each record's memoised Y, the ledger of windows reported and windowed batches not yet acknowledged — by default
    in the user's data folder (:mod:`.defaults`); ``state_path=None`` turns memoisation off. ``privacy_budget``: ε
    of new draws per owner per period and in all (default :data:`~.budget.DEFAULT_BUDGET` with a state file, 4 nats
    a day and 4 in all; None: none); ``clock``, Unix seconds now (windows, periods).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        retries: int = DEFAULT_RETRIES,
        backoff_factor: float = 0.5,
        backoff_max: float = 30.0,
        token: str | None = None,
        upload_token: str | None = None,
        queue_path: str | os.PathLike[str] | None = None,
        queue_limit_bytes: int = DEFAULT_LIMIT_BYTES,
        rng: RandomSource | None = None,
        max_epsilon: float | None = None,
        pinned: Iterable[str] | None = None,
        min_radius: float | None = None,
        max_public_n: int | None = None,
        state_path: str | os.PathLike[str] | DefaultState | None = DEFAULT_STATE,
        privacy_budget: PrivacyBudget | None = DEFAULT_BUDGET,
        clock: Callable[[], float] = time.time,
        session: requests.Session | None = None,
    ) -> None:
        self.policy = VerificationPolicy(max_epsilon, pinned, min_radius, max_public_n)
        privacy_budget = budget_for(privacy_budget, state_path is not None)
        if isinstance(state_path, DefaultState):
            state_path = default_state_path()
        self._http = Transport(
            url,
            timeout=timeout,
            retries=retries,
            backoff_factor=backoff_factor,
            backoff_max=backoff_max,
            token=token,
            upload_token=upload_token,
            session=session,
        )
        self.url = self._http.url
        self.timeout = self._http.timeout
        self.rng = rng
        self._mechanisms: dict[str, Mechanism] = {}
        self._lock = threading.Lock()
        self.state = StateFile(state_path) if state_path is not None else None
        self.reporter = Reporter(self.state, privacy_budget, clock) if self.state is not None else None
        self.queue = OfflineQueue(queue_path, queue_limit_bytes) if queue_path is not None else None
        # verified documents next to the queue: an app that starts offline can still queue reports
        self.documents = DocumentCache(cache_folder(queue_path)) if queue_path is not None else None

    @property
    def max_epsilon(self) -> float | None:
        """The ε ceiling of :attr:`policy` (assigning it replaces the ceiling)."""
        return self.policy.max_epsilon

    @max_epsilon.setter
    def max_epsilon(self, value: float | None) -> None:
        p = self.policy
        self.policy = VerificationPolicy(value, p.pinned, p.min_radius, p.max_public_n, p.beta, p.max_beta)

    def close(self) -> None:
        """Close the HTTP session, the queue and the state file."""
        self._http.close()
        if self.queue is not None:
            self.queue.close()
        if self.state is not None:
            self.state.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- mechanisms
    def mechanism(self, mechanism_id: str, *, max_epsilon: float | None = None) -> Mechanism:
        """Download (msgpack), verify (content id, policy, privacy audit) and cache a mechanism.

        ``max_epsilon`` tightens the client's ceiling for this call. Raises
        :class:`MechanismRejected` for a mechanism that fails verification or the policy (an id
        outside ``pinned`` is refused before anything is downloaded) and :class:`ProblemError`
        (404 unknown-mechanism) for an unknown id.
        """
        if not isinstance(mechanism_id, str) or not mechanism_id:
            raise ValueError(f"mechanism id must be a non-empty string; got {mechanism_id!r}")
        mechanism_id = self._full_id(mechanism_id)
        policy = self.policy.with_max_epsilon(max_epsilon)
        policy.check_id(mechanism_id)
        with self._lock:
            cached = self._mechanisms.get(mechanism_id)
        if cached is None:
            cached = self._from_disk(mechanism_id, policy) or self._download(mechanism_id, policy)
            with self._lock:
                self._mechanisms[mechanism_id] = cached
        policy.check(cached.document, mechanism_id)  # the policy may have changed since it was cached
        return cached

    def _full_id(self, given: str) -> str:
        # A prefix (as every rldp command takes): a verified mechanism's, else the catalogue's one.
        with self._lock:
            mine = [i for i in self._mechanisms if i.startswith(given.strip().lower())]
        return full_mechanism_id(given, mine, lambda: [m["id"] for m in self.mechanisms()])

    def _download(self, mechanism_id: str, policy: VerificationPolicy) -> Mechanism:
        resp = self._http.request(
            "GET", f"/v1/mechanisms/{requests.utils.quote(mechanism_id, safe='')}", headers={"Accept": MSGPACK}
        )
        check_not_a_page(resp)
        try:
            if resp.headers.get("Content-Type", "").split(";")[0].strip() == MSGPACK:
                doc = from_msgpack(resp.content)
            else:
                doc = from_json(resp.content)
        except DocumentError as exc:
            raise MechanismRejected(mechanism_id, f"invalid or tampered document: {exc}") from None
        mech = Mechanism.from_document(doc, expected_id=mechanism_id, policy=policy)
        if self.documents is not None:
            self.documents.store(mech.document)
        return mech

    def _from_disk(self, mechanism_id: str, policy: VerificationPolicy) -> Mechanism | None:
        """The cached document, verified in full again; a file that fails is refused and removed."""
        if self.documents is None:
            return None
        try:
            doc = self.documents.load(mechanism_id)
            return None if doc is None else Mechanism.from_document(doc, expected_id=mechanism_id, policy=policy)
        except (DocumentError, MechanismRejected) as exc:
            self.documents.discard(mechanism_id)
            raise MechanismRejected(
                mechanism_id, f"the cached document in {self.documents.folder} was refused ({exc}); it was removed"
            ) from None

    def collection(self, name: str) -> Collection:
        """The collection ``name``, followed: each submit uses its current mechanism (:mod:`.collections`)."""
        return Collection(self, name)

    # -- privatisation
    def privatize(
        self, mechanism_id: str, records: Any, *, owners: Any = None, rng: RandomSource | None = None
    ) -> np.ndarray:
        """Privatise records with a verified mechanism: one output y per record, in order.

        With ``state_path`` the output is memoised per (owner, randomiser, record value) and new
        draws spend the privacy budget; without, every call draws afresh. With a per-report
        layer each output is a fresh y' ~ R(·|y) of the memoised y. ``owners``: see
        :meth:`submit`. Nothing is sent.
        """
        mech = self.mechanism(mechanism_id)
        return self._privatize_x(mech, mech.alphabet.encode(records), owners, rng)

    def privatize_indices(
        self, mechanism_id: str, x: Any, *, owners: Any = None, rng: RandomSource | None = None
    ) -> np.ndarray:
        """:meth:`privatize` for records already encoded as indices x = s·|U| + u."""
        mech = self.mechanism(mechanism_id)
        xs = np.asarray(x).reshape(-1)
        if xs.size and xs.dtype.kind not in "iu":
            raise ValueError(f"record indices must be integers in [0, {mech.size}); got dtype {xs.dtype}")
        return self._privatize_x(mech, xs.astype(np.int64, copy=False), owners, rng)  # range: checked there

    def _privatize_x(self, mech: Mechanism, x: np.ndarray, owners: Any, rng: RandomSource | None) -> np.ndarray:
        rng = rng if rng is not None else self.rng
        if self.reporter is None:
            self._stateless(mech, owners)
            return mech.privatize_indices(x, rng)
        return self.reporter.privatize(mech, x, owners, rng)

    def _stateless(self, mech: Mechanism, owners: Any) -> None:
        if owners is not None:
            raise ValidationError("owners= needs a state file (the default; this client has state_path=None)")
        if mech.window is not None:
            raise ValidationError(
                f"mechanism {mech.id} collects at most one report per owner per {mech.window.text} window; the "
                "client must remember what it sent in a state file (the default; this client has state_path=None)"
            )

    # -- uploads
    def submit(
        self,
        mechanism_id: str,
        records: Any,
        *,
        owners: Any = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        rng: RandomSource | None = None,
    ) -> Receipt:
        """Privatise ``records`` with the (verified) mechanism and upload them in batches.

        ``owners``: whose record each one is — None (one record: the device owner's), one
        string for all, or one string (or integer) per record; needs a state file. With one,
        every (owner, mechanism, record value) sends its memoised Y, and several records
        without owners are refused (:class:`~rldp.client.defaults.OwnersRequired`). For a
        mechanism with a collection window only each owner's first record is sent, and only
        if the owner has not reported in the current window (the others count in
        ``receipt.skipped``); batches carry ``"window"`` and are committed to the state file
        first, so batches left unsent by a crash or an outage are sent again (same batch id)
        by the next submit or :meth:`flush`.

        Each batch gets a fresh batch id (uuid4). Transient failures are retried (see the
        module doc); if they persist, the unsent batches go to the offline queue when there
        is one (``receipt.queued``), else :class:`ServiceUnavailable` is raised with
        ``exc.receipt`` telling what was accepted (``queued``: windowed reports kept in the
        state file). A permanent refusal raises :class:`ProblemError` (also with
        ``exc.receipt``). A call that would exceed the privacy budget raises
        :class:`~rldp.client.PrivacyBudgetExceeded` and sends nothing.
        """
        if isinstance(batch_size, bool) or int(batch_size) < 1:
            raise ValueError(f"batch_size must be ≥ 1; got {batch_size!r}")
        mech = self.mechanism(mechanism_id)
        x = mech.alphabet.encode(records)
        require_owners(int(x.size), owners, self.reporter is not None, windowed=mech.window is not None)
        rng = rng if rng is not None else self.rng
        if self.reporter is None:
            self._stateless(mech, owners)
            return self._send_all(make_batches(mech.id, mech.privatize_indices(x, rng), int(batch_size), None))
        prepared = self.reporter.prepare(mech, x, owners, rng, int(batch_size))
        if prepared.window is None:
            return self._send_all(prepared.batches)
        assert self.state is not None
        with self.state.read() as conn:  # this call's batches, and any a crash or an outage left behind
            pending = outbox_pending(conn, mech.id)
        return self._send_all(pending, skipped=prepared.skipped, window=prepared.window)

    def submit_reports(
        self, mechanism_id: str, reports: Any, *, batch_size: int = DEFAULT_BATCH_SIZE, window: str | None = None
    ) -> Receipt:
        """Upload outputs already privatised (no memo, no window ledger: see :meth:`submit`); ``window``: their
        collection window's label (now: ``mech.window.label_at(time.time())``) if the mechanism has windows."""
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be ≥ 1; got {batch_size!r}")
        ys = np.asarray(reports)
        if ys.ndim != 1 or (ys.size and ys.dtype.kind not in "iu"):
            raise ValueError("reports must be a 1-D array of integer outputs")
        batches = make_batches(self._full_id(mechanism_id), ys, int(batch_size), window)
        return self._send_all([b._replace(window="") for b in batches], window=window)  # "": not in the outbox

    def _post_batch(self, body: bytes) -> dict[str, Any]:
        return json_object(self._http.post_reports(body, MSGPACK))

    def _settled(self, item: PreparedBatch, refused: bool = False) -> None:
        """A windowed batch left the outbox: acknowledged or queued, or refused for good (ledger released)."""
        if self.state is None or not (refused or item.window):
            return
        with self.state.write() as conn:
            if refused:
                release_batch(conn, item.batch, item.mechanism, item.window)
            elif item.window:
                outbox_remove(conn, item.batch)

    def _send_all(self, batches: list[PreparedBatch], *, skipped: int = 0, window: str | None = None) -> Receipt:
        accepted = n_batches = duplicates = queued = dropped = 0
        ids: list[str] = []

        def receipt() -> Receipt:
            return Receipt(
                accepted, n_batches, duplicates, queued, dropped, batch_ids=tuple(ids), skipped=skipped, window=window
            )

        for i, item in enumerate(batches):
            try:
                answer = self._post_batch(item.body)
            except ServiceUnavailable as exc:
                if self.queue is None:
                    queued = sum(rest.n for rest in batches[i:] if rest.window)  # kept in the state file's outbox
                    exc.receipt = receipt()
                    raise
                for rest in batches[i:]:  # the server is down: queue the rest at once
                    _, lost = self.queue.put(rest.mechanism, rest.batch, rest.n, rest.body)
                    dropped += lost
                    self._settled(rest)
                # what is still queued: a later batch of this submit may have evicted an earlier one
                queued = self.queue.held([rest.batch for rest in batches[i:]])
                return receipt()
            except ProblemError as exc:
                self._settled(item, refused=True)
                exc.receipt = receipt()
                raise
            self._settled(item)
            accepted += int(answer.get("accepted", item.n))
            n_batches += 1
            duplicates += bool(answer.get("duplicate"))
            ids.append(item.batch)
        return receipt()

    def flush(self) -> Receipt:
        """Send what is waiting: windowed batches in the state file, then the offline queue (oldest first).

        Every batch keeps its original batch id (a batch the server already has is answered
        as a duplicate). Stops at the first transient failure (the rest stay). A batch the
        server refuses for good (e.g. its mechanism was retired) is removed and counted in
        ``rejected`` with its reason in ``problems``.
        """
        accepted = n_batches = duplicates = rejected = 0
        ids: list[str] = []
        problems: list[str] = []
        pending: list[tuple[PreparedBatch, int | None]] = []
        if self.state is not None:
            with self.state.read() as conn:
                pending += [(item, None) for item in outbox_pending(conn)]
        if self.queue is not None:
            pending += [(PreparedBatch(q.batch, q.mechanism, "", q.n, q.body), q.seq) for q in self.queue.pending()]
        for item, seq in pending:
            try:
                answer = self._post_batch(item.body)
            except ServiceUnavailable:
                break
            except ProblemError as exc:
                self._settled(item, refused=True)
                if seq is not None and self.queue is not None:
                    self.queue.remove(seq)
                rejected += item.n
                problems.append(f"batch {item.batch}: {exc.reason}: {exc.detail}")
                continue
            self._settled(item)
            if seq is not None and self.queue is not None:
                self.queue.remove(seq)
            accepted += int(answer.get("accepted", item.n))
            n_batches += 1
            duplicates += bool(answer.get("duplicate"))
            ids.append(item.batch)
        still = self.queue.stats()["pending_reports"] if self.queue is not None else 0
        if self.state is not None:
            with self.state.read() as conn:
                still += sum(item.n for item in outbox_pending(conn))
        return Receipt(accepted, n_batches, duplicates, still, 0, rejected, tuple(ids), tuple(problems))
