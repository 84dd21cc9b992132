"""The vertex-based designers: PolyOpt ([LZG24, Thm 3]) in both variants, and NR ([LZG24, Sec 8]).

Each runs exact vertex enumeration (:mod:`.exact`) on small alphabets and column
generation (:mod:`.cg`) otherwise, as ``solver`` says ("auto", "exact", "cg"), within
``time_budget`` seconds; its parameters record the solver, its rounds, time, columns and,
where one is proved, an ``upper_bound`` on the optimum with its kind.

The exact solver's vertex enumeration (cddlib, floating point) is followed by a few rounds
of column-generation pricing seeded with the vertices and the other designs' rows
(:func:`_polish`): at large ε cddlib misses vertices or returns points just outside Γ,
which made the LP fall below GRR/SRR, fail, or fail the audit; every row is now verified
against Γ (repaired if needed) and the LP never ends below a certified baseline. If
enumeration or its LP fails, column generation alone takes over (``parameters.fallback``
says why). ``warm_start`` seeds the search with earlier designs' rows (e.g. at a smaller
ε), which keeps ε sweeps monotone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from rldp.shared.information import entropy
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.errors import PolyOptError, PolyOptTooLarge
from ..primitives.exact import EXACT_MAX_SYMBOLS, solve_polyopt
from ..primitives.families import grr_matrix, srr_matrix
from ..primitives.options import DesignOptions, warm_rows
from .calibrate import cr_calibrated, cr_theorem, ir_calibrated, ir_theorem
from .cg import CGResult, solve_nr_cg, solve_polyopt_cg
from .cg.solve import INTERRUPTED

__all__ = [
    "polyopt",
    "nr",
    "CALIBRATED_SEED_COST",
    "AUTO_EXACT_MAX_SYMBOLS",
    "AUTO_EXACT_NR_MAX_VERTICES",
    "POLISH_MAX_SECONDS",
    "THEOREM_SEED_COST",
]

# ``auto`` enumerates vertices exactly (then polishes, see _polish) up to this many symbols:
# 3×3 ~0.2 s, 2×5 ~0.7 s, 5×2 ~2 s — the Adult pairs sex/race and race/sex get the proven
# optimum; 3×4 takes 7-37 s, where column generation is within 0.5 % in about a second.
AUTO_EXACT_MAX_SYMBOLS = 10
# NR's cone has |U|^|S|·(2^|S| − 2) + … vertices; enumerate it exactly below this estimate.
AUTO_EXACT_NR_MAX_VERTICES = 5000
# Exact enumeration is followed by column-generation pricing seeded with its vertices (see
# _polish); this caps that step (it converges in well under a second up to 12 symbols).
POLISH_MAX_SECONDS = 10.0

# Seconds per squared symbol of an IR or CR theorem seed (measured: 6.2 s at 1,000 symbols).
THEOREM_SEED_COST = 6e-6
# A calibrated seed costs up to this many times the slowest theorem seed (measured on Adult:
# 200-1000x at 60 symbols, 100x at 480); it is skipped unless that much time is left.
CALIBRATED_SEED_COST = 1000.0

Seed = Callable[[UncertaintySet, float], np.ndarray]
# rldp's other certified designs, offered to column generation as seed columns.
_SEEDS: tuple[Seed, ...] = (
    lambda u, e: grr_matrix(u.public_distribution.size, e),
    lambda u, e: srr_matrix(u.n_sensitive, u.n_released, e),
    lambda u, e: ir_theorem(u, e)[0],
    lambda u, e: cr_theorem(u, e)[0],
)
_CALIBRATED_SEEDS: tuple[Seed, ...] = (
    lambda u, e: ir_calibrated(u, e)[0],
    lambda u, e: cr_calibrated(u, e)[0],
)


def _seed_rows(uset: UncertaintySet, eps: float, deadline: float, calibrated: bool) -> list[np.ndarray]:
    """Rows of rldp's other certified designs, offered to column generation as seed
    columns (kept where they fit Γ, mixed into it otherwise), so the result does not fall
    below them. A seed cannot be stopped once started, so the calibrated ones (hundreds of
    exact audits) run only when CALIBRATED_SEED_COST × the slowest theorem seed still fits
    before ``deadline``: they took 1.7 s and 9 s at 60 symbols, 192 s at 480 (where the time
    budget was overrun by that much)."""
    rows: list[np.ndarray] = []
    slowest = 0.0
    cells = float(uset.public_distribution.size) ** 2
    for i, seed in enumerate(_SEEDS):
        if time.perf_counter() > deadline:
            return rows
        # IR and CR by their theorems search a level with ~75 mutual informations of the |X|×|X|
        # matrix: 6 s at 1,000 symbols on a loaded core. Skip them when that does not fit.
        if i >= 2 and time.perf_counter() + THEOREM_SEED_COST * cells > deadline:
            continue
        began = time.perf_counter()
        try:
            rows.append(seed(uset, eps))
        except (ValueError, RuntimeError):  # a seed is optional: a designer that cannot run here is skipped
            pass
        slowest = max(slowest, time.perf_counter() - began)
    for seed in _CALIBRATED_SEEDS if calibrated else ():
        if time.perf_counter() + CALIBRATED_SEED_COST * slowest > deadline:
            break
        try:
            rows.append(seed(uset, eps))
        except (ValueError, RuntimeError):
            continue
    return rows


def _cg_params(res: CGResult, solver_name: str) -> dict[str, Any]:
    return {
        "solver": solver_name,
        "iterations": res.iterations,
        "seconds": res.seconds,
        "columns": res.columns,
        "status": res.status,
        "converged": res.converged,
        "lp_value": res.lp_value,
    }


def _polish(
    rows: list[np.ndarray],
    p: np.ndarray,
    low: np.ndarray,
    design_eps: float,
    eps: float,
    same_sensitive: bool,
    budget: float,
    nr: bool,
) -> CGResult:
    """Column-generation pricing seeded with the exact vertices and other certified rows.

    cddlib runs in floating point: at large ε it can miss vertices (the LP optimum is then
    too low, even below GRR/SRR whose rows lie in the cone) or return points just outside Γ
    (the mechanism then fails the exact audit). The master LP of Theorem 3 over the vertices,
    the seed rows (GRR, SRR, robust GRR, other designs) and whatever pricing finds, with every
    column verified (and repaired) against Γ, is never below any of them and is certified.
    NR uses its exact pricer (a proven Lagrangian bound)."""
    if nr and np.all(p.sum(axis=1) > 0):
        return solve_nr_cg(p, design_eps, time_budget=budget, bound_epsilon=eps, extra_rows=rows, coarsen=False)
    return solve_polyopt_cg(
        p,
        low,
        design_eps,
        same_sensitive=same_sensitive,
        time_budget=budget,
        extra_rows=rows,
        bound_epsilon=eps,
        coarsen=False,
    )


def _exact(
    uset: UncertaintySet, eps: float, same_sensitive: bool, budget: float, warm: list[np.ndarray], nr: bool = False
) -> tuple[np.ndarray, dict[str, Any]]:
    """Exact PolyOpt (vertex enumeration, Theorem 3), polished and certified by :func:`_polish`;
    falls back to column generation alone if enumeration or its LP fails numerically."""
    p = uset.design_distribution  # the objective's distribution; F enters through the lower bounds only
    low = uset.lower_bounds()
    design_eps = eps * (1 - DESIGN_MARGIN)
    start = time.perf_counter()
    params: dict[str, Any] = {"solver": "exact"}
    rows = list(warm)
    try:
        res = solve_polyopt(p, low, design_eps, same_sensitive=same_sensitive)
        rows.append(res.vertices)
        params.update(vertices=int(len(res.vertices)), information_enumeration=res.information)
    except PolyOptTooLarge:
        raise
    except PolyOptError as exc:  # numerical failure of cddlib or of the LP: column generation takes over
        params["fallback"] = f"column generation: {exc}"
    if not nr:
        rows += _seed_rows(uset, eps, start + 0.15 * budget, calibrated=False)
    # The polish gets what is left of the budget (enumeration came first), at most POLISH_MAX_SECONDS.
    left = max(start + budget - time.perf_counter(), 0.05)
    polished = _polish(rows, p, low, design_eps, eps, same_sensitive, min(left, POLISH_MAX_SECONDS), nr)
    params.update(
        iterations=polished.iterations,
        columns=polished.columns,
        status=polished.status,
        converged=polished.converged,
        lp_value=polished.lp_value,
        seconds=time.perf_counter() - start,
    )
    if polished.upper_bound is not None:
        params.update(upper_bound=float(polished.upper_bound), upper_bound_kind=polished.bound_kind)
    return polished.matrix, params


def polyopt(uset: UncertaintySet, same_sensitive: bool, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
    """PolyOpt ([LZG24, Thm 3]) by exact vertex enumeration or by column generation.

    Rows are designed at ε(1 − DESIGN_MARGIN); upper bounds are proved at ε itself: the
    Lagrangian bound of the column-generation master (block enumeration, bounds PolyOpt
    of this variant) and the NR bound (bounds every (ε, F)-RLDP mechanism, since P̂ ∈ F).
    """
    q, params = _polyopt(uset, same_sensitive, options)
    if uset.objective is not None:  # say so: the solver's figures are at that point, not at P̂
        params["objective"] = {"distribution": uset.objective.tolist(), "note": OBJECTIVE_NOTE}
    return q, params


#: What ``parameters.objective`` means in a PolyOpt document designed for another distribution than its P̂.
OBJECTIVE_NOTE = (
    "the distribution PolyOpt maximised I(X;Y) at (for a design over a pilot's F: the pilot's estimate kept in its "
    "confidence box), and at which its lp_value, information and upper bounds are stated; the claim rests on F "
    "(public_distribution, radius, box) alone, and the document's utility block is at public_distribution"
)


def _polyopt(uset: UncertaintySet, same_sensitive: bool, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
    eps, budget = options.level, float(options.time_budget)
    p = uset.design_distribution
    warm = warm_rows(options.warm_start, p.size)
    if options.solver == "exact" or (options.solver == "auto" and p.size <= AUTO_EXACT_MAX_SYMBOLS):
        return _exact(uset, eps, same_sensitive, budget, warm)
    design_eps = eps * (1 - DESIGN_MARGIN)
    start = time.perf_counter()
    deadline = start + budget
    # A small share of the budget for the seeds (other designs) and the NR bound.
    seeds = _seed_rows(uset, eps, start + 0.15 * budget, calibrated=budget >= 20.0)
    bounds: dict[str, float] = {}
    # The NR bound at p bounds every (ε, F)-RLDP mechanism because P̂ ∈ F; an objective need not lie in F.
    if uset.objective is None and np.all(p.sum(axis=1) > 0):
        nr_res = solve_nr_cg(
            p, design_eps, time_budget=max(min(0.05 * budget, 5.0), 0.05), bound_epsilon=eps, coarsen=False
        )
        if nr_res.status == INTERRUPTED:  # Ctrl-C before any PolyOpt design exists: nothing to keep
            raise KeyboardInterrupt
        if nr_res.upper_bound is not None:
            bounds["nr-lagrangian"] = float(nr_res.upper_bound)
    res = solve_polyopt_cg(
        p,
        uset.lower_bounds(),
        design_eps,
        same_sensitive=same_sensitive,
        time_budget=max(deadline - time.perf_counter(), 0.05),
        extra_rows=seeds + warm,
        bound_epsilon=eps,
        progress=options.progress,
    )
    if res.upper_bound is not None:
        bounds["polytope-lagrangian"] = float(res.upper_bound)
    bounds["entropy"] = entropy(p)  # I(X;Y) ≤ H(X) always
    params = _cg_params(res, "cg")
    params["seconds"] = time.perf_counter() - start
    if res.stages:
        params["stages"] = res.stages
    kind = min(bounds, key=bounds.__getitem__)
    params.update(
        upper_bound=bounds[kind],
        upper_bound_kind=kind,
        upper_bounds=bounds,
        # certified / proven bound: how much of the optimum the design is proven to reach
        bound_gap=res.information / bounds[kind] if bounds[kind] > 0 else 1.0,
        upper_bound_note=(
            "nats of I(X;Y) at the claimed epsilon, at P̂ (or at parameters.objective when given). nr-lagrangian: Lagrangian dual bound of the "
            "non-robust optimum (exact pricing), bounds every (epsilon, F)-RLDP mechanism. "
            "polytope-lagrangian: Lagrangian dual bound of this PolyOpt variant's LP (Theorem 3), "
            "best reduced cost bounded on the section of the cone cut into pieces (a dynamic programme over "
            "P̂·z per piece, block-vertex enumeration). entropy: I(X;Y) <= H(X). "
            "bound_gap: certified information / upper_bound."
        ),
    )
    return res.matrix, params


def nr(uset: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
    """NR ([LZG24, Sec 8]): PolyOpt for the point set {P̂}; exact enumeration (polished by
    exact pricing, see :func:`_polish`) or column generation with exact pricing (a proven
    bound, optimal when ``status`` is converged). Seeded with the rows of the robust designs
    for the requested set (they are (ε, {P̂})-RLDP too, since P̂ ∈ F), so NR is never below them."""
    eps, budget = options.level, float(options.time_budget)
    warm = warm_rows(options.warm_start, uset.public_distribution.size)
    point = UncertaintySet(uset.public_distribution, 0.0, uset.order)
    p = point.public_distribution
    a1, a2 = p.shape
    start = time.perf_counter()
    seeds = _seed_rows(uset, eps, start + 0.15 * budget, calibrated=False) + warm
    small = p.size <= EXACT_MAX_SYMBOLS and (
        p.size <= AUTO_EXACT_MAX_SYMBOLS or float(a2) ** a1 * 2.0**a1 <= AUTO_EXACT_NR_MAX_VERTICES
    )
    if options.solver == "exact" or (options.solver == "auto" and small):
        return _exact(point, eps, False, budget, seeds, nr=True)
    if np.any(p.sum(axis=1) <= 0):
        # An s absent from P̂ leaves its block unconstrained by P̂: the exact NR pricing does
        # not apply; the polytope solver on the point set (L = P̂_U|s) still does.
        return polyopt(point, False, replace(options, solver="cg", warm_start=seeds))
    design_eps = eps * (1 - DESIGN_MARGIN)
    res = solve_nr_cg(
        p,
        design_eps,
        time_budget=max(start + budget - time.perf_counter(), 0.05),
        bound_epsilon=eps,
        progress=options.progress,
        extra_rows=seeds,
    )
    params = _cg_params(res, "cg")
    params.update(
        upper_bound=res.upper_bound,
        upper_bound_kind="nr-lagrangian",
        upper_bound_note="nats of I_P̂(X;Y) at the claimed epsilon: Lagrangian dual bound of the "
        "non-robust optimum (exact pricing)",
    )
    if res.stages:
        params["stages"] = res.stages
    return res.matrix, params
