"""The drift watch's anytime-valid evidence (rldp.aggregator.estimate.evidence): its pieces exactly, its
false-alarm rate over every look and under forgery by simulation, and its power.

Simulations use the drift watch's example (the sex/race PolyOpt document at ε = 1.5 from Adult). Rates
are judged by exact Clopper–Pearson bounds at 99 %, so a test fails only when the Monte-Carlo evidence
says so.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers import adult_sex_race_polyopt, skewed_population
from scipy.stats import beta as beta_dist

from rldp.aggregator.estimate.drift import watch
from rldp.aggregator.estimate.evidence import contaminated_divergence, evidence, kt_regret, spent_significance
from rldp.shared.audit import realised_epsilon
from rldp.shared.document import mechanism_matrix, public_distribution
from rldp.shared.uncertainty import UncertaintySet

ALPHA = 0.05


def _setup():
    doc = adult_sex_race_polyopt(1.5)
    q, p = mechanism_matrix(doc), public_distribution(doc)
    unc = doc["privacy"]["uncertainty"]
    return doc, q, p, UncertaintySet(p.reshape(1, -1), unc["radius"], unc["order"])


def _kt_regret_of(counts) -> float:
    n, k = sum(counts), len(counts)
    ml = sum(c * math.log(c / n) for c in counts if c)
    kt = sum(math.lgamma(c + 0.5) for c in counts) - k * math.lgamma(0.5) - math.lgamma(n + k / 2) + math.lgamma(k / 2)
    return ml - kt


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_the_regret_bound_is_the_largest_regret_over_every_count_vector(k):
    """ρ_K(n) = max over count vectors of the KT mixture's regret (enumerated), and it never decreases in n."""
    for n in range(1, 13 if k < 5 else 8):
        worst = max(_kt_regret_of(c) for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n)
        assert kt_regret(k, n) == pytest.approx(worst, rel=1e-12, abs=1e-12)
    values = [kt_regret(k, n) for n in range(1, 200)]
    assert all(b >= a for a, b in itertools.pairwise(values))


def test_alpha_spent_over_windows_sums_to_alpha():
    assert sum(spent_significance(ALPHA, w) for w in range(1, 100_000)) == pytest.approx(ALPHA, rel=1e-4)
    with pytest.raises(ValueError):
        spent_significance(ALPHA, 0)


@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.05])
def test_the_certified_divergence_never_exceeds_kl_at_a_member_of_the_null(gamma):
    """The bound is ≤ KL(q̂ ‖ (1 − γ)QP + γr) for random P ∈ F and r ∈ Δ (so ≤ the minimum), and close to
    a direct minimisation over (P, r) (power)."""
    _, q, p, ball = _setup()
    rng = np.random.default_rng(4)
    counts = rng.multinomial(3000, q @ skewed_population(p, 0.1).ravel())
    qhat = counts / counts.sum()
    bound = contaminated_divergence(q, counts, ball, gamma, p.ravel())
    lower, upper = ball.lower_bounds().ravel(), ball.upper_bounds().ravel()
    best = math.inf
    from rldp.shared.divergence import renyi_divergence

    for _ in range(400):
        cand = p.ravel() * np.exp(rng.normal(0, 0.3, p.size))
        cand /= cand.sum()
        if renyi_divergence(p.ravel(), cand, 2.0) > ball.radius:
            t = 0.0  # pull it back into F along the segment to P̂
            lo, hi = 0.0, 1.0
            for _ in range(40):
                mid = (lo + hi) / 2
                x = (1 - mid) * p.ravel() + mid * cand
                lo, hi = (mid, hi) if renyi_divergence(p.ravel(), x, 2.0) <= ball.radius else (lo, mid)
            t = lo
            cand = (1 - t) * p.ravel() + t * cand
        assert np.all(cand >= lower - 1e-9) and np.all(cand <= upper + 1e-9)
        r = rng.dirichlet(np.ones(q.shape[0]))
        m = (1 - gamma) * (q @ cand) + gamma * r
        kl = float(np.sum(qhat[qhat > 0] * np.log(qhat[qhat > 0] / m[qhat > 0])))
        assert bound <= kl + 1e-12
        best = min(best, kl)
    assert bound > 0 and bound <= best


def test_reports_from_p_hat_give_no_evidence_and_a_skewed_population_a_lot():
    doc, q, p, ball = _setup()
    rng = np.random.default_rng(2)
    calm = evidence(q, rng.multinomial(5000, q @ p.ravel()), ball, gamma=0.01, level=ALPHA / 2, start=p.ravel())
    assert calm.log_evalue < 0 and not calm.rejected and calm.p_value == 1.0
    skew = evidence(
        q, rng.multinomial(1000, q @ skewed_population(p).ravel()), ball, gamma=0.01, level=ALPHA / 2, start=p.ravel()
    )
    assert skew.rejected and skew.p_value < 1e-100


def _cp_upper(k: int, n: int, conf: float = 0.99) -> float:
    return 1.0 if k == n else float(beta_dist.ppf(conf, k + 1, n - k))


def _cp_lower(k: int, n: int, conf: float = 0.99) -> float:
    return 0.0 if k == 0 else float(beta_dist.ppf(1 - conf, k, n - k + 1))


def _paths_flagged(q, pop, ball, *, runs, n, every, gamma, seed, forged_output=None, forged_share=0.0):
    """How many of ``runs`` collections of ``n`` reports, looked at after every ``every`` reports, are ever
    flagged at level a/2 (a mechanism's first window). A forger may add ``forged_share`` of each look's
    reports on ``forged_output``. Looks whose statistic has a feasible upper bound below the threshold are
    settled without the certified computation (the bound at (P, r) = (pop, the forged frequencies) is ≥ the
    minimum, and the minimum ≥ the certified value)."""
    rng = np.random.default_rng(seed)
    level = ALPHA / 2
    k = q.shape[0]
    probs = q @ pop.ravel()
    flagged = 0
    for _ in range(runs):
        counts = np.zeros(k)
        for look in range(1, n // every + 1):
            counts += rng.multinomial(every, probs)
            total = counts.copy()
            if forged_output is not None:
                total[forged_output] += math.floor(forged_share * look * every / (1 - forged_share))
            m = float(total.sum())
            qhat = total / m
            model = (1 - gamma) * probs + gamma * (np.eye(k)[forged_output] if forged_output is not None else probs)
            seen = qhat > 0
            upper = m * float(np.sum(qhat[seen] * np.log(qhat[seen] / model[seen]))) - kt_regret(k, int(m))
            if upper < math.log(1 / level):
                continue
            if evidence(q, total, ball, gamma=gamma, level=level, start=pop.ravel()).rejected:
                flagged += 1
                break
    return flagged


@pytest.mark.slow
@pytest.mark.parametrize("where", ["p_hat", "boundary"])
def test_false_alarms_over_every_look_stay_below_alpha(where):
    """Collections of 50,000 honest reports looked at after every 100 (500 looks each), from P̂ and from a
    point on F's boundary: the share ever flagged is ≤ a/2 (99 % CP bound) — every look counted."""
    from test_drift import _boundary_point

    _, q, p, ball = _setup()
    pop = p if where == "p_hat" else _boundary_point(p, ball)
    runs = 300
    hits = _paths_flagged(q, pop, ball, runs=runs, n=50_000, every=100, gamma=0.0, seed=11)
    print(f"false alarms from {where} over 500 looks: {hits}/{runs} (99 % CP upper {_cp_upper(hits, runs):.3f})")
    assert _cp_upper(hits, runs) <= ALPHA


@pytest.mark.slow
def test_forged_reports_within_the_budget_raise_no_alarm():
    """Honest reports from F's boundary plus γ = 1 % forged on the output P̂ makes rarest, at every look: the
    share of collections ever flagged stays ≤ a/2 (99 % CP bound); the same forgery at γ = 0 is flagged."""
    from test_drift import _boundary_point

    _, q, p, ball = _setup()
    pop = _boundary_point(p, ball)
    rare = int(np.argmin(q @ p.ravel()))
    runs = 100
    hits = _paths_flagged(
        q, pop, ball, runs=runs, n=20_000, every=500, gamma=0.01, seed=12, forged_output=rare, forged_share=0.01
    )
    assert _cp_upper(hits, runs) <= ALPHA, f"{hits}/{runs}"
    naive = _paths_flagged(
        q, pop, ball, runs=10, n=20_000, every=500, gamma=0.0, seed=13, forged_output=rare, forged_share=0.01
    )
    assert naive >= 8, f"γ = 0 flags {naive}/10 of these forgeries"


@pytest.mark.slow
def test_power_against_twice_the_claim_within_5000_reports_at_every_look():
    """A population whose realised ε* is 2 × 1.5 is flagged within 5,000 reports (looks every 100) in ≥ 95 %
    of runs (99 % CP bound), at γ = 0 and at the default γ = 0.01."""
    doc, q, p, ball = _setup()
    skewed = skewed_population(p)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if realised_epsilon(q, (1 - mid) * p + mid * skewed) >= 3.0 else (mid, hi)
    pop = (1 - hi) * p + hi * skewed
    rng = np.random.default_rng(14)
    for gamma in (0.0, 0.01):
        runs, hits = 100, 0
        for _ in range(runs):
            counts = rng.multinomial(5000, q @ pop.ravel())
            hits += watch(doc, counts, contamination=gamma, min_reports=0).rejected
        assert _cp_lower(hits, runs) >= 0.95, f"γ = {gamma}: {hits}/{runs}"
