"""The sectioned Lagrangian bound (cg.bound) and the coarse-to-fine ladder (cg.coarsen):
brute-force and exact comparisons on small problems, certification of the ladder's designs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ADULT_N, assert_ladder_certified, jeffreys, section_vertices

import rldp.aggregator.design.solvers.cg as cg
from rldp.aggregator.design import GammaCone, design_matrix, solve_polyopt, solve_polyopt_cg
from rldp.aggregator.design.solvers.cg import blocks
from rldp.aggregator.design.solvers.cg.bound import MAX_PIECES, SectionBound
from rldp.shared.audit import audit_rldp
from rldp.shared.information import mutual_information, row_information
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

N = ADULT_N
MARGIN = 1 - DESIGN_MARGIN


@pytest.mark.slow
@pytest.mark.parametrize("same_sensitive", [False, True])
@pytest.mark.parametrize("shape, seed, eps", [((2, 3), 12, 0.9), ((3, 2), 4, 2.0), ((3, 3), 7, 0.5)])
def test_section_bound_is_at_least_the_best_vertex_for_any_prices(same_sensitive, shape, seed, eps):
    # (B2) bounds max μ(z) − λ·z over Γ ∩ {P̂·z = 1}; the maximum of that convex function is at a
    # vertex of Γ̂, so comparing with every enumerated vertex is a brute-force check.
    p, cone, z = section_vertices(shape, seed, eps, same_sensitive)
    bound = SectionBound(cone, p)
    old = blocks.BlockPricer(cone, p.reshape(-1))
    rng = np.random.default_rng(seed)
    for _ in range(6):
        lam = rng.uniform(-0.05, 0.3, p.size)
        best = float(np.max(row_information(z, p) - z @ lam))
        r = bound.value(lam, rtol=1e-9)
        assert r is not None and r >= best - 1e-9
        # its pieces lie inside the old relaxation and it tries a superset of tangents:
        # never looser than the old bound (up to the old bisection's resolution)
        r_old = old.bound(lam, [1.0, math.exp(eps / 2)], steps=40)
        assert r_old is not None and r <= r_old + 1e-6 * (1 + abs(r_old))


@pytest.mark.slow
@pytest.mark.parametrize("shape, seed, eps", [((2, 3), 2, 1.0), ((3, 3), 5, 2.0), ((2, 4), 9, 0.5)])
def test_section_bound_at_the_optimal_duals_bounds_exact_polyopt_and_is_tighter(shape, seed, eps):
    p = jeffreys(shape, seed)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    low = uset.lower_bounds()
    exact = solve_polyopt(p, low, eps).information
    res = solve_polyopt_cg(p, low, eps, time_budget=30, coarsen=False)
    assert res.converged and res.duals is not None
    cone = GammaCone(low, eps)
    lam = res.duals
    new = float(lam.sum() + SectionBound(cone, p).value(lam, rtol=1e-9))
    old = float(lam.sum() + blocks.BlockPricer(cone, p.reshape(-1)).bound(lam, [1.0, math.exp(eps / 2)], steps=40))
    assert exact - 1e-9 <= new < old
    # the solver reports it (it proves the bound with the pieces at the claimed ε)
    assert res.upper_bound is not None and exact - 1e-9 <= res.upper_bound <= new * (1 + 2e-3)


@pytest.mark.slow
def test_section_bound_is_tighter_on_converged_problems():
    # The measurement: the old bound was 1.30-1.51× the optimum at ε = 1 on converged
    # problems (1.41-1.82× on these draws, at the same duals); the pieces give 1.10-1.34×.
    for shape, seed in (((2, 5), 1), ((3, 4), 2), ((4, 4), 3)):
        p = jeffreys(shape, seed)
        low = UncertaintySet.from_confidence(p, N, 0.05).lower_bounds()
        res = solve_polyopt_cg(p, low, 1.0, time_budget=30, coarsen=False)
        assert res.converged and res.upper_bound is not None and res.duals is not None
        lam = res.duals
        old = lam.sum() + blocks.BlockPricer(GammaCone(low, 1.0), p.reshape(-1)).bound(lam, [1.0, math.exp(0.5)])
        assert res.information <= res.upper_bound <= min(0.85 * old, 1.35 * res.lp_value), shape


@pytest.mark.slow
def test_section_bound_respects_its_deadline():
    p = jeffreys((3, 3), 2)
    cone = GammaCone(UncertaintySet.from_confidence(p, N, 0.05).lower_bounds(), 1.0)
    assert SectionBound.build(cone, p, deadline=0.0) is None  # in the past: nothing built
    bound = SectionBound(cone, p)
    assert bound.complete and bound.n_pieces == MAX_PIECES
    lam = np.full(p.size, 0.05)
    full = bound.value(lam, rtol=1e-9)
    cut = bound.value(lam, deadline=0.0)  # stops after the bracket: its end is proven, only looser
    assert full is not None and full > 0
    assert cut is None or cut >= full - 1e-12


def test_aggregation_keeps_the_fine_problems_self_pairs():
    # A group that contains a block which itself carries the s1 = s2 row keeps it, so rows of the
    # twice-aggregated problem expand into the once-aggregated cone.
    p = jeffreys((6, 8), 5)
    low = UncertaintySet.from_confidence(p, 3000, 0.05).lower_bounds()
    eps = 0.9
    first = cg.Aggregation(np.array([0, 0, 1, 2, 3, 4]), np.arange(8) // 2)  # 5 × 4, block 0 merged
    p1, l1, self1 = first.problem(p, low)
    assert list(self1) == [True, False, False, False, False]
    second = cg.Aggregation(np.array([0, 1, 1, 2, 2]), np.array([0, 0, 1, 1]))  # 3 × 2
    p2, l2, self2 = second.problem(p1, l1, self_pairs=self1)
    assert list(self2) == [True, True, True]
    rows = GammaCone(l2, eps, self_pairs=self2).repair(np.random.default_rng(0).random((300, 6)) ** 4)
    mid = second.expand(rows)
    assert np.all(GammaCone(l1, eps, self_pairs=self1).contains(mid))
    assert np.all(GammaCone(low, eps).contains(first.expand(mid)))
    # without the inherited row the same rung would not expand inside
    _, _, plain = second.problem(p1, l1)
    assert not plain[0]


@pytest.mark.slow
def test_the_coarse_to_fine_ladder_has_nested_rungs_and_certified_designs():
    p = jeffreys((12, 16), 8)
    assert cg.coarse_aggregation(p).shape == (12, 8)
    assert cg.coarse_aggregation(np.ones((12, 8)) / 96).shape == (12, 4)
    assert cg.coarse_aggregation(np.ones((42, 6)) / 252).shape == (21, 6)
    assert cg.coarse_aggregation(np.ones((12, 4)) / 48) is None
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    res = solve_polyopt_cg(p, uset.lower_bounds(), MARGIN, time_budget=8.0, bound_epsilon=1.0)
    assert [s["shape"] for s in res.stages] == [[12, 4], [12, 8]]
    # each rung seeds the next; certification (renormalised columns) may cost round-off only
    assert res.stages[1]["information"] >= res.stages[0]["information"] * (1 - 1e-7)
    assert_ladder_certified(res, uset)


@pytest.mark.slow
def test_polyopt_reports_the_bound_kind_and_gap():
    p = jeffreys((5, 6), 3)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    q, params = design_matrix("polyopt", uset, 1.0, solver="cg", time_budget=4.0)
    assert audit_rldp(q, uset, 1.0).passed
    info = mutual_information(q, p)
    assert params["upper_bound_kind"] in params["upper_bounds"]
    assert params["upper_bound"] == min(params["upper_bounds"].values())
    assert params["bound_gap"] == pytest.approx(info / params["upper_bound"], rel=1e-9)
    assert 0 < params["bound_gap"] <= 1 + 1e-9


def test_cone_violations_equal_the_pairwise_maximum():
    # violations() takes the max over pairs through the two smallest lower sides per row; it must
    # equal the literal max over the cone's pairs bit for bit (every variant of the pairs).
    rng = np.random.default_rng(0)
    for same in (False, True):
        for a1, a2 in ((2, 3), (5, 4), (7, 2)):
            low = rng.dirichlet(np.ones(a2), a1) * 0.8
            for cone in (GammaCone(low, 0.7, same), GammaCone(low, 0.7, same, rng.random(a1) < 0.5)):
                rows = rng.random((300, a1 * a2)) ** 3
                hi, lo = cone.sides(rows)
                literal = np.max(hi[:, cone.pairs[:, 0]] - math.exp(0.7) * lo[:, cone.pairs[:, 1]], axis=1)
                assert np.array_equal(literal, cone.violations(rows))


def test_nr_knapsack_bound_covers_every_subset_and_beats_the_hull():
    # Above NR_EXACT_MAX_SENSITIVE the NR pricing bound is min(hull, knapsack); on 12 sensitive
    # values every subset can still be enumerated: the knapsack bound must cover the best one.
    from rldp.aggregator.design.solvers.cg import nr as nr_module

    p = jeffreys((12, 3), 6)
    ps = p.sum(axis=1)
    member = ((np.arange(2**12)[:, None] >> np.arange(12)[None, :]) & 1).astype(float)
    rng = np.random.default_rng(4)
    tighter = 0
    for eps in (0.5, 1.0, 2.0):
        for _ in range(5):
            g = rng.normal(0.0, 0.3, 12) * ps
            exact = float(nr_module._nr_value(ps, g, member, eps).max())
            knap = nr_module._knapsack_bound(ps, g, eps)
            assert knap >= exact - 1e-12
            assert knap <= exact + 0.05 * (1 + abs(exact))  # and close: the grid is 1/20000 of the mass
            order = np.argsort(-g / ps)
            prefix = np.tril(np.ones((13, 12)), -1)[:, np.argsort(order)]
            pt, gt = prefix @ ps, prefix @ g
            k = 1.0 + math.expm1(eps) * pt
            frac = (eps * math.exp(eps) * pt + g.sum() + math.expm1(eps) * gt) / k
            hull = float(np.max(-np.log(k[:-1]) + np.maximum(frac[:-1], frac[1:])))
            tighter += knap < hull - 1e-9
    assert tighter > 0
