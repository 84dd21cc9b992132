"""A full disk is named as such at the storage layer (StoreFull), through the writer's wire, for every backend:
SQLITE_FULL, ENOSPC and PostgreSQL's disk_full (53100). The HTTP answer: tests/aggregator/http/test_readiness.py."""

from __future__ import annotations

import errno

import numpy as np
import psycopg.errors
import pytest

from rldp.aggregator.storage import StorageError, StoreFull, open_storage
from rldp.aggregator.storage.postgres import PostgresStorage
from rldp.aggregator.writer import wire

MID = "a" * 64  # conftest.py's active mechanism


def test_sqlite_full_is_store_full(sqlite_url):
    store = open_storage(sqlite_url)
    try:
        assert store.ingest(MID, "first", np.array([1, 2, 3]), 6).status == "accepted"
        with store._connection() as conn:  # the "disk" fills up: SQLite's page limit gives SQLITE_FULL
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
        for conn in store._all:
            conn.execute(f"PRAGMA max_page_count={pages}")
        with pytest.raises(StoreFull, match="the store is full"):
            for k in range(2000):
                store.ingest(MID, f"fill-{k}", np.arange(50) % 6, 6)
    finally:
        store.close()


@pytest.mark.parametrize(
    "error",
    [psycopg.errors.DiskFull("could not extend file: No space left on device"), OSError(errno.ENOSPC, "No space")],
    ids=["disk_full-53100", "ENOSPC"],
)
def test_postgres_disk_full_is_store_full(error):
    store = object.__new__(PostgresStorage)  # the guard alone: no server needed
    with pytest.raises(StoreFull):
        with store._guard():
            raise error
    with pytest.raises(StorageError) as other:
        with store._guard():
            raise psycopg.errors.AdminShutdown("terminating connection")
    assert not isinstance(other.value, StoreFull)


def test_the_writer_wire_keeps_a_full_store_named():
    with pytest.raises(StoreFull):
        wire.ingest_result(wire.error_answer(StoreFull("the disk holding x is full")))
    with pytest.raises(StorageError) as other:
        wire.ingest_result(wire.error_answer(StorageError("locked")))
    assert not isinstance(other.value, StoreFull)
