"""State format 3 (issue 34, item 5): the memo is keyed by the randomiser, not the document; format 2 migrated.

A format-2 file keyed the memo by document id. Migration (one transaction) keeps every row and lists each
document key as legacy; the client moves a document's rows to its randomiser key when it next uses that
document (it then knows the document, verified). Rows of a document it never sees again stay where they
are: never reused, never dropped, and still charged to their owner's budget.
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest
from aggregator_stub import Clock, grr_document

from rldp.client import Client, PrivacyBudget, PrivacyBudgetExceeded, StateFileError
from rldp.client import state as state_module
from rldp.client.state import STATE_FORMAT
from rldp.shared.document import randomiser_key

RECORDS = [("Female", "red"), ("Male", "blue"), ("Male", "green")]
X = [3 * 0 + 2, 3 * 1 + 0, 3 * 1 + 1]  # RECORDS encoded (sex × colour: Female, Male × blue, green, red)
OWNERS = ["u0", "u1", "u2"]
UNKNOWN = "c" * 64  # a document the client never sees again

FORMAT_2 = (  # rldp.client-state/2 as the previous release wrote it
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE mechanisms (id INTEGER PRIMARY KEY, mechanism TEXT NOT NULL UNIQUE)",
    "CREATE TABLE memo (owner TEXT NOT NULL, mech INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL,"
    " epsilon REAL NOT NULL, created REAL NOT NULL, PRIMARY KEY (owner, mech, x)) WITHOUT ROWID",
    "CREATE TABLE reported (mech INTEGER NOT NULL, window_label TEXT NOT NULL, owner TEXT NOT NULL,"
    " batch TEXT NOT NULL, PRIMARY KEY (mech, window_label, owner)) WITHOUT ROWID",
    "CREATE TABLE outbox (batch TEXT PRIMARY KEY, mechanism TEXT NOT NULL, window_label TEXT NOT NULL,"
    " n INTEGER NOT NULL, body BLOB NOT NULL, created REAL NOT NULL)",
)


def format_2_file(path, rows: list[tuple[str, str, int, int, float]]) -> None:
    """rows: (document id, owner, x, y, ε)."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    with sqlite3.connect(path) as conn:
        for statement in FORMAT_2:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('format', 'rldp.client-state/2'), ('created', '1.0')")
        ids = sorted({r[0] for r in rows})
        conn.executemany("INSERT INTO mechanisms (id, mechanism) VALUES (?, ?)", list(enumerate(ids, 1)))
        conn.executemany(
            "INSERT INTO memo VALUES (?, ?, ?, ?, ?, 100.0)", [(o, ids.index(d) + 1, x, y, e) for d, o, x, y, e in rows]
        )
        conn.execute("INSERT INTO reported VALUES (1, 'w1', 'u0', 'b1')")


def memo_by_key(path) -> dict[str, list[tuple[str, int, int]]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT k.mechanism, owner, x, y FROM memo JOIN mechanisms AS k ON k.id = memo.mech ORDER BY 1, 2, 3"
        ).fetchall()
    out: dict[str, list[tuple[str, int, int]]] = {}
    for key, owner, x, y in rows:
        out.setdefault(key, []).append((owner, x, y))
    return out


def test_a_format_2_file_is_migrated_and_its_rows_move_to_the_randomiser_when_the_document_is_used(
    aggregator, tmp_path
):
    old = grr_document(epsilon=1.0, tag="day 1")
    rotated = grr_document(epsilon=1.0, tag="day 2")  # the same design re-published: the same randomiser
    agg = aggregator(old, rotated)
    path = tmp_path / "s.sqlite3"
    ys = [5, 0, 3]  # not what a draw would likely give all three: a reuse is visible
    format_2_file(path, [(old["id"], o, x, y, 1.0) for o, x, y in zip(OWNERS, X, ys)] + [(UNKNOWN, "u0", 0, 1, 0.5)])
    with Client(agg.url, state_path=path) as client:
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == (STATE_FORMAT,)
            assert conn.execute("SELECT COUNT(*) FROM legacy_memo").fetchone() == (2,)
        assert set(memo_by_key(path)) == {old["id"], UNKNOWN}  # nothing moved yet: the documents are unknown
        # The old document is used (known, verified): its rows move to its randomiser key, reused as they were.
        assert client.privatize(old["id"], RECORDS, owners=OWNERS).tolist() == ys
        by_key = memo_by_key(path)
        assert by_key == {randomiser_key(old): [(o, x, y) for o, x, y in zip(OWNERS, X, ys)], UNKNOWN: [("u0", 0, 1)]}
        # Its rotation then re-sends the same reports, spending nothing.
        assert client.privatize(rotated["id"], RECORDS, owners=OWNERS).tolist() == ys
    with sqlite3.connect(path) as conn:  # the unknown document's row stays legacy, charged (ε 1 + 0.5 for u0)
        assert conn.execute("SELECT COUNT(*) FROM legacy_memo").fetchone() == (1,)
        assert conn.execute("SELECT SUM(epsilon) FROM memo WHERE owner = 'u0'").fetchone() == (1.5,)
        assert conn.execute("SELECT COUNT(*) FROM reported").fetchone() == (1,)  # the ledger is untouched


def test_rows_of_a_document_never_seen_again_still_count_against_the_budget(aggregator, tmp_path):
    new = grr_document(epsilon=1.0, tag="new")
    agg = aggregator(new)
    path = tmp_path / "s.sqlite3"
    format_2_file(path, [(UNKNOWN, "u0", 0, 1, 1.0)])
    budget = PrivacyBudget(epsilon=1.0, per="P1D", lifetime=1.5)
    with Client(agg.url, state_path=path, privacy_budget=budget, clock=Clock()) as client:
        with pytest.raises(PrivacyBudgetExceeded) as info:  # 1 spent before the migration + 1 asked > 1.5
            client.privatize(new["id"], RECORDS[:1], owners="u0")
        assert info.value.spent == pytest.approx(1.0)
    assert memo_by_key(path) == {UNKNOWN: [("u0", 0, 1)]}


def test_a_row_the_randomiser_already_holds_keeps_its_charge_when_adopted(aggregator, tmp_path):
    old, rotated = grr_document(epsilon=1.0, tag="day 1"), grr_document(epsilon=1.0, tag="day 2")
    agg = aggregator(old, rotated)
    path = tmp_path / "s.sqlite3"
    format_2_file(path, [(old["id"], "u0", X[0], 4, 1.0)])
    with Client(agg.url, state_path=path, privacy_budget=None) as client:
        drawn = client.privatize(rotated["id"], RECORDS[:1], owners="u0").tolist()  # a draw under the randomiser
        assert client.privatize(old["id"], RECORDS[:1], owners="u0").tolist() == drawn  # the first one stays
    assert memo_by_key(path) == {randomiser_key(old): [("u0", X[0], drawn[0])], old["id"]: [("u0", X[0], 4)]}
    with sqlite3.connect(path) as conn:  # both draws still charged; nothing left to adopt
        assert conn.execute("SELECT SUM(epsilon) FROM memo").fetchone()[0] == pytest.approx(2.0)
        assert conn.execute("SELECT COUNT(*) FROM legacy_memo").fetchone() == (0,)


def test_a_migration_that_fails_leaves_the_format_2_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite3"
    format_2_file(path, [(UNKNOWN, "u0", 0, 1, 1.0)])
    before = path.read_bytes()
    steps = state_module._OLDER["rldp.client-state/2"]
    monkeypatch.setitem(state_module._OLDER, "rldp.client-state/2", (*steps, "INSERT INTO nowhere VALUES (1)"))
    with pytest.raises(StateFileError, match="cannot be migrated from 'rldp.client-state/2' to 'rldp.client-state/3'"):
        state_module.StateFile(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("rldp.client-state/2",)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {"meta", "mechanisms", "memo", "reported", "outbox"}
        assert conn.execute("SELECT owner, mech, x, y FROM memo").fetchall() == [("u0", 1, 0, 1)]
    monkeypatch.undo()
    state_module.StateFile(path).close()
    assert path.read_bytes() != before


def test_a_file_of_a_newer_format_names_both_versions(tmp_path):
    path = tmp_path / "s.sqlite3"
    state_module.StateFile(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'rldp.client-state/9' WHERE key = 'format'")
        conn.execute("UPDATE meta SET value = '99.0' WHERE key = 'rldp'")
    with pytest.raises(StateFileError) as info:
        state_module.StateFile(path)
    text = str(info.value)
    assert "has format 'rldp.client-state/9', written by rldp 99.0" in text
    assert "reads 'rldp.client-state/3'" in text and "'rldp.client-state/2'" in text and "use a newer rldp" in text


def test_the_rows_kept_under_a_document_id_are_never_looked_up_by_a_randomiser(tmp_path):
    # The two kinds of key never meet: a randomiser key hashes other bytes than any content id.
    doc = grr_document()
    assert randomiser_key(doc) != doc["id"] and len(randomiser_key(doc)) == 64
    assert np.all([c in "0123456789abcdef" for c in randomiser_key(doc)])


def test_a_collection_moves_the_rows_of_its_earlier_documents_so_an_upgraded_app_rotates_for_free(aggregator, tmp_path):
    """An app upgraded mid-collection: its format-2 memo holds day 1's draws under day 1's id; day 2's
    rotation re-publishes the design. The collection's history names day 1, so its rows move first."""
    from rldp.client.collections import Collection

    day1, day2 = grr_document(epsilon=1.0, tag="day 1"), grr_document(epsilon=1.0, tag="day 2")
    agg = aggregator(day1, day2)
    path = tmp_path / "s.sqlite3"
    ys = [5, 0, 3]
    format_2_file(path, [(day1["id"], o, x, y, 1.0) for o, x, y in zip(OWNERS, X, ys)])
    history = {
        "status": "active",
        "current": day2["id"],
        "mechanisms": [{"mechanism": day1["id"], "current": False}, {"mechanism": day2["id"], "current": True}],
    }
    budget = PrivacyBudget(epsilon=1.0, per="P1D", lifetime=1.0)  # no room for another draw
    with Client(agg.url, state_path=path, privacy_budget=budget, clock=Clock()) as client:
        client.collection_info = lambda name: history  # the service's answer for the collection
        _, sent = Collection(client, "usage").privatize(RECORDS, owners=OWNERS)
        assert sent.tolist() == ys  # day 1's draws, re-sent under day 2, free
    assert memo_by_key(path) == {randomiser_key(day1): [(o, x, y) for o, x, y in zip(OWNERS, X, ys)]}
