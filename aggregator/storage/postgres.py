"""PostgreSQL backend through psycopg 3 and a psycopg_pool connection pool.

Several processes or hosts share one store; their writers run concurrently (row locks,
no group commit across processes), and per-output counts are split over PG_SHARDS rows so
that writers in different processes rarely queue on the same row lock.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError

from .base import Storage

__all__ = ["PG_SHARDS", "PostgresStorage"]

PG_SHARDS = 16


def _driver() -> tuple[Any, Any]:
    """(psycopg, psycopg_pool), imported on first use: a SQLite deployment never loads the
    PostgreSQL driver (a native library, ~0.15 s to import) and need not install it."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise ValidationError(
            "PostgreSQL storage needs psycopg 3 and psycopg_pool: pip install 'psycopg[binary]' psycopg-pool"
        ) from None
    return psycopg, psycopg_pool


class PostgresStorage(Storage):
    """PostgreSQL through psycopg 3: a connection pool for requests and group commits."""

    dialect = "postgresql"
    blob_type = "BYTEA"

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 5.0) -> None:
        super().__init__(url)
        _driver()  # refuse at once when the driver is missing
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self._pool: Any = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()
        self._shard = random.randrange(PG_SHARDS)

    def _errors(self) -> tuple[type[BaseException], ...]:
        psycopg, psycopg_pool = _driver()
        return (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.TooManyRequests, OSError)

    def _unique_violations(self) -> tuple[type[BaseException], ...]:
        return (_driver()[0].errors.UniqueViolation,)

    def _full(self, exc: BaseException) -> bool:
        return getattr(exc, "sqlstate", None) == "53100"  # disk_full (class 53: insufficient resources)

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _get_pool(self) -> Any:
        # Created lazily in the process that uses it: a pool must never cross a fork.
        if self._pool is not None and self._pool_pid == os.getpid():
            return self._pool
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                pool_class = _driver()[1].ConnectionPool
                self._pool = pool_class(
                    self.url,
                    min_size=1,
                    max_size=self.pool_size,
                    open=True,
                    timeout=self.connect_timeout,
                    kwargs={"autocommit": True, "connect_timeout": max(1, int(self.connect_timeout))},
                    check=pool_class.check_connection,
                    name="rldp",
                )
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

    def _upsert_counts(self, conn: Any, mechanism: str, window: str, counts: np.ndarray) -> None:
        ys = np.flatnonzero(counts)
        # One statement for all outputs (arrays unnested server-side); ascending y (and
        # ingest_group's sorted (mechanism, window) order) keeps the row-lock order identical
        # across writers, so they cannot deadlock.
        conn.execute(
            "INSERT INTO rldp_counts (mechanism, window_label, shard, y, n)"
            " SELECT %s, %s, %s, t.y, t.n FROM unnest(%s::integer[], %s::bigint[]) AS t(y, n)"
            " ON CONFLICT (mechanism, window_label, shard, y) DO UPDATE SET n = rldp_counts.n + EXCLUDED.n",
            (mechanism, window, self._shard, ys.tolist(), counts[ys].tolist()),
        )

    def close(self) -> None:
        super().close()
        with self._pool_lock:
            if self._pool is not None and self._pool_pid == os.getpid():
                self._pool.close()
            self._pool = None
