"""Schema migrations: a version-2 store gains the index on batches' ``received`` (3); a version-4 store
gains the mechanisms' ``label`` (5), its mechanisms kept."""

from __future__ import annotations

import math
import time

import numpy as np

from rldp.aggregator.storage import SCHEMA_VERSION, open_storage
from rldp.aggregator.storage.activity import RECEIVED_SINCE_SQL, received_since
from rldp.aggregator.storage.schema import schema_statements
from rldp.shared.reports import encode_batch

MID = "m" * 64


def version_4_statements(blob_type: str) -> list[str]:
    """The tables of a version-4 store: today's, without the mechanisms' ``label`` (version 5)."""
    statements = schema_statements(blob_type)
    assert sum(", label TEXT)" in s for s in statements) == 1
    return [s.replace(", label TEXT)", ")") for s in statements]


def indexes(store) -> set[str]:
    """The index names on rldp_batches, from the dialect's catalogue."""
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rldp_batches'"
        if store.blob_type == "BLOB"
        else "SELECT indexname FROM pg_indexes WHERE tablename = 'rldp_batches' AND schemaname = current_schema()"
    )
    with store.write_transaction() as conn:
        return {str(row[0]) for row in conn.execute(query).fetchall()}


def test_a_store_of_schema_2_gains_the_received_index_when_opened(backend, databases):
    url = databases.url(backend)
    old = open_storage(url, init=False)
    ys = np.array([0, 1, 1, 5])
    digest, encoding, payload, _ = encode_batch(ys, 6)
    now = time.time()
    with old.write_transaction() as conn:  # a version-2 store: today's tables, no index on received
        for stmt in version_4_statements(old.blob_type):
            if not stmt.startswith("CREATE INDEX"):
                conn.execute(stmt)
        conn.execute(old._sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", "2"))
        for batch, received in [("old", now - 3 * 86400), ("new", now - 60)]:
            conn.execute(
                old._sql("INSERT INTO rldp_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                (MID, batch, 4, digest, encoding, payload, received, ""),
            )
    assert "rldp_batches_received" not in indexes(old)
    old.close()

    store = open_storage(url)  # migrates 2 → 3 → 4 → 5
    try:
        assert SCHEMA_VERSION == "5"
        with store.write_transaction() as conn:
            assert conn.execute("SELECT value FROM rldp_meta WHERE key = 'schema'").fetchone()[0] == "5"
        assert "rldp_batches_received" in indexes(store)
        assert received_since(store, now - 86400) == {MID: 4}  # only the recent batch
        assert store.batch_ids(MID) == {"old", "new"}
        if store.blob_type == "BLOB":  # SQLite's planner uses the index for the dashboard's own query
            with store.write_transaction() as conn:
                for row in conn.execute("EXPLAIN QUERY PLAN " + RECEIVED_SINCE_SQL, (now - 86400, math.inf)).fetchall():
                    assert "rldp_batches_received" in str(row) or "TEMP B-TREE" in str(row), row
    finally:
        store.close()
    again = open_storage(url)  # opening a migrated store changes nothing
    assert "rldp_batches_received" in indexes(again)
    again.close()


def test_a_store_of_schema_4_gains_labels_and_keeps_its_mechanisms(backend, databases):
    url = databases.url(backend)
    old = open_storage(url, init=False)
    with old.write_transaction() as conn:  # a version-4 store with one mechanism
        for stmt in version_4_statements(old.blob_type):
            conn.execute(stmt)
        conn.execute(old._sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", "4"))
        conn.execute(
            old._sql(
                "INSERT INTO rldp_mechanisms (id, method, notion, epsilon, epsilon_audited, sensitive, released,"
                " outputs, size, status, published, retired, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            (MID, "grr", "rldp", 1.0, 1.0, "sex", '["colour"]', 6, 6, "active", time.time(), None, b"doc"),
        )
    old.close()

    store = open_storage(url)  # migrates 4 → 5
    try:
        with store.write_transaction() as conn:
            assert conn.execute("SELECT value FROM rldp_meta WHERE key = 'schema'").fetchone()[0] == "5"
        record = store.get_mechanism(MID)
        assert record is not None and record.label is None and record.released == ("colour",)
        assert store.get_document(MID) == b"doc"
        labelled = store.set_label(MID, "Sign-ups by region, 2026")
        assert labelled is not None and labelled.label == "Sign-ups by region, 2026"
        assert [m.label for m in store.list_mechanisms()] == ["Sign-ups by region, 2026"]
        assert store.set_label(MID, None).label is None
        assert store.set_label("0" * 64, "x") is None
    finally:
        store.close()
