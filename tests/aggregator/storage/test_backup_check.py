"""Issue 35 D24: ``rldp restore`` refuses a backup whose batch payloads do not decode (a flipped byte in
one payload), naming the first bad batch, before anything is written to the target; an intact backup of
the same store restores."""

from __future__ import annotations

import numpy as np
import pytest
from rldp_live import record

from rldp.aggregator.storage import StorageError, open_storage
from rldp.aggregator.storage.backup import backup, pg_tools_missing, restore
from rldp.aggregator.storage.backup_check import copy_rows
from rldp.aggregator.storage.retention import inventory

MECH = "e" * 64


@pytest.fixture
def source(backend, databases):
    if backend == "postgresql" and pg_tools_missing():
        pytest.skip(pg_tools_missing())
    url = databases.url(backend)
    store = open_storage(url)
    store.publish(record(MECH, outputs=6), b"doc")
    rng = np.random.default_rng(35)
    for i in range(6):  # a few reports: stored packed ("reports"); 60: as counts ("counts")
        assert store.ingest(MECH, f"b{i}", rng.integers(0, 6, size=3 if i % 2 else 60), 6).status == "accepted"
    store.close()
    return url


def _flip_one_payload_byte(url: str, batch: str) -> None:
    store = open_storage(url)
    try:
        with store.write_transaction() as conn:
            payload = bytearray(
                conn.execute(store._sql("SELECT payload FROM rldp_batches WHERE batch = ?"), (batch,)).fetchone()[0]
            )
            payload[len(payload) // 2] ^= 0x01
            conn.execute(store._sql("UPDATE rldp_batches SET payload = ? WHERE batch = ?"), (bytes(payload), batch))
    finally:
        store.close()


def _batches(url: str) -> int:
    store = open_storage(url)
    try:
        return inventory(store).reports[MECH][0]
    finally:
        store.close()


@pytest.mark.parametrize(("batch", "why"), [("b3", "does not match its SHA-256 digest"), ("b2", "add up to")])
def test_a_backup_with_one_corrupt_payload_is_refused_before_anything_is_written(source, tmp_path, batch, why):
    # (a pg_dump archive restores into the schema it came from: the target is the source store, with --force)
    good = str(tmp_path / "good.bak")
    backup(source, good)
    _flip_one_payload_byte(source, batch)
    bad = str(tmp_path / "bad.bak")
    backup(source, bad)
    store = open_storage(source)
    store.ingest(MECH, "after", np.zeros(4, dtype=np.int64), 6)  # the target now differs from both backups
    store.close()
    with pytest.raises(StorageError, match=f"is corrupt: batch '{batch}' of mechanism {MECH}: its .*{why}"):
        restore(source, bad, force=True)
    assert _batches(source) == 7  # untouched
    restore(source, good, force=True)  # the intact backup restores
    assert _batches(source) == 6


def test_copy_rows_reads_pg_restore_text():
    lines = [
        "SET x = 1;\n",
        'COPY "s".rldp_batches (mechanism, batch, n, payload) FROM stdin;\n',
        "m\tb\\tc\\\\d\t3\t\\\\x00ff01\n",
        "m\t\\N\t1\t\\\\x\n",
        "\\.\n",
        "COPY s.other (a) FROM stdin;\n",
    ]
    rows = list(copy_rows(lines, "rldp_batches"))
    assert rows == [
        {"mechanism": "m", "batch": "b\tc\\d", "n": "3", "payload": b"\x00\xff\x01"},
        {"mechanism": "m", "batch": None, "n": "1", "payload": b""},
    ]
