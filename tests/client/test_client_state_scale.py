"""Client state at scale (issue 35, 4): many new owners in one call, without per-key SQL where none is needed.

The figures are in bench/bench_state.py; these tests check that the fast paths give the answers of
the slow ones (a range scan matched in numpy against the join on a table of keys; the lookup read
once when nothing changed in between) and that they are taken.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from aggregator_stub import grr_document

from rldp.client import ledger, memo
from rldp.client.budget import DEFAULT_BUDGET
from rldp.client.ledger import mark_reported, unreported
from rldp.client.mechanism import Mechanism
from rldp.client.memo import Keys, insert, lookup
from rldp.client.reporting import Reporter
from rldp.client.state import StateFile

# Names that sort next to each other, differ only by a trailing NUL (numpy's str would drop it),
# or leave ASCII: the exact-string matching must keep them apart.
TRICKY = ["", "a", "a\x00", "a\x00b", "ab", "b", "é", "\U0001f600", "10", "9", "1"]


def stored_keys(rng: np.random.Generator, owners: list[str], size: int) -> dict[tuple[str, int], int]:
    return {(o, int(x)): int(rng.integers(0, 6)) for o in owners for x in rng.choice(size, 2, replace=False)}


@pytest.mark.parametrize("factor", [4, 0])  # the range scan, and the join it falls back to
def test_lookup_of_many_owners_finds_exactly_what_is_stored(tmp_path, monkeypatch, factor):
    monkeypatch.setattr(memo, "_RANGE_FACTOR", factor)
    rng = np.random.default_rng(7)
    owners = TRICKY + [f"user-{i}" for i in range(300)]
    stored = stored_keys(rng, [o for o in owners if rng.random() < 0.6], 6)
    state = StateFile(tmp_path / "s.sqlite3")
    with state.write() as conn:
        by_owner = sorted(stored)
        keys = Keys(owners, np.array([owners.index(o) for o, _ in by_owner]), np.array([x for _, x in by_owner]))
        insert(conn, "m1", keys, np.array([stored[k] for k in by_owner]), 1.0, 0.0)
        insert(conn, "m2", keys, np.zeros(len(keys), dtype=np.int64), 1.0, 0.0)  # another mechanism's: never read
    asked_owner = rng.integers(0, len(owners), 500)
    asked_x = rng.integers(0, 6, 500)
    pairs = sorted(set(zip(asked_owner.tolist(), asked_x.tolist(), strict=True)))
    keys = Keys(owners, np.array([o for o, _ in pairs]), np.array([x for _, x in pairs]))
    with state.read() as conn:
        got = lookup(conn, "m1", keys, 6, state.path)
    expected = [stored.get((owners[o], x), -1) for o, x in pairs]
    assert got.tolist() == expected
    assert (got >= 0).sum() > 50 and (got < 0).sum() > 50


@pytest.mark.parametrize("factor", [4, 0])
def test_unreported_finds_exactly_the_owners_reported_in_the_window(tmp_path, monkeypatch, factor):
    monkeypatch.setattr(ledger, "_RANGE_FACTOR", factor)
    owners = TRICKY + [f"user-{i}" for i in range(100)]
    done = set(owners[::3])
    state = StateFile(tmp_path / "s.sqlite3")
    with state.write() as conn:
        mark_reported(conn, "m1", "2026-12-07", sorted(done), "batch1")
        mark_reported(conn, "m1", "2026-12-06", owners, "batch0")  # another window's
        mark_reported(conn, "m2", "2026-12-07", owners, "batch2")  # another mechanism's
    with state.read() as conn:
        mask = unreported(conn, "m1", "2026-12-07", owners)
    assert mask.tolist() == [o not in done for o in owners]


def test_a_first_report_of_many_owners_fills_no_table_of_keys(tmp_path, monkeypatch):
    filled = []
    for module in (memo, ledger):
        original = module.fill_keys
        monkeypatch.setattr(module, "fill_keys", lambda conn, keys, f=original: (filled.append(1), f(conn, keys)))
    mech = Mechanism.from_document(grr_document(window="P1D"))
    reporter = Reporter(StateFile(tmp_path / "s.sqlite3"), DEFAULT_BUDGET, time.time)
    x = np.arange(1_000) % mech.size
    owners = np.arange(1_000).astype(str)
    prepared = reporter.prepare(mech, x, owners, None, 300)
    assert sum(item.n for item in prepared.batches) == 1_000
    again = reporter.prepare(mech, x, owners, None, 300)  # a repeat in the window: every owner skipped
    assert (again.skipped, again.batches) == (1_000, [])
    assert filled == []


def test_the_lookup_is_read_once_when_nothing_was_written_in_between(tmp_path, monkeypatch):
    calls = []
    original = lookup
    monkeypatch.setattr("rldp.client.reporting.lookup", lambda *a: (calls.append(1), original(*a))[1])
    mech = Mechanism.from_document(grr_document())
    reporter = Reporter(StateFile(tmp_path / "s.sqlite3"), None, time.time)
    reporter.privatize(mech, np.arange(50) % mech.size, np.arange(50).astype(str), None)
    assert len(calls) == 1


def test_a_draw_written_by_another_process_in_between_is_reused(tmp_path, monkeypatch):
    mech = Mechanism.from_document(grr_document())
    path = tmp_path / "s.sqlite3"
    mine, other = StateFile(path), StateFile(path)  # two connections, as two processes have
    x, owners = np.arange(40) % mech.size, np.arange(40).astype(str)
    theirs: list[np.ndarray] = []
    write = mine.write

    def write_after_the_other() -> object:  # the other process draws between this one's read and write
        if not theirs:
            theirs.append(Reporter(other, None, time.time).privatize(mech, x, owners, None))
        return write()

    monkeypatch.setattr(mine, "write", write_after_the_other)
    ours = Reporter(mine, None, time.time).privatize(mech, x, owners, None)
    np.testing.assert_array_equal(ours, theirs[0])  # its draws, not new ones (and no duplicate row)


def test_the_ledger_has_no_index_by_batch_and_a_release_takes_only_its_batch(tmp_path):
    state = StateFile(tmp_path / "s.sqlite3")
    with state.read() as conn:
        indexes = [
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        ]
    assert "reported_batch" not in indexes  # a second, wide entry per report, for a rare case
    with state.write() as conn:
        mark_reported(conn, "m1", "w1", ["a", "b"], "batch1")
        mark_reported(conn, "m1", "w1", ["c"], "batch2")
        mark_reported(conn, "m1", "w2", ["a"], "batch3")
        ledger.release_batch(conn, "batch1", "m1", "w1")
    with state.read() as conn:
        rows = conn.execute(
            "SELECT k.mechanism, window_label, owner, batch FROM reported JOIN mechanisms AS k ON k.id = reported.mech"
            " ORDER BY 1, 2, 3"
        ).fetchall()
    assert rows == [("m1", "w1", "c", "batch2"), ("m1", "w2", "a", "batch3")]


# -- state format 2: mechanism ids as integers, the memo keyed by owner first (no second index), format 1 migrated

FORMAT_1 = (  # rldp.client-state/1 as the previous release wrote it (with the older ledger index by batch)
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE memo (mechanism TEXT NOT NULL, owner TEXT NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL,"
    " epsilon REAL NOT NULL, created REAL NOT NULL, PRIMARY KEY (mechanism, owner, x)) WITHOUT ROWID",
    "CREATE INDEX memo_spending ON memo (owner, created)",
    "CREATE TABLE reported (mechanism TEXT NOT NULL, window_label TEXT NOT NULL, owner TEXT NOT NULL,"
    " batch TEXT NOT NULL, PRIMARY KEY (mechanism, window_label, owner)) WITHOUT ROWID",
    "CREATE INDEX reported_batch ON reported (batch)",
    "CREATE TABLE outbox (batch TEXT PRIMARY KEY, mechanism TEXT NOT NULL, window_label TEXT NOT NULL,"
    " n INTEGER NOT NULL, body BLOB NOT NULL, created REAL NOT NULL)",
)


def _format_1_file(path, memo_rows, reported_rows) -> None:
    import os
    import sqlite3

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    with sqlite3.connect(path) as conn:
        for statement in FORMAT_1:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('format', 'rldp.client-state/1'), ('created', '1.0')")
        conn.executemany("INSERT INTO memo VALUES (?, ?, ?, ?, ?, ?)", memo_rows)
        conn.executemany("INSERT INTO reported VALUES (?, ?, ?, ?)", reported_rows)
        conn.execute("INSERT INTO outbox VALUES ('b1', ?, 'w1', 2, x'00', 5.0)", ("m" * 64,))


def test_a_format_1_state_file_is_migrated_with_every_draw_charge_and_ledger_row(tmp_path):
    from rldp.client.budget import _spent
    from rldp.client.ledger import outbox_pending
    from rldp.client.state import STATE_FORMAT

    m1, m2 = "a" * 64, "b" * 64
    memo_rows = [(m1, o, x, (x + 1) % 6, 0.5, 100.0 + i) for i, o in enumerate(TRICKY) for x in (0, 3)]
    memo_rows += [(m2, "a", 1, 4, 1.25, 500.0)]
    reported_rows = [(m1, "w1", o, "b1") for o in TRICKY[:4]] + [(m2, "w2", "z", "b2")]
    path = tmp_path / "old.sqlite3"
    _format_1_file(path, memo_rows, reported_rows)
    state = StateFile(path)
    with state.read() as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0] == STATE_FORMAT
        indexes = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        ]
        assert indexes == []  # memo_spending and reported_batch went with the old tables
        keys = Keys(sorted(TRICKY), *np.divmod(np.arange(len(TRICKY) * 6), 6))
        ys = lookup(conn, m1, keys, 6, state.path)
        want = {(o, x): y for m, o, x, y, _, _ in memo_rows if m == m1}
        assert ys.tolist() == [want.get((keys.owners[o], int(x)), -1) for o, x in zip(keys.owner, keys.x, strict=True)]
        assert lookup(conn, m2, Keys(["a"], np.array([0]), np.array([1])), 6, state.path).tolist() == [4]
        assert unreported(conn, m1, "w1", sorted(TRICKY)).tolist() == [o not in TRICKY[:4] for o in sorted(TRICKY)]
        assert unreported(conn, m2, "w2", ["y", "z"]).tolist() == [True, False]
        spent = _spent(conn, ["a", "b"], 200.0)  # a: 2 draws of m1 at 0.5 (before 200), 1 of m2 at 1.25 (after)
        np.testing.assert_allclose(spent, [[1.25, 1, 2.25, 3], [0, 0, 1.0, 2]])
        assert [b.batch for b in outbox_pending(conn, "m" * 64)] == ["b1"]
    state.close()
    StateFile(path).close()  # opening again: already format 2


@pytest.mark.parametrize("factor", [4, 0])  # the range scan, and the join it falls back to
def test_the_budget_reads_the_same_spending_by_range_scan_and_by_join(tmp_path, monkeypatch, factor):
    from rldp.client import budget

    monkeypatch.setattr(budget, "_RANGE_FACTOR", factor)
    rng = np.random.default_rng(3)
    owners = sorted(TRICKY + [f"user-{i}" for i in range(200)])
    state = StateFile(tmp_path / "s.sqlite3")
    rows = [(o, m, int(x), float(rng.choice([0.5, 1.0])), float(rng.integers(0, 100))) for o in owners
            for m in ("m1", "m2") for x in rng.choice(6, int(rng.integers(0, 3)), replace=False)]  # fmt: skip
    with state.write() as conn:
        for o, m, x, eps, created in rows:
            insert(conn, m, Keys([o], np.array([0]), np.array([x])), np.array([0]), eps, created)
    asked = owners[5:60] + ["nobody", "user-99"]  # some with draws, some without, others' rows in the range
    with state.read() as conn:
        spent = budget._spent(conn, asked, 50.0)
    for i, owner in enumerate(asked):
        mine = [(eps, created) for o, _, _, eps, created in rows if o == owner]
        recent = [eps for eps, created in mine if created >= 50.0]
        np.testing.assert_allclose(spent[i], [sum(recent), len(recent), sum(e for e, _ in mine), len(mine)])
    assert spent[asked.index("nobody")].tolist() == [0, 0, 0, 0]


def test_a_first_draw_of_new_owners_fills_no_key_table_for_the_budget(tmp_path, monkeypatch):
    from rldp.client import budget

    def no_key_table(*args, **kwargs):
        raise AssertionError("the budget filled a key table for owners that are all new")

    monkeypatch.setattr(budget, "fill_keys", no_key_table)
    state = StateFile(tmp_path / "s.sqlite3")
    mech = Mechanism.from_document(grr_document())
    owners = np.array([f"new-{i:05d}" for i in range(2000)])
    Reporter(state, DEFAULT_BUDGET, time.time).privatize(mech, np.arange(2000) % 6, owners, None)
    with state.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM memo").fetchone()[0] == 2000


def test_a_migration_that_fails_leaves_the_format_1_file_whole(tmp_path, monkeypatch):
    import sqlite3

    from rldp.client import state as state_module
    from rldp.client.errors import StateFileError

    path = tmp_path / "old.sqlite3"
    _format_1_file(path, [("a" * 64, "u", 1, 2, 0.5, 1.0)], [("a" * 64, "w", "u", "b1")])
    steps = state_module._OLDER["rldp.client-state/1"]
    monkeypatch.setitem(state_module._OLDER, "rldp.client-state/1", (*steps, "INSERT INTO nowhere VALUES (1)"))
    with pytest.raises(StateFileError, match="cannot be migrated from 'rldp.client-state/1'"):
        StateFile(path)
    with sqlite3.connect(path) as conn:  # rolled back: the old tables, rows and format, nothing new
        assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("rldp.client-state/1",)
        assert conn.execute("SELECT mechanism, owner, x, y FROM memo").fetchall() == [("a" * 64, "u", 1, 2)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {"meta", "memo", "reported", "outbox"}
    monkeypatch.undo()
    with StateFile(path).read() as conn:
        assert lookup(conn, "a" * 64, Keys(["u"], np.array([0]), np.array([1])), 6, str(path)).tolist() == [2]
