"""Rotations within a lifetime bound (issue 34, point 5): the demo's averaging attack across 30 daily
rotations of a collection, at the demo's ε = 1.

A rotation re-publishes the same design under a new document id. The client memoises by the randomiser
(Q, the per-report layer and the alphabet: ``rldp.shared.document.randomiser_key``), not the document,
so every rotation re-sends each record's first draw and spends nothing: after 30 rotations the attacker
holds one draw of each record, and its accuracy stays at the one-report level (before, the memo was keyed
by the document id and the default budget let 4 fresh draws through: the 4-report level).

Documents whose randomiser differs (here the same Q under another key, a stand-in for a redesign the
attacker knows) are fresh draws, and there the budget is what bounds the attack: the default's lifetime
cap stops it after ⌊4/ε⌋ draws, a per-day budget alone renews. Fixed seeds throughout; every tolerance is
a number of standard errors of a mean over the users (a mean of n independent Bernoulli variables has
sd ≤ 1/(2√n)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import design
from rldp.client import DEFAULT_BUDGET, PrivacyBudget
from rldp.shared.document import content_id, randomiser_key
from rldp.shared.records import Alphabet

pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")
from rldp.demo.datasets import load_adult
from rldp.demo.run import DemoConfig
from rldp.demo.run.attack import attack_users, run_rotation_attack
from rldp.demo.run.server import aggregator, publish

Z = 4.0  # standard errors allowed: a false alarm has probability < 1e-4 per check
NAMES = ("sex", "race")
DAYS = 30
USERS = 2_000
EPSILON = 1.0  # the demo's
PER_DAY_ONLY = PrivacyBudget(epsilon=4.0, per="P1D")  # the default before issue 34: no lifetime cap


def _sd_bound(n: int) -> float:
    return 1 / (2 * math.sqrt(n))


def _republished(doc: dict, day: int) -> dict:
    """The same design under a new id (an operator's daily rotation): same Q, same P̂, same claim."""
    again = {**doc, "rotation": f"day {day + 1}"}
    again["id"] = content_id(again)
    return again


def _redrawn(doc: dict, day: int) -> dict:
    """The same Q under a randomiser of its own (an attribute written with an extra key: the key is
    conservative), so a fresh draw: what a daily redesign costs, with a Q the attacker still knows."""
    again = {**doc, "released": [{**doc["released"][0], "rotation": f"day {day + 1}"}, *doc["released"][1:]]}
    again["id"] = content_id(again)
    return again


@pytest.fixture(scope="module")
def rotations():
    """30 daily re-publications of the demo's PolyOpt design (S = sex, U = race) at ε = 1, and 30 redraws."""
    public = load_adult("data")
    alphabet = Alphabet.from_table(public, "sex", ["race"])
    p_hat = alphabet.empirical_distribution(public)
    with aggregator(DemoConfig(progress=False)) as (url, token):
        doc = design("polyopt", alphabet=alphabet, public_distribution=p_hat, epsilon=EPSILON, n=public.n_rows)
        republished = [_republished(doc, day) for day in range(DAYS)]
        redrawn = [_redrawn(doc, day) for day in range(DAYS)]
        ids = {kind: [publish(url, token, d)["id"] for d in docs] for kind, docs in
               (("republished", republished), ("redrawn", redrawn))}  # fmt: skip
        assert len({randomiser_key(d) for d in republished}) == 1 and len({randomiser_key(d) for d in redrawn}) == DAYS
        yield url, ids, attack_users(NAMES, USERS, seed=7)


@pytest.mark.slow
def test_30_daily_rotations_at_the_demos_epsilon_stay_at_the_one_report_level(rotations):
    url, ids, users = rotations
    assert len(set(ids["republished"])) == DAYS
    tolerance = Z * _sd_bound(USERS)
    for budget in (DEFAULT_BUDGET, PER_DAY_ONLY, None):  # whatever the budget: rotations spend nothing
        result = run_rotation_attack(url, ids["republished"], users, NAMES, privacy_budget=budget, seed=8)
        assert result.reported == DAYS and result.draws == 1, (budget, result.reported, result.draws)
        # One draw of each record, re-sent 30 times: the attack's own one-report figure (its rule with the public
        # prior, expected on these users) on every day, and never above the Bayes optimum from one report.
        worst = max(abs(a - result.one_report_rule) for a in result.accuracy)
        assert worst <= tolerance, (budget, result.accuracy, result.one_report_rule)
        assert max(result.accuracy) <= result.one_report_bayes + tolerance
    print(
        f"ε = 1, {USERS} users, {DAYS} daily rotations: one report {result.one_report_rule:.3f}, "
        f"day 1 {result.accuracy[0]:.3f}, after 30 rotations {result.accuracy[-1]:.3f} (1 draw; tolerance {tolerance:.3f})"
    )


@pytest.mark.slow
def test_fresh_draws_each_day_are_bounded_by_the_lifetime_cap(rotations):
    url, ids, users = rotations
    capped = run_rotation_attack(url, ids["redrawn"], users, NAMES, seed=9)
    renewed = run_rotation_attack(url, ids["redrawn"], users, NAMES, privacy_budget=PER_DAY_ONLY, seed=9)
    draws = math.floor(DEFAULT_BUDGET.lifetime / EPSILON + 1e-9)
    assert capped.reported == capped.draws == draws == 4 and renewed.reported == renewed.draws == DAYS
    # The same seed draws the same reports on the first days: after 30 days the capped attacker is exactly
    # where the renewed one was after 4, and stays there.
    assert capped.accuracy[draws - 1 :] == [renewed.accuracy[draws - 1]] * (DAYS - draws + 1)
    assert np.all(np.diff(renewed.accuracy[::5]) > -Z * _sd_bound(USERS))  # more draws never hurt (much)
    # The 4-report level is above the one-report level, and far below what 30 fresh draws give.
    assert capped.accuracy[-1] >= capped.one_report_rule + Z * _sd_bound(USERS)
    assert renewed.accuracy[-1] >= 0.95 and renewed.accuracy[-1] - capped.accuracy[-1] >= 0.05
    print(
        f"ε = 1, {USERS} users, {DAYS} daily redesigns: one report {capped.one_report_rule:.3f}, default budget "
        f"{capped.accuracy[-1]:.3f} ({capped.draws} draws), per-day budget only {renewed.accuracy[-1]:.3f}"
    )
