"""The uncertainty set against the paper's worked examples and independent re-derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EXAMPLE_N, EXAMPLE_P_HAT, EXAMPLE_P_TRUE
from hypothesis import given, settings
from hypothesis import strategies as st

from rldp.shared.divergence import chi2_quantile, confidence_radius, renyi_divergence
from rldp.shared.uncertainty import UncertaintySet, projected_radii

ORDERS = [0.5, 1.0, 1.5, 2.0, 3.0]


def test_example1_radius_and_true_distribution_inside():
    # [LZG24, Example 1]: B = log(1 + F⁻¹_{χ²,3}(0.95)/100) = 0.0752, D₂(P̂‖P*) = 0.0281 < B.
    b = confidence_radius(EXAMPLE_N, 0.05, 4, order=2.0)
    assert round(b, 4) == 0.0752
    assert round(float(renyi_divergence(EXAMPLE_P_HAT.ravel(), EXAMPLE_P_TRUE.ravel(), 2.0)), 4) == 0.0281


@pytest.mark.parametrize("dof,prob", [(1, 0.95), (3, 0.95), (9, 0.99), (239, 0.95), (2, 1e-6), (50, 0.5)])
def test_chi2_quantile_matches_scipy(dof, prob):
    from scipy.stats import chi2

    assert chi2_quantile(prob, dof) == pytest.approx(chi2.ppf(prob, dof), rel=1e-10)


def test_example2_projection_theorem1_and_erratum():
    uset = UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05)
    np.testing.assert_allclose(uset.conditionals, [[0.4118, 0.5882], [0.3133, 0.6867]], atol=5e-5)
    # Theorem 1 gives B_s1 = 0.4067, B_s2 = 0.0903. Example 2 prints 0.3782 / 0.0900, which is
    # log((e^B − 1 + P̂_s)/P̂_s): the projection with the marginal of S held at P̂_s.
    np.testing.assert_allclose(uset.projected_radii, [0.4067, 0.0903], atol=1e-4)
    printed = np.log((math.exp(uset.radius) - 1 + uset.marginal) / uset.marginal)
    np.testing.assert_allclose(printed, [0.3782, 0.0900], atol=1e-4)


@pytest.mark.parametrize("order", ORDERS)
def test_theorem1_boundary_is_attained_inside_F(order):
    """Re-derive Theorem 1: a conditional R on the boundary of F_U|s is the projection of a
    P with D_α(P̂‖P) = B exactly (other conditionals at P̂, marginals from Hölder)."""
    p_hat = np.array([[0.05, 0.15, 0.1], [0.3, 0.1, 0.3]])
    b = 0.02  # small enough that L_u|s > 0 for every order (α < 1 balls can reach R_u = 0)
    uset = UncertaintySet(p_hat, b, order)
    s = 0
    bs = uset.projected_radii[s]
    # A boundary point: the minimiser of R_0 over F_U|s (from the Lagrange search).
    low = uset.lower_bounds()[s, 0]
    assert low > 0
    # Build R on the boundary by moving mass from u=0 to the others proportionally.
    cond = uset.conditionals[s]
    rest = cond[1:] / cond[1:].sum()
    r = np.concatenate([[low], (1 - low) * rest])
    assert float(renyi_divergence(cond, r, order)) == pytest.approx(bs, rel=1e-6, abs=1e-9)
    # Lift to P: other conditionals unchanged; optimal marginals t_s ∝ P̂_s e^{(α−1)D_s/α}.
    m = uset.marginal.copy()
    weight = m * np.array([math.exp((order - 1) * bs / order) if order != 1 else 1.0, 1.0])
    if order == 1:
        t = m  # KL: the marginal term vanishes at t = P̂_s
    else:
        t = weight / weight.sum()
    p = np.vstack([t[0] * r, t[1] * uset.conditionals[1]])
    assert float(renyi_divergence(p_hat.ravel(), p.ravel(), order)) == pytest.approx(b, rel=1e-6)
    # Any other marginal is worse (the projection radius is tight).
    for shift in (-0.02, 0.02):
        t2 = np.array([t[0] + shift, t[1] - shift])
        p2 = np.vstack([t2[0] * r, t2[1] * uset.conditionals[1]])
        assert float(renyi_divergence(p_hat.ravel(), p2.ravel(), order)) > b


def test_lower_bounds_closed_form_agrees_with_lagrange_search():
    """Prop. 2 (closed form at α = 2) and the general support function are two independent
    computations of L_u|s = min R_u."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        p = rng.dirichlet(np.ones(8) * 0.7).reshape(2, 4)
        uset = UncertaintySet(p, float(rng.uniform(0.001, 0.5)), 2.0)
        eye = np.broadcast_to(np.eye(4)[:, None, :], (4, 2, 4))
        hi, lo = uset.extremes(eye)  # (u, s)
        np.testing.assert_allclose(uset.lower_bounds(), lo.T, atol=1e-10)
        np.testing.assert_allclose(uset.upper_bounds(), hi.T, atol=1e-10)


@pytest.mark.parametrize("order", ORDERS)
def test_two_point_bounds_match_support_function_any_order(order):
    rng = np.random.default_rng(int(order * 10))
    p = rng.dirichlet(np.ones(6)).reshape(2, 3)
    uset = UncertaintySet(p, 0.05, order)
    eye = np.broadcast_to(np.eye(3)[:, None, :], (3, 2, 3))
    hi, lo = uset.extremes(eye)
    np.testing.assert_allclose(uset.lower_bounds(), lo.T, atol=1e-9)
    np.testing.assert_allclose(uset.upper_bounds(), hi.T, atol=1e-9)


def _brute_interval(cond: np.ndarray, radius: float, order: float) -> tuple[float, float]:
    """Endpoints of F_U|s ⊂ [0,1] for |U| = 2 by a fine scan plus bisection (independent of the
    Lagrange search)."""
    grid = np.linspace(0, 1, 200001)
    d = renyi_divergence(np.array([cond]), np.stack([grid, 1 - grid], 1), order)
    inside = grid[d <= radius]
    return float(inside.min()), float(inside.max())


@pytest.mark.parametrize("order", ORDERS)
def test_extremes_on_two_symbols_are_interval_endpoints(order):
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(4)).reshape(2, 2)
    uset = UncertaintySet(p, 0.1, order)
    q = rng.random((20, 2, 2))
    hi, lo = uset.extremes(q)
    for s in range(2):
        a, b = _brute_interval(uset.conditionals[s], uset.projected_radii[s], order)
        ends = np.stack([q[:, s, 0] * a + q[:, s, 1] * (1 - a), q[:, s, 0] * b + q[:, s, 1] * (1 - b)], 1)
        np.testing.assert_allclose(hi[:, s], ends.max(1), atol=2e-5)  # grid step 5e-6
        np.testing.assert_allclose(lo[:, s], ends.min(1), atol=2e-5)
        assert np.all(hi[:, s] >= ends.max(1) - 1e-12)  # never optimistic beyond round-off


def test_extremes_are_conservative_and_feasible_random_points():
    """No sampled point of the ball beats the computed max (or undercuts the min)."""
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(5), size=2)
    p = p / 2
    uset = UncertaintySet(p, 0.05, 2.0)
    q = rng.random((5, 2, 5))
    hi, lo = uset.extremes(q)
    for s in range(2):
        cond = uset.conditionals[s]
        pts = rng.dirichlet(cond * 400 + 0.01, size=100000)
        d = renyi_divergence(cond[None, :], pts, 2.0)
        pts = pts[d <= uset.projected_radii[s]]
        assert len(pts) > 100
        vals = q[:, s, :] @ pts.T
        assert np.all(vals.max(1) <= hi[:, s] + 1e-12)
        assert np.all(vals.min(1) >= lo[:, s] - 1e-12)


def test_zero_cells_of_p_hat_absorb_mass():
    """A cell with P̂ = 0 costs nothing in D_α: the max puts up to 1 − e^{−B_s} on it."""
    p = np.array([[0.5, 0.0], [0.25, 0.25]])
    uset = UncertaintySet(p, 0.02, 2.0)
    bs = uset.projected_radii[0]
    hi, lo = uset.extremes(np.array([[[0.0, 1.0], [0.5, 0.5]]]))
    assert hi[0, 0] == pytest.approx(1 - math.exp(-bs), rel=1e-9)
    assert lo[0, 0] == pytest.approx(0.0, abs=1e-15)
    assert uset.lower_bounds()[0, 1] == 0.0


def test_unseen_sensitive_value_projects_to_whole_simplex():
    p = np.array([[0.0, 0.0], [0.4, 0.6]])
    uset = UncertaintySet(p, 0.01, 2.0)
    assert math.isinf(uset.projected_radii[0])
    hi, lo = uset.extremes(np.array([[[0.2, 0.7], [0.5, 0.5]]]))
    assert (hi[0, 0], lo[0, 0]) == (0.7, 0.2)


@pytest.mark.parametrize("order", [1.0, 2.0])
def test_l1_radius_exact_equals_sign_vector_support(order):
    """rad_s by subset enumeration (Prop. 1, eq. 30) equals max over sign vectors σ of
    max_R σ·(R − P̂_U|s), computed with the support function instead."""
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(10) * 0.8).reshape(2, 5)
    uset = UncertaintySet(p, 0.03, order)
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * 5)).reshape(5, -1).T  # (32, 5)
    vec = np.broadcast_to(signs[:, None, :], (32, 2, 5))
    hi, _ = uset.extremes(vec)
    direct = (hi - np.einsum("ku,su->ks", signs, uset.conditionals)).max(axis=0)
    np.testing.assert_allclose(uset.l1_radii(), direct, atol=1e-9)


def test_l1_radius_bound_for_large_alphabets_is_valid():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(40)).reshape(2, 20)
    uset = UncertaintySet(p, 0.02, 2.0)
    bound = uset.l1_radii()
    # Exact over a random sample of sign vectors must not exceed the bound.
    signs = rng.choice([-1.0, 1.0], size=(300, 20))
    hi, _ = uset.extremes(np.broadcast_to(signs[:, None, :], (300, 2, 20)))
    sample = (hi - np.einsum("ku,su->ks", signs, uset.conditionals)).max(axis=0)
    assert np.all(sample <= bound + 1e-12)
    np.testing.assert_allclose(bound, np.sqrt(np.expm1(uset.projected_radii)))


def test_validation_messages():
    with pytest.raises(ValueError, match="radius must be ≥ 0"):
        UncertaintySet(EXAMPLE_P_HAT, -1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        UncertaintySet(np.array([[0.5, 0.6]]), 0.1)
    with pytest.raises(ValueError, match="order must be"):
        UncertaintySet(EXAMPLE_P_HAT, 0.1, order=0.0)
    with pytest.raises(ValueError, match="beta"):
        confidence_radius(100, 1.5, 4)
    with pytest.raises(ValueError, match="n "):
        confidence_radius(0, 0.05, 4)


@settings(max_examples=40, deadline=None)
@given(order=st.sampled_from(ORDERS), b=st.floats(1e-5, 2.0), ps=st.floats(0.01, 1.0))
def test_projected_radius_is_monotone_and_reduces_to_b(order, b, ps):
    r = projected_radii(np.array([ps, 1.0]), b, order)
    assert r[1] == pytest.approx(b * (1 if order == 1 else 1), rel=1e-9) or order != 1
    if order >= 1:
        assert r[0] >= r[1] - 1e-12  # a rarer s has a wider projected ball
    assert r[1] == pytest.approx(b, rel=1e-9)  # P̂_s = 1: the projection is the ball itself
