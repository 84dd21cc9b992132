"""What the storage holds and returns: records, batch items, and its one error type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.errors import RldpError
from rldp.shared.reports import encode_batch

__all__ = ["StorageError", "StoreFull", "MechanismRecord", "IngestResult", "JobRecord", "BatchItem", "PRUNED", "LIVE"]

#: The encoding of a pruned batch's row, a tombstone kept for idempotency (:mod:`.retention`).
PRUNED = "pruned"
#: The SQL condition selecting the batches that still hold their reports.
LIVE = f"encoding <> '{PRUNED}'"


class StorageError(RldpError, RuntimeError):
    """The database could not be reached or failed; nothing is acknowledged."""


class StoreFull(StorageError):
    """The store has no space left (SQLITE_FULL, ENOSPC, PostgreSQL's disk_full 53100); nothing is acknowledged."""


@dataclass(frozen=True)
class MechanismRecord:
    """A published mechanism's metadata (the document itself is fetched separately)."""

    id: str
    method: str
    notion: str
    epsilon: float
    epsilon_audited: float | None
    sensitive: str
    released: tuple[str, ...]
    outputs: int
    size: int
    status: str  # "active" | "retired"
    published: float  # unix seconds
    retired: float | None = None
    label: str | None = None  # the operator's name for it: not in the document, not part of the id


@dataclass(frozen=True)
class IngestResult:
    """Outcome of storing one batch.

    ``status``: "accepted" (stored now), "duplicate" (the same batch was stored before),
    "conflict" (same id, different reports), "unknown" (no such mechanism), "retired".
    ``accepted`` is the number of reports the batch holds (stored now or before).
    """

    status: str
    accepted: int = 0


@dataclass(frozen=True)
class JobRecord:
    """A design job (see the service's /v1/designs)."""

    id: str
    status: str  # queued | running | done | failed
    params: dict[str, Any]
    mechanism: str | None
    error: str | None
    created: float
    started: float | None
    finished: float | None
    heartbeat: float


@dataclass(frozen=True, eq=False)
class BatchItem:
    """One batch ready to be committed: what :meth:`Storage.ingest_group` stores.

    ``digest``, ``encoding`` and ``payload`` are :func:`rldp.shared.reports.encode_batch`'s
    exact stored form of the ``n`` reports; ``counts`` their per-output counts (one entry per
    output of the mechanism the caller validated them against); ``window`` the label of the
    collection window they are counted in ('' when the mechanism has no windows).
    """

    mechanism: str
    batch: str
    n: int
    digest: bytes
    encoding: str
    payload: bytes
    counts: np.ndarray
    window: str = ""

    @classmethod
    def encode(cls, mechanism: str, batch: str, reports: np.ndarray, outputs: int, window: str = "") -> BatchItem:
        """The item for validated ``reports`` (ints in [0, outputs)) of ``mechanism`` in ``window``."""
        digest, encoding, payload, counts = encode_batch(reports, outputs)
        return cls(
            mechanism=mechanism,
            batch=batch,
            n=int(reports.size),
            digest=digest,
            encoding=encoding,
            payload=payload,
            counts=counts,
            window=window,
        )

    def row(self, received: float) -> tuple[Any, ...]:
        """Its rldp_batches row, in the order of :data:`~.schema.BATCH_COLUMNS`."""
        return (self.mechanism, self.batch, self.n, self.digest, self.encoding, self.payload, received, self.window)
