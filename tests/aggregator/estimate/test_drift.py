"""The drift watch (rldp.aggregator.estimate.drift): its pieces exactly, and its error rates by simulation.

Simulations use the drift watch's example: the sex/race PolyOpt document at ε = 1.5 from the Adult public
data, and its skewed population (60 % Female|Amer-Indian-Eskimo). Rates are judged by exact
Clopper–Pearson bounds at 99 %, so a test fails only when the Monte-Carlo evidence says so.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers import adult_sex_race_polyopt, skewed_population
from scipy.stats import beta as beta_dist

from rldp.aggregator.estimate.drift import drift_scope, projection_statistic, watch
from rldp.aggregator.estimate.realised import box_ratio_max, realised_upper_bound
from rldp.shared.audit import realised_epsilon
from rldp.shared.divergence import renyi_divergence
from rldp.shared.document import mechanism_matrix, public_distribution
from rldp.shared.errors import ValidationError
from rldp.shared.uncertainty import UncertaintySet

ALPHA = 0.05


def _setup() -> tuple[dict, np.ndarray, np.ndarray, UncertaintySet]:
    doc = adult_sex_race_polyopt(1.5)
    q, p = mechanism_matrix(doc), public_distribution(doc)
    unc = doc["privacy"]["uncertainty"]
    return doc, q, p, UncertaintySet(p.reshape(1, -1), unc["radius"], unc["order"])


def _segment_point(p: np.ndarray, target: np.ndarray, predicate) -> np.ndarray:
    """The first point (1 − t)P̂ + t·target, t ∈ [0, 1], where ``predicate`` turns true (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if predicate((1 - mid) * p + mid * target) else (mid, hi)
    return (1 - hi) * p + hi * target


def _boundary_point(p: np.ndarray, ball: UncertaintySet) -> np.ndarray:
    """The last point of F on the segment towards the skewed population (on F's boundary)."""
    outside = _segment_point(
        p, skewed_population(p), lambda x: renyi_divergence(p.ravel(), x.ravel(), 2.0) > ball.radius
    )
    t_in = 1.0 - 1e-9  # step back inside by round-off
    return t_in * outside + (1 - t_in) * p


def _rate(doc_q: np.ndarray, pop: np.ndarray, ball: UncertaintySet, n: int, runs: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    from rldp.aggregator.estimate.drift import _p_value

    hits = 0
    for _ in range(runs):
        counts = rng.multinomial(n, doc_q @ pop.ravel())
        hits += _p_value(*projection_statistic(doc_q, counts, ball)) < ALPHA
    return hits


def _cp_upper(k: int, n: int, conf: float = 0.99) -> float:
    return 1.0 if k == n else float(beta_dist.ppf(conf, k + 1, n - k))


def _cp_lower(k: int, n: int, conf: float = 0.99) -> float:
    return 0.0 if k == 0 else float(beta_dist.ppf(1 - conf, k, n - k + 1))


# --------------------------------------------------------------------------- exact pieces


def testbox_ratio_maximum_is_the_best_vertex():
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = 5
        a = rng.random((3, k))
        low = rng.random(k) * (rng.random(k) < 0.7) * 0.3
        high = low + rng.random(k) * 0.5
        got = box_ratio_max(a, low, high)
        for row in range(3):
            best = -math.inf
            for bits in itertools.product((0, 1), repeat=k):
                x = np.where(np.array(bits) == 1, high, low)
                if x.sum() > 0:
                    best = max(best, float(a[row] @ x / x.sum()))
            for u in range(k):  # the box may hold x = h_u e_u when every low is 0
                if low.sum() == 0 and high[u] > 0:
                    best = max(best, a[row, u])
            assert got[row] == pytest.approx(best, rel=1e-12)


@pytest.mark.slow
def test_realised_upper_bound_covers_every_point_of_the_box():
    _, q, p, _ = _setup()
    rng = np.random.default_rng(5)
    low, high = p * 0.7, np.minimum(p * 1.3, 1.0)
    bound = realised_upper_bound(q, low, high)
    for _ in range(200):
        theta = low + rng.random(p.shape) * (high - low)
        assert realised_epsilon(q, theta) <= bound + 1e-12
    # a degenerate box is the point itself
    assert realised_upper_bound(q, p, p) == pytest.approx(realised_epsilon(q, p), rel=1e-12)


@pytest.mark.slow
def test_statistic_is_the_simple_likelihood_ratio_when_f_is_a_point():
    """Radius 0: F = {P̂}, T = 2n (f(P̂) − min_Δ f) — the computed T is that (tight) and never above it."""
    _, q, p, _ = _setup()
    point = UncertaintySet(p.reshape(1, -1), 0.0, 2.0)
    counts = np.random.default_rng(11).multinomial(3000, q @ skewed_population(p, 0.05).ravel())
    qhat = counts / counts.sum()
    theta = np.full(p.size, 1.0 / p.size)
    for _ in range(20000):  # the MLE by plain EM, far past convergence
        theta *= q.T @ (qhat / (q @ theta))
    seen = qhat > 0

    def f(x):
        return float(np.sum(qhat[seen] * np.log(qhat[seen] / (q @ x)[seen])))

    exact = 2 * counts.sum() * (f(p.ravel()) - f(theta))
    got, dof = projection_statistic(q, counts, point, theta)
    assert dof == np.linalg.matrix_rank(q) - 1
    assert got <= exact + 1e-9
    assert got == pytest.approx(exact, rel=1e-6)


def test_statistic_is_zero_for_reports_that_match_a_member_of_f():
    _, q, p, ball = _setup()
    counts = q @ p.ravel() * 10_000  # expected counts of P̂ itself
    assert projection_statistic(q, counts, ball)[0] == pytest.approx(0.0, abs=1e-6)


def test_scope_names_why_a_claim_has_nothing_to_drift_from():
    doc, *_ = _setup()
    assert drift_scope(doc) is None
    ldp = {**doc, "privacy": {"notion": "ldp", "epsilon": 1.0}}
    assert "no assumption on the population" in drift_scope(ldp)
    unbounded = {**doc, "privacy": {**doc["privacy"], "uncertainty": {**doc["privacy"]["uncertainty"], "radius": None}}}
    assert "every distribution" in drift_scope(unbounded)
    with pytest.raises(ValidationError, match="nothing to drift from"):
        watch(ldp, np.ones(10))
    with pytest.raises(ValidationError, match="significance"):
        watch(doc, np.ones(10), significance=1.5)


def test_the_issue_s_skewed_population_is_flagged_with_its_realised_epsilon():
    doc, q, p, _ = _setup()
    counts = np.random.default_rng(24).multinomial(1000, q @ skewed_population(p).ravel())
    drift = watch(doc, counts).to_dict()
    assert drift["rejected"] and drift["p_value"] < 1e-6
    assert drift["alpha"] == ALPHA and drift["n"] == 1000
    assert drift["realised_epsilon_upper"] >= drift["realised_epsilon"] > 2 * 1.5
    assert "the claim ε = 1.5 may not hold" in drift["statement"]


def test_reports_from_p_hat_are_not_flagged():
    doc, q, p, _ = _setup()
    counts = np.random.default_rng(2).multinomial(5000, q @ p.ravel())
    drift = watch(doc, counts)
    assert not drift.rejected and "no evidence" in drift.statement


# --------------------------------------------------------------------------- error rates (simulation)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["p_hat", "boundary"])
def test_false_alarm_rate_is_at_most_alpha(where):
    """Reports from P̂ and from a point on F's boundary: the rate of rejections ≤ α (99 % CP bound)."""
    _, q, p, ball = _setup()
    pop = p if where == "p_hat" else _boundary_point(p, ball)
    assert renyi_divergence(p.ravel(), pop.ravel(), 2.0) <= ball.radius
    runs = 300
    hits = _rate(q, pop, ball, n=5000, runs=runs, seed=1 if where == "p_hat" else 2)
    print(f"false alarms from {where}: {hits}/{runs} (99 % CP upper bound {_cp_upper(hits, runs):.3f})")
    assert _cp_upper(hits, runs) <= ALPHA, f"{hits}/{runs} false alarms"


@pytest.mark.slow
@pytest.mark.parametrize("population", ["twice_the_claim", "issue_skewed"])
def test_power_against_twice_the_claim_within_5000_reports(population):
    """A population whose realised ε* is ≥ 2 × 1.5 (the first such point towards the skewed population,
    and the skewed population itself) is flagged within 5,000 reports in ≥ 95 % of runs (99 % CP bound)."""
    _, q, p, ball = _setup()
    skewed = skewed_population(p)
    pop = skewed if population == "issue_skewed" else _segment_point(p, skewed, lambda x: realised_epsilon(q, x) >= 3.0)
    assert realised_epsilon(q, pop) >= 3.0
    runs = 100
    hits = _rate(q, pop, ball, n=5000, runs=runs, seed=3)
    print(f"power against {population}: {hits}/{runs} (99 % CP lower bound {_cp_lower(hits, runs):.3f})")
    assert _cp_lower(hits, runs) >= 0.95, f"{hits}/{runs} flagged"


@pytest.mark.slow
def test_a_latent_secret_is_tested_on_the_u_marginal_and_its_epsilon_is_not_identified():
    from rldp.aggregator.frames import design_from_frame
    from rldp.demo.datasets import load_adult

    doc = design_from_frame(
        load_adult(), sensitive="sex", released=["race"], method="grr", epsilon=1.5, name="adult", latent=True
    )
    q, p_u = mechanism_matrix(doc), public_distribution(doc).sum(axis=0)
    assert q.shape[1] == p_u.size  # reads U only
    rng = np.random.default_rng(8)
    calm = watch(doc, rng.multinomial(5000, q @ p_u))
    assert calm.realised_epsilon is None and calm.realised_epsilon_upper is None
    assert not calm.rejected and "not identified (S is latent)" in calm.statement
    drifted = np.array([0.6, *(0.4 * p_u[1:] / p_u[1:].sum())])  # 60 % Amer-Indian-Eskimo
    assert watch(doc, rng.multinomial(1000, q @ drifted)).rejected


def test_every_robust_notion_is_watched():
    doc, *_ = _setup()
    unc = doc["privacy"]["uncertainty"]
    for privacy in (
        {"notion": "distp", "epsilon": 1.5, "delta": 0.01, "uncertainty": unc},
        {"notion": "ldp", "epsilon": 1.5, "uncertainty": unc},
        {"notion": "lip", "epsilon": 1.5, "uncertainty": unc},
        {"notion": "srlip", "epsilon": 1.5, "uncertainty": {**unc, "radius": 0.0}},
    ):
        assert drift_scope({**doc, "privacy": privacy}) is None, privacy
    distp = {**doc, "privacy": {"notion": "distp", "epsilon": 1.5, "delta": 0.01, "uncertainty": unc}}
    counts = np.random.default_rng(9).multinomial(500, mechanism_matrix(doc) @ public_distribution(doc).ravel())
    assert watch(distp, counts).to_dict()["claim"] == "(ε, δ) = (1.5, 0.01)"
    srlip = {**doc, "privacy": {"notion": "srlip", "epsilon": 1.5, "uncertainty": unc}}
    assert "holds for every distribution" in drift_scope(srlip)


@pytest.mark.slow
@pytest.mark.parametrize("order", [0.5, 1.0, 2.0, 4.0])
def test_the_fit_stays_in_f_and_its_certificate_never_exceeds_the_minimum(order):
    """For every Rényi order: the interior-point point lies in F, and the certified lower bound is ≤ f at
    random members of F (so ≤ min_F f) and close to f at the fitted point (tight)."""
    from rldp.aggregator.estimate.ball_fit import ball_fit, certified_lower_bound, kl_terms

    _, q, p, _ = _setup()
    ball = UncertaintySet(p.reshape(1, -1), 0.01, order)
    counts = np.random.default_rng(12).multinomial(4000, q @ skewed_population(p, 0.1).ravel())
    qhat = counts / counts.sum()
    point = ball_fit(qhat, q, ball, p.ravel(), 4000)
    assert renyi_divergence(p.ravel(), point, order) <= ball.radius * (1 + 1e-9)
    bound = certified_lower_bound(qhat, q, point, ball)
    assert 0 < bound <= kl_terms(qhat, q, point)[0]
    assert 2 * 4000 * (kl_terms(qhat, q, point)[0] - bound) < 0.01  # tight on the T scale
    rng = np.random.default_rng(13)
    for _ in range(100):
        other = rng.dirichlet(np.ones(p.size))
        member = _segment_point(
            p, other.reshape(p.shape), lambda x: renyi_divergence(p.ravel(), x.ravel(), order) > ball.radius
        )
        member = 0.999 * member.ravel() + 0.001 * p.ravel()  # inside
        assert bound <= kl_terms(qhat, q, member)[0] + 1e-12


def test_realised_upper_bound_matches_every_pair_by_brute_force():
    from helpers import sparse_columns

    rng = np.random.default_rng(14)
    for trial in range(30):
        q = sparse_columns(6, 9, seed=trial, density=0.6)  # zeros: some P(y|s) can vanish
        low = rng.random((3, 3)) * (rng.random((3, 3)) < 0.5) * 0.1
        high = low + rng.random((3, 3)) * 0.3
        blocks = q.reshape(6, 3, 3)
        top = np.stack([box_ratio_max(blocks[:, s], low[s], high[s]) for s in range(3)], axis=1)
        bottom = np.stack([-box_ratio_max(-blocks[:, s], low[s], high[s]) for s in range(3)], axis=1)
        best = 0.0
        for y, s1, s2 in itertools.product(range(6), range(3), range(3)):
            if s1 != s2 and top[y, s1] > 0:
                best = max(best, math.inf if bottom[y, s2] <= 0 else math.log(top[y, s1] / bottom[y, s2]))
        assert realised_upper_bound(q, low, high) == pytest.approx(best, rel=1e-12)
