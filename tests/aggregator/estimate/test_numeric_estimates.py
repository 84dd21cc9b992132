"""Estimates for numbers (rldp.aggregator.estimate.numeric): histogram, CDF, mean, quantiles and means
per value of S with 95 % intervals, values spread uniformly within a bin; and their coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import released_rr
from rldp.aggregator.design.primitives.families import grr_matrix
from rldp.aggregator.estimate import estimate_distribution
from rldp.aggregator.estimate.numeric import numeric_summaries, quantile_from_cdf
from rldp.shared.attributes import Attribute
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

SPEC = NumericSpec((17, 25, 32, 40, 50, 60, 90))
SEX = Attribute("sex", ("F", "M"))
P = np.array([[0.08, 0.08, 0.07, 0.07, 0.06, 0.04], [0.10, 0.10, 0.10, 0.12, 0.10, 0.08]])
P = P / P.sum()


def _sample(q: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One report per input x (column of Q), counted."""
    y = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1)
    return np.bincount(y, minlength=q.shape[0])


def _median(p_u: np.ndarray) -> float:
    # the population median of values spread uniformly within each bin (an independent inversion)
    return float(np.interp(0.5, np.r_[0.0, np.cumsum(p_u)], SPEC.edges))


def test_quantile_from_cdf_interpolates_within_a_bin() -> None:
    edges = np.array([0.0, 10.0, 20.0])
    assert quantile_from_cdf(edges, np.array([0.0, 0.2, 1.0]), 0.5) == pytest.approx(13.75)
    assert quantile_from_cdf(edges, np.array([0.0, 0.5, 1.0]), 0.5) == pytest.approx(10.0)
    assert quantile_from_cdf(edges, np.array([0.0, 0.0, 1.0]), 0.01) == pytest.approx(10.1)
    # a CDF bound that dips (noise) is made monotone first
    assert quantile_from_cdf(edges, np.array([0.0, 0.6, 0.55]), 0.99) == 20.0


def test_summary_of_an_exact_estimate() -> None:
    alpha = Alphabet(SEX, [Attribute.binned("age", SPEC)])
    q = grr_matrix(12, 30.0)  # almost no noise: the estimate is the sample's distribution
    counts = np.round(P.ravel() * 100_000).astype(int)
    est = estimate_distribution(q, counts, (2, 6))
    s = numeric_summaries(est, alpha)["age"]
    mid = SPEC.midpoints()
    assert s["mean"]["estimate"] == pytest.approx(float(P.sum(axis=0) @ mid), abs=0.01)
    assert s["quantiles"]["0.5"]["estimate"] == pytest.approx(_median(P.sum(axis=0)), abs=0.05)
    for value, row in zip(SEX.values, P, strict=True):
        entry = s["mean_by"]["sex"][value]
        assert entry["estimate"] == pytest.approx(float(row @ mid / row.sum()), abs=0.01)
        assert entry["ci95_low"] < entry["estimate"] < entry["ci95_high"]
    assert s["edges"] == list(SPEC.edges) and s["spread"] == "uniform within each bin"
    assert "age itself is protected only as far as it reveals sex" in s["note"]
    assert "-LDP" not in s["note"]  # no LDP level given: nothing said of one
    noted = numeric_summaries(est, alpha, input_epsilon=30.0)["age"]["note"]
    assert noted.startswith(s["note"]) and noted.endswith(
        "; and age itself is 30-LDP (no report is more than e^30 times likelier for one input than for another)"
    )
    assert len(s["cdf"]["at"]) == 5 and s["cdf"]["estimate"] == sorted(s["cdf"]["estimate"])


def test_means_by_s_are_not_identified_when_the_report_reads_u_alone() -> None:
    alpha = Alphabet(SEX, [Attribute.binned("age", SPEC)])
    q, _ = released_rr(UncertaintySet(P, 0.01, 2.0), 1.0)
    rng = np.random.default_rng(5)
    est = estimate_distribution(q, _sample(q, rng.choice(12, 3000, p=P.ravel()), rng), (2, 6))
    s = numeric_summaries(est, alpha)["age"]
    assert s["mean"]["identified"] and s["quantiles"]["0.5"]["identified"]
    assert not s["mean_by"]["sex"]["F"]["identified"] and s["mean_by"]["sex"]["F"]["ci95_low"] is None


def _clopper_pearson_low(k: int, n: int) -> float:
    # one-sided 97.5 % lower bound by bisection on the binomial tail (no scipy in this check)
    lo, hi = 0.0, k / n
    for _ in range(60):
        p = (lo + hi) / 2
        tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
        lo, hi = (p, hi) if tail < 0.025 else (lo, p)
    return lo


@pytest.mark.slow
def test_mean_and_median_intervals_cover_at_n_1000() -> None:
    """1,000 repetitions of n = 1,000 users with values uniform within bins, reporting through randomised
    response on U alone at ε = 1 (the distribution task's design): each interval covers its population
    value ≥ 0.93 of the time, and the Clopper–Pearson bound says the coverage is above 0.91."""
    alpha = Alphabet(SEX, [Attribute.binned("age", SPEC)], latent=True)
    q, _ = released_rr(UncertaintySet(P, 0.01, 2.0), 1.0, latent=True)
    p_u = P.sum(axis=0)
    true_mean, true_median = float(p_u @ SPEC.midpoints()), _median(p_u)
    rng = np.random.default_rng(2026)
    reps, covered = 1000, {"mean": 0, "median": 0}
    for _ in range(reps):
        counts = _sample(q, rng.choice(6, 1000, p=p_u), rng)
        s = numeric_summaries(estimate_distribution(q, counts, (1, 6)), alpha)["age"]
        m, med = s["mean"], s["quantiles"]["0.5"]
        covered["mean"] += m["ci95_low"] <= true_mean <= m["ci95_high"]
        covered["median"] += med["ci95_low"] <= true_median <= med["ci95_high"]
    for name, k in covered.items():
        print(
            f"coverage {name}: {k / reps:.3f} (Clopper-Pearson 97.5 % lower bound {_clopper_pearson_low(k, reps):.3f})"
        )
        assert k / reps >= 0.93, f"{name}: coverage {k / reps:.3f}"
        assert _clopper_pearson_low(k, reps) > 0.91, name
