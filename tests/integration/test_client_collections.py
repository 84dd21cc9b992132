"""Following a collection: the SDK (rotations, verification, the budget across rotations), `rldp privatize
--collection`, owners required with --state, and the operator's `rldp collection` commands."""

from __future__ import annotations

import json
import sqlite3
import uuid

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run_cli
from rldp_live import ADMIN_TOKEN, READ_TOKEN, make_document

from rldp.admin import AdminClient
from rldp.aggregator.storage import open_storage
from rldp.client import (
    DEFAULT_BUDGET,
    Client,
    CollectionRetired,
    MechanismRejected,
    PrivacyBudget,
    PrivacyBudgetExceeded,
)
from rldp.shared.tolerances import AUDIT_TOLERANCE

POLICY = {"notion": "rldp", "epsilon": 1.0}
RECORD = [("Female", "red")]


def counts(server, mid: str) -> np.ndarray:
    store = open_storage(server.db_url)
    try:
        return store.counts(mid, 6)
    finally:
        store.close()


def collection(server, n: int, *, redesigns: bool = False, **create) -> tuple[str, list[str]]:
    """A new collection on the live server with ``n`` published mechanisms, the first one current.

    The mechanisms re-publish one design (one randomiser: a rotation re-sends the memoised draw), or with
    ``redesigns`` each has a Q of its own (GRR at ε = 1 − i·10⁻⁷: a fresh draw each, ε = 1 to within 10⁻⁶).
    Without windows (created with window 'none'): these tests count every memoised repeat and every
    rotation's draw; one report per owner and window is tests/client/test_client_windows.py's."""
    name = f"usage-{uuid.uuid4().hex[:10]}"
    docs = [make_document(f"{name}-{i}", epsilon=1.0 - i * 1e-7 if redesigns else 1.0) for i in range(n)]
    create.setdefault("window", "none")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        for doc in docs:
            admin.publish(doc)
        answer = admin.create_collection(name, docs[0]["id"], POLICY, description="daily use", **create)
        assert answer["created"] and answer["current"] == docs[0]["id"]
    return name, [d["id"] for d in docs]


def rotate(server, name: str, mid: str) -> None:
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        assert admin.rotate_collection(name, mid)["current"] == mid


def memo(path) -> list[tuple[str, float]]:
    with sqlite3.connect(path) as conn:
        return [
            (str(m), float(e))
            for m, e in conn.execute(
                "SELECT k.mechanism, epsilon FROM memo JOIN mechanisms AS k ON k.id = memo.mech ORDER BY created"
            )
        ]


def test_a_rotation_of_the_same_design_resends_the_memoised_draw_and_spends_nothing(server, tmp_path):
    # Issue 34 (5): the memo is keyed by the randomiser, not the document; what an app sees on rotation.
    name, mids = collection(server, 5)
    state = tmp_path / "state.sqlite3"
    budget = PrivacyBudget(epsilon=1.0 + 1e-6)  # room for one draw in all
    with Client(server.url, state_path=state, privacy_budget=budget) as app:
        usage = app.collection(name)
        assert usage.submit(RECORD).accepted == 1
        first = counts(server, mids[0])
        for mid in mids[1:]:
            rotate(server, name, mid)
            assert usage.submit(RECORD).accepted == 1  # no refusal, no error: the same report, free
            np.testing.assert_array_equal(counts(server, mid), first)
    assert len(memo(state)) == 1


def test_a_client_follows_redesigns_and_never_exceeds_its_budget(server, tmp_path):
    name, (m0, m1, m2) = collection(server, 3, redesigns=True)
    state = tmp_path / "state.sqlite3"
    budget = PrivacyBudget(epsilon=2.0)  # lifetime: two fresh draws of an ε = 1 mechanism
    with Client(server.url, state_path=state, privacy_budget=budget) as app:
        usage = app.collection(name)
        for _ in range(3):  # memoised: one draw, sent three times
            assert usage.submit(RECORD).accepted == 1
        assert counts(server, m0).max() == 3
        rotate(server, name, m1)
        assert usage.submit(RECORD).accepted == 1  # a redesign: a fresh draw under m1
        assert counts(server, m1).sum() == 1
        assert [m for m, _ in memo(state)] == [app.mechanism(m).memo_key for m in (m0, m1)]
        rotate(server, name, m2)
        with pytest.raises(PrivacyBudgetExceeded) as info:  # a third draw would spend 3 > 2
            usage.submit(RECORD)
        assert "nothing was sent" in str(info.value) and info.value.spent == pytest.approx(2.0)
        assert counts(server, m2).sum() == 0
        assert usage.info()["current"] == m2 and len(usage.info()["mechanisms"]) == 3
    spent = sum(e for _, e in memo(state))
    assert spent <= budget.epsilon + 2 * AUDIT_TOLERANCE and len(memo(state)) == 2


def test_by_default_a_client_spends_at_most_the_default_budget_across_redesigns(server, tmp_path):
    # No privacy_budget given: DEFAULT_BUDGET (4 nats per owner per UTC day, and 4 in all) bounds an operator
    # who redesigns a collection again and again; each redesign is a fresh draw of an ε = 1 mechanism. A per-day
    # budget alone renewed the next day (issue 34, 5): the lifetime cap does not.
    assert DEFAULT_BUDGET == PrivacyBudget(epsilon=4.0, per="P1D", lifetime=4.0)
    name, mids = collection(server, 6, redesigns=True)
    state = tmp_path / "state.sqlite3"
    now = [86_400.0 * 20_000 + 10]  # a fixed UTC day
    with Client(server.url, state_path=state, clock=lambda: now[0]) as app:
        usage = app.collection(name)
        for mid in mids[:4]:
            if mid != mids[0]:
                rotate(server, name, mid)
            assert usage.submit(RECORD).accepted == 1
        rotate(server, name, mids[4])
        with pytest.raises(PrivacyBudgetExceeded) as info:  # a fifth draw: 5 > 4
            usage.submit(RECORD)
        assert info.value.budget == 4.0 and info.value.per is None and counts(server, mids[4]).sum() == 0
        now[0] += 86_400  # the next day: the lifetime cap still holds
        with pytest.raises(PrivacyBudgetExceeded) as info:
            usage.submit(RECORD)
        assert info.value.per is None and counts(server, mids[4]).sum() == 0
        assert app.submit(mids[3], RECORD).accepted == 1  # the last mechanism drawn: its memoised y, free
        keys = [app.mechanism(m).memo_key for m in mids[:4]]
    assert sorted(m for m, _ in memo(state)) == sorted(keys)  # one draw per mechanism, none of the refused


def test_each_new_mechanism_is_verified_under_the_clients_policy(server, tmp_path):
    name, (m0, m1) = collection(server, 2)
    with Client(server.url, pinned=[m0], state_path=tmp_path / "s.sqlite3") as app:
        usage = app.collection(name)
        assert usage.submit(RECORD).accepted == 1
        rotate(server, name, m1)
        with pytest.raises(MechanismRejected, match="pinned"):  # the new document is not one the app accepts
            usage.submit(RECORD)
    assert counts(server, m1).sum() == 0
    with Client(server.url, max_epsilon=0.5, state_path=None) as strict:
        with pytest.raises(MechanismRejected):
            strict.collection(name).current()


def test_a_retired_collection_takes_no_reports_and_estimates_combine_mechanisms(server, tmp_path):
    name, (m0, m1) = collection(server, 2)
    with Client(server.url, state_path=tmp_path / "s.sqlite3") as app:
        usage = app.collection(name)
        users = [f"user-{i}" for i in range(400)]
        records = [("Female", "red"), ("Male", "blue"), ("Male", "green"), ("Female", "blue")] * 100
        mid, ys = usage.privatize(records, owners=users)
        assert mid == m0 and ys.shape == (400,)
        assert usage.submit(records, owners=users).accepted == 400
        rotate(server, name, m1)
        assert usage.submit(records, owners=users).accepted == 400
        with Client(server.url, token=READ_TOKEN, state_path=None) as reader:
            est = reader.estimate_collection(name)
        assert est.n == 800 and est.collection == name
        assert [(m["mechanism"], m["reports"]) for m in est.mechanisms or []] == [(m0, 400), (m1, 400)]
        with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
            assert admin.retire_collection(name)["status"] == "retired"
        with pytest.raises(CollectionRetired, match="retired"):
            usage.submit(RECORD)


def test_privatize_follows_a_collection_and_needs_owners_with_state(server, tmp_path):
    name, (m0, m1) = collection(server, 2)
    users = tmp_path / "users.csv"
    users.write_text("user,sex,colour\n" + "".join(f"u{i},{('Female', 'Male')[i % 2]},red\n" for i in range(50)))
    env = {"RLDP_SERVER": ""}
    args = ("privatize", "--server", server.url, "--collection", name, users, "--json")
    first = run_cli(*args, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["mechanism"] == m0 and json.loads(first.stdout)["collection"] == name
    rotate(server, name, m1)
    state = tmp_path / "st.sqlite3"
    second = run_cli(*args, "--state", state, "--owner-column", "user", env=env, timeout=120)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["mechanism"] == m1 and json.loads(second.stdout)["accepted"] == 50
    refused = run_cli(*args, "--state", state, env=env, timeout=120)
    assert_one_line_error(refused, "50 rows and no --owner-column", "--owner-column NAME")
    assert counts(server, m1).sum() == 50  # the refused run sent nothing
    one = tmp_path / "one.csv"
    one.write_text("sex,colour\nMale,blue\n")  # one row: the device owner's record, no owners needed
    alone = run_cli("privatize", "--server", server.url, "--collection", name, one, "--state", state, env=env)
    assert alone.returncode == 0, alone.stderr
    assert_one_line_error(run_cli(*args, "--mechanism", m0, env=env), "not both")
    assert_one_line_error(
        run_cli("privatize", "--server", server.url, "--collection", "nope", users, env=env), "unknown-collection"
    )


def test_operator_commands_create_show_rotate_estimate_and_retire(server):
    docs = [make_document(f"op-coll-{uuid.uuid4().hex[:8]}") for _ in range(2)]
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        for doc in docs:
            admin.publish(doc)
    name = f"op-{uuid.uuid4().hex[:8]}"
    env = {"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN, "RLDP_READ_TOKEN": ""}

    def op(*args: object):
        proc = run_cli(*args, env=env, timeout=120)
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
        return proc.stdout

    created = op(
        "collection",
        "create",
        name,
        "--mechanism",
        docs[0]["id"][:14],
        "--notion",
        "rldp",
        "--epsilon",
        "1",
        "--description",
        "daily use",
        "--window",
        "none",  # the stateless app below sends a fresh draw per record
    )
    assert f"created {name}" in created and "policy rldp ε ≤ 1" in created
    listing = op("collections")
    assert name in listing and docs[0]["id"][:12] in listing
    extra = make_document(f"op-coll-{uuid.uuid4().hex[:8]}")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(extra)
    watched = op(
        "collection", "create", f"{name}-w", "--mechanism", extra["id"], "--notion", "rldp", "--epsilon", "1",
        "--drift", "pause", "--switch-after", "5000", "--window", "none",
    )  # fmt: skip
    assert "on drift: pause; the pilot switches by itself after 5,000 reports" in watched
    assert f"resumed {name}-w" in op("collection", "resume", f"{name}-w")  # idempotent: nothing was paused
    bad = run_cli(
        "collection", "create", "y", "--mechanism", extra["id"], "--notion", "rldp", "--drift", "stop", env=env
    )
    assert bad.returncode == 2 and "invalid choice: 'stop'" in bad.stderr
    assert f"rotated {name}" in op("collection", "rotate", name, docs[1]["id"][:14])
    shown = json.loads(op("collection", "show", name, "--json"))
    assert shown["current"] == docs[1]["id"] and len(shown["mechanisms"]) == 2
    with Client(server.url, state_path=None) as app:  # stateless: one fresh draw per record
        app.collection(name).submit([("Female", "red"), ("Male", "blue")] * 20)
        few = run_cli("collection", "estimate", name, env=env)  # below the server's minimum (100): one line, why
        assert_one_line_error(few, "too-few-reports")
        assert "has 40 reports" in few.stderr and "60 more needed" in few.stderr
        app.collection(name).submit([("Female", "red"), ("Male", "blue")] * 40)
    estimate = op("collection", "estimate", name, "--method", "em", "--interval", "bootstrap")
    assert "120 reports over 2 mechanisms" in estimate and "95% LOW" in estimate
    assert "retired" in op("collection", "retire", name)
    refused = run_cli("collection", "rotate", name, docs[0]["id"], env=env)
    assert_one_line_error(refused, "collection-retired")
    no_token = run_cli(
        "collection",
        "create",
        "x",
        "--mechanism",
        docs[0]["id"],
        "--notion",
        "rldp",
        env={**env, "RLDP_ADMIN_TOKEN": ""},
    )
    assert_one_line_error(no_token, "RLDP_ADMIN_TOKEN")
