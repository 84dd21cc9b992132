"""PolyOpt by column generation: agreement with exact enumeration, certification,
anytime behaviour, proven upper bounds, solver selection in design() and the CLI flags."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helpers import design_args, run_cli
from helpers import ADULT_N, EXAMPLE_EPSILON, EXAMPLE_N, EXAMPLE_P_HAT, assert_ladder_certified, jeffreys
from scipy.optimize import linprog

import rldp.aggregator.design.solvers.cg as cg
from rldp.aggregator.design import (
    DesignError,
    GammaCone,
    design,
    design_matrix,
    enumerate_vertices,
    gamma_inequalities,
    grr_matrix,
    optimal_weights,
    solve_nr_cg,
    solve_polyopt,
    solve_polyopt_cg,
    srr_matrix,
)
from rldp.aggregator.design.solvers.cg import blocks, nr_pricing, nr_upper_bound, seed_columns
from rldp.aggregator.design.solvers.cg import nr as nr_module
from rldp.aggregator.design.solvers.cg import solve as solve_module
from rldp.shared.audit import audit_rldp
from rldp.shared.information import mutual_information, row_information
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

N = ADULT_N
MARGIN = 1 - DESIGN_MARGIN
# A time budget the solves it is given to never reach (they stop at their iteration budget or converge
# within a second): tests bound the work by iterations, so that no verdict depends on the machine's speed.
ROOMY = 120.0


def _alphabet(a1, a2):
    return Alphabet(
        Attribute("s", tuple(f"s{i}" for i in range(a1))), [Attribute("u", tuple(f"u{j}" for j in range(a2)))]
    )


SMALL = [((2, 2), 1, 0.5), ((2, 3), 2, 1.0), ((3, 2), 3, 2.0), ((2, 3), 4, 0.3), ((3, 2), 5, 1.0)]


@pytest.mark.slow
@pytest.mark.parametrize("same_sensitive", [False, True])
@pytest.mark.parametrize("shape,seed,eps", SMALL)
def test_matches_exact_polyopt_and_passes_the_audit(shape, seed, eps, same_sensitive):
    p = jeffreys(shape, seed, n=2000)
    uset = UncertaintySet.from_confidence(p, 2000, 0.05)
    low = uset.lower_bounds()
    exact = solve_polyopt(p, low, eps * MARGIN, same_sensitive=same_sensitive)
    res = solve_polyopt_cg(p, low, eps * MARGIN, same_sensitive=same_sensitive, time_budget=20, bound_epsilon=eps)
    assert res.status == "converged"
    # Within 0.5 % of the optimum, and never above it (every column lies in Γ).
    assert exact.information * 0.995 <= res.information <= exact.information * (1 + 1e-7)
    q = res.matrix
    np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-12)
    assert np.all(q >= 0)
    assert np.all(GammaCone(low, eps * MARGIN, same_sensitive).contains(q))  # Theorem 2
    assert audit_rldp(q, uset, eps).passed
    assert res.information == pytest.approx(mutual_information(q, p), abs=1e-12)
    # A proven bound is never below the true optimum.
    assert res.upper_bound is not None and res.upper_bound >= exact.information - 1e-9


@pytest.mark.slow
def test_paper_example3_numbers():
    uset = UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05)
    low = uset.lower_bounds()
    paper = solve_polyopt_cg(EXAMPLE_P_HAT, low, EXAMPLE_EPSILON, same_sensitive=True, time_budget=20)
    assert paper.information == pytest.approx(0.4228, abs=5e-5)  # Example 3: I = 0.4228
    rldp = solve_polyopt_cg(EXAMPLE_P_HAT, low, EXAMPLE_EPSILON, same_sensitive=False, time_budget=20)
    assert rldp.information == pytest.approx(0.5630, abs=5e-4)  # docs/design.md, errata: cone without s1 = s2 rows
    for res in (paper, rldp):
        assert audit_rldp(res.matrix, uset, EXAMPLE_EPSILON + 1e-9).passed


@pytest.mark.slow
def test_anytime_returns_a_certified_mechanism_at_least_as_good_as_its_seeds():
    p = jeffreys((6, 6), 11)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    low, eps = uset.lower_bounds(), 1.0
    # Cut short by an iteration budget, not a time budget: the same rounds on any machine, loaded or
    # not (ROOMY is a time budget no solve of this size reaches; no bound is proved: it would use it).
    res = solve_polyopt_cg(p, low, eps * MARGIN, time_budget=ROOMY, max_iterations=2, prove_bound=False)
    assert res.status == "iteration_limit" and not res.converged and res.iterations == 2
    assert audit_rldp(res.matrix, uset, eps).passed
    np.testing.assert_allclose(res.matrix.sum(axis=0), 1.0, atol=1e-12)
    seeds = seed_columns(GammaCone(low, eps * MARGIN))
    _, seed_value = optimal_weights(seeds, p)
    assert res.information >= seed_value - 1e-9
    # Given more rounds it improves.
    longer = solve_polyopt_cg(p, low, eps * MARGIN, time_budget=ROOMY, max_iterations=20, prove_bound=False)
    assert longer.information >= res.information - 1e-12
    assert audit_rldp(longer.matrix, uset, eps).passed


def test_the_lp_solver_prints_nothing_to_stdout(capfd):
    # highspy ≥ 1.16 prints a banner from its constructor at the C level; on stdout it
    # corrupts `rldp design --json`. capfd sees file descriptor 1, not only sys.stdout.
    p = jeffreys((3, 4), 5)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    solve_polyopt_cg(p, uset.lower_bounds(), MARGIN, time_budget=ROOMY, max_iterations=2, prove_bound=False)
    solve_nr_cg(p, 1.0, time_budget=ROOMY, max_iterations=2)
    out, _ = capfd.readouterr()
    assert out == ""


def test_extra_rows_are_used_when_they_fit():
    # An IR mechanism whose rows fit Γ: the result can never be worse than it.
    p = jeffreys((4, 4), 3)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    ir, _ = design_matrix("ir", uset, 1.0)
    cone = GammaCone(uset.lower_bounds(), MARGIN)
    # No pricing round (max_iterations=0): the master over the seeds alone, every seed computed (a
    # time budget it never reaches), so the verdict does not depend on the machine's speed.
    res = solve_polyopt_cg(
        p, uset.lower_bounds(), MARGIN, time_budget=ROOMY, max_iterations=0, prove_bound=False, extra_rows=[ir]
    )
    assert res.status == "iteration_limit"
    repaired = cone.repair(ir)
    repaired = repaired / repaired.sum(axis=1, keepdims=True)
    _, value = optimal_weights(np.vstack([seed_columns(cone), repaired]), p)
    assert res.information >= value - 1e-9


def test_repair_moves_rows_inside_gamma():
    p = jeffreys((3, 3), 8)
    low = UncertaintySet.from_confidence(p, 500, 0.05).lower_bounds()
    cone = GammaCone(low, 0.7)
    rows = np.random.default_rng(0).random((50, 9)) ** 6
    assert not np.all(cone.contains(rows))
    fixed = cone.repair(rows)
    assert np.all(cone.contains(fixed))
    inside = cone.contains(rows)
    np.testing.assert_array_equal(fixed[inside], rows[inside])  # members are untouched


def test_compact_cone_equals_definition3():
    # The epigraph form (one row per pair) describes the same cone as the a1²·a2² rows.
    p = jeffreys((3, 3), 9)
    low = UncertaintySet.from_confidence(p, 300, 0.05).lower_bounds()
    for same in (False, True):
        cone = GammaCone(low, 0.8, same)
        ineq = gamma_inequalities(low, 0.8, same)
        rows = np.random.default_rng(1).random((400, 9)) ** 3
        full = np.all(rows @ ineq.T <= 1e-12, axis=1)
        np.testing.assert_array_equal(cone.contains(rows), full)


def test_block_vertices_are_exactly_the_vertices_of_each_block():
    # max of a linear objective over the enumerated points = the LP over the block polytope.
    rng = np.random.default_rng(4)
    for _ in range(6):
        k = int(rng.integers(2, 6))
        low = rng.dirichlet(np.ones(k)) * rng.uniform(0.2, 0.95)
        slack, eps = 1 - low.sum(), float(rng.uniform(0.2, 2.0))
        blk = blocks.BlockVertices(low, slack, eps, np.full(k, 1.0 / k))
        pts = np.array([blk.vertex(i) for i in range(len(blk.h))])
        e = math.exp(eps)
        # feasibility of every enumerated point
        top = pts @ low + slack * pts.max(axis=1)
        bottom = pts @ low + slack * pts.min(axis=1)
        assert np.all(top <= e * (1 + 1e-9)) and np.all(bottom >= 1 - 1e-9) and np.all(pts >= -1e-12)
        for _ in range(10):
            c = rng.standard_normal(k)
            # variables z (k), M, m: z - M <= 0, m - z <= 0, L z + l M <= e, -(L z + l m) <= -1
            a_ub = np.zeros((2 * k + 2, k + 2))
            a_ub[:k, :k] = np.eye(k)
            a_ub[:k, k] = -1
            a_ub[k : 2 * k, :k] = -np.eye(k)
            a_ub[k : 2 * k, k + 1] = 1
            a_ub[2 * k, :k] = low
            a_ub[2 * k, k] = slack
            a_ub[2 * k + 1, :k] = -low
            a_ub[2 * k + 1, k + 1] = -slack
            b_ub = np.concatenate([np.zeros(2 * k), [e, -1]])
            lp = linprog(-np.concatenate([c, [0, 0]]), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
            assert lp.status == 0
            assert (pts @ c).max() == pytest.approx(-lp.fun, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("same_sensitive", [False, True])
def test_polytope_pricing_bound_is_at_least_the_best_vertex(same_sensitive):
    # For arbitrary prices, the proven bound on max μ(z) − λ·z over Γ ∩ {P̂·z = 1} is ≥ its
    # value at every vertex of Γ̂ (enumerated exactly).
    p = jeffreys((2, 3), 12, n=800)
    low = UncertaintySet.from_confidence(p, 800, 0.05).lower_bounds()
    eps = 0.9
    verts = enumerate_vertices(GammaCone(low, eps, same_sensitive))
    z = verts / (verts @ p.reshape(-1))[:, None]
    pricer = blocks.BlockPricer(GammaCone(low, eps, same_sensitive), p.reshape(-1))
    rng = np.random.default_rng(2)
    for _ in range(5):
        lam = rng.uniform(0.0, 0.3, p.size)
        best = float(np.max(row_information(z, p) - z @ lam))
        bound = pricer.bound(lam, [1.0, math.exp(eps / 2)])
        assert bound is not None and bound >= best - 1e-9


def test_nr_by_column_generation_is_exact_and_certified():
    for shape, seed, eps in [((2, 3), 1, 0.5), ((3, 3), 2, 1.0), ((4, 2), 3, 2.0)]:
        p = jeffreys(shape, seed)
        exact = solve_polyopt(p, UncertaintySet(p, 0.0).lower_bounds(), eps)
        res = solve_nr_cg(p, eps, time_budget=20)
        assert res.converged
        assert res.information == pytest.approx(exact.information, rel=1e-6)
        assert res.upper_bound >= exact.information - 1e-9
        assert res.upper_bound <= exact.information * (1 + 1e-6)  # converged: the bound is tight
        assert audit_rldp(res.matrix, UncertaintySet(p, 0.0), eps + 1e-9).passed


def test_nr_upper_bound_holds_for_any_prices():
    p = jeffreys((3, 2), 5)
    eps = 1.0
    exact = solve_polyopt(p, UncertaintySet(p, 0.0).lower_bounds(), eps).information
    rng = np.random.default_rng(0)
    for _ in range(20):
        lam = rng.uniform(-0.1, 0.5, p.size)
        assert nr_upper_bound(p, lam, eps) >= exact - 1e-9


def test_nr_hull_bound_covers_every_subset(monkeypatch):
    # Above NR_EXACT_MAX_SENSITIVE the subset search is replaced by a zonotope-hull bound;
    # force it on a size where all subsets can still be enumerated and compare.
    p = jeffreys((10, 3), 6)
    rng = np.random.default_rng(3)
    for _ in range(5):
        lam = rng.uniform(0.0, 0.5, p.size)
        _, values, exact_bound = nr_pricing(p, lam, 0.8, columns=1)
        monkeypatch.setattr(nr_module, "NR_EXACT_MAX_SENSITIVE", 4)
        _, hull_values, hull_bound = nr_pricing(p, lam, 0.8, columns=1)
        monkeypatch.setattr(nr_module, "NR_EXACT_MAX_SENSITIVE", 16)
        assert hull_bound >= exact_bound - 1e-12
        assert hull_values[0] <= exact_bound + 1e-12


# -- design() and the CLI ---------------------------------------------------------


@pytest.mark.slow
def test_design_solver_selection_and_record():
    alphabet = _alphabet(2, 2)
    auto = design("polyopt", alphabet=alphabet, public_distribution=EXAMPLE_P_HAT, epsilon=math.log(2), n=EXAMPLE_N)
    assert auto["parameters"]["solver"] == "exact"
    seen = []
    doc = design(
        "polyopt",
        alphabet=alphabet,
        public_distribution=EXAMPLE_P_HAT,
        epsilon=math.log(2),
        n=EXAMPLE_N,
        solver="cg",
        time_budget=10,
        progress=seen.append,
    )
    params = doc["parameters"]
    assert params["solver"] == "cg" and params["status"] == "converged"
    for key in ("iterations", "columns", "upper_bound", "upper_bound_kind"):
        assert key in params
    assert "seconds" not in params and doc["run"]["parameters.seconds"] >= 0  # timings: unhashed, in run
    assert params["upper_bound"] >= doc["utility"]["mutual_information"] - 1e-9
    assert doc["utility"]["mutual_information"] == pytest.approx(auto["utility"]["mutual_information"], rel=5e-3)
    assert doc["audit"]["passed"] and seen and "information" in seen[-1]
    # 4×4 is beyond exact enumeration's reach: auto picks column generation
    p = jeffreys((4, 4), 7)
    big = design("polyopt", alphabet=_alphabet(4, 4), public_distribution=p, epsilon=1.0, n=N, time_budget=5)
    assert big["parameters"]["solver"] == "cg" and big["audit"]["passed"]
    nr = design("nr", alphabet=_alphabet(4, 4), public_distribution=p, epsilon=1.0, n=N, solver="cg", time_budget=10)
    assert nr["parameters"]["solver"] == "cg" and nr["audit"]["passed"]
    assert nr["parameters"]["upper_bound"] >= nr["utility"]["mutual_information"] - 1e-9


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(solver="fast"), "solver must be one of"),
        (dict(time_budget=0), "time_budget must be"),
        (dict(time_budget=float("nan")), "time_budget must be"),
        (dict(progress=3), "progress must be"),
    ],
)
def test_design_rejects_bad_solver_options(kwargs, match):
    with pytest.raises(DesignError, match=match):
        design(
            "polyopt", alphabet=_alphabet(2, 2), public_distribution=EXAMPLE_P_HAT, epsilon=1.0, n=EXAMPLE_N, **kwargs
        )


def test_exact_solver_refuses_large_alphabets_with_a_hint():
    uset = UncertaintySet.from_confidence(jeffreys((4, 4), 1), N, 0.05)
    with pytest.raises(DesignError, match="solver='cg'"):
        design_matrix("polyopt", uset, 1.0, solver="exact")
    with pytest.raises(DesignError, match="unknown design option"):
        design_matrix("polyopt", uset, 1.0, budget=3)


@pytest.mark.slow
def test_cli_solver_flags(adult_csv, tmp_path):
    out = tmp_path / "po.json"
    proc = run_cli(
        *design_args(adult_csv, out, method="polyopt"), "--solver", "cg", "--time-budget", "10", "--json", "--progress"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1  # progress goes to stderr only
    record = json.loads(lines[0])
    assert record["solver"] == "cg" and record["iterations"] >= 1
    assert record["upper_bound"] >= record["mutual_information"]
    assert "NMI" in proc.stderr  # the progress display
    doc = json.loads(out.read_text())
    assert doc["parameters"]["solver"] == "cg"
    for bad, needle in ((["--solver", "magic"], "invalid choice"), (["--time-budget", "0"], "time budget")):
        proc = run_cli(*design_args(adult_csv, tmp_path / "x.json", method="polyopt"), *bad)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and needle in proc.stderr


@pytest.mark.slow
def test_exact_set_design_is_certified_and_never_below_polyopt():
    p = jeffreys((2, 3), 21, n=3000)
    uset = UncertaintySet.from_confidence(p, 3000, 0.05)
    eps = 0.5
    res = cg.solve_exact_set_cg(uset, eps, time_budget=4.0)
    base = solve_polyopt(p, uset.lower_bounds(), eps * MARGIN)
    assert audit_rldp(res.matrix, uset, eps).passed
    np.testing.assert_allclose(res.matrix.sum(axis=0), 1.0, atol=1e-12)
    assert res.information >= base.information * 0.995


@pytest.mark.slow
def test_nr_with_an_unseen_sensitive_value_falls_back_to_the_polytope_solver():
    p = jeffreys((4, 4), 3)
    p[0, :] = 0.0
    p /= p.sum()
    doc = design("nr", alphabet=_alphabet(4, 4), public_distribution=p, epsilon=1.0, n=N, time_budget=3)
    assert doc["parameters"]["solver"] == "cg" and doc["audit"]["passed"]
    doc = design("polyopt", alphabet=_alphabet(4, 4), public_distribution=p, epsilon=1.0, n=N, time_budget=3)
    assert doc["audit"]["passed"] and doc["parameters"]["upper_bound"] >= doc["utility"]["mutual_information"]


# -- exact solver at large ε: floating-point cddlib (robustness) ---------------------


def _large_eps_case(seed):
    p = jeffreys((3, 3), seed, n=1000)
    return p, UncertaintySet.from_confidence(p, 1000, 0.05), UncertaintySet(p, 0.0)


def test_exact_nr_at_large_epsilon_is_never_below_grr():
    # Seed 8 at ε = 7: cddlib (floating point) misses vertices of the NR cone and the LP over
    # the enumerated ones gave I = 0.974 < GRR's 1.399, though GRR's rows lie in the cone.
    eps = 7.0
    p, uset, point = _large_eps_case(8)
    q, params = design_matrix("nr", uset, eps, solver="exact")
    grr = mutual_information(grr_matrix(9, eps), p)
    assert mutual_information(q, p) >= grr
    assert params["solver"] == "exact" and params["converged"]  # exact NR pricing: a proven optimum
    assert params["upper_bound"] >= mutual_information(q, p) - 1e-9
    assert audit_rldp(q, point, eps).passed


@pytest.mark.slow
def test_exact_polyopt_at_large_epsilon_is_never_below_srr():
    # Seed 7 at ε = 7: SRR's rows lie in Γ, yet enumeration + LP gave 1.278 < SRR's 1.626.
    eps = 7.0
    p, uset, _ = _large_eps_case(7)
    srr = srr_matrix(3, 3, eps * MARGIN)
    assert np.all(GammaCone(uset.lower_bounds(), eps * MARGIN).contains(srr))
    q, params = design_matrix("polyopt", uset, eps, solver="exact")
    assert mutual_information(q, p) >= mutual_information(srr, p)
    assert params["information_enumeration"] <= mutual_information(q, p) + 1e-9  # polishing never loses
    assert audit_rldp(q, uset, eps).passed


@pytest.mark.slow
def test_exact_lp_failure_falls_back_to_column_generation():
    # Seed 3 at ε = 7: HiGHS reports the LP over the enumerated vertices infeasible.
    eps = 7.0
    p, uset, _ = _large_eps_case(3)
    doc = design("polyopt", alphabet=_alphabet(3, 3), public_distribution=p, epsilon=eps, n=1000)
    params = doc["parameters"]
    assert params["solver"] == "exact" and doc["audit"]["passed"]
    if "fallback" in params:
        assert "column generation" in params["fallback"]
    else:  # enumeration worked on this platform: the polish kept its optimum
        assert doc["utility"]["mutual_information"] >= params["information_enumeration"] - 1e-9


def test_exact_nr_rows_pushed_outside_the_cone_are_repaired():
    # Seed 18 at ε = 7: a vertex from cddlib lay just outside the NR cone and the design
    # failed its audit (design() raised); every row is now verified and repaired.
    eps = 7.0
    p, _, _ = _large_eps_case(18)
    doc = design("nr", alphabet=_alphabet(3, 3), public_distribution=p, epsilon=eps, n=1000)
    assert doc["audit"]["passed"] and doc["audit"]["epsilon"] <= eps


def test_a_tiny_budget_still_returns_a_certified_mechanism():
    # The first master solve over the seeds may overrun a tiny budget instead of failing.
    p = jeffreys((6, 6), 2)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    res = solve_polyopt_cg(p, uset.lower_bounds(), MARGIN, time_budget=1e-4)
    assert audit_rldp(res.matrix, uset, 1.0).passed
    nr = solve_nr_cg(p, MARGIN, time_budget=1e-4)
    assert audit_rldp(nr.matrix, UncertaintySet(p, 0.0), 1.0).passed


# -- coarse-to-fine and warm starts (large alphabets) ----------------------------------


def test_aggregated_rows_expand_into_gamma_with_the_same_information():
    p = jeffreys((6, 8), 5)
    uset = UncertaintySet.from_confidence(p, 3000, 0.05)
    low, eps = uset.lower_bounds(), 0.9
    agg = cg.Aggregation(np.array([0, 0, 1, 1, 2, 2]), np.array([0, 0, 0, 1, 1, 2, 2, 2]))
    assert agg.shape == (3, 3)
    pc, lc, self_pairs = agg.problem(p, low)
    assert np.all(self_pairs)  # every sensitive group merges two values here
    coarse = GammaCone(lc, eps, self_pairs=self_pairs)
    rows = coarse.repair(np.random.default_rng(0).random((300, 9)) ** 4)
    assert np.all(coarse.contains(rows))
    fine = agg.expand(rows)
    assert np.all(GammaCone(low, eps).contains(fine))  # Aggregation's claim
    q = rows / rows.sum(axis=0, keepdims=True)
    assert mutual_information(agg.expand(q), p) == pytest.approx(mutual_information(q, pc), abs=1e-12)
    # without the s1 = s2 rows on merged blocks the claim would fail for some rows
    loose = GammaCone(lc, eps).repair(np.random.default_rng(1).random((300, 9)) ** 4)
    assert not np.all(GammaCone(low, eps).contains(agg.expand(loose)))


@pytest.mark.slow
def test_large_alphabets_start_from_the_coarse_problem():
    p = jeffreys((10, 8), 4)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    res = solve_polyopt_cg(p, uset.lower_bounds(), MARGIN, time_budget=3.0, bound_epsilon=1.0)
    assert len(res.stages) == 1 and res.stages[0]["shape"] == [10, 4]
    assert_ladder_certified(res, uset)  # its rows seed the master


@pytest.mark.slow
def test_warm_start_from_a_smaller_epsilon_keeps_sweeps_monotone():
    p = jeffreys((10, 8), 6)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    q1, _ = design_matrix("polyopt", uset, 1.0, solver="cg", time_budget=3.0)
    # q2 ≥ q1 by construction (q1's rows seed the master) at any speed, provided the master over the
    # seeds is solved: 5 s for it, where 0.5 s could run out on a loaded machine (then the seeds
    # are cut back to the well-scaled ones, cg.master.solve_seeds).
    q2, _ = design_matrix("polyopt", uset, 1.2, solver="cg", time_budget=5.0, warm_start=[q1])
    assert mutual_information(q2, p) >= mutual_information(q1, p) - 1e-9  # Γ_1 ⊆ Γ_1.2
    assert audit_rldp(q2, uset, 1.2).passed
    nr, _ = design_matrix("nr", uset, 1.2, solver="cg", time_budget=5.0, warm_start=[q2])
    assert mutual_information(nr, p) >= mutual_information(q2, p) - 1e-9  # NR's cone contains Γ
    with pytest.raises(DesignError, match="warm_start"):
        design_matrix("polyopt", uset, 1.2, solver="cg", time_budget=5.0, warm_start=[-q1])
    with pytest.raises(DesignError, match="80 columns"):
        design_matrix("polyopt", uset, 1.2, solver="cg", time_budget=5.0, warm_start=[q1[:, :10]])


@pytest.mark.slow
def test_coarse_to_fine_on_a_small_shape_matches_exact_and_bounds_it(monkeypatch):
    # Force the coarse stage where exact enumeration is possible:
    # the result must still be certified and near the optimum, and the bound (which now
    # also uses the coarse problem's lifted duals) must not cut the true optimum.
    monkeypatch.setattr(cg.coarsen, "COARSEN_MIN_SYMBOLS", 4)
    p = jeffreys((3, 3), 13, n=2000)
    uset = UncertaintySet.from_confidence(p, 2000, 0.05)
    low, eps = uset.lower_bounds(), 1.0
    assert cg.coarse_aggregation(p, min_symbols=4) is None  # |U| ≤ 6, |S| ≤ 20: nothing to merge
    monkeypatch.setattr(
        solve_module, "coarse_aggregation", lambda d, min_symbols=4: cg.Aggregation(np.arange(3), np.array([0, 0, 1]))
    )
    exact = solve_polyopt(p, low, eps * MARGIN)
    # Both stages run to convergence (7 and 11 rounds), far within ROOMY; the solver's own bound is
    # not asked for (prove_bound=False): its phases fill a share of the time budget, so what they
    # reach depends on the machine's speed (the form with time_budget=20 failed under load). The
    # bound is proved below at the lifted duals, on a fixed grid of pieces: the same on any machine.
    res = solve_polyopt_cg(p, low, eps * MARGIN, time_budget=ROOMY, bound_epsilon=eps, prove_bound=False)
    assert res.status == "converged" and res.stages and res.stages[0]["shape"] == [3, 2]
    assert exact.information * 0.995 <= res.information <= exact.information * (1 + 1e-7)
    assert audit_rldp(res.matrix, uset, eps).passed
    assert res.rung_duals and res.duals is not None
    grid = cg.bound.SectionBound(GammaCone(low, eps), p.reshape(-1), pieces=4)
    lams = [*res.rung_duals, res.duals]
    bounds = [float(lam.sum() + r) for lam, r in zip(lams, grid.values(lams), strict=True) if r is not None]
    assert bounds and min(bounds) >= exact.information - 1e-9
    nr_exact = solve_polyopt(p, UncertaintySet(p, 0.0).lower_bounds(), eps * MARGIN)
    nr = solve_nr_cg(p, eps * MARGIN, time_budget=ROOMY, bound_epsilon=eps)  # exact pricing: converges in 4 rounds
    assert nr.stages and nr.information == pytest.approx(nr_exact.information, rel=1e-6)
    assert nr.upper_bound >= nr_exact.information - 1e-9


# -- budgets under load ------------------------------------------------------------------


class _SlowMachine:
    """``time`` as a machine SLOWDOWN times slower (or as loaded) sees it: every interval it measures is
    SLOWDOWN times longer, so every wall-clock deadline of the solver comes SLOWDOWN times sooner."""

    SLOWDOWN = 25.0

    def __init__(self):
        import time

        self._real = time.perf_counter
        self._origin = time.perf_counter()

    def perf_counter(self) -> float:
        return self._origin + self.SLOWDOWN * (self._real() - self._origin)


def test_the_extra_rows_verdict_holds_on_a_machine_25_times_slower(monkeypatch):
    # test_extra_rows_are_used_when_they_fit once ran on a 0.2 s budget and failed under load. With
    # an iteration budget (and a time budget it never reaches) the result is the same at any speed.
    p = jeffreys((4, 4), 3)
    uset = UncertaintySet.from_confidence(p, N, 0.05)
    ir, _ = design_matrix("ir", uset, 1.0)

    def solve():
        return solve_polyopt_cg(
            p, uset.lower_bounds(), MARGIN, time_budget=ROOMY, max_iterations=0, prove_bound=False, extra_rows=[ir]
        )

    quiet = solve()
    for module in ("blocks", "bound", "master", "pricing", "proof", "result", "solve"):
        monkeypatch.setattr(getattr(cg, module), "time", _SlowMachine())
    slow = solve()
    assert slow.status == quiet.status == "iteration_limit"
    assert slow.information == quiet.information
    np.testing.assert_array_equal(slow.matrix, quiet.matrix)
