"""SQLite backend: one file in WAL mode, writers serialised by a blocking file lock."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError, one_line

from .base import GroupSink, Storage
from .rows import BatchItem, StorageError, StoreFull
from .schema import BATCH_COLUMNS, BATCH_WIDTH, values

try:  # POSIX: a blocking cross-process lock for SQLite writers (see SQLiteStorage._transaction)
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's busy handler alone
    fcntl = None  # type: ignore[assignment]

__all__ = ["MIN_FREE_BYTES", "SQLiteStorage"]

#: Below this much free space on the database's disk, /readyz reports the store unwritable.
MIN_FREE_BYTES = 1 << 20
# close() waits at most this long for other threads' connections in use to be released.
CLOSE_WAIT = 30.0

log = logging.getLogger(__name__)


class SQLiteStorage(Storage):
    """SQLite file in WAL mode; one connection per thread plus the writer's."""

    dialect = "sqlite"
    blob_type = "BLOB"

    def __init__(
        self, url: str, path: str, synchronous: str = "FULL", busy_timeout: float = 30.0, sink: GroupSink | None = None
    ) -> None:
        super().__init__(url, sink)
        synchronous = synchronous.upper()
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValidationError(f"sqlite synchronous must be FULL, NORMAL or EXTRA; got {synchronous!r}")
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._write_mutex = threading.Lock()
        self._lock_fd: int | None = None
        self._lock_pid: int | None = None
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        # Connections some thread is using now (count of nested uses): close() waits for them.
        self._busy: dict[sqlite3.Connection, int] = {}
        self._idle = threading.Condition(self._all_lock)
        parent = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {parent}: {exc.strerror or exc}") from None

    def check_writable(self) -> None:
        """StorageError if the disk holding the database has less than MIN_FREE_BYTES free: a
        commit (WAL frames, then a checkpoint) would fail with "database or disk is full"."""
        try:
            st = os.statvfs(os.path.dirname(os.path.abspath(self.path)))
        except OSError as exc:
            raise StorageError(f"cannot inspect the disk of {self.path}: {exc.strerror or exc}") from None
        free = st.f_bavail * st.f_frsize
        if free < MIN_FREE_BYTES:
            raise StoreFull(f"the disk holding {self.path} is full ({free} bytes free)")

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def _unique_violations(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.IntegrityError,)

    def _full(self, exc: BaseException) -> bool:
        # SQLITE_FULL, also as the primary code of an extended one (Python ≥ 3.11 sets sqlite_errorcode)
        return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            # A group's multi-row INSERT changes ~2 pages per batch; its statement journal passes
            # SQLite's 64 KiB spill threshold at ~16 batches, and with temporary files on disk every
            # such commit created, wrote and unlinked a file in /var/tmp (~20 % of the writer's CPU
            # per batch). rldp's temporary b-trees are small (GROUP BY mechanism, short sorts).
            conn.execute("PRAGMA temp_store=MEMORY")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open SQLite database {self.path}: {one_line(exc)}") from exc
        with self._all_lock:
            self._all.append(conn)
        return conn

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = self._local.conn = self._open()
            self._local.pid = os.getpid()
        with self._idle:
            self._busy[conn] = self._busy.get(conn, 0) + 1
        try:
            yield conn
        finally:
            with self._idle:
                left = self._busy.pop(conn) - 1
                if left:
                    self._busy[conn] = left
                else:
                    self._idle.notify_all()

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
                    raise StorageError(
                        f"cannot open the writer lock file {self.path}-writer.lock: {exc.strerror or exc}"
                    ) from None
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

    def _insert_batches(self, conn: Any, items: Sequence[BatchItem], now: float) -> set[tuple[str, str]]:
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
                part = names[start : start + 500]
                rows = conn.execute(
                    f"SELECT batch FROM rldp_batches WHERE mechanism = ? AND batch IN ({', '.join('?' * len(part))})",
                    [mechanism, *part],
                ).fetchall()
                known.update((mechanism, row[0]) for row in rows)
        fresh: dict[tuple[str, str], BatchItem] = {}
        for item in items:
            key = (item.mechanism, item.batch)
            if key not in known and key not in fresh:  # a second copy in this group is a duplicate
                fresh[key] = item
        new_items = list(fresh.values())
        for start in range(0, len(new_items), 100):  # ≤ 800 parameters a statement
            chunk = new_items[start : start + 100]
            conn.execute(
                f"INSERT INTO rldp_batches {BATCH_COLUMNS} VALUES {values(len(chunk), BATCH_WIDTH)}",
                [v for item in chunk for v in item.row(now)],
            )
        return set(fresh)

    def _upsert_counts(self, conn: sqlite3.Connection, mechanism: str, window: str, counts: np.ndarray) -> None:
        ys = np.flatnonzero(counts)
        for start in range(0, ys.size, 1000):  # ≤ 5,000 parameters a statement (SQLite allows 32,766)
            part = ys[start : start + 1000]
            conn.execute(
                f"INSERT INTO rldp_counts (mechanism, window_label, shard, y, n) VALUES {values(part.size, 5)}"
                " ON CONFLICT (mechanism, window_label, shard, y) DO UPDATE SET n = rldp_counts.n + excluded.n",
                [v for y in part.tolist() for v in (mechanism, window, self._shard, y, int(counts[y]))],
            )

    def close(self) -> None:
        super().close()
        # Closing a connection while another thread runs a statement on it crashes CPython's
        # sqlite3 module (a design job's heartbeat committing while the app closed the store
        # did), so close() waits for the connections in use, up to CLOSE_WAIT seconds; one
        # still in use then is left open (to the garbage collector) rather than closed under it.
        own = getattr(self._local, "conn", None)  # the caller's: not running a statement now

        def others() -> list[sqlite3.Connection]:
            return [conn for conn in self._busy if conn is not own]

        with self._idle:
            if not self._idle.wait_for(lambda: not others(), timeout=CLOSE_WAIT):
                log.warning(
                    "closing %s: %d connection(s) still in use after %g s, left open",
                    self.path,
                    len(others()),
                    CLOSE_WAIT,
                )
            busy = others()
            for conn in self._all:
                if conn in busy:
                    continue
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
        if self._lock_fd is not None and self._lock_pid == os.getpid():
            os.close(self._lock_fd)
        self._lock_fd = self._lock_pid = None
