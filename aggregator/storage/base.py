"""The storage interface: :class:`Storage` (the statements both backends share), :class:`GroupSink`."""

from __future__ import annotations

import errno
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

from rldp.shared.errors import ValidationError, one_line
from rldp.shared.reports import batch_counts

from .collections import CollectionStore
from .group_commit import GroupCommitter
from .labels import LabelStore, mechanism_record
from .rows import LIVE, BatchItem, IngestResult, JobRecord, MechanismRecord, StorageError, StoreFull
from .schema import BATCH_COLUMNS, BATCH_WIDTH, JOB_COLUMNS, MECHANISM_COLUMNS, upgrade_schema, values
from .telemetry import database_error
from .upload_credentials import UploadCredentialStore

__all__ = ["GroupSink", "Storage"]


class GroupSink(Protocol):
    """Where a storage hands its report batches instead of committing them itself.

    :class:`rldp.aggregator.writer.WriterClient` (the client of a SQLite store's writer
    process) is one. ``submit`` returns only once the batch is committed (or raises
    :class:`StorageError`: nothing acknowledged); ``ping`` raises StorageError unless the
    sink answers; ``close`` releases its connections (the storage closes its sink).
    """

    def submit(self, item: BatchItem) -> IngestResult: ...

    def ping(self) -> None: ...

    def close(self) -> None: ...


class Storage(CollectionStore, LabelStore, UploadCredentialStore, ABC):
    """Mechanisms, batches, counts, jobs, collections (:class:`~.collections.CollectionStore`). Thread-safe; open
    one per process. Every method raises :class:`StorageError` when the backend is unavailable. With a
    ``sink``, :meth:`ingest` hands each batch to it; else batches are committed here, by group commit.
    """

    dialect: str = ""
    blob_type: str = "BLOB"

    def __init__(self, url: str, sink: GroupSink | None = None) -> None:
        self.url = url
        self._committer = GroupCommitter(self)
        self._sink = sink
        self._shard = 0

    # -- to implement per backend
    @abstractmethod
    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A connection for one request's statements (autocommit unless in _transaction)."""

    @abstractmethod
    @contextmanager
    def _transaction(self, conn: Any) -> Iterator[Any]:
        """A write transaction on ``conn``."""

    @abstractmethod
    def _upsert_counts(self, conn: Any, mechanism: str, window: str, counts: np.ndarray) -> None:
        """Add ``counts`` (one per output) to the stored totals of ``window`` ('' for none)."""

    @abstractmethod
    def _errors(self) -> tuple[type[BaseException], ...]:
        """The backend's exception types that mean 'storage failed'."""

    def _full(self, exc: BaseException) -> bool:
        """Whether the backend's error ``exc`` says the store has no space left (by its code, not its text)."""
        return False

    def _sql(self, text: str) -> str:
        return text

    # -- schema, connections
    def init_schema(self) -> None:
        """Create the tables if missing and migrate a store of an older schema version to
        :data:`SCHEMA_VERSION` (:func:`.schema.migrations`), in one transaction (idempotent;
        safe from several processes at once: the first migrates, the others see it done)."""
        with self.write_transaction() as conn:
            self._lock_schema(conn)
            upgrade_schema(conn, self._sql, self.blob_type)

    def _lock_schema(self, conn: Any) -> None:
        """Serialise concurrent schema creation (PostgreSQL; SQLite's write lock suffices)."""

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except StorageError:
            raise
        except self._errors() as exc:
            database_error(self.dialect)
            if self._full(exc) or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC):
                raise StoreFull(
                    f"{self.dialect}: the store is full (no space left on its disk): {one_line(exc)}"
                ) from exc
            raise StorageError(f"{self.dialect} error: {one_line(exc)}") from exc

    @contextmanager
    def write_transaction(self) -> Iterator[Any]:
        """A write transaction: committed when the block ends, rolled back if it raises (StorageError)."""
        with self._guard(), self._connection() as conn, self._transaction(conn):
            yield conn

    def ping(self) -> None:
        """Raise StorageError unless the database (and the sink, if any) answers (/readyz)."""
        with self._guard(), self._connection() as conn:
            conn.execute("SELECT COUNT(*) FROM rldp_meta").fetchone()
        if self._sink is not None:
            self._sink.ping()

    def check_writable(self) -> None:
        """Raise StorageError if the store cannot take writes now (/readyz); backends override it."""
        return None

    def close(self) -> None:
        """Close connections (and the sink's)."""
        if self._sink is not None:
            self._sink.close()

    # -- mechanisms
    def publish(self, record: MechanismRecord, document: bytes) -> tuple[bool, MechanismRecord]:
        """Store a mechanism (msgpack document) unless its id exists; (created, stored record)."""
        with self.write_transaction() as conn:
            cur = conn.execute(
                self._sql(
                    "INSERT INTO rldp_mechanisms (id, method, notion, epsilon, epsilon_audited, sensitive, released,"
                    " outputs, size, status, published, retired, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (id) DO NOTHING"
                ),
                (
                    record.id,
                    record.method,
                    record.notion,
                    record.epsilon,
                    record.epsilon_audited,
                    record.sensitive,
                    json.dumps(list(record.released)),
                    record.outputs,
                    record.size,
                    record.status,
                    record.published,
                    record.retired,
                    document,
                ),
            )
            created = cur.rowcount == 1
            stored = self._get_mechanism(conn, record.id)
        assert stored is not None
        return created, stored

    _record = staticmethod(mechanism_record)

    def _get_mechanism(self, conn: Any, mechanism_id: str) -> MechanismRecord | None:
        row = conn.execute(
            self._sql(f"SELECT {MECHANISM_COLUMNS} FROM rldp_mechanisms WHERE id = ?"), (mechanism_id,)
        ).fetchone()
        return None if row is None else self._record(row)

    def get_mechanism(self, mechanism_id: str) -> MechanismRecord | None:
        """Metadata of one mechanism, or None."""
        with self._guard(), self._connection() as conn:
            return self._get_mechanism(conn, mechanism_id)

    def get_document(self, mechanism_id: str) -> bytes | None:
        """The stored msgpack document, or None."""
        with self._guard(), self._connection() as conn:
            row = conn.execute(
                self._sql("SELECT document FROM rldp_mechanisms WHERE id = ?"), (mechanism_id,)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def list_mechanisms(self) -> list[MechanismRecord]:
        """Every mechanism, oldest first."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(f"SELECT {MECHANISM_COLUMNS} FROM rldp_mechanisms ORDER BY published, id").fetchall()
        return [self._record(r) for r in rows]

    def retire(self, mechanism_id: str) -> MechanismRecord | None:
        """Mark a mechanism retired (idempotent); None if unknown."""
        with self.write_transaction() as conn:
            conn.execute(
                self._sql(
                    "UPDATE rldp_mechanisms SET status = 'retired', retired = ? WHERE id = ? AND status <> 'retired'"
                ),
                (time.time(), mechanism_id),
            )
            return self._get_mechanism(conn, mechanism_id)

    # -- reports
    def ingest(self, mechanism: str, batch: str, reports: np.ndarray, outputs: int, window: str = "") -> IngestResult:
        """Store a batch of validated reports (ints in [0, outputs)) and add them to the counts
        of its collection ``window`` (a validated label; '' when the mechanism has none).

        Idempotent by (mechanism, batch): returns "duplicate" for the same reports and window
        under a known id, "conflict" for other reports or another window. Returns only after
        the transaction has committed (see "Durability" in :mod:`rldp.aggregator.storage`).
        """
        return self.commit(BatchItem.encode(mechanism, batch, reports, outputs, window))

    def commit(self, item: BatchItem) -> IngestResult:
        """Store one encoded batch (:meth:`ingest`'s second half): through the sink when the
        storage has one (the writer process), else by this process's group commit."""
        return (self._sink or self._committer).submit(item)

    def ingest_group(self, conn: Any, items: Sequence[BatchItem]) -> list[IngestResult]:
        """Store a group of batches inside the write transaction ``conn`` of
        :meth:`write_transaction` (one result each, in order; the same answers as one
        :meth:`ingest` each, a second copy of a batch new in this group being a duplicate).

        Multi-row statements: a group costs a fixed handful of statements, not one per batch. Under
        the write lock every statement also costs a round trip through the GIL (the driver releases
        it around each step); under load that wait, not SQL, dominated the time the lock was held.
        """
        if not items:
            return []
        results: list[IngestResult | None] = [None] * len(items)
        ids = list(dict.fromkeys(item.mechanism for item in items))
        rows = conn.execute(
            self._sql(f"SELECT id, outputs, status FROM rldp_mechanisms WHERE id IN ({', '.join('?' * len(ids))})"), ids
        ).fetchall()
        mechanisms = {row[0]: (int(row[1]), row[2]) for row in rows}
        candidates: list[int] = []
        for i, item in enumerate(items):
            mech = mechanisms.get(item.mechanism)
            if mech is None:
                results[i] = IngestResult("unknown")
            elif mech[1] != "active":
                results[i] = IngestResult("retired")
            elif item.counts.size != mech[0]:  # the caller validated against another mechanism
                raise StorageError(
                    f"batch {item.batch}: counted over {item.counts.size} outputs, mechanism has {mech[0]}"
                )
            else:
                candidates.append(i)
        now = time.time()
        inserted = self._insert_batches(conn, [items[i] for i in candidates], now)
        totals: dict[tuple[str, str], np.ndarray] = {}
        lookup = self._sql("SELECT n, digest, window_label FROM rldp_batches WHERE mechanism = ? AND batch = ?")
        for i in candidates:
            item = items[i]
            key = (item.mechanism, item.batch)
            if key in inserted:
                inserted.discard(key)  # a second copy of the same batch in this group is a duplicate
                acc = totals.get((item.mechanism, item.window))
                totals[item.mechanism, item.window] = item.counts.copy() if acc is None else acc + item.counts
                results[i] = IngestResult("accepted", item.n)
                continue
            row = conn.execute(lookup, key).fetchone()
            same = row is not None and bytes(row[1]) == item.digest and int(row[0]) == item.n and row[2] == item.window
            results[i] = IngestResult("duplicate", item.n) if same else IngestResult("conflict")
        for (mechanism, window), counts in sorted(totals.items(), key=lambda kv: kv[0]):
            self._upsert_counts(conn, mechanism, window, counts)
        return results  # type: ignore[return-value]

    def _insert_batches(self, conn: Any, items: Sequence[BatchItem], now: float) -> set[tuple[str, str]]:
        """Insert the batches whose id is new; the (mechanism, batch) keys actually inserted.

        One multi-row ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (PostgreSQL, whose
        writers run concurrently). :class:`SQLiteStorage` overrides it.
        """
        if not items:
            return set()
        rows = conn.execute(
            self._sql(
                f"INSERT INTO rldp_batches {BATCH_COLUMNS} VALUES {values(len(items), BATCH_WIDTH)}"
                " ON CONFLICT (mechanism, batch) DO NOTHING RETURNING mechanism, batch"
            ),
            [v for item in items for v in item.row(now)],
        ).fetchall()
        return {(row[0], row[1]) for row in rows}

    @staticmethod
    def _in_window(window: str | None) -> tuple[str, tuple[str, ...]]:
        """(SQL condition, its parameters) selecting one window's rows, or every window's for None."""
        return ("", ()) if window is None else (" AND window_label = ?", (window,))

    def counts(self, mechanism: str, outputs: int, window: str | None = None) -> np.ndarray:
        """Number of stored reports per output y (int64, length ``outputs``) in ``window``
        (a label; '' for the batches without one), or in all windows together when None."""
        cond, args = self._in_window(window)
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                self._sql(f"SELECT y, SUM(n) FROM rldp_counts WHERE mechanism = ?{cond} GROUP BY y"), (mechanism, *args)
            ).fetchall()
        out = np.zeros(outputs, dtype=np.int64)
        for y, n in rows:
            if 0 <= int(y) < outputs:
                out[int(y)] = int(n)
        return out

    def windows(self, mechanism: str) -> dict[str, int]:
        """The number of stored reports of each window label that has any ('' excluded: the
        batches of a mechanism without windows). Unordered: labels sort by the mechanism's window."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                self._sql(
                    "SELECT window_label, SUM(n) FROM rldp_counts WHERE mechanism = ? AND window_label <> ''"
                    " GROUP BY window_label"
                ),
                (mechanism,),
            ).fetchall()
        return {row[0]: int(row[1]) for row in rows if int(row[1]) > 0}

    def batch_totals(self, mechanism: str, window: str | None = None) -> tuple[int, int]:
        """(number of stored batches, number of stored reports) for a mechanism, in one window or all (None)."""
        cond, args = self._in_window(window)
        with self._guard(), self._connection() as conn:
            row = conn.execute(
                self._sql(
                    f"SELECT COUNT(*), COALESCE(SUM(n), 0) FROM rldp_batches WHERE mechanism = ? AND {LIVE}{cond}"
                ),
                (mechanism, *args),
            ).fetchone()
        return int(row[0]), int(row[1])

    def recount(self, mechanism: str, outputs: int, window: str | None = None) -> np.ndarray:
        """Counts recomputed from the stored batches (a consistency check of :meth:`counts`)."""
        out = np.zeros(outputs, dtype=np.int64)
        cond, args = self._in_window(window)
        sql = self._sql(f"SELECT encoding, payload FROM rldp_batches WHERE mechanism = ? AND {LIVE}{cond}")
        with self._guard(), self._connection() as conn:
            cur = conn.execute(sql, (mechanism, *args))
            for encoding, payload in cur:
                out += batch_counts(encoding, bytes(payload), outputs)
        return out

    def batch_ids(self, mechanism: str) -> set[str]:
        """The ids of every stored batch of a mechanism (pruned ones excluded)."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                self._sql(f"SELECT batch FROM rldp_batches WHERE mechanism = ? AND {LIVE}"), (mechanism,)
            ).fetchall()
        return {r[0] for r in rows}

    # -- design jobs
    def create_job(self, job_id: str, params: dict[str, Any]) -> JobRecord:
        """Record a queued design job."""
        now = time.time()
        with self.write_transaction() as conn:
            conn.execute(
                self._sql(f"INSERT INTO rldp_jobs ({JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                (job_id, "queued", json.dumps(params), None, None, now, None, None, now),
            )
        return JobRecord(job_id, "queued", params, None, None, now, None, None, now)

    _JOB_FIELDS = frozenset({"status", "mechanism", "error", "started", "finished", "heartbeat"})

    def update_job(self, job_id: str, **fields: Any) -> None:
        """Set some of status / mechanism / error / started / finished / heartbeat."""
        unknown = set(fields) - self._JOB_FIELDS
        if unknown:
            raise ValidationError(f"unknown job fields: {', '.join(sorted(unknown))}")
        names = sorted(fields)
        sets = ", ".join(f"{name} = ?" for name in names)
        with self.write_transaction() as conn:
            conn.execute(self._sql(f"UPDATE rldp_jobs SET {sets} WHERE id = ?"), (*[fields[n] for n in names], job_id))

    def get_job(self, job_id: str) -> JobRecord | None:
        """A design job, or None."""
        with self._guard(), self._connection() as conn:
            row = conn.execute(self._sql(f"SELECT {JOB_COLUMNS} FROM rldp_jobs WHERE id = ?"), (job_id,)).fetchone()
        return None if row is None else self._job(row)

    def list_jobs(self, limit: int) -> list[JobRecord]:
        """The ``limit`` most recent design jobs, newest first (ties by id): what an operator asks first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError(f"limit must be an integer ≥ 1; got {limit!r}")
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                self._sql(f"SELECT {JOB_COLUMNS} FROM rldp_jobs ORDER BY created DESC, id DESC LIMIT ?"), (limit,)
            ).fetchall()
        return [self._job(row) for row in rows]

    @staticmethod
    def _job(row: Any) -> JobRecord:
        return JobRecord(
            id=row[0],
            status=row[1],
            params=json.loads(row[2]),
            mechanism=row[3],
            error=row[4],
            created=float(row[5]),
            started=None if row[6] is None else float(row[6]),
            finished=None if row[7] is None else float(row[7]),
            heartbeat=float(row[8]),
        )
