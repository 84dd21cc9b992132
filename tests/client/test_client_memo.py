"""Memoisation (issue 15): one Y per (owner, randomiser, record value), stored before it leaves (issue 34:
keyed by the randomiser, so a collection's rotation re-sends it).

Against the recording stub aggregator (tests/client/aggregator_stub.py); the live-server
version of the windowed tests needs the service to accept the batch field "window".
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from aggregator_stub import Clock, grr_document
from documents import SMALL_ALPHABET

from rldp.client import Client, PrivacyBudgetExceeded, StateFileError
from rldp.client.state import STATE_FORMAT
from rldp.shared.document import randomiser_key
from rldp.shared.errors import ValidationError

RECORDS = [("Female", "red"), ("Male", "blue"), ("Male", "green"), ("Female", "red")]


def memo_rows(path) -> list[tuple[str, str, int, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT k.mechanism, owner, x, y FROM memo JOIN mechanisms AS k ON k.id = memo.mech"
            " ORDER BY k.mechanism, owner, x"
        ).fetchall()


def test_repeated_reports_of_a_record_send_its_first_y(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    with Client(agg.url, state_path=tmp_path / "state.sqlite3") as client:
        first = client.privatize(doc["id"], RECORDS)
        assert first[0] == first[3]  # the same record value, the same owner: one draw
        for _ in range(20):
            np.testing.assert_array_equal(client.privatize(doc["id"], RECORDS), first)
        receipt = client.submit(doc["id"], RECORDS * 5, batch_size=7, owners="")  # the device owner's
        assert receipt.accepted == 20 and receipt.skipped == 0 and receipt.window is None
    np.testing.assert_array_equal(agg.reports(), np.tile(first, 5))
    assert len(memo_rows(tmp_path / "state.sqlite3")) == 3  # three distinct record values


def test_a_changed_record_gets_its_own_draw_and_the_old_one_is_kept(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "state.sqlite3"
    with Client(agg.url, state_path=path) as client:
        red = client.privatize(doc["id"], [("Male", "red")], rng=np.random.default_rng(1))
        blue = client.privatize(doc["id"], [("Male", "blue")], rng=np.random.default_rng(2))
        again = client.privatize(doc["id"], [("Male", "red"), ("Male", "blue")])
    np.testing.assert_array_equal(again, [red[0], blue[0]])
    x_red, x_blue = SMALL_ALPHABET.encode([("Male", "red"), ("Male", "blue")]).tolist()
    assert [(x, y) for _, _, x, y in memo_rows(path)] == sorted([(x_red, red[0]), (x_blue, blue[0])])


def test_the_memo_outlives_the_client_and_is_per_owner(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "state.sqlite3"
    owners = [f"user-{i}" for i in range(400)]
    records = [("Male", "red")] * 400
    with Client(agg.url, state_path=path) as client:
        ys = client.privatize(doc["id"], records, owners=owners, rng=np.random.default_rng(3))
        device = client.privatize(doc["id"], records)  # owners=None: the device's single owner
    assert len(set(device.tolist())) == 1
    # 400 owners with the same record draw independently: under GRR(ε=1) on 6 outputs the true
    # output has probability e/(e+5); all 400 equal would be a probability ~1e-200 event.
    assert len(set(ys.tolist())) > 1
    with Client(agg.url, state_path=path) as client:  # a new process would see the same file
        np.testing.assert_array_equal(client.privatize(doc["id"], records, owners=owners), ys)
        # Few owners (one query per owner) and many owners (a join) read the same memo.
        np.testing.assert_array_equal(client.privatize(doc["id"], records[:3], owners=owners[:3]), ys[:3])
        np.testing.assert_array_equal(client.privatize(doc["id"], records[:50], owners=owners[:50]), ys[:50])
        np.testing.assert_array_equal(client.privatize(doc["id"], records[0:1], owners=owners[7]), ys[7:8])


def test_vectorised_memo_matches_per_record_memo(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    rng = np.random.default_rng(4)
    x = rng.integers(0, SMALL_ALPHABET.size, 50_000)
    owners = rng.integers(0, 500, x.size)  # integers are accepted as owners (their decimal text)
    # ~100 distinct records per owner: far beyond the default budget; this test is about the memo alone
    with Client(agg.url, state_path=tmp_path / "state.sqlite3", privacy_budget=None) as client:
        ys = client.privatize_indices(doc["id"], x, owners=owners, rng=rng)
        for i in rng.choice(x.size, 200, replace=False).tolist():
            assert client.privatize_indices(doc["id"], [x[i]], owners=str(owners[i]))[0] == ys[i]
        # Within the call, equal (owner, x) keys got equal outputs.
        key = owners * SMALL_ALPHABET.size + x
        order = np.argsort(key, kind="stable")
        same = key[order][1:] == key[order][:-1]
        np.testing.assert_array_equal(ys[order][1:][same], ys[order][:-1][same])
        one_owner = client.privatize_indices(doc["id"], x)
        assert all(len(set(one_owner[x == v].tolist())) == 1 for v in range(SMALL_ALPHABET.size))


def test_entries_of_another_randomiser_are_never_reused(aggregator, tmp_path):
    a, b = grr_document(epsilon=1.0), grr_document(epsilon=1.5)  # same alphabet, another Q
    agg = aggregator(a, b)
    path = tmp_path / "state.sqlite3"
    with Client(agg.url, state_path=path, privacy_budget=None) as client:  # 6 draws of ε ≥ 1: beyond the default
        client.privatize(a["id"], RECORDS)
        assert {m for m, *_ in memo_rows(path)} == {randomiser_key(a)}
        client.privatize(b["id"], RECORDS)
    rows = memo_rows(path)
    assert (
        len([r for r in rows if r[0] == randomiser_key(a)]) == len([r for r in rows if r[0] == randomiser_key(b)]) == 3
    )
    # Overwrite a's entries with an impossible output: b must neither see nor be affected by them.
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE memo SET y = 99 WHERE mech = (SELECT id FROM mechanisms WHERE mechanism = ?)", (randomiser_key(a),)
        )
    with Client(agg.url, state_path=path) as client:
        assert max(client.privatize(b["id"], RECORDS)) < 6
        with pytest.raises(StateFileError, match="corrupt: a memoised output"):
            client.privatize(a["id"], RECORDS)


def test_a_republished_design_resends_the_memoised_y_and_spends_nothing(aggregator, tmp_path):
    """Issue 34, item 5: a collection's rotation re-publishes its design under a new document id; the memo is
    keyed by the randomiser, so the rotation re-sends each record's Y and the budget is not charged again."""
    from rldp.client import PrivacyBudget

    days = [grr_document(epsilon=1.0, window="P1D", tag=f"day {d}") for d in range(30)]
    redesign, third = grr_document(epsilon=1.5, tag="redesign"), grr_document(epsilon=0.5, tag="third")
    assert len({d["id"] for d in days}) == 30 and len({randomiser_key(d) for d in days}) == 1
    agg = aggregator(*days, redesign, third)
    clock = Clock()
    owners = [f"user-{i}" for i in range(len(RECORDS))]
    budget = PrivacyBudget(epsilon=1.5, per="P1D", lifetime=2.5)  # the days' draw and the redesign's, no more
    with Client(agg.url, state_path=tmp_path / "s.sqlite3", privacy_budget=budget, clock=clock) as client:
        sent = []
        for day in days:
            sent.append(client.privatize(day["id"], RECORDS, owners=owners).tolist())
            clock.now += 86_400
        assert sent == [sent[0]] * 30  # the same Y every day: one draw per record
        rows = memo_rows(tmp_path / "s.sqlite3")
        assert len(rows) == len(RECORDS) and {r[0] for r in rows} == {randomiser_key(days[0])}
        client.privatize(redesign["id"], RECORDS, owners=owners)  # a real redesign: a fresh, charged draw
        assert len(memo_rows(tmp_path / "s.sqlite3")) == 2 * len(RECORDS)
        clock.now += 86_400
        with pytest.raises(PrivacyBudgetExceeded):  # lifetime 2 reached: a third Q is refused
            client.privatize(third["id"], RECORDS, owners=owners)
        assert client.privatize(days[-1]["id"], RECORDS, owners=owners).tolist() == sent[0]  # still free


def test_bad_owners_and_indices_are_refused(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    with Client(agg.url, state_path=tmp_path / "s.sqlite3") as client:
        with pytest.raises(ValueError, match="one owner per record"):
            client.privatize(doc["id"], RECORDS, owners=["a", "b"])
        with pytest.raises(ValueError, match="strings"):
            client.privatize(doc["id"], RECORDS, owners=[1.5, 2.5, 3.5, 4.5])
        for bad in ([6], [-1], [0, 7]):
            with pytest.raises(ValueError, match=r"in \[0, 6\)"):
                client.privatize_indices(doc["id"], bad)
            with pytest.raises(ValueError, match=r"in \[0, 6\)"):
                client.privatize_indices(doc["id"], bad * 2, owners=["a", "b"] * len(bad))
    with Client(agg.url, state_path=None) as stateless:
        with pytest.raises(ValidationError, match="owners= needs"):
            stateless.privatize(doc["id"], RECORDS, owners="me")
        assert stateless.privatize(doc["id"], RECORDS).shape == (4,)  # no state: fresh draws, as before


@pytest.mark.slow
def test_memoised_outputs_have_the_one_report_distribution(aggregator, tmp_path):
    # Across many owners the memoised Y of x is distributed as Q(·|x), and no owner's Y ever
    # changes: the aggregator sees one draw per owner however often they report.
    doc = grr_document(epsilon=1.0)
    agg = aggregator(doc)
    n = 30_000
    owners = np.arange(n)
    x = np.repeat(np.array([0, 4]), n // 2)
    with Client(agg.url, state_path=tmp_path / "state.sqlite3", rng=np.random.default_rng(5)) as client:
        first = client.privatize_indices(doc["id"], x, owners=owners)
        for _ in range(3):
            np.testing.assert_array_equal(client.privatize_indices(doc["id"], x, owners=owners), first)
    q = np.array(doc["matrix"])
    for value in (0, 4):
        ys = first[x == value]
        freq = np.bincount(ys, minlength=6) / ys.size
        tol = 5 * np.sqrt(q[:, value] * (1 - q[:, value]) / ys.size)  # 5 standard errors per cell
        assert np.all(np.abs(freq - q[:, value]) < tol), (value, freq, q[:, value])


# -- the state file: mode, bad files, processes, crashes


def test_the_state_file_is_private(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "sub" / "state.sqlite3"
    with Client(agg.url, state_path=path) as client:
        client.privatize(doc["id"], RECORDS)
        for name in os.listdir(path.parent):  # the file, and SQLite's WAL and shared memory
            assert os.stat(path.parent / name).st_mode & 0o777 == 0o600, name
    assert not [n for n in os.listdir(path.parent) if n.endswith(".tmp")]
    os.chmod(path, 0o644)
    with pytest.raises(StateFileError, match="others may read or write it .mode 0644."):
        Client(agg.url, state_path=path)


def _private_file(path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0o600)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("text", "not a readable SQLite database"),
        ("empty", r"is not an rldp client state file \(tables: none\)"),
        ("queue", r"is not an rldp client state file \(tables: queue, sqlite_sequence, stats\)"),
        ("newer", r"has format 'rldp.client-state/4', written by rldp .*; this rldp .* reads 'rldp.client-state/3'"),
        ("damaged", r"table\(s\) memo missing"),
        ("corrupt", "corrupt"),
    ],
)
def test_corrupt_or_foreign_state_files_are_refused_and_left_alone(aggregator, tmp_path, kind, message):
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "state.sqlite3"
    if kind == "text":
        _private_file(path, b"user,colour\nme,red\n" * 100)
    elif kind == "empty":
        _private_file(path, b"")
    elif kind == "queue":
        from rldp.client import OfflineQueue

        OfflineQueue(path).close()
        os.chmod(path, 0o600)
    else:
        with Client(agg.url, state_path=path) as client:
            client.privatize_indices(doc["id"], np.arange(6), owners=[f"owner-{i:05d}" * 20 for i in range(6)])
            client.privatize_indices(doc["id"], np.arange(3000) % 6, owners=[f"o{i:05d}" * 20 for i in range(3000)])
        with sqlite3.connect(path) as conn:
            if kind == "newer":
                conn.execute("UPDATE meta SET value = 'rldp.client-state/4' WHERE key = 'format'")
            elif kind == "damaged":
                conn.execute("DROP TABLE memo")
        if kind == "corrupt":  # scribble over the middle of the file (a b-tree page)
            data = bytearray(path.read_bytes())
            assert len(data) > 5 * 4096
            data[2 * 4096 : 2 * 4096 + 600] = bytes(range(256)) * 2 + bytes(88)
            path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(StateFileError, match=message) as info:
        Client(agg.url, state_path=path)
    assert info.value.path == str(path) and isinstance(info.value, OSError)
    assert path.read_bytes() == before  # never replaced by a fresh memo (that would re-randomise)
    assert STATE_FORMAT == "rldp.client-state/3"


def _privatise_in_a_process(args):
    url, mechanism, path, seed = args
    with Client(url, state_path=path, rng=np.random.default_rng(seed)) as client:
        out = []
        for start in range(0, 600, 100):  # small calls: the processes interleave
            owners = [f"user-{i}" for i in range(start, start + 100)]
            out.append(client.privatize_indices(mechanism, np.arange(start, start + 100) % 6, owners=owners))
        return np.concatenate(out).tolist()


@pytest.mark.slow
def test_processes_sharing_a_state_file_agree(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    path = str(tmp_path / "state.sqlite3")
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(_privatise_in_a_process, [(agg.url, doc["id"], path, seed) for seed in range(4)])
    assert all(r == results[0] for r in results[1:])  # one memoised Y per record, whoever drew it
    assert len(memo_rows(path)) == 600


_CRASH_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from rldp.client import Client
    url, mechanism, path, mode = sys.argv[1:]
    client = Client(url, state_path=path, retries=0)
    if mode == "privatize":  # drawn and stored; killed before anything is sent
        client.privatize(mechanism, [("Male", "red"), ("Female", "blue")])
        os.kill(os.getpid(), signal.SIGKILL)
    client.submit(mechanism, [("Male", "red"), ("Female", "blue")], owners="")  # the server never answers
    """
)


@pytest.mark.slow
def test_a_process_killed_between_draw_and_send_resends_the_stored_y(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "state.sqlite3"
    proc = subprocess.run([sys.executable, "-c", _CRASH_SCRIPT, agg.url, doc["id"], str(path), "privatize"])
    assert proc.returncode == -signal.SIGKILL
    stored = [y for *_, y in memo_rows(path)]
    assert len(stored) == 2 and not agg.batches
    with Client(agg.url, state_path=path) as client:
        client.submit(doc["id"], [("Female", "blue"), ("Male", "red")], owners="")
    x = SMALL_ALPHABET.encode([("Female", "blue"), ("Male", "red")])
    assert agg.reports() == [dict(((x_, y) for _, _, x_, y in memo_rows(path)))[v] for v in x.tolist()]
    assert sorted(agg.reports()) == sorted(stored)


@pytest.mark.slow
def test_a_process_killed_while_sending_resends_the_same_y(aggregator, tmp_path):
    doc = grr_document()
    agg = aggregator(doc)
    agg.mode = "hang"  # the body arrives but is never acknowledged
    path = tmp_path / "state.sqlite3"
    proc = subprocess.Popen([sys.executable, "-c", _CRASH_SCRIPT, agg.url, doc["id"], str(path), "submit"])
    deadline = time.monotonic() + 60
    while not agg.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert agg.in_flight and not agg.batches
    agg.mode = "ok"
    with Client(agg.url, state_path=path) as client:
        client.submit(doc["id"], [("Male", "red"), ("Female", "blue")], owners="")
    assert agg.reports() == agg.in_flight[0]["reports"]


@pytest.mark.parametrize("value", ["'x'", "-3", "2.5", "x'00'"])
@pytest.mark.parametrize("many_owners", [False, True])
def test_a_memo_edited_by_hand_is_a_state_file_error(aggregator, tmp_path, value, many_owners):
    # Issue 27 D8: `UPDATE memo SET y='x'` made privatize raise a bare ValueError.
    doc = grr_document()
    agg = aggregator(doc)
    path = tmp_path / "state.sqlite3"
    owners = [f"o{i}" for i in range(3000)] if many_owners else ["me"] * 3000  # both lookup paths
    x = np.arange(3000) % 6
    with Client(
        agg.url, state_path=path, privacy_budget=None
    ) as client:  # 'me' has 6 records: the memo, not the budget
        client.privatize_indices(doc["id"], x, owners=owners)
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE memo SET y = {value}")
    with (
        Client(agg.url, state_path=path, privacy_budget=None) as client,
        pytest.raises(StateFileError, match="corrupt") as info,
    ):
        client.privatize_indices(doc["id"], x, owners=owners)
    assert info.value.path == str(path)
