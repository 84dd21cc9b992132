"""Rotations within a lifetime bound (issue 34, point 5): the demo's averaging attack across 30 daily
rotations of a collection (the same design re-published each day: a new mechanism id, so a fresh draw
of every record each day) against the client's default privacy budget and against a per-day budget alone.

Memoisation is per mechanism; what stops a rotation from undoing it is the budget. The old default (4 nats
per owner per UTC day) renewed every day, so after 30 rotations the attacker had 30 draws of every record.
The default's lifetime cap (4 nats in all) lets ⌊4/ε⌋ draws through: one at ε > 2, four at ε = 1 (the
demo's ε). Fixed seeds throughout; every tolerance is a number of standard errors of a mean over the users
(a mean of n independent Bernoulli variables has sd ≤ 1/(2√n)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import design
from rldp.client import DEFAULT_BUDGET, PrivacyBudget
from rldp.shared.document import content_id
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
ONE_DRAW_EPSILON = 2.25  # > 4/2: the default's lifetime cap admits one draw, not two
PER_DAY_ONLY = PrivacyBudget(epsilon=4.0, per="P1D")  # the default before issue 34: no lifetime cap


def _sd_bound(n: int) -> float:
    return 1 / (2 * math.sqrt(n))


def _republished(doc: dict, day: int) -> dict:
    """The same design under a new id (an operator's daily rotation): same Q, same P̂, same claim."""
    again = {**doc, "rotation": f"day {day + 1}"}
    again["id"] = content_id(again)
    return again


@pytest.fixture(scope="module")
def rotations():
    """Per ε: 30 mechanism ids, the demo's PolyOpt design (S = sex, U = race) re-published once a day."""
    public = load_adult("data")
    alphabet = Alphabet.from_table(public, "sex", ["race"])
    p_hat = alphabet.empirical_distribution(public)
    with aggregator(DemoConfig(progress=False)) as (url, token):
        ids = {}
        for epsilon in (1.0, ONE_DRAW_EPSILON):
            doc = design("polyopt", alphabet=alphabet, public_distribution=p_hat, epsilon=epsilon, n=public.n_rows)
            ids[epsilon] = [publish(url, token, _republished(doc, day))["id"] for day in range(DAYS)]
        yield url, ids, attack_users(NAMES, USERS, seed=7)


@pytest.mark.slow
def test_daily_rotations_under_the_default_budget_stay_at_the_one_report_level(rotations):
    url, ids, users = rotations
    assert len(set(ids[ONE_DRAW_EPSILON])) == DAYS
    capped = run_rotation_attack(url, ids[ONE_DRAW_EPSILON], users, NAMES, seed=8)  # DEFAULT_BUDGET
    renewed = run_rotation_attack(url, ids[ONE_DRAW_EPSILON], users, NAMES, privacy_budget=PER_DAY_ONLY, seed=8)
    tolerance = Z * _sd_bound(USERS)
    assert capped.reported == 1 and renewed.reported == DAYS
    # With the lifetime cap the aggregator holds one draw of each record after 30 rotations: the attack's
    # own one-report figure (its rule with the public prior, expected on these users).
    assert abs(capped.accuracy[-1] - capped.one_report_rule) <= tolerance, (capped.accuracy[-1], capped.one_report_rule)
    assert capped.accuracy[-1] <= capped.one_report_bayes + tolerance
    assert capped.accuracy == [capped.accuracy[0]] * DAYS  # nothing new after the first day
    # With a per-day budget alone every rotation is a fresh draw, and the attack climbs past that level.
    assert renewed.accuracy[0] == capped.accuracy[0]  # the same seed: the same first draw
    assert renewed.accuracy[-1] - capped.one_report_rule >= 2 * tolerance, (
        renewed.accuracy[-1],
        capped.one_report_rule,
    )
    print(
        f"ε = {ONE_DRAW_EPSILON}, {USERS} users, {DAYS} daily rotations: one report {capped.one_report_rule:.3f}, "
        f"default budget {capped.accuracy[-1]:.3f} (1 draw), per-day budget only {renewed.accuracy[-1]:.3f}"
    )


@pytest.mark.slow
def test_at_the_demos_epsilon_the_default_stops_after_four_draws(rotations):
    url, ids, users = rotations
    capped = run_rotation_attack(url, ids[1.0], users, NAMES, seed=9)
    renewed = run_rotation_attack(url, ids[1.0], users, NAMES, privacy_budget=PER_DAY_ONLY, seed=9)
    draws = math.floor(DEFAULT_BUDGET.lifetime / 1.0 + 1e-9)
    assert capped.reported == draws == 4 and renewed.reported == DAYS
    # The same seed draws the same reports on the first days: after 30 rotations the capped attacker is
    # exactly where the renewed one was after 4, and stays there.
    assert capped.accuracy[draws - 1 :] == [renewed.accuracy[draws - 1]] * (DAYS - draws + 1)
    assert np.all(np.diff(renewed.accuracy[::5]) > -Z * _sd_bound(USERS))  # more draws never hurt (much)
    # The 4-report level is above the one-report level, and far below what 30 fresh draws give.
    assert capped.accuracy[-1] >= capped.one_report_rule + Z * _sd_bound(USERS)
    assert renewed.accuracy[-1] >= 0.95 and renewed.accuracy[-1] - capped.accuracy[-1] >= 0.05
    print(
        f"ε = 1, {USERS} users, {DAYS} daily rotations: one report {capped.one_report_rule:.3f}, default budget "
        f"{capped.accuracy[-1]:.3f} ({capped.reported} draws), per-day budget only {renewed.accuracy[-1]:.3f}"
    )
