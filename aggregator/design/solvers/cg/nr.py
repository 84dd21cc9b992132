"""NR, the non-robust optimum ([LZG24, Sec 8]): exact pricing, the Lagrangian bound and its solver.

Pricing works with the normalisation P̂·z = 1 (z = v / (P̂·v)), in which μ(z) = Σ_x P̂_x z_x log z_x
and every mechanism's rows satisfy Σ_y P̂·Q_y = 1. Hence, for any λ, weak duality gives the
*Lagrangian bound*

    I_P̂(X;Y) ≤ Σ_x λ_x + max_{z ∈ C, P̂·z = 1} (μ(z) − λ·z)

for every mechanism whose rows lie in the cone C. For the non-robust cone (F = {P̂}) the
inner maximum has a closed form over the cone's vertices (:func:`nr_pricing`), so NR is
solved by column generation with *exact* pricing and its optimum is bounded from above
with a proof. Since P̂ ∈ F, every (ε, F)-RLDP mechanism — and so PolyOpt — is
(ε, {P̂})-RLDP: the NR bound bounds them all.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError
from .master import Master, seed_columns, solve_seeds
from .pricing import PRICING_TOLERANCE, objective
from .result import CGResult, Progress, certified_result, check_inputs, report_progress
from .solve import INTERRUPTED, coarse_stage

__all__ = ["NR_EXACT_MAX_SENSITIVE", "nr_pricing", "nr_upper_bound", "solve_nr_cg"]

# Exact subset enumeration in nr_pricing up to this many sensitive values.
NR_EXACT_MAX_SENSITIVE = 16
# Cells of the knapsack bound beyond that (its resolution: 1/cells of P̂'s mass).
NR_KNAPSACK_CELLS = 20_000


def _block_scores(ps: np.ndarray, cond: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """score[s, u] = −P̂_s log P̂_u|s − λ_{s,u}/P̂_u|s where P̂_u|s > 0, else −inf: the value per unit of
    block weight of putting block s's mass on cell u (the best u per block is g_s of :func:`nr_pricing`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            cond > 0,
            -ps[:, None] * np.log(np.where(cond > 0, cond, 1.0)) - lam / np.where(cond > 0, cond, 1.0),
            -np.inf,
        )


def _nr_value(ps: np.ndarray, g: np.ndarray, member: np.ndarray, epsilon: float) -> np.ndarray:
    """F(T) = −log K + (ε e^ε P_T + G + (e^ε − 1) G_T)/K, K = 1 + (e^ε − 1) P_T, per subset row."""
    beta = math.expm1(epsilon)
    pt = member @ ps
    gt = member @ g
    k = 1.0 + beta * pt
    return cast("np.ndarray", -np.log(k) + (epsilon * math.exp(epsilon) * pt + g.sum() + beta * gt) / k)


def _knapsack_bound(ps: np.ndarray, g: np.ndarray, epsilon: float, cells: int = NR_KNAPSACK_CELLS) -> float:
    """An upper bound on max_T F(T) (:func:`_nr_value`) over *all* subsets T, by a 0/1 knapsack.

    For T with P_T in [a, b]: −log K ≤ −log(1 + βa) (β = e^ε − 1), and the numerator
    ε e^ε P_T + G + β G_T ≤ N = ε e^ε b + G + β Gmax(b), Gmax(b) = max {G_T : P_T ≤ b}; so
    F(T) ≤ −log(1 + βa) + N / (1 + βa) if N ≥ 0, else N / (1 + βb). Gmax is bounded by a 0/1
    knapsack over the blocks with g_s > 0 (the others only lower G_T) with weights P̂_s rounded
    *down* to multiples of δ = Σ P̂_s / ``cells`` (every T with P_T ≤ b stays feasible, so the
    dynamic programme's value is ≥ Gmax(b)); [a, b] runs over the δ-grid."""
    beta = math.expm1(epsilon)
    delta = float(ps.sum()) / cells
    w = np.floor(ps / delta).astype(np.int64)
    best = np.zeros(cells + 1)  # best[c] ≥ max G_T⁺ over T with Σ_T w ≤ c
    for ws, gs in zip(w, g, strict=True):
        if gs <= 0:
            continue
        if ws == 0:
            best += gs
        else:
            best[ws:] = np.maximum(best[ws:], best[:-ws] + gs)
    a = np.arange(cells) * delta
    b = a + delta
    num = epsilon * math.exp(epsilon) * b + float(g.sum()) + beta * best[1:]
    frac = np.where(num >= 0, num / (1.0 + beta * a), num / (1.0 + beta * b))
    return float(np.max(-np.log1p(beta * a) + frac))


def nr_pricing(
    distribution: np.ndarray, duals: np.ndarray, epsilon: float, columns: int = 1
) -> tuple[np.ndarray, np.ndarray, float]:
    """Best columns of the non-robust cone for prices λ, and an upper bound on the best reduced cost.

    The NR cone ((ε, {P̂})-RLDP) is {z ≥ 0 : w_s₁ ≤ e^ε w_s₂}, w_s = P̂_U|s·z_s. Maximising the
    convex f(z) = μ(z) − λ·z over it with P̂·z = 1: for fixed w each block is a simplex, so
    one cell u_s per block carries z, and the best u_s separates (score g_s below); over w
    the vertices are w_s = c·e^{ε[s ∈ T]} (the extreme rays of the LDP box cone) with
    c = 1/(1 + (e^ε − 1)P_T), which gives f = F(T) of :func:`_nr_value`. Cells with P̂_x = 0
    are free in the cone and contribute −λ_x z_x: they need λ_x ≥ 0 (callers clip).

    Exact over all subsets T when |S| ≤ NR_EXACT_MAX_SENSITIVE. Otherwise the prefixes of
    the order g_s/P̂_s are the candidates and the bound is the smaller of two: the upper hull
    of the zonotope {(P_T, G_T)} (F increases with G_T, along each hull edge −log K is at most
    its value at the edge's start and the fraction is monotone (linear-fractional), so
    F ≤ −log K(start) + max(fraction at either end) on that edge) and the knapsack bound of
    :func:`_knapsack_bound`.

    Returns (up to ``columns`` columns z with P̂·z = 1, best first: the best subsets and
    single-block swaps of their cells; their reduced costs; upper bound on max f).
    """
    p = np.asarray(distribution, dtype=float)
    ps = p.sum(axis=1)
    if np.any(ps <= 0):
        raise CGError("exact NR pricing needs every sensitive value to occur in P̂")
    a1, a2 = p.shape
    cond = p / ps[:, None]
    score = _block_scores(ps, cond, np.asarray(duals, dtype=float).reshape(p.shape))
    best_u = np.argmax(score, axis=1)
    g = score[np.arange(a1), best_u]
    member, values, bound = _subset_values(ps, g, epsilon)
    cands = _best_candidates(ps, g, score, best_u, member, values, epsilon, columns)
    z = np.zeros((len(cands), a1, a2))
    for j, (_, t, choice) in enumerate(cands):
        w = np.exp(epsilon * t)
        w = w / (ps @ w)
        z[j, np.arange(a1), choice] = w / cond[np.arange(a1), choice]
    return z.reshape(len(cands), -1), np.array([c[0] for c in cands]), bound


def _subset_values(ps: np.ndarray, g: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The candidate subsets T (rows of 0/1), F(T) of each, and the upper bound on max F over all T."""
    a1 = ps.size
    if a1 <= NR_EXACT_MAX_SENSITIVE:
        member = ((np.arange(2**a1)[:, None] >> np.arange(a1)[None, :]) & 1).astype(float)
        values = _nr_value(ps, g, member, epsilon)
        return member, values, float(values.max())
    order = np.argsort(-g / ps)
    member = np.zeros((a1 + 1, a1))
    for k in range(1, a1 + 1):
        member[k] = member[k - 1]
        member[k, order[k - 1]] = 1.0
    values = _nr_value(ps, g, member, epsilon)
    beta = math.expm1(epsilon)
    pt, gt = member @ ps, member @ g
    k = 1.0 + beta * pt
    frac = (epsilon * math.exp(epsilon) * pt + g.sum() + beta * gt) / k
    edge = -np.log(k[:-1]) + np.maximum(frac[:-1], frac[1:])
    # Both are proven bounds on max F; the knapsack one is far tighter on 42 sensitive values.
    return member, values, float(max(min(edge.max(), _knapsack_bound(ps, g, epsilon)), values.max()))


def _best_candidates(
    ps: np.ndarray,
    g: np.ndarray,
    score: np.ndarray,
    best_u: np.ndarray,
    member: np.ndarray,
    values: np.ndarray,
    epsilon: float,
    columns: int,
) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Up to ``columns`` (f, T, cell of each block), best first: the best subsets and single-block swaps of their cells."""
    a1, a2 = score.shape
    top = np.argsort(-values)[: max(1, min(columns, 4))]
    cands: list[tuple[float, np.ndarray, np.ndarray]] = []
    for i in top:
        t = member[i]
        cands.append((float(values[i]), t, best_u))
        if columns > 1:  # single-block swaps: f changes by w_s·(score − g_s)
            w = np.exp(epsilon * t) / (1.0 + math.expm1(epsilon) * (t @ ps))
            delta = values[i] + w[:, None] * (score - g[:, None])
            delta[np.arange(a1), best_u] = -np.inf
            flat = np.argsort(-delta, axis=None)[:columns]
            for f in flat:
                s, u = divmod(int(f), a2)
                if not np.isfinite(delta[s, u]):
                    break
                choice = best_u.copy()
                choice[s] = u
                cands.append((float(delta[s, u]), t, choice))
    cands.sort(key=lambda c: -c[0])
    return cands[:columns]


def _zero_cell_duals(distribution: np.ndarray, duals: np.ndarray) -> np.ndarray:
    lam = np.array(duals, dtype=float)
    zero = np.asarray(distribution).reshape(-1) == 0
    lam[zero] = np.maximum(lam[zero], 0.0)
    return lam


def nr_upper_bound(distribution: np.ndarray, duals: np.ndarray, epsilon: float) -> float:
    """Σ_x λ_x + max_{z ∈ NR cone, P̂·z = 1} (μ(z) − λ·z) ≥ the NR optimum at ε (any λ).

    Weak duality with the normalisation P̂·Q_y = mass of output y (Σ_y = 1): for rows
    Q_y = m_y z_y, I = Σ_y m_y μ(z_y) ≤ λ·Σ_y Q_y + max_z (μ(z) − λ·z). λ_x is clipped to
    ≥ 0 on cells with P̂_x = 0 (those cells are free in the cone; any λ is allowed).
    """
    lam = _zero_cell_duals(distribution, duals)
    _, _, bound = nr_pricing(distribution, lam, epsilon, columns=1)
    return float(lam.sum() + bound)


def solve_nr_cg(
    distribution: np.ndarray,
    epsilon: float,
    *,
    time_budget: float = 60.0,
    bound_epsilon: float | None = None,
    max_iterations: int = 100_000,
    progress: Progress | None = None,
    tolerance: float = 1e-7,
    extra_rows: Iterable[np.ndarray] = (),
    coarsen: bool = True,
) -> CGResult:
    """NR, the optimal (ε, {P̂})-RLDP mechanism ([LZG24, Sec 8]), by column
    generation with exact pricing (:func:`nr_pricing`).

    Converged means the Lagrangian bound met the master's value within ``tolerance``
    (relative): the mechanism is then optimal up to that tolerance. Needs every s to occur
    in P̂ (otherwise use the polytope solver with L = P̂_U|s). ``extra_rows`` are candidate
    seed rows (e.g. a robust design's: Γ_F lies in the NR cone since P̂ ∈ F, so NR seeded
    with them is never below that design). ``coarsen``: on large alphabets first solve the
    aggregated problem of :func:`coarse_aggregation` for the point set (its rows expand into
    the NR cone, see :class:`Aggregation`) with at most :data:`COARSE_SHARE` of the budget.
    """
    start = time.perf_counter()
    p = check_inputs(distribution, time_budget)
    if np.any(p.sum(axis=1) <= 0):
        raise CGError("NR by column generation needs every sensitive value to occur in P̂")
    deadline = start + float(time_budget)
    cond = p / p.sum(axis=1, keepdims=True)
    cone = GammaCone(cond, epsilon)
    extra_rows = [np.atleast_2d(np.asarray(r, dtype=float)) for r in extra_rows]
    stages: list[dict[str, Any]] = []
    rungs = coarse_stage(p, cond, epsilon, time_budget, extra_rows, stages, progress=progress) if coarsen else []
    # Every rung's lifted duals give a valid bound; the best one is also the stability centre.
    bound_eps = epsilon if bound_epsilon is None else float(bound_epsilon)
    lifts = [_zero_cell_duals(p, lam) for lam in rungs]
    lifted = min(lifts, key=lambda lam: nr_upper_bound(p, lam, bound_eps)) if lifts else None
    master = _nr_seeded_master(p, cone, extra_rows, deadline)
    best_bound, center = math.inf, None
    if lifted is not None:  # the coarse problem's duals, lifted: a valid bound, and a stability centre
        best_bound, center = float(lifted.sum() + nr_pricing(p, lifted, bound_eps, columns=1)[2]), lifted
    run = _NRRun(start, deadline, [(time.perf_counter() - start, master.value)], best_bound, center)
    if stages and stages[-1]["status"] == INTERRUPTED:  # Ctrl-C in the coarse stage: stop at the seeds
        run.status = INTERRUPTED
    _nr_generate(run, p, cone, master, epsilon, bound_eps, tolerance, max_iterations, progress)
    return certified_result(
        p,
        cone,
        master,
        start=start,
        iterations=run.iterations,
        status=run.status,
        upper_bound=float(run.best_bound),
        bound_kind="nr-lagrangian",
        history=run.history,
        stages=stages,
    )


@dataclass
class _NRRun:
    """What the NR solve carries between rounds: its clock, its record, the best bound and its λ, its status."""

    start: float  # time.perf_counter() at the start
    deadline: float
    history: list[tuple[float, float]]  # (seconds, lp value)
    best_bound: float  # the best Lagrangian bound so far
    center: np.ndarray | None  # its λ: the stability centre
    iterations: int = 0
    status: str = "time_budget"


def _nr_seeded_master(p: np.ndarray, cone: GammaCone, extra_rows: list[np.ndarray], deadline: float) -> Master:
    """The NR master on its seed columns (the level searches, the extra rows, e_x on cells P̂_x = 0), solved."""
    pf = p.reshape(-1)
    master = Master(p)
    seeds = [seed_columns(cone, extra_rows, deadline)]
    zero = np.flatnonzero(pf == 0)
    if zero.size:  # cells P̂_x = 0 are free in the NR cone; e_x keeps λ_x ≥ 0
        seeds.append(np.eye(pf.size)[zero])
    master.add(np.vstack(seeds))
    return solve_seeds(master, deadline)


def _nr_generate(
    run: _NRRun,
    p: np.ndarray,
    cone: GammaCone,
    master: Master,
    epsilon: float,
    bound_eps: float,
    tolerance: float,
    max_iterations: int,
    progress: Progress | None,
) -> None:
    """Alternate exact pricing rounds and master solves until the bound meets the master's value (within
    ``tolerance``, relative) or no column improves, or the deadline, ``max_iterations`` or a stall; sets ``run.status``."""
    per_round = max(8, p.size // 4)
    try:
        while run.status != INTERRUPTED:
            new, found_positive = _nr_round(run, p, master, epsilon, bound_eps, per_round)
            report_progress(progress, master, iteration=run.iterations, start=run.start, upper_bound=run.best_bound)
            if run.best_bound - master.value <= tolerance * max(1.0, master.value) or not found_positive:
                run.status = "converged"
                break
            if time.perf_counter() > run.deadline:
                break
            if run.iterations >= max_iterations:
                run.status = "iteration_limit"
                break
            run.iterations += 1
            if master.add(cone.repair(np.array(new))) == 0:
                run.status = "stalled"
                break
            if not master.solve(max(run.deadline - time.perf_counter(), 1e-3)):
                break
            run.history.append((time.perf_counter() - run.start, master.value))
    except KeyboardInterrupt:  # Ctrl-C: keep the last solved master (certified as always)
        run.status = INTERRUPTED


def _nr_round(
    run: _NRRun, p: np.ndarray, master: Master, epsilon: float, bound_eps: float, per_round: int
) -> tuple[list[np.ndarray], bool]:
    """One exact pricing round: the columns that improve at the master's duals and whether there are any; the best
    bound and the stability centre in ``run`` are updated."""
    pf = p.reshape(-1)
    lam = _zero_cell_duals(p, master.duals)
    # Wentges smoothing: price at a point between the master's duals and the best-bound
    # duals so far (the stability centre); both points give valid Lagrangian bounds.
    points = [lam] if run.center is None else [lam, 0.5 * (lam + run.center)]
    new: list[np.ndarray] = []
    found_positive = False
    for mu_point in points:
        cols, rcs, _ = nr_pricing(p, mu_point, epsilon, columns=per_round)
        bound = mu_point.sum() + nr_pricing(p, mu_point, bound_eps, columns=1)[2]
        if bound < run.best_bound:
            run.best_bound, run.center = bound, mu_point
        real = objective(cols, pf, lam)  # reduced cost at the master's duals
        keep = real > PRICING_TOLERANCE * max(1.0, master.value)
        found_positive |= bool(keep.any())
        new.extend(cols[keep])
    return new, found_positive
