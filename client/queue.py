"""The offline queue: privatised batches that could not be sent yet, kept in SQLite.

Only the upload bodies are stored — privatised outputs y with their mechanism and batch
id — never a raw record. Batches keep their original batch id, so a batch that did reach
the server before the connection failed is answered as a duplicate on flush and counted
once.

Bounded by ``limit_bytes`` (sum of stored bodies). When a new batch does not fit, the
**oldest** batches are dropped to make room (the queue favours fresh data, like a ring
buffer) and counted in ``stats()["dropped_batches"]`` / ``["dropped_reports"]``; a single
batch larger than the whole limit is refused (and counted the same way).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["OfflineQueue", "QueuedBatch", "DEFAULT_LIMIT_BYTES"]

DEFAULT_LIMIT_BYTES = 64 * 1024 * 1024


class QueuedBatch(NamedTuple):
    seq: int
    mechanism: str
    batch: str
    n: int
    body: bytes


class OfflineQueue:
    """A bounded FIFO of upload bodies in a SQLite file (safe across threads and processes)."""

    def __init__(self, path: str | os.PathLike[str], limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        if int(limit_bytes) < 1:
            raise ValueError(f"queue_limit_bytes must be ≥ 1; got {limit_bytes}")
        self.path = os.fspath(path)
        self.limit_bytes = int(limit_bytes)
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " mechanism TEXT NOT NULL, batch TEXT NOT NULL UNIQUE, n INTEGER NOT NULL,"
            " body BLOB NOT NULL, size INTEGER NOT NULL, created REAL NOT NULL)"
        )
        self._conn.execute("CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")

    def _bump(self, batches: int, reports: int) -> None:
        for key, value in (("dropped_batches", batches), ("dropped_reports", reports)):
            self._conn.execute(
                "INSERT INTO stats (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = value + excluded.value",
                (key, value),
            )

    def put(self, mechanism: str, batch: str, n: int, body: bytes) -> tuple[bool, int]:
        """Queue one upload body; (stored, reports dropped: older batches evicted, or this one if refused)."""
        size = len(body)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if size > self.limit_bytes:
                    self._bump(1, n)
                    self._conn.execute("COMMIT")
                    return False, n
                used = self._conn.execute("SELECT COALESCE(SUM(size), 0) FROM queue").fetchone()[0]
                dropped_b = dropped_r = 0
                if used + size > self.limit_bytes:
                    for seq, bn, bsize in self._conn.execute("SELECT seq, n, size FROM queue ORDER BY seq").fetchall():
                        self._conn.execute("DELETE FROM queue WHERE seq = ?", (seq,))
                        dropped_b, dropped_r, used = dropped_b + 1, dropped_r + bn, used - bsize
                        if used + size <= self.limit_bytes:
                            break
                    self._bump(dropped_b, dropped_r)
                self._conn.execute(
                    "INSERT OR IGNORE INTO queue (mechanism, batch, n, body, size, created) VALUES (?, ?, ?, ?, ?, ?)",
                    (mechanism, batch, int(n), body, size, time.time()),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return True, dropped_r

    def pending(self) -> Iterator[QueuedBatch]:
        """Queued batches, oldest first (a snapshot)."""
        with self._lock:
            rows = self._conn.execute("SELECT seq, mechanism, batch, n, body FROM queue ORDER BY seq").fetchall()
        for row in rows:
            yield QueuedBatch(int(row[0]), row[1], row[2], int(row[3]), bytes(row[4]))

    def held(self, batches: list[str]) -> int:
        """Reports of these batch ids still in the queue (not evicted since they were put)."""
        if not batches:
            return 0
        with self._lock:
            marks = ",".join("?" * len(batches))
            row = self._conn.execute(f"SELECT COALESCE(SUM(n), 0) FROM queue WHERE batch IN ({marks})", batches)
            return int(row.fetchone()[0])

    def remove(self, seq: int) -> None:
        """Forget a batch (sent, or refused for good)."""
        with self._lock:
            self._conn.execute("DELETE FROM queue WHERE seq = ?", (int(seq),))

    def stats(self) -> dict[str, int]:
        """pending_batches, pending_reports, bytes, dropped_batches, dropped_reports."""
        with self._lock:
            b, r, size = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(n), 0), COALESCE(SUM(size), 0) FROM queue"
            ).fetchone()
            dropped = dict(self._conn.execute("SELECT key, value FROM stats").fetchall())
        return {
            "pending_batches": int(b),
            "pending_reports": int(r),
            "bytes": int(size),
            "dropped_batches": int(dropped.get("dropped_batches", 0)),
            "dropped_reports": int(dropped.get("dropped_reports", 0)),
        }

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM queue").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
