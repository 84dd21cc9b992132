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
        rows = conn.execute("SELECT mechanism, window_label, owner, batch FROM reported ORDER BY 1, 2, 3").fetchall()
    assert rows == [("m1", "w1", "c", "batch2"), ("m1", "w2", "a", "batch3")]
