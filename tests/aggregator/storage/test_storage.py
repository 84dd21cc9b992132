"""Storage (SQLite and PostgreSQL): mechanisms, idempotent batches, counts, jobs, URLs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from rldp_live import ingest_concurrently, record

from rldp.aggregator.storage import BatchItem, IngestResult, StorageError, open_storage
from rldp.shared.errors import RldpError
from rldp.shared.reports import batch_counts, encode_batch, pack_reports, unpack_reports


@pytest.fixture
def store(backend, databases):
    s = open_storage(databases.url(backend))
    yield s
    s.close()


def test_publish_is_idempotent_and_listed(store):
    created, rec = store.publish(record("a" * 64), b"doc-a")
    assert created and rec.id == "a" * 64 and rec.released == ("colour",) and rec.status == "active"
    created, rec2 = store.publish(record("a" * 64), b"other bytes")
    assert not created and rec2 == rec
    assert store.get_document("a" * 64) == b"doc-a"  # immutable: the first document stays
    store.publish(record("b" * 64), b"doc-b")
    assert [m.id for m in store.list_mechanisms()] == ["a" * 64, "b" * 64]
    assert store.get_mechanism("c" * 64) is None and store.get_document("c" * 64) is None


def test_ingest_accepts_deduplicates_and_detects_conflicts(store):
    store.publish(record("a" * 64), b"doc")
    ys = np.array([0, 1, 1, 5, 5, 5])
    assert store.ingest("a" * 64, "b1", ys, 6).status == "accepted"
    dup = store.ingest("a" * 64, "b1", ys.copy(), 6)
    assert (dup.status, dup.accepted) == ("duplicate", 6)
    assert store.ingest("a" * 64, "b1", ys[::-1].copy(), 6).status == "conflict"
    assert store.ingest("a" * 64, "b1", ys[:5], 6).status == "conflict"
    assert store.ingest("f" * 64, "b1", ys, 6).status == "unknown"
    np.testing.assert_array_equal(store.counts("a" * 64, 6), [1, 2, 0, 0, 0, 3])
    np.testing.assert_array_equal(store.recount("a" * 64, 6), [1, 2, 0, 0, 0, 3])
    assert store.batch_totals("a" * 64) == (1, 6)
    assert store.batch_ids("a" * 64) == {"b1"}


def test_one_group_commit_stores_each_new_batch_once_and_classifies_the_rest(store):
    # A group is written with multi-row statements; every member must still get the answer it
    # would get alone, including a second copy of a batch that is new in the same group.
    store.publish(record("a" * 64), b"doc")
    store.publish(record("d" * 64), b"doc")
    store.retire("d" * 64)
    earlier = np.array([2, 2, 3])
    assert store.ingest("a" * 64, "c", earlier, 6).status == "accepted"

    def item(mid: str, batch: str, ys: list[int]) -> BatchItem:
        digest, encoding, payload, counts = encode_batch(np.array(ys), 6)
        return BatchItem(mid, batch, len(ys), digest, encoding, payload, counts)

    group = [
        item("a" * 64, "a", [0, 1]),
        item("a" * 64, "b", [5]),
        item("a" * 64, "a", [0, 1]),
        item("a" * 64, "a", [1, 1]),
        item("a" * 64, "c", [2, 2, 3]),
        item("a" * 64, "c", [4]),
        item("f" * 64, "x", [0]),
        item("d" * 64, "y", [0]),
    ]
    with store.write_transaction() as conn:
        results = store.ingest_group(conn, group)
    assert [(r.status, r.accepted) for r in results] == [
        ("accepted", 2),
        ("accepted", 1),
        ("duplicate", 2),
        ("conflict", 0),
        ("duplicate", 3),
        ("conflict", 0),
        ("unknown", 0),
        ("retired", 0),
    ]
    np.testing.assert_array_equal(store.counts("a" * 64, 6), [1, 1, 2, 1, 0, 1])
    np.testing.assert_array_equal(store.recount("a" * 64, 6), [1, 1, 2, 1, 0, 1])
    assert store.batch_ids("a" * 64) == {"a", "b", "c"} and store.batch_totals("d" * 64) == (0, 0)


def test_retired_mechanism_refuses_batches(store):
    store.publish(record("a" * 64), b"doc")
    assert store.ingest("a" * 64, "b1", np.array([1]), 6).status == "accepted"
    rec = store.retire("a" * 64)
    assert rec.status == "retired" and rec.retired is not None
    assert store.retire("a" * 64).retired == rec.retired  # idempotent
    assert store.ingest("a" * 64, "b2", np.array([1]), 6).status == "retired"
    assert store.retire("e" * 64) is None
    assert store.batch_totals("a" * 64) == (1, 1)


def test_concurrent_writers_count_every_batch_once(backend, databases):
    """Two storages (as two worker processes would) × 6 threads, with retried batches."""
    url = databases.url(backend)
    stores = [open_storage(url), open_storage(url)]
    stores[0].publish(record("a" * 64, outputs=300), b"doc")
    ingest_concurrently(stores, "a" * 64, 300, n_batches=120, threads=6, seed=1)
    for s in stores:
        s.close()


def test_jobs_round_trip(store):
    job = store.create_job("j" * 32, {"method": "grr"})
    assert job.status == "queued"
    store.update_job("j" * 32, status="done", mechanism="a" * 64, finished=123.0)
    got = store.get_job("j" * 32)
    assert (got.status, got.mechanism, got.finished, got.params) == ("done", "a" * 64, 123.0, {"method": "grr"})
    assert store.get_job("k" * 32) is None
    with pytest.raises(ValueError, match="unknown job fields"):
        store.update_job("j" * 32, id="x")


def test_ping_and_schema_are_idempotent(backend, databases):
    url = databases.url(backend)
    a = open_storage(url)
    b = open_storage(url)  # second init on an existing schema
    a.ping()
    b.ping()
    a.close()
    b.close()


@pytest.mark.parametrize("outputs, dtype", [(2, "<u1"), (256, "<u1"), (257, "<u2"), (70000, "<u4")])
def test_packing_round_trip(outputs, dtype):
    ys = np.array([0, outputs - 1, outputs // 2])
    data = pack_reports(ys, outputs)
    assert len(data) == 3 * np.dtype(dtype).itemsize
    np.testing.assert_array_equal(unpack_reports(data, outputs), ys)


@pytest.mark.parametrize(
    "url, message",
    [
        ("mysql://x/y", "unsupported database URL scheme"),
        ("sqlite://host/path.db", "has a host"),
        ("sqlite:///x.db?journal=off", "unknown SQLite URL option"),
        ("sqlite:///x.db?synchronous=OFF", "synchronous must be FULL, NORMAL or EXTRA"),
        (":memory:", "needs a file path"),
        ("", "non-empty"),
    ],
)
def test_bad_urls_are_clear_errors(url, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        open_storage(url or " ")


@pytest.mark.slow
def test_unreachable_databases_raise_storage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError):
        open_storage(f"sqlite:///{blocker}/sub/db.sqlite3")
    with pytest.raises(StorageError):
        open_storage("postgresql://nobody:wrong@127.0.0.1:1/none?connect_timeout=1")


def test_both_batch_encodings_are_exact(store):
    """Small batches are stored as packed reports, large ones as per-output counts."""
    rng = np.random.default_rng(4)
    small, large = rng.integers(0, 6, 20), rng.integers(0, 6, 5000)
    assert encode_batch(small, 6)[1] == "reports" and encode_batch(large, 6)[1] == "counts"
    for ys in (small, large):
        digest, encoding, payload, counts = encode_batch(ys, 6)
        np.testing.assert_array_equal(batch_counts(encoding, payload, 6), np.bincount(ys, minlength=6))
        assert len(payload) <= max(len(ys), 24)
    # the same multiset in another order is a different batch content (conflict), not a duplicate
    assert encode_batch(large, 6)[0] != encode_batch(large[::-1].copy(), 6)[0]
    store.publish(record("a" * 64), b"doc")
    store.ingest("a" * 64, "s", small, 6)
    store.ingest("a" * 64, "l", large, 6)
    assert store.ingest("a" * 64, "l", large[::-1].copy(), 6).status == "conflict"
    expected = np.bincount(np.concatenate([small, large]), minlength=6)
    np.testing.assert_array_equal(store.recount("a" * 64, 6), expected)
    np.testing.assert_array_equal(store.counts("a" * 64, 6), expected)


class RecordingSink:
    """A GroupSink that commits through a second storage and records what it was asked."""

    def __init__(self, url: str) -> None:
        self.target = open_storage(url, init=False)
        self.items: list[BatchItem] = []
        self.pings = 0
        self.closed = False

    def submit(self, item: BatchItem) -> IngestResult:
        self.items.append(item)
        with self.target.write_transaction() as conn:
            return self.target.ingest_group(conn, [item])[0]

    def ping(self) -> None:
        self.pings += 1

    def close(self) -> None:
        self.closed = True
        self.target.close()


def test_a_sink_receives_every_batch_instead_of_the_storage(databases):
    url = databases.url("sqlite")
    sink = RecordingSink(url)
    store = open_storage(url, sink=sink)
    store.publish(record("a" * 64), b"doc")
    ys = np.array([0, 1, 1, 5])
    assert store.ingest("a" * 64, "b1", ys, 6) == IngestResult("accepted", 4)
    assert store.ingest("a" * 64, "b1", ys, 6) == IngestResult("duplicate", 4)
    assert [(i.mechanism, i.batch, i.n) for i in sink.items] == [("a" * 64, "b1", 4)] * 2
    np.testing.assert_array_equal(sink.items[0].counts, [1, 2, 0, 0, 0, 1])
    np.testing.assert_array_equal(store.counts("a" * 64, 6), [1, 2, 0, 0, 0, 1])
    store.ping()
    assert sink.pings == 1
    store.close()
    assert sink.closed
    other = RecordingSink(url)
    with pytest.raises(ValueError, match="SQLite stores only"):
        open_storage("postgresql://nobody@127.0.0.1:1/none", sink=other)
    other.close()


def test_storage_error_is_an_rldp_error():
    assert issubclass(StorageError, RldpError) and issubclass(StorageError, RuntimeError)


@pytest.mark.slow
def test_the_storage_never_imports_the_writer():
    code = "import sys, rldp.aggregator.storage; assert 'rldp.aggregator.writer' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def _close_while(store, use) -> None:
    """Run ``use(conn, paused)`` in another thread, which waits inside on ``paused`` and then runs a
    statement; close the store meanwhile: close() must wait for it, not close its connection."""
    inside, release, errors = threading.Event(), threading.Event(), []

    def other() -> None:
        try:
            use(inside, release)
        except Exception as exc:  # a statement on a connection closed under it
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()  # waiting for the other thread's connection
    release.set()
    thread.join(10)
    closer.join(10)
    assert errors == [] and not closer.is_alive()


def test_closing_a_sqlite_store_waits_for_a_transaction_in_another_thread(databases):
    # A design job's heartbeat commits from its own thread while the app closes the store: a
    # connection closed under a running statement crashed the process (seen in a test run).
    store = open_storage(databases.url("sqlite"))
    store.create_job("c" * 32, {"method": "grr"})

    def heartbeat(inside: threading.Event, release: threading.Event) -> None:
        with store.write_transaction() as conn:
            inside.set()
            release.wait(10)
            conn.execute("UPDATE rldp_jobs SET heartbeat = 1 WHERE id = ?", ("c" * 32,))

    _close_while(store, heartbeat)


def test_closing_a_sqlite_store_waits_for_a_read_in_another_thread(databases):
    store = open_storage(databases.url("sqlite"))
    rows = []

    def reader(inside: threading.Event, release: threading.Event) -> None:
        with store._connection() as conn:  # a read in progress on this thread's connection
            inside.set()
            release.wait(10)
            rows.append(conn.execute("SELECT COUNT(*) FROM rldp_jobs").fetchone()[0])

    _close_while(store, reader)
    assert rows == [0]
    store.ping()  # a closed store reopens on the next use, as before
    store.close()


def test_closing_a_sqlite_store_from_inside_its_own_connection_does_not_wait(databases, monkeypatch):
    from rldp.aggregator.storage import sqlite

    monkeypatch.setattr(sqlite, "CLOSE_WAIT", 60.0)
    store = open_storage(databases.url("sqlite"))
    start = time.monotonic()
    with store._connection():
        store.close()
    assert time.monotonic() - start < 30  # its own connection is not waited for


def test_sqlite_keeps_temporary_data_in_memory(databases):
    # A group's multi-row INSERT keeps a statement journal past SQLite's 64 KiB spill threshold;
    # with temporary files on disk, each such commit created, wrote and unlinked a file in /var/tmp.
    store = open_storage(databases.url("sqlite"))
    with store._connection() as conn:
        assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # 2 = MEMORY
    store.close()
