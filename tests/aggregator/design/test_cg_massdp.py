"""The dynamic programme over m (cg.massdp, (D1)): its pieces against brute force, and the bound it
gives against exact PolyOpt by vertex enumeration on small problems."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ADULT_N, jeffreys, section_vertices

from rldp.aggregator.design import GammaCone, solve_polyopt, solve_polyopt_cg
from rldp.aggregator.design.solvers.cg.bound import SectionBound
from rldp.aggregator.design.solvers.cg.massdp import MassDP, interval_rho, max_plus
from rldp.shared.information import row_information
from rldp.shared.uncertainty import UncertaintySet


def test_max_plus_is_the_max_plus_convolution():
    rng = np.random.default_rng(3)
    for n, k in ((5, 9), (12, 3), (1, 4)):
        d, v = rng.normal(size=n), rng.normal(size=k)
        d[rng.random(n) < 0.3] = -np.inf
        v[0] = -np.inf
        brute = np.full(n + k - 1, -np.inf)
        for i in range(n):
            for j in range(k):
                brute[i + j] = max(brute[i + j], d[i] + v[j])
        np.testing.assert_array_equal(max_plus(d, v), brute)


def test_interval_rho_is_the_maximum_over_the_interval():
    rng = np.random.default_rng(4)
    d = rng.normal(scale=2.0, size=200)
    lo = rng.uniform(0.05, 3.0, 200)
    hi = lo + rng.uniform(0.0, 3.0, 200)
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 2001)[None, :]
    brute = np.max(d[:, None] / grid - np.log(grid), axis=1)
    got = interval_rho(d, lo, hi)
    assert np.all(got >= brute - 1e-12)  # the closed form is the maximum, the grid only samples it
    assert np.all(got <= brute + 1e-5 * (1 + np.abs(brute)))


@pytest.mark.slow
@pytest.mark.parametrize("same_sensitive", [False, True])
@pytest.mark.parametrize("shape, seed, eps", [((2, 3), 12, 0.9), ((3, 2), 4, 2.0), ((3, 3), 7, 0.5)])
def test_dp_bound_is_at_least_the_best_vertex_for_any_prices(same_sensitive, shape, seed, eps):
    # (D1) bounds max μ(z) − λ·z over Γ ∩ {P̂·z = 1} piece by piece; that convex maximum is at a
    # vertex of Γ̂, so every enumerated vertex is a brute-force check (also with few pieces and
    # coarse bins, where the resolution is poorest).
    p, cone, z = section_vertices(shape, seed, eps, same_sensitive)
    rng = np.random.default_rng(seed)
    for pieces in (1, 3, 16):
        bound = SectionBound(cone, p, pieces=pieces)
        for _ in range(4):
            lam = rng.uniform(-0.05, 0.3, p.size)
            best = float(np.max(row_information(z, p) - z @ lam))
            rs = [MassDP(o, w, p).rho(lam) for o, w, _ in bound.pieces]
            assert all(r is not None for r in rs)
            assert max(rs) >= best - 1e-9  # type: ignore[type-var]
            (r,) = bound.values([lam])
            assert r is not None and r >= best - 1e-9


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape, seed, eps, ratio",
    [((2, 5), 1, 1.0, 1.03), ((3, 4), 2, 1.0, 1.03), ((2, 4), 9, 0.5, 1.01), ((3, 3), 5, 2.0, 1.08)],
)
def test_dp_bound_at_the_optimal_duals_is_close_to_exact_polyopt(shape, seed, eps, ratio):
    # Exact PolyOpt by vertex enumeration is the judge: the bound is never below it, and at the
    # converged duals it is within a few % (measured 1.011 / 1.016 / 1.001 / 1.054 with 16
    # pieces), where (B3) with the same pieces gave 1.34 / 1.21 / 1.05 / 1.55.
    p = jeffreys(shape, seed)
    low = UncertaintySet.from_confidence(p, ADULT_N, 0.05).lower_bounds()
    exact = solve_polyopt(p, low, eps).information
    res = solve_polyopt_cg(p, low, eps, time_budget=30, coarsen=False)
    assert res.converged and res.duals is not None
    bound = SectionBound(GammaCone(low, eps), p, pieces=16)
    lam = res.duals
    (r,) = bound.values([lam])
    b3 = bound._value_b3(lam, (), math.inf, 1e-9)  # the tangent bound on the same pieces
    assert r is not None and b3 is not None
    new, old = float(lam.sum() + r), float(lam.sum() + b3)
    assert exact - 1e-9 <= new <= ratio * exact
    assert new < old
    # nested pieces (64 refines 16) tighten it towards the optimum, up to the bins' resolution
    (r64,) = SectionBound(GammaCone(low, eps), p, pieces=64).values([lam])
    assert r64 is not None and exact - 1e-9 <= lam.sum() + r64 <= new * (1 + 1e-3)


def test_the_binding_tuple_is_a_point_of_the_piece_with_the_dp_value():
    # MassDP.binding backtracks the programme: its tuple's own reduced cost per unit of P̂·z is the
    # piece's ρ at θ = 0 up to the bins' resolution, and never above the proven ρ.
    p = jeffreys((3, 3), 7, n=800)
    low = UncertaintySet.from_confidence(p, 800, 0.05).lower_bounds()
    bound = SectionBound(GammaCone(low, 1.0), p, pieces=4)
    lam = np.random.default_rng(2).uniform(-0.05, 0.3, p.size)
    for others, wide, _ in bound.pieces:
        dp = MassDP(others, wide, p)
        found, r = dp.binding(lam), dp.rho(lam)
        assert found is not None and r is not None
        r0, z = float(found[0][0]), found[1][0]
        assert r - 1e-12 <= r0 <= r + 0.01 * (1 + abs(r))  # one pass at θ = 0: a proof, a little looser
        value = float((row_information(z[None], p) - z @ lam)[0] / (z @ p.reshape(-1)))
        assert value <= r + 1e-9
        assert value >= r - 0.02 * (1 + abs(r))


@pytest.mark.slow
def test_refinement_and_the_price_search_keep_proofs_and_tighten_them():
    # Refining the pieces and searching λ never go below exact PolyOpt and never loosen the bound.
    from rldp.aggregator.design.solvers.cg.proof import Prover

    p = jeffreys((3, 3), 5)
    low = UncertaintySet.from_confidence(p, ADULT_N, 0.05).lower_bounds()
    exact = solve_polyopt(p, low, 2.0).information
    res = solve_polyopt_cg(p, low, 2.0, time_budget=30, coarsen=False)
    assert res.duals is not None
    lam = res.duals + np.random.default_rng(5).uniform(0.0, 0.05, p.size)  # suboptimal prices
    cone = GammaCone(low, 2.0)
    (plain,) = SectionBound(cone, p, pieces=4).values([lam])
    (refined,) = SectionBound(cone, p, pieces=4).values([lam], refine_until=math.inf, target=exact)
    assert plain is not None and refined is not None
    assert exact - 1e-9 <= lam.sum() + refined <= lam.sum() + plain * (1 + 1e-3)
    prover = Prover(low, 2.0, False, p, math.inf)
    prover.build(math.inf, planned=2)
    prover.update([lam], math.inf, res.information, planned=2)
    start = prover.upper
    found = prover.search([lam], math.inf, res.information)
    assert start is not None and prover.upper is not None
    assert exact - 1e-9 <= prover.upper <= start
    assert found is not None  # better prices on the search's grid; priced on the refined pieces:
    prover.update([found], math.inf, res.information, planned=1)
    assert exact - 1e-9 <= prover.upper < start
