"""The privacy budget (issue 15): new draws spend the mechanism's audited ε; repeats spend nothing."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from aggregator_stub import DAY, Clock, grr_document

from rldp.client import DEFAULT_BUDGET, Client, PrivacyBudget, PrivacyBudgetExceeded, RldpError

VALUES = [("Male", "red"), ("Male", "blue"), ("Female", "green"), ("Female", "red")]


def spent(path) -> float:
    with sqlite3.connect(path) as conn:
        return float(conn.execute("SELECT COALESCE(SUM(epsilon), 0) FROM memo").fetchone()[0])


def test_budget_arithmetic(aggregator, tmp_path):
    # owners="": the device owner's own records (several values); a batch without owners is refused
    doc = grr_document(epsilon=1.0)  # audited ε = 1 (GRR's ratio e^ε, to round-off)
    agg = aggregator(doc)
    path = tmp_path / "s.sqlite3"
    clock = Clock()
    budget = PrivacyBudget(epsilon=2.5, per="P1D")
    with Client(agg.url, state_path=path, privacy_budget=budget, clock=clock) as client:
        eps = client.mechanism(doc["id"]).epsilon_audited
        client.submit(doc["id"], VALUES[:1])  # a new value: spends ε
        for _ in range(5):
            client.submit(doc["id"], VALUES[:1])  # memoised: spends nothing
        client.submit(doc["id"], VALUES[:2], owners="")  # one more new value
        assert spent(path) == pytest.approx(2 * eps, abs=1e-12)
        sent = len(agg.reports())
        with pytest.raises(PrivacyBudgetExceeded) as info:
            client.submit(doc["id"], VALUES[:3], owners="")
        err = info.value
        assert (err.budget, err.per, err.owner) == (2.5, "P1D", "")
        assert err.spent == pytest.approx(2 * eps) and err.asked == pytest.approx(eps)
        assert "budget 2.5 per P1D" in str(err) and "nothing was sent" in str(err)
        assert isinstance(err, RldpError)
        assert len(agg.reports()) == sent and spent(path) == pytest.approx(2 * eps)  # nothing sent or stored
        client.submit(doc["id"], VALUES[:2], owners="")  # memoised values are still fine
        clock.now += DAY  # a new period: the budget is available again
        client.submit(doc["id"], VALUES[:4], owners="")
        assert spent(path) == pytest.approx(4 * eps)
        with pytest.raises(PrivacyBudgetExceeded):
            client.privatize(doc["id"], [("Female", "blue")])  # privatize draws, so it is charged too


def test_a_call_that_asks_too_much_at_once_is_refused_whole(aggregator, tmp_path):
    doc = grr_document(epsilon=1.0)
    agg = aggregator(doc)
    path = tmp_path / "s.sqlite3"
    with Client(agg.url, state_path=path, privacy_budget=PrivacyBudget(2.0)) as client:
        with pytest.raises(PrivacyBudgetExceeded) as info:
            client.submit(doc["id"], VALUES[:3], owners="")
        assert info.value.spent == 0 and info.value.asked == pytest.approx(3.0) and info.value.per is None
        assert not agg.posts and spent(path) == 0
        client.submit(doc["id"], VALUES[:2], owners="")  # exactly the budget (to the audit's tolerance) fits
        assert spent(path) == pytest.approx(2.0)


def test_budgets_are_per_owner_and_add_up_across_mechanisms(aggregator, tmp_path):
    a, b = grr_document(epsilon=1.0), grr_document(epsilon=0.5)
    agg = aggregator(a, b)
    path = tmp_path / "s.sqlite3"
    with Client(agg.url, state_path=path, privacy_budget=PrivacyBudget(1.6, per="P1W"), clock=Clock()) as client:
        client.submit(a["id"], VALUES[:2], owners=["ann", "bob"])  # 1 each
        client.submit(b["id"], VALUES[:1], owners=["ann"])  # ann: 1.5
        with pytest.raises(PrivacyBudgetExceeded) as info:
            client.submit(b["id"], VALUES[:2], owners=["cat", "ann"])  # ann would reach 2.0; cat is fine
        assert info.value.owner == "ann" and info.value.spent == pytest.approx(1.5)
        assert "owner 'ann'" in str(info.value)
        client.submit(b["id"], VALUES[:2], owners=["cat", "bob"])
    with sqlite3.connect(path) as conn:
        rows = dict(conn.execute("SELECT owner, SUM(epsilon) FROM memo GROUP BY owner").fetchall())
    assert rows == pytest.approx({"ann": 1.5, "bob": 1.5, "cat": 0.5})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0}, "> 0"),
        ({"epsilon": float("inf")}, "finite"),
        ({"epsilon": True}, "> 0"),
        ({"epsilon": 1, "per": "daily"}, "ISO 8601"),
        ({"epsilon": 1, "per": "PT30S"}, "at least one minute"),
        ({"epsilon": 1, "lifetime": 3}, "lifetime needs a period"),
        ({"epsilon": 2, "per": "P1D", "lifetime": 1}, "at least the budget per period"),
        ({"epsilon": 1, "per": "P1D", "lifetime": float("inf")}, "finite"),
        ({"epsilon": 1, "per": "P1D", "lifetime": 0}, "> 0"),
    ],
)
def test_bad_budgets_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PrivacyBudget(**kwargs)


def test_a_budget_needs_a_state_file():
    with pytest.raises(ValueError, match="privacy_budget needs a state file"):
        Client("http://127.0.0.1:9", privacy_budget=PrivacyBudget(1.0), state_path=None)


def test_period_start_is_aligned_on_the_epoch():
    assert PrivacyBudget(1.0, per="P1D").period_start(DAY * 3 + 5) == DAY * 3
    assert PrivacyBudget(1.0).period_start(12345.0) == -np.inf


def redesigned(i: int, tag: str) -> dict:
    """A design of its own (another Q, so another randomiser: a fresh draw), audited at ε = 1 to within 1e-6."""
    return grr_document(epsilon=1.0 - i * 1e-7, tag=tag)


def test_by_default_daily_redesigns_stop_at_the_lifetime_cap(aggregator, tmp_path):
    # Issue 34 (5): a per-day budget alone renews, so a collection redesigned daily got a fresh draw of
    # every record each day. The default also caps the owner's total: 4 nats, i.e. 4 draws at ε = 1.
    # (A rotation that re-publishes the same design is free: test_client_memo, "republished".)
    assert DEFAULT_BUDGET == PrivacyBudget(epsilon=4.0, per="P1D", lifetime=4.0)
    docs = [redesigned(day, f"day-{day}") for day in range(8)]
    agg = aggregator(*docs)
    path = tmp_path / "s.sqlite3"
    clock = Clock()
    with Client(agg.url, state_path=path, clock=clock) as client:  # the default budget
        first = [int(client.privatize(doc["id"], VALUES[:1])[0]) for doc in docs[:1]]
        for doc in docs[1:4]:  # one redesign a day: a fresh draw each
            clock.now += DAY
            client.submit(doc["id"], VALUES[:1])
        assert spent(path) == pytest.approx(4.0)
        for doc in docs[4:]:  # every later day: refused for good, before anything is drawn or sent
            clock.now += DAY
            sent = len(agg.reports())
            with pytest.raises(PrivacyBudgetExceeded) as info:
                client.submit(doc["id"], VALUES[:1])
            assert (info.value.budget, info.value.per) == (4.0, None) and "(lifetime total)" in str(info.value)
            assert len(agg.reports()) == sent and spent(path) == pytest.approx(4.0)
        with pytest.raises(PrivacyBudgetExceeded):  # a changed record is a fresh draw too
            client.submit(docs[0]["id"], VALUES[1:2])
        # what is memoised still goes out: the same y under a mechanism already drawn, spending nothing
        assert client.submit(docs[0]["id"], VALUES[:1]).accepted == 1 and agg.reports()[-1] == first[0]
    assert spent(path) == pytest.approx(4.0)


def test_a_budget_with_a_period_and_a_lifetime_enforces_both(aggregator, tmp_path):
    docs = [redesigned(i, f"m{i}") for i in range(6)]
    agg = aggregator(*docs)
    path = tmp_path / "s.sqlite3"
    clock = Clock()
    budget = PrivacyBudget(epsilon=2.0, per="P1D", lifetime=3.0)
    with Client(agg.url, state_path=path, privacy_budget=budget, clock=clock) as client:
        client.submit(docs[0]["id"], VALUES[:1])
        client.submit(docs[1]["id"], VALUES[:1])
        with pytest.raises(PrivacyBudgetExceeded) as info:  # the day's 2 are spent; the lifetime has 1 left
            client.submit(docs[2]["id"], VALUES[:1])
        assert (info.value.budget, info.value.per, info.value.spent) == (2.0, "P1D", pytest.approx(2.0))
        clock.now += DAY
        with pytest.raises(PrivacyBudgetExceeded) as info:  # a new day, but 2 more would pass the lifetime's 3
            client.submit(docs[2]["id"], VALUES[:2], owners="")
        assert (info.value.budget, info.value.per, info.value.asked) == (3.0, None, pytest.approx(2.0))
        client.submit(docs[2]["id"], VALUES[:1])  # the lifetime's last nat
        clock.now += 30 * DAY
        with pytest.raises(PrivacyBudgetExceeded) as info:  # and no later day renews it
            client.submit(docs[3]["id"], VALUES[:1])
        assert info.value.per is None and info.value.spent == pytest.approx(3.0)
    assert spent(path) == pytest.approx(3.0)


def test_the_lifetime_total_of_a_budget():
    assert PrivacyBudget(1.5).total == 1.5  # no period: epsilon is the lifetime total
    assert PrivacyBudget(1.0, per="P1D").total == np.inf  # a period and no lifetime: no cap in all
    assert PrivacyBudget(1.0, per="P1D", lifetime=5.0).total == 5.0
    assert DEFAULT_BUDGET.total == 4.0
