"""Durable storage for the aggregator: mechanisms, report batches, per-output counts, design jobs.

One interface (:class:`Storage`), two backends chosen by URL:

* ``sqlite:///rldp-data/rldp.sqlite3`` (the default; a relative path after ``sqlite:///``,
  an absolute one after ``sqlite:////``, or a bare file path) — nothing to install.
  WAL journal, ``synchronous=FULL`` by default (``?synchronous=NORMAL`` to trade
  power-loss durability for speed, see "Durability" below).
* ``postgresql://user:pass@host/db`` (or ``postgres://``) — several processes or hosts
  share one store. Driver: psycopg 3 with a psycopg_pool connection pool.

Why not SQLAlchemy Core: the service issues about fifteen fixed statements whose only
dialect differences are the parameter marker and a blob type name; both databases speak
the same ``INSERT … ON CONFLICT`` upsert. A thin layer over the two DB-API drivers keeps
the hot path (one transaction per group of batches) visible and avoids a large
dependency whose pooling would have to be tuned for a pre-fork server's worker processes anyway.

Data model
----------
``rldp_batches`` holds each uploaded batch as **one row**: the SHA-256 of its reports
(packed into the smallest unsigned little-endian integer type that fits the mechanism's
outputs; it tells a retried batch from a different batch under the same id) and the
reports themselves in the smaller of two exact encodings — the packed reports, or their
per-output counts (uint32 each). A batch of 10,000 reports over 10 outputs thus takes 40
bytes, not 10 kB; the order of reports inside a batch is not kept (estimates depend only
on counts). ``rldp_counts`` holds the per-output totals, updated in the same transaction
as the batch insert, so an estimate reads |Y| small rows instead of 10⁷ reports. Counts are
split over a few ``shard`` rows per output (one shard per writer process, summed on read)
so that PostgreSQL writers in different processes do not queue on the same row locks.
:meth:`Storage.recount` recomputes the counts from the stored batches (for checks).

Group commit
------------
Concurrent batch uploads are committed together: while one transaction (and its fsync)
runs, new batches queue up, and the next transaction commits all of them with a fixed
handful of multi-row statements (:meth:`Storage._ingest_group`). Each request waits until
*its* transaction has committed, so a 2xx still means "durable", but one fsync serves many
concurrent uploads. Who forms the groups:

* under ``rldp serve`` with SQLite, one writer process for every worker
  (:mod:`rldp.aggregator.writer`; this storage then only hands batches to it);
* otherwise each process, by leader hand-off (:class:`_GroupCommitter`). SQLite writers of
  different processes queue on a blocking ``flock`` of ``<database>-writer.lock``
  (:meth:`SQLiteStorage._transaction`); PostgreSQL writers run concurrently.

Durability
----------
A batch is acknowledged only after ``COMMIT`` returned. SQLite in WAL mode with
``synchronous=FULL`` (default) fsyncs the WAL at every commit: an acknowledged batch
survives ``kill -9`` of the server *and* a power loss or OS crash. With
``synchronous=NORMAL`` the WAL is written (to the OS) at commit but fsynced only at
checkpoints: still safe against ``kill -9`` / process crashes (the OS has the data), but
the last transactions before a power loss may be lost. PostgreSQL's defaults
(``fsync=on``, ``synchronous_commit=on``) give the power-loss guarantee.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import threading
import time
import weakref
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import numpy as np

try:  # POSIX: a blocking cross-process lock for SQLite writers (see SQLiteStorage._transaction)
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's busy handler alone
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_URL",
    "StorageError",
    "MechanismRecord",
    "IngestResult",
    "JobRecord",
    "Storage",
    "SQLiteStorage",
    "PostgresStorage",
    "open_storage",
    "pack_reports",
    "unpack_reports",
    "encode_batch",
    "batch_counts",
]

DEFAULT_URL = "sqlite:///rldp-data/rldp.sqlite3"
SCHEMA_VERSION = "1"
# Most batches one transaction commits together (bounds the transaction's size).
MAX_GROUP = 64
# How long a request waits for its group's commit before answering 503 (the batch may
# still commit; a retry with the same batch id is then answered as a duplicate).
COMMIT_WAIT_SECONDS = 60.0
PG_SHARDS = 16


class StorageError(RuntimeError):
    """The database could not be reached or failed; nothing is acknowledged."""


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


# --------------------------------------------------------------------------- packing


def _width(outputs: int) -> np.dtype:
    if outputs <= 1 << 8:
        return np.dtype("<u1")
    if outputs <= 1 << 16:
        return np.dtype("<u2")
    return np.dtype("<u4")


def pack_reports(reports: np.ndarray, outputs: int) -> bytes:
    """Reports (validated integers in [0, outputs)) as little-endian bytes of the smallest width."""
    return np.ascontiguousarray(reports, dtype=_width(outputs)).tobytes()


def unpack_reports(data: bytes, outputs: int) -> np.ndarray:
    """Inverse of :func:`pack_reports` (int64 array)."""
    return np.frombuffer(data, dtype=_width(outputs)).astype(np.int64)


def encode_batch(reports: np.ndarray, outputs: int) -> tuple[bytes, str, bytes, np.ndarray]:
    """(SHA-256 of the packed reports, encoding, payload, counts) for storing one batch.

    The payload is the packed reports ("reports") or the uint32 per-output counts
    ("counts"), whichever is smaller; both are exact.
    """
    packed = pack_reports(reports, outputs)
    counts = np.bincount(reports, minlength=outputs)
    if len(packed) <= 4 * outputs:
        return hashlib.sha256(packed).digest(), "reports", packed, counts
    return hashlib.sha256(packed).digest(), "counts", counts.astype("<u4").tobytes(), counts


def batch_counts(encoding: str, payload: bytes, outputs: int) -> np.ndarray:
    """Per-output counts of a stored batch (either encoding)."""
    if encoding == "counts":
        return np.frombuffer(payload, dtype="<u4").astype(np.int64)
    return np.bincount(unpack_reports(payload, outputs), minlength=outputs)


def _values(rows: int, width: int) -> str:
    """The VALUES list of a multi-row statement: ``(?, ?), (?, ?)`` for 2 rows of width 2."""
    return ", ".join(["(" + ", ".join("?" * width) + ")"] * rows)


# --------------------------------------------------------------------------- group commit


@dataclass
class _Item:
    mechanism: str
    batch: str
    n: int
    digest: bytes
    encoding: str
    payload: bytes
    counts: np.ndarray  # bincount over outputs
    state: str = "waiting"  # waiting → done, or waiting → lead (this thread commits next)
    wake: threading.Event = field(default_factory=threading.Event)
    result: IngestResult | None = None
    error: BaseException | None = None

    def row(self, received: float) -> tuple[Any, ...]:
        """Its rldp_batches row, in the order of Storage._BATCH_COLUMNS."""
        return (self.mechanism, self.batch, self.n, self.digest, self.encoding, self.payload, received)


class _GroupCommitter:
    """Group commit by leader hand-off (no extra thread).

    A request that finds no commit in progress becomes the leader: it takes everything
    queued (up to MAX_GROUP batches), commits it in one transaction on its own connection,
    wakes the owners, and repeats until its own batch is committed; then it hands the lead
    to the oldest waiting request, if any. While a commit (and its fsync) runs, new batches
    queue up and go into the next transaction together. Uncontended, a request commits its
    own batch directly, with no thread switch.
    """

    def __init__(self, storage: "Storage") -> None:
        self._storage = weakref.ref(storage)
        self._lock = threading.Lock()
        self._pending: list[_Item] = []
        self._leading = False
        self._pid = os.getpid()

    def submit(self, item: _Item) -> IngestResult:
        with self._lock:
            if self._pid != os.getpid():  # forked: nothing of the parent's queue is ours
                self._pending, self._leading, self._pid = [], False, os.getpid()
            self._pending.append(item)
            lead = not self._leading
            if lead:
                self._leading = True
                item.state = "lead"
        if not lead and not item.wake.wait(COMMIT_WAIT_SECONDS):
            with self._lock:
                if item.state == "waiting":  # give up: never committed, the client may retry
                    self._pending.remove(item)
                    raise StorageError(f"the database did not commit within {COMMIT_WAIT_SECONDS:g} s")
            item.wake.wait()  # its commit is under way (or it was just made leader): see it through
        if item.state == "lead":
            self._lead(item)
        if item.error is not None:
            raise StorageError(_one_line(item.error)) from item.error
        assert item.result is not None
        return item.result

    def _take(self) -> list[_Item]:
        with self._lock:
            group = self._pending[:MAX_GROUP]
            del self._pending[:MAX_GROUP]
            for item in group:
                item.state = "committing"
        return group

    def _lead(self, own: _Item) -> None:
        storage = self._storage()
        while True:
            with self._lock:
                if own.result is not None or own.error is not None:
                    if self._pending:  # hand the lead to the oldest waiting request
                        successor = self._pending[0]
                        successor.state = "lead"
                        successor.wake.set()
                    else:
                        self._leading = False
                    return
            group: list[_Item] = []
            try:
                if storage is None:
                    raise StorageError("storage closed")
                with storage._guard(), storage._connection() as conn, storage._transaction(conn):
                    # The group is taken only once the write lock is held: batches that
                    # arrived while this leader waited for another writer join this commit.
                    group = self._take()
                    results = storage._ingest_group(conn, group)
            except BaseException as exc:  # noqa: BLE001 - every waiter must be released
                if not group:  # the transaction never began: fail what is queued (own included)
                    group = self._take()
                for item in group:
                    item.error = exc
                    item.state = "done"
                    if item is not own:
                        item.wake.set()
                if not isinstance(exc, Exception):
                    with self._lock:
                        self._leading = False
                    raise
                continue
            for item, res in zip(group, results):
                item.result = res
                item.state = "done"
                if item is not own:
                    item.wake.set()


# --------------------------------------------------------------------------- interface


class Storage(ABC):
    """Mechanisms, batches, counts and jobs. Thread-safe; open one per process.

    Every method raises :class:`StorageError` when the backend is unavailable.
    """

    dialect: str = ""
    blob_type: str = "BLOB"

    def __init__(self, url: str) -> None:
        self.url = url
        self._committer = _GroupCommitter(self)
        self._writer: Any = None  # a WriterClient (SQLite under rldp serve): it commits the batches
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
    def _upsert_counts(self, conn: Any, mechanism: str, counts: np.ndarray) -> None:
        """Add ``counts`` (one per output) to the stored totals."""

    @abstractmethod
    def _errors(self) -> tuple[type[BaseException], ...]:
        """The backend's exception types that mean 'storage failed'."""

    def _sql(self, text: str) -> str:
        return text

    # -- schema
    def _schema(self) -> list[str]:
        blob = self.blob_type
        return [
            "CREATE TABLE IF NOT EXISTS rldp_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS rldp_mechanisms ("
            " id TEXT PRIMARY KEY, method TEXT NOT NULL, notion TEXT NOT NULL,"
            " epsilon DOUBLE PRECISION NOT NULL, epsilon_audited DOUBLE PRECISION,"
            " sensitive TEXT NOT NULL, released TEXT NOT NULL, outputs INTEGER NOT NULL, size INTEGER NOT NULL,"
            " status TEXT NOT NULL, published DOUBLE PRECISION NOT NULL, retired DOUBLE PRECISION,"
            f" document {blob} NOT NULL)",
            "CREATE TABLE IF NOT EXISTS rldp_batches ("
            " mechanism TEXT NOT NULL, batch TEXT NOT NULL, n INTEGER NOT NULL, digest"
            f" {blob} NOT NULL, encoding TEXT NOT NULL, payload {blob} NOT NULL, received DOUBLE PRECISION NOT NULL,"
            " PRIMARY KEY (mechanism, batch))",
            "CREATE TABLE IF NOT EXISTS rldp_counts ("
            " mechanism TEXT NOT NULL, shard INTEGER NOT NULL, y INTEGER NOT NULL, n BIGINT NOT NULL,"
            " PRIMARY KEY (mechanism, shard, y))",
            "CREATE TABLE IF NOT EXISTS rldp_jobs ("
            " id TEXT PRIMARY KEY, status TEXT NOT NULL, params TEXT NOT NULL, mechanism TEXT, error TEXT,"
            " created DOUBLE PRECISION NOT NULL, started DOUBLE PRECISION, finished DOUBLE PRECISION,"
            " heartbeat DOUBLE PRECISION NOT NULL)",
        ]

    def init_schema(self) -> None:
        """Create the tables if missing (idempotent; safe from several processes at once)."""
        with self._guard(), self._connection() as conn, self._transaction(conn):
            self._lock_schema(conn)
            for stmt in self._schema():
                conn.execute(stmt)
            row = conn.execute(self._sql("SELECT value FROM rldp_meta WHERE key = ?"), ("schema",)).fetchone()
            if row is None:
                conn.execute(self._sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", SCHEMA_VERSION))
            elif row[0] != SCHEMA_VERSION:
                raise StorageError(f"database schema version {row[0]} is not {SCHEMA_VERSION}, which this rldp uses")

    def _lock_schema(self, conn: Any) -> None:  # noqa: B027 - optional hook
        """Serialise concurrent schema creation (PostgreSQL; SQLite's write lock suffices)."""

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except StorageError:
            raise
        except self._errors() as exc:
            raise StorageError(f"{self.dialect} error: {_one_line(exc)}") from exc

    def ping(self) -> None:
        """Raise StorageError unless the database (and the writer process, if any) answers (/readyz)."""
        with self._guard(), self._connection() as conn:
            conn.execute("SELECT COUNT(*) FROM rldp_meta").fetchone()
        if self._writer is not None:
            self._writer.ping()

    def close(self) -> None:  # noqa: B027 - backends add their own
        """Close connections."""

    # -- mechanisms
    def publish(self, record: MechanismRecord, document: bytes) -> tuple[bool, MechanismRecord]:
        """Store a mechanism (msgpack document) unless its id exists; (created, stored record)."""
        with self._guard(), self._connection() as conn, self._transaction(conn):
            cur = conn.execute(self._sql(
                "INSERT INTO rldp_mechanisms (id, method, notion, epsilon, epsilon_audited, sensitive, released,"
                " outputs, size, status, published, retired, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO NOTHING"),
                (record.id, record.method, record.notion, record.epsilon, record.epsilon_audited, record.sensitive,
                 json.dumps(list(record.released)), record.outputs, record.size, record.status, record.published,
                 record.retired, document))
            created = cur.rowcount == 1
            stored = self._get_mechanism(conn, record.id)
        assert stored is not None
        return created, stored

    _MECH_COLUMNS = ("id, method, notion, epsilon, epsilon_audited, sensitive, released, outputs, size, status,"
                     " published, retired")

    @staticmethod
    def _record(row: Any) -> MechanismRecord:
        return MechanismRecord(id=row[0], method=row[1], notion=row[2], epsilon=float(row[3]),
                               epsilon_audited=None if row[4] is None else float(row[4]), sensitive=row[5],
                               released=tuple(json.loads(row[6])), outputs=int(row[7]), size=int(row[8]),
                               status=row[9], published=float(row[10]),
                               retired=None if row[11] is None else float(row[11]))

    def _get_mechanism(self, conn: Any, mechanism_id: str) -> MechanismRecord | None:
        row = conn.execute(self._sql(f"SELECT {self._MECH_COLUMNS} FROM rldp_mechanisms WHERE id = ?"),
                           (mechanism_id,)).fetchone()
        return None if row is None else self._record(row)

    def get_mechanism(self, mechanism_id: str) -> MechanismRecord | None:
        """Metadata of one mechanism, or None."""
        with self._guard(), self._connection() as conn:
            return self._get_mechanism(conn, mechanism_id)

    def get_document(self, mechanism_id: str) -> bytes | None:
        """The stored msgpack document, or None."""
        with self._guard(), self._connection() as conn:
            row = conn.execute(self._sql("SELECT document FROM rldp_mechanisms WHERE id = ?"),
                               (mechanism_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def list_mechanisms(self) -> list[MechanismRecord]:
        """Every mechanism, oldest first."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(f"SELECT {self._MECH_COLUMNS} FROM rldp_mechanisms ORDER BY published, id").fetchall()
        return [self._record(r) for r in rows]

    def retire(self, mechanism_id: str) -> MechanismRecord | None:
        """Mark a mechanism retired (idempotent); None if unknown."""
        with self._guard(), self._connection() as conn, self._transaction(conn):
            conn.execute(self._sql(
                "UPDATE rldp_mechanisms SET status = 'retired', retired = ? WHERE id = ? AND status <> 'retired'"),
                (time.time(), mechanism_id))
            return self._get_mechanism(conn, mechanism_id)

    # -- reports
    def ingest(self, mechanism: str, batch: str, reports: np.ndarray, outputs: int) -> IngestResult:
        """Store a batch of validated reports (ints in [0, outputs)) and add them to the counts.

        Idempotent by (mechanism, batch): returns "duplicate" for the same reports under a
        known id, "conflict" for different ones. Returns only after the transaction has
        committed (see "Durability").
        """
        digest, encoding, payload, counts = encode_batch(reports, outputs)
        item = _Item(mechanism=mechanism, batch=batch, n=int(reports.size), digest=digest, encoding=encoding,
                     payload=payload, counts=counts)
        return (self._writer or self._committer).submit(item)

    # Multi-row statements: a group costs a fixed handful of statements, not one per batch.
    # The group runs under the write lock, where every statement also costs a round trip
    # through the GIL (the driver releases it around each step); under load that wait, not
    # SQL, dominated the time the lock was held.
    _BATCH_COLUMNS = "(mechanism, batch, n, digest, encoding, payload, received)"

    def _ingest_group(self, conn: Any, group: list[_Item]) -> list[IngestResult]:
        """Store a group of batches inside the caller's write transaction (one result each)."""
        results: list[IngestResult | None] = [None] * len(group)
        ids = list(dict.fromkeys(item.mechanism for item in group))
        rows = conn.execute(self._sql(f"SELECT id, outputs, status FROM rldp_mechanisms WHERE id IN "
                                      f"({', '.join('?' * len(ids))})"), ids).fetchall()
        mechanisms = {row[0]: (int(row[1]), row[2]) for row in rows}
        candidates: list[int] = []
        for i, item in enumerate(group):
            mech = mechanisms.get(item.mechanism)
            if mech is None:
                results[i] = IngestResult("unknown")
            elif mech[1] != "active":
                results[i] = IngestResult("retired")
            elif item.counts.size != mech[0]:  # the caller validated against another mechanism
                raise StorageError(f"batch {item.batch}: counted over {item.counts.size} outputs, "
                                   f"mechanism has {mech[0]}")
            else:
                candidates.append(i)
        now = time.time()
        inserted = self._insert_batches(conn, [group[i] for i in candidates], now)
        totals: dict[str, np.ndarray] = {}
        lookup = self._sql("SELECT n, digest FROM rldp_batches WHERE mechanism = ? AND batch = ?")
        for i in candidates:
            item = group[i]
            key = (item.mechanism, item.batch)
            if key in inserted:
                inserted.discard(key)  # a second copy of the same batch in this group is a duplicate
                acc = totals.get(item.mechanism)
                totals[item.mechanism] = item.counts.copy() if acc is None else acc + item.counts
                results[i] = IngestResult("accepted", item.n)
                continue
            row = conn.execute(lookup, key).fetchone()
            same = row is not None and bytes(row[1]) == item.digest and int(row[0]) == item.n
            results[i] = IngestResult("duplicate", item.n) if same else IngestResult("conflict")
        for mechanism, counts in totals.items():
            self._upsert_counts(conn, mechanism, counts)
        return results  # type: ignore[return-value]

    def _insert_batches(self, conn: Any, items: list[_Item], now: float) -> set[tuple[str, str]]:
        """Insert the batches whose id is new; the (mechanism, batch) keys actually inserted.

        One multi-row ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (PostgreSQL, whose
        writers run concurrently). :class:`SQLiteStorage` overrides it.
        """
        if not items:
            return set()
        rows = conn.execute(self._sql(f"INSERT INTO rldp_batches {self._BATCH_COLUMNS} VALUES {_values(len(items), 7)}"
                                      " ON CONFLICT (mechanism, batch) DO NOTHING RETURNING mechanism, batch"),
                            [v for item in items for v in item.row(now)]).fetchall()
        return {(row[0], row[1]) for row in rows}

    def counts(self, mechanism: str, outputs: int) -> np.ndarray:
        """Number of stored reports per output y (int64, length ``outputs``)."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(self._sql("SELECT y, SUM(n) FROM rldp_counts WHERE mechanism = ? GROUP BY y"),
                                (mechanism,)).fetchall()
        out = np.zeros(outputs, dtype=np.int64)
        for y, n in rows:
            if 0 <= int(y) < outputs:
                out[int(y)] = int(n)
        return out

    def batch_totals(self, mechanism: str) -> tuple[int, int]:
        """(number of stored batches, number of stored reports) for a mechanism."""
        with self._guard(), self._connection() as conn:
            row = conn.execute(self._sql("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM rldp_batches WHERE mechanism = ?"),
                               (mechanism,)).fetchone()
        return int(row[0]), int(row[1])

    def recount(self, mechanism: str, outputs: int) -> np.ndarray:
        """Counts recomputed from the stored batches (a consistency check of :meth:`counts`)."""
        out = np.zeros(outputs, dtype=np.int64)
        with self._guard(), self._connection() as conn:
            cur = conn.execute(self._sql("SELECT encoding, payload FROM rldp_batches WHERE mechanism = ?"),
                               (mechanism,))
            for encoding, payload in cur:
                out += batch_counts(encoding, bytes(payload), outputs)
        return out

    def batch_ids(self, mechanism: str) -> set[str]:
        """The ids of every stored batch of a mechanism."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(self._sql("SELECT batch FROM rldp_batches WHERE mechanism = ?"),
                                (mechanism,)).fetchall()
        return {r[0] for r in rows}

    # -- design jobs
    _JOB_COLUMNS = "id, status, params, mechanism, error, created, started, finished, heartbeat"

    def create_job(self, job_id: str, params: dict[str, Any]) -> JobRecord:
        """Record a queued design job."""
        now = time.time()
        with self._guard(), self._connection() as conn, self._transaction(conn):
            conn.execute(self._sql(f"INSERT INTO rldp_jobs ({self._JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                         (job_id, "queued", json.dumps(params), None, None, now, None, None, now))
        return JobRecord(job_id, "queued", params, None, None, now, None, None, now)

    _JOB_FIELDS = frozenset({"status", "mechanism", "error", "started", "finished", "heartbeat"})

    def update_job(self, job_id: str, **fields: Any) -> None:
        """Set some of status / mechanism / error / started / finished / heartbeat."""
        unknown = set(fields) - self._JOB_FIELDS
        if unknown:
            raise ValueError(f"unknown job fields: {', '.join(sorted(unknown))}")
        names = sorted(fields)
        sets = ", ".join(f"{name} = ?" for name in names)
        with self._guard(), self._connection() as conn, self._transaction(conn):
            conn.execute(self._sql(f"UPDATE rldp_jobs SET {sets} WHERE id = ?"), (*[fields[n] for n in names], job_id))

    def get_job(self, job_id: str) -> JobRecord | None:
        """A design job, or None."""
        with self._guard(), self._connection() as conn:
            row = conn.execute(self._sql(f"SELECT {self._JOB_COLUMNS} FROM rldp_jobs WHERE id = ?"),
                               (job_id,)).fetchone()
        if row is None:
            return None
        return JobRecord(id=row[0], status=row[1], params=json.loads(row[2]), mechanism=row[3], error=row[4],
                         created=float(row[5]), started=None if row[6] is None else float(row[6]),
                         finished=None if row[7] is None else float(row[7]), heartbeat=float(row[8]))


def _one_line(exc: BaseException) -> str:
    return " ".join((str(exc) or type(exc).__name__).split())


# --------------------------------------------------------------------------- SQLite


class SQLiteStorage(Storage):
    """SQLite file in WAL mode; one connection per thread plus the writer's."""

    dialect = "sqlite"
    blob_type = "BLOB"

    def __init__(self, url: str, path: str, synchronous: str = "FULL", busy_timeout: float = 30.0,
                 writer: str | None = None) -> None:
        super().__init__(url)
        if writer:  # batches go to the writer process at this socket (see rldp.aggregator.writer)
            from .writer import WriterClient

            self._writer = WriterClient(writer)
        synchronous = synchronous.upper()
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"sqlite synchronous must be FULL, NORMAL or EXTRA; got {synchronous!r}")
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._write_mutex = threading.Lock()
        self._lock_fd: int | None = None
        self._lock_pid: int | None = None
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        parent = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {parent}: {exc.strerror or exc}") from None

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open SQLite database {self.path}: {_one_line(exc)}") from exc
        with self._all_lock:
            self._all.append(conn)
        return conn

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = self._local.conn = self._open()
            self._local.pid = os.getpid()
        yield conn

    def _writer_lock(self) -> tuple[threading.Lock, int | None]:
        """This process's writer mutex and its descriptor of the shared lock file.

        Both are made anew after a fork: a flock belongs to an open file description, so
        a descriptor inherited from the parent would share the parent's lock instead of
        excluding it.
        """
        if self._lock_pid != os.getpid():
            self._write_mutex = threading.Lock()
            self._lock_fd = None
            if fcntl is not None:
                try:
                    self._lock_fd = os.open(self.path + "-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
                except OSError as exc:
                    raise StorageError(f"cannot open the writer lock file {self.path}-writer.lock: "
                                       f"{exc.strerror or exc}") from None
            self._lock_pid = os.getpid()
        return self._write_mutex, self._lock_fd

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        # Writers queue on a blocking flock of a file next to the database (threads of one
        # process on a mutex first). SQLite's own busy handler would poll instead, sleeping
        # 1, 2, 5, 10… ms between attempts — far longer than a commit holds the lock — so
        # with several worker processes the write lock would sit idle between commits. A
        # waiter wakes as soon as the lock is released, and the kernel releases the lock of
        # a process that dies. BEGIN IMMEDIATE (write lock up front: no deadlock-prone
        # read→write upgrade) still waits busy_timeout for writers outside rldp.
        mutex, fd = self._writer_lock()
        with mutex:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _insert_batches(self, conn: Any, items: list[_Item], now: float) -> set[tuple[str, str]]:
        # The transaction holds SQLite's write lock, so no other writer can insert between
        # the look-up and the insert: find the ids already stored (normally none: one step),
        # then insert the rest in one statement. (RETURNING would cost one step per row,
        # and a GIL round trip with each, while every other writer waits.)
        if not items:
            return set()
        known: set[tuple[str, str]] = set()
        for mechanism in dict.fromkeys(item.mechanism for item in items):
            names = [item.batch for item in items if item.mechanism == mechanism]
            for start in range(0, len(names), 500):
                part = names[start:start + 500]
                rows = conn.execute(f"SELECT batch FROM rldp_batches WHERE mechanism = ? AND batch IN "
                                    f"({', '.join('?' * len(part))})", [mechanism, *part]).fetchall()
                known.update((mechanism, row[0]) for row in rows)
        fresh: dict[tuple[str, str], _Item] = {}
        for item in items:
            key = (item.mechanism, item.batch)
            if key not in known and key not in fresh:  # a second copy in this group is a duplicate
                fresh[key] = item
        rows = list(fresh.values())
        for start in range(0, len(rows), 100):  # ≤ 700 parameters a statement
            part = rows[start:start + 100]
            conn.execute(f"INSERT INTO rldp_batches {self._BATCH_COLUMNS} VALUES {_values(len(part), 7)}",
                         [v for item in part for v in item.row(now)])
        return set(fresh)

    def _upsert_counts(self, conn: sqlite3.Connection, mechanism: str, counts: np.ndarray) -> None:
        ys = np.flatnonzero(counts)
        for start in range(0, ys.size, 1000):  # ≤ 4,000 parameters a statement (SQLite allows 32,766)
            part = ys[start:start + 1000]
            conn.execute(f"INSERT INTO rldp_counts (mechanism, shard, y, n) VALUES {_values(part.size, 4)}"
                         " ON CONFLICT (mechanism, shard, y) DO UPDATE SET n = rldp_counts.n + excluded.n",
                         [v for y in part.tolist() for v in (mechanism, self._shard, y, int(counts[y]))])

    def close(self) -> None:
        super().close()
        if self._writer is not None:
            self._writer.close()
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
        if self._lock_fd is not None and self._lock_pid == os.getpid():
            os.close(self._lock_fd)
        self._lock_fd = self._lock_pid = None


# --------------------------------------------------------------------------- PostgreSQL


class PostgresStorage(Storage):
    """PostgreSQL through psycopg 3: a connection pool for requests plus the writer's connection."""

    dialect = "postgresql"
    blob_type = "BYTEA"

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 5.0) -> None:
        super().__init__(url)
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            raise ValueError("PostgreSQL storage needs psycopg 3 and psycopg_pool: "
                             "pip install 'psycopg[binary]' psycopg-pool") from None
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self._pool: Any = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()
        self._shard = random.randrange(PG_SHARDS)

    def _errors(self) -> tuple[type[BaseException], ...]:
        import psycopg
        import psycopg_pool

        return (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.TooManyRequests, OSError)

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _get_pool(self) -> Any:
        # Created lazily in the process that uses it: a pool must never cross a fork.
        if self._pool is not None and self._pool_pid == os.getpid():
            return self._pool
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True, timeout=self.connect_timeout,
                    kwargs={"autocommit": True, "connect_timeout": max(1, int(self.connect_timeout))},
                    check=ConnectionPool.check_connection, name="rldp")
                self._pool_pid = os.getpid()
        return self._pool

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        with self._get_pool().connection(timeout=self.connect_timeout) as conn:
            yield conn

    @contextmanager
    def _transaction(self, conn: Any) -> Iterator[Any]:
        with conn.transaction():
            yield conn

    def _lock_schema(self, conn: Any) -> None:
        # CREATE TABLE IF NOT EXISTS races between processes; serialise on an advisory lock.
        conn.execute("SELECT pg_advisory_xact_lock(7263519)")

    def _upsert_counts(self, conn: Any, mechanism: str, counts: np.ndarray) -> None:
        ys = np.flatnonzero(counts)
        # One statement for all outputs (arrays unnested server-side); ascending y keeps
        # the row-lock order identical across writers, so they cannot deadlock.
        conn.execute(
            "INSERT INTO rldp_counts (mechanism, shard, y, n)"
            " SELECT %s, %s, t.y, t.n FROM unnest(%s::integer[], %s::bigint[]) AS t(y, n)"
            " ON CONFLICT (mechanism, shard, y) DO UPDATE SET n = rldp_counts.n + EXCLUDED.n",
            (mechanism, self._shard, ys.tolist(), counts[ys].tolist()))

    def close(self) -> None:
        super().close()
        with self._pool_lock:
            if self._pool is not None and self._pool_pid == os.getpid():
                self._pool.close()
            self._pool = None


# --------------------------------------------------------------------------- factory


def open_storage(url: str | None = None, *, init: bool = True, writer: str | None = None) -> Storage:
    """Open the storage named by ``url`` (default :data:`DEFAULT_URL`) and create its schema.

    ``writer``: the socket of a writer process (:mod:`rldp.aggregator.writer`, SQLite only)
    that commits this storage's report batches; without it, batches are committed here.

    ``sqlite:///relative.db``, ``sqlite:////absolute.db``, a bare path, or
    ``postgresql://…`` / ``postgres://…``. SQLite options as query parameters:
    ``?synchronous=FULL|NORMAL`` (default FULL), ``?timeout=seconds`` (busy wait, 30).
    PostgreSQL URLs are passed to libpq unchanged except ``pool_size`` (default 8).
    """
    url = url or DEFAULT_URL
    if not isinstance(url, str) or not url.strip():
        raise ValueError("database URL must be a non-empty string such as sqlite:///rldp-data/rldp.sqlite3")
    url = url.strip()
    scheme = url.split(":", 1)[0].lower() if "://" in url else ""
    storage: Storage
    if scheme in ("postgresql", "postgres"):
        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True)
        pool_size = 8
        connect_timeout = 5.0
        if "connect_timeout" in query:  # libpq's own option; also bounds the wait for a pooled connection
            try:
                connect_timeout = max(1.0, float(query["connect_timeout"][-1]))
            except ValueError:
                raise ValueError("connect_timeout in the database URL must be a number of seconds") from None
        if "pool_size" in query:
            try:
                pool_size = int(query.pop("pool_size")[-1])
            except ValueError:
                raise ValueError("pool_size in the database URL must be an integer") from None
            rest = "&".join(f"{k}={v}" for k, vs in query.items() for v in vs)
            url = parts._replace(query=rest).geturl()
        storage = PostgresStorage(url, pool_size=pool_size, connect_timeout=connect_timeout)
        if writer:
            raise ValueError("a writer process serves SQLite stores only; PostgreSQL handles concurrent writers itself")
    elif scheme in ("sqlite", ""):
        if scheme:
            parts = urlsplit(url)
            if parts.netloc:
                raise ValueError(f"SQLite URL {url!r} has a host; use sqlite:///relative/path or sqlite:////abs/path")
            path = parts.path[1:] if parts.path.startswith("/") else parts.path
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        else:
            path, query = url, {}
        if not path or path == ":memory:":
            raise ValueError("SQLite storage needs a file path (several threads and processes share it)")
        unknown = set(query) - {"synchronous", "timeout"}
        if unknown:
            raise ValueError(f"unknown SQLite URL option(s): {', '.join(sorted(unknown))}; known: synchronous, timeout")
        try:
            timeout = float(query.get("timeout", 30.0))
        except ValueError:
            raise ValueError("timeout in the SQLite URL must be a number of seconds") from None
        storage = SQLiteStorage(url, path, synchronous=query.get("synchronous", "FULL"), busy_timeout=timeout,
                                writer=writer)
    else:
        raise ValueError(f"unsupported database URL scheme {scheme!r}; use sqlite:///PATH or postgresql://…")
    if init:
        try:
            storage.init_schema()
        except BaseException:
            storage.close()  # e.g. stop a connection pool's background reconnection attempts
            raise
    return storage
