"""The exact audit: brute force on |U| = 2, consistency with Prop. 3 and with ε*."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rldp.aggregator.design.primitives.families import grr_matrix, srr_matrix
from rldp.shared.audit import all_distributions_epsilon, audit_rldp, ldp_epsilon, realised_epsilon, rldp_epsilon
from rldp.shared.divergence import renyi_divergence
from rldp.shared.uncertainty import UncertaintySet


def _random_mechanism(rng, outputs, symbols, zeros=0.0):
    q = rng.random((outputs, symbols)) ** 2
    q[rng.random(q.shape) < zeros] = 0.0
    q[0] += 1e-3  # keep every column non-empty
    return q / q.sum(axis=0, keepdims=True)


def _interval(cond, radius, order):
    """F_U|s for |U| = 2 as an interval of R_u1, endpoints by Brent's method on
    D_α((ρ, 1−ρ)‖(r, 1−r)) = B_s (independent of the audit's Lagrange search)."""
    from scipy.optimize import brentq

    rho = cond[0]

    def f(r: float) -> float:
        return float(renyi_divergence(cond, np.array([r, 1 - r]), order)) - radius

    lo = 0.0 if f(0.0) <= 0 else brentq(f, 0.0, rho, xtol=1e-15)
    hi = 1.0 if f(1.0) <= 0 else brentq(f, rho, 1.0, xtol=1e-15)
    return lo, hi


def _brute_force_epsilon(q, uset):
    """|U| = 2: each F_U|s is an interval and a linear function peaks at its endpoints."""
    a1 = uset.n_sensitive
    hi = np.empty((q.shape[0], a1))
    lo = np.empty((q.shape[0], a1))
    for s in range(a1):
        ends = np.array([[r, 1 - r] for r in _interval(uset.conditionals[s], uset.projected_radii[s], uset.order)])
        vals = q[:, 2 * s : 2 * s + 2] @ ends.T
        hi[:, s], lo[:, s] = vals.max(1), vals.min(1)
    best = -np.inf
    for s1 in range(a1):
        for s2 in range(a1):
            if s1 != s2:
                best = max(best, np.max(np.log(hi[:, s1] / lo[:, s2])))
    return best


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    a1=st.integers(2, 3),
    order=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    radius=st.floats(0.001, 0.5),
)
def test_audit_matches_brute_force_on_two_released_symbols(seed, a1, order, radius):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(2 * a1)).reshape(a1, 2)
    uset = UncertaintySet(p, radius, order)
    q = _random_mechanism(rng, 4, 2 * a1)
    eps, _ = rldp_epsilon(q, uset)
    brute = _brute_force_epsilon(q, uset)
    assert eps >= brute - 1e-9  # conservative
    assert eps == pytest.approx(brute, abs=1e-10)


def test_audit_with_unbounded_radius_is_proposition3():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(6)).reshape(2, 3)
    q = _random_mechanism(rng, 5, 6)
    eps, _ = rldp_epsilon(q, UncertaintySet(p, math.inf))
    assert eps == pytest.approx(all_distributions_epsilon(q, 2), abs=1e-12)


def test_audit_with_zero_radius_is_realised_epsilon_at_p_hat():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(6)).reshape(3, 2)
    q = _random_mechanism(rng, 4, 6)
    eps, _ = rldp_epsilon(q, UncertaintySet(p, 0.0))
    assert eps == pytest.approx(realised_epsilon(q, p), abs=1e-12)


def test_audit_grows_with_radius():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(8)).reshape(2, 4)
    q = _random_mechanism(rng, 6, 8)
    values = [rldp_epsilon(q, UncertaintySet(p, b))[0] for b in (0.0, 0.001, 0.01, 0.1, 1.0, math.inf)]
    assert all(a <= b + 1e-12 for a, b in zip(values, values[1:]))


def test_grr_and_srr_guarantees():
    eps = 0.8
    g = grr_matrix(6, eps)
    assert ldp_epsilon(g) == pytest.approx(eps)
    s = srr_matrix(2, 3, eps)
    # SRR is (ε, P_X)-RLDP (Lemma 2) but only 2ε-LDP on X.
    assert all_distributions_epsilon(s, 2) == pytest.approx(eps)
    assert ldp_epsilon(s) == pytest.approx(2 * eps)
    p = np.full((2, 3), 1 / 6)
    assert audit_rldp(s, UncertaintySet(p, 0.3), eps).passed


def test_zero_entries_give_infinite_or_no_leak():
    p = np.array([[0.25, 0.25], [0.25, 0.25]])
    uset = UncertaintySet(p, 0.01)
    # Output 0 only happens for s = 0: infinite leakage.
    q = np.array([[0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 1.0, 1.0]])
    assert math.isinf(rldp_epsilon(q, uset)[0])
    assert not audit_rldp(q, uset, 5.0).passed
    # A row of zeros is never observed: no leak from it.
    q2 = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    assert rldp_epsilon(q2, uset)[0] == 0.0


def test_realised_epsilon_definition():
    q = np.array([[0.6, 0.2, 0.3, 0.3], [0.4, 0.8, 0.7, 0.7]])
    p = np.array([[0.2, 0.2], [0.3, 0.3]])
    # P(Y=0|S=0) = 0.4, P(Y=0|S=1) = 0.3 → ratio 4/3; P(Y=1|S=1)/P(Y=1|S=0) = 0.7/0.6.
    assert realised_epsilon(q, p) == pytest.approx(math.log(4 / 3))


def test_audit_reports_where_the_worst_case_is():
    p = np.array([[0.3, 0.2], [0.1, 0.4]])
    q = np.array([[0.9, 0.1, 0.2, 0.2], [0.1, 0.9, 0.8, 0.8]])
    res = audit_rldp(q, UncertaintySet(p, 0.05), claimed=0.1)
    assert res.passed is False and res.worst["s1"] != res.worst["s2"]
    assert "exceeds the claimed" in res.reasons[0]


def _all_pairs(num: np.ndarray, den: np.ndarray, keep: np.ndarray | None) -> float:
    """The (|Y|, |S|, |S|) table of every pair, as the audit used to build it."""
    from rldp.shared.audit.base import log_ratios, worst_case

    ratios = log_ratios(num[:, :, None], den[:, None, :])
    k = num.shape[1]
    ratios[:, np.arange(k), np.arange(k)] = -np.inf
    if keep is not None:
        ratios[:, ~keep, :] = -np.inf
        ratios[:, :, ~keep] = -np.inf
    return worst_case(ratios, ("output", "s1", "s2"))[0]


@pytest.mark.parametrize("seed", range(40))
def test_pairwise_worst_is_the_table_of_every_pair(seed) -> None:
    # Issue 27 D2: the audit no longer builds |Y|·|S|² ratios; the best pair per row gives the same ε.
    from rldp.shared.audit.base import log_ratios, pairwise_worst

    rng = np.random.default_rng(seed)
    b, k = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    num = rng.random((b, k)) * (rng.random((b, k)) > 0.3)  # zeros: 0/x and x/0
    den = num if seed % 3 == 0 else num * rng.random((b, k)) * (rng.random((b, k)) > 0.2)
    if seed % 5 == 0:  # ties
        num, den = np.round(num, 1), np.round(den, 1)
    keep = rng.random(k) > 0.3 if seed % 2 else None
    eps, worst = pairwise_worst(num, den, keep)
    assert eps == _all_pairs(num, den, keep)
    if worst:  # the place it names gives that ε
        y, s1, s2 = worst["output"], worst["s1"], worst["s2"]
        assert s1 != s2 and max(float(log_ratios(num[y, s1], den[y, s2])), 0.0) == eps


def test_many_sensitive_values_are_audited_without_the_table_of_pairs() -> None:
    import tracemalloc

    k = 8192  # one released symbol: |X| = |S|; one output, so the pair table would be 512 MiB
    uset = UncertaintySet(np.full((k, 1), 1 / k), math.inf, 2.0)
    tracemalloc.start()
    eps, _ = rldp_epsilon(np.ones((1, k)), uset)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert eps == 0.0 and peak < 16 * 2**20, peak
