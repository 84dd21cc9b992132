"""rldp backup / restore / prune (SQLite; PostgreSQL with RLDP_TEST_POSTGRES_URL and pg_dump on PATH).

The load tests run a separate feeder process that ingests batches and prints each batch's id and
the time its acknowledgement returned; the backup (or prune) runs meanwhile in the test process.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import numpy as np
import pytest
from rldp_live import record

from rldp.aggregator.storage import open_storage
from rldp.aggregator.storage.backup import backup, pg_tools_missing, restore
from rldp.aggregator.storage.retention import inventory, prune
from rldp.aggregator.storage.rows import StorageError
from rldp.cli import main

MECH = "e" * 64
K = 6

FEEDER = """
import sys, time
import numpy as np
from rldp.aggregator.storage import open_storage
store = open_storage(sys.argv[1])
i = 0
while True:
    ys = np.random.default_rng(i).integers(0, 6, size=20 + i % 30)
    result = store.ingest(sys.argv[2], f"p{i}", ys, 6)
    if result.status != "accepted":
        print("refused", i, result.status, flush=True)
        break
    print(i, repr(time.time()), flush=True)
    i += 1
    if i % 50 == 0:
        time.sleep(0.002)
"""


def reports_of(i: int) -> np.ndarray:
    return np.random.default_rng(i).integers(0, K, size=20 + i % 30)


def counts_of(ids) -> np.ndarray:
    return sum((np.bincount(reports_of(int(b[1:])), minlength=K) for b in ids), np.zeros(K, dtype=np.int64))


class Feeder:
    """A process ingesting batches p0, p1, … of MECH; ``acked`` maps batch id → time its ack returned."""

    def __init__(self, url: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FEEDER, url, MECH], stdout=subprocess.PIPE, text=True)
        self.acked: dict[str, float] = {}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            parts = line.split()
            assert not parts or parts[0] != "refused", line
            if not line.endswith("\n") or len(parts) != 2:  # stopped while printing it: as if unacknowledged
                continue
            self.acked[f"p{parts[0]}"] = float(parts[1])

    def wait_for(self, n: int, timeout: float = 30.0) -> None:
        deadline = time.time() + timeout
        while len(self.acked) < n:
            assert self.proc.poll() is None and time.time() < deadline, "the feeder stopped"
            time.sleep(0.01)

    def stop(self) -> dict[str, float]:
        self.proc.terminate()  # between two batches or inside one: an unacknowledged batch is not counted here
        self.proc.wait(10)
        self.reader.join(10)
        return dict(self.acked)


@pytest.fixture
def url(backend, databases):
    if backend == "postgresql" and pg_tools_missing():
        pytest.skip(f"PostgreSQL backups: {pg_tools_missing()}")
    u = databases.url(backend)
    s = open_storage(u)
    s.publish(record(MECH, outputs=K), b"doc")
    s.close()
    return u


def empty_target(backend: str, url: str, databases, tmp_path) -> str:
    """Where the backup is restored: a new SQLite file, or (PostgreSQL: a dump restores into the schema
    it came from) the same schema emptied of rldp's tables."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'restored' / 'rldp.sqlite3'}"
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        for name in names:
            conn.execute(f"DROP TABLE {name} CASCADE")
    return url


def test_backup_during_ingestion_restores_exactly_what_was_acknowledged(backend, url, databases, tmp_path):
    feeder = Feeder(url)
    try:
        feeder.wait_for(100)
        started = time.time()  # every batch acknowledged before this must be in the backup
        summary = backup(url, str(tmp_path / "b.bak"))
        ended = time.time()
        feeder.wait_for(len(feeder.acked) + 50)  # ingestion goes on after the backup
    finally:
        acked = feeder.stop()
    before = {b for b, t in acked.items() if t < started}
    assert before and any(t > ended for t in acked.values())
    restored_url = empty_target(backend, url, databases, tmp_path)
    got = restore(restored_url, str(tmp_path / "b.bak"))
    store = open_storage(restored_url)
    try:
        ids = store.batch_ids(MECH)
        assert before <= ids  # every acknowledged batch before the backup began
        # nothing half-written: every batch whole, counts equal to their batches, the summary the truth
        assert ids <= set(acked) | {f"p{len(acked)}"}  # (the feeder may have been stopped after a commit)
        np.testing.assert_array_equal(store.counts(MECH, K), counts_of(ids))
        np.testing.assert_array_equal(store.recount(MECH, K), counts_of(ids))
        assert got.reports[MECH] == summary.reports[MECH] == (len(ids), int(counts_of(ids).sum()))
        assert store.ingest(MECH, "p0", reports_of(0), K).status == "duplicate"  # idempotency survives
    finally:
        store.close()


def test_prune_under_load_keeps_counts_exact_and_a_resent_batch_is_not_counted_twice(url):
    feeder = Feeder(url)
    try:
        feeder.wait_for(150)
        cut = time.time()
        feeder.wait_for(len(feeder.acked) + 100)
        store = open_storage(url)
        # two prunes at once (PostgreSQL writers run concurrently): each batch is removed once
        results: list[dict] = []
        threads = [threading.Thread(target=lambda: results.append(prune(store, cut))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        feeder.wait_for(len(feeder.acked) + 50)
    finally:
        acked = feeder.stop()
    try:
        live = store.batch_ids(MECH)
        early = {b for b, t in acked.items() if t < cut}
        assert early and not (early & live)  # acknowledged before the cut ⇒ received before it ⇒ pruned
        removed = sum(r.get(MECH, (0, 0))[0] for r in results)
        assert removed == len(set(acked) - live)  # counted once, by one of the two prunes
        np.testing.assert_array_equal(store.counts(MECH, K), counts_of(live))
        np.testing.assert_array_equal(store.recount(MECH, K), counts_of(live))
        assert store.batch_totals(MECH) == (len(live), int(counts_of(live).sum()))
        resent = store.ingest(MECH, "p0", reports_of(0), K)  # a pruned batch re-sent: known, not counted again
        assert (resent.status, resent.accepted) == ("duplicate", len(reports_of(0)))
        assert store.ingest(MECH, "p0", reports_of(1), K).status == "conflict"
        np.testing.assert_array_equal(store.counts(MECH, K), counts_of(live))
        assert prune(store, cut) == {}  # nothing left to prune
    finally:
        store.close()


def test_prune_by_mechanism_collection_and_dry_run(url, monkeypatch, capsys):
    from rldp.aggregator.storage import retention

    monkeypatch.setattr(retention, "PRUNE_CHUNK", 2)  # 3 batches: two transactions
    store = open_storage(url)
    try:
        other = "f" * 64
        store.publish(record(other, outputs=K), b"doc")
        for i in range(3):
            store.ingest(MECH, f"p{i}", reports_of(i), K)
            store.ingest(other, f"p{i}", reports_of(i), K)
        time.sleep(0.01)
        cut = time.time()
        expected = (3, int(counts_of(["p0", "p1", "p2"]).sum()))
        assert prune(store, cut, [other], dry_run=True) == {other: expected}
        assert store.batch_totals(other) == expected  # a dry run changes nothing
        assert prune(store, cut, [other]) == {other: expected}
        assert store.batch_totals(other) == (0, 0) and not store.counts(other, K).any()
        assert store.batch_totals(MECH) == expected  # the other mechanism untouched
        assert inventory(store).reports == {MECH: expected}
        store.create_collection("usage", "", {"notion": "rldp", "epsilon": 1.0}, None, MECH)
    finally:
        store.close()
    stamp = datetime.fromtimestamp(cut, UTC).isoformat()
    code, _, err = run(capsys, "prune", "--before", stamp, "--db", url, "--collection", "nope")
    assert code == 2 and "no such collection" in err
    code, out, _ = run(capsys, "prune", "--before", stamp, "--db", url, "--collection", "usage", "--json")
    assert code == 0
    assert json.loads(out)["removed"] == {MECH: {"batches": expected[0], "reports": expected[1]}}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_refusals_and_summaries(url, backend, databases, tmp_path, capsys):
    store = open_storage(url)
    store.ingest(MECH, "p0", reports_of(0), K)
    store.close()
    for bad in ("yesterday", "2026-13-01", "", "2999-01-01"):
        code, out, err = run(capsys, "prune", "--before", bad, "--db", url)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "--before" in err and "Traceback" not in err
    code, out, err = run(capsys, "prune", "--db", url)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "give --before DATE" in err
    code, out, _ = run(capsys, "prune", "--before", "2000-01-01", "--db", url, "--dry-run")
    assert code == 0 and out.startswith("would remove 0 reports")
    code, _, err = run(capsys, "prune", "--before", "2000-01-01", "--db", url, "--mechanism", "zz")
    assert code == 2 and "no mechanism" in err
    bak = str(tmp_path / "x.bak")
    code, out, _ = run(capsys, "backup", bak, "--db", url)
    assert code == 0 and "1 mechanisms, 1 batches" in out
    code, _, err = run(capsys, "backup", bak, "--db", url)
    assert code == 2 and "exists" in err
    code, _, err = run(capsys, "restore", bak, "--db", url)  # the source store is not empty
    assert code == 2 and "not empty" in err and "--force" in err
    code, out, _ = run(capsys, "restore", bak, "--db", url, "--force")
    assert code == 0 and MECH in out and "1 batches" in out
    junk = tmp_path / "junk.bak"
    junk.write_bytes(b"hello")
    code, _, err = run(capsys, "restore", str(junk), "--db", url)
    assert code == 2 and "not an rldp backup" in err


def test_restore_refuses_an_unknown_schema_version(tmp_path):
    url = f"sqlite:///{tmp_path / 'a' / 'rldp.sqlite3'}"
    open_storage(url).close()
    bak = tmp_path / "a.bak"
    backup(url, str(bak))
    with sqlite3.connect(bak) as conn:
        conn.execute("UPDATE rldp_meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(StorageError, match="schema version 99"):
        restore(f"sqlite:///{tmp_path / 'b' / 'rldp.sqlite3'}", str(bak))
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StorageError, match="not an rldp store"):
        restore(f"sqlite:///{tmp_path / 'c' / 'rldp.sqlite3'}", str(other))
    with pytest.raises(StorageError, match="no store"):
        backup(f"sqlite:///{tmp_path / 'none' / 'rldp.sqlite3'}", str(tmp_path / "n.bak"))
    assert not os.path.exists(tmp_path / "n.bak")


def test_default_store_is_in_the_user_data_folder_not_the_working_directory(tmp_path, monkeypatch, capsys):
    from rldp.aggregator.services import load_config
    from rldp.aggregator.storage import default_url

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RLDP_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    if sys.platform.startswith(("win", "darwin")):
        pytest.skip("the XDG rule is the one for Linux and other Unix systems")
    expected = f"sqlite:///{tmp_path / 'xdg' / 'rldp' / 'rldp.sqlite3'}"
    assert default_url() == expected and load_config({})["DATABASE_URL"] == expected
    code, out, _ = run(capsys, "prune", "--before", "2000-01-01", "--dry-run")  # the commands use it too
    assert code == 0 and (tmp_path / "xdg" / "rldp" / "rldp.sqlite3").exists()
    assert not (tmp_path / "rldp-data").exists()


def test_store_commands_are_listed_by_the_root_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("backup", "restore", "prune"))
    with pytest.raises(SystemExit):
        main(["prune", "--help"])
    assert "--dry-run" in capsys.readouterr().out
