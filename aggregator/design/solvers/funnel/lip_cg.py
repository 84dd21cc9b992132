"""Optimal ε-LIP [LTS20, Thm 3] / AORR [ZDS23, eq 12] by column generation, beyond vertex enumeration.

The linear program is the one of :mod:`.lip` ([LTS20, eq 17]): minimise Σ_i α_i H(v_i) subject to
Σ_i α_i v_i = p_X, α ≥ 0, every column v_i in the polytope

    Δ = {v ≥ 0, Σ_x v_x = 1, e^{−ε_l} p_s ≤ Σ_x P(s|x) v_x ≤ e^{ε_u} p_s  for all s}      [LTS20, eq 15]

(I(X;Y) = H(X) − Σ α_i H(v_i)). Its dual is max λ·p_X s.t. λ·v ≤ H(v) on Δ. Column generation:

* **master** — the LP over the columns found so far (always feasible: v = p_X is in Δ, its lift is 1);
  its duals λ price new columns;
* **pricing** — find v ∈ Δ with reduced cost H(v) − λ·v < 0. Symbols with the same column P(·|x)
  are interchangeable in Δ: with m_g the mass of group g, H(v) = H(m) + Σ_g m_g H(v|g) and the slabs
  see only m, so min_Δ H(v) − λ·v = min over Δ_G (Δ on the distinct columns) of H(m) − Σ_g m_g Λ_g,
  Λ_g = max_{x∈g} λ_x, each group's mass put on its argmax. H is concave, so the minimum is at a
  vertex of Δ_G. When the vertices of Δ_G can be enumerated (:func:`.lip.lip_vertices`, e.g. S an
  input: X = (S, U) has |S| distinct columns) the pricing is *exact*; otherwise it is *heuristic*:
  the vertices of Δ_G with at most 2-3 non-zero entries (enumerated once) and vertex descent by
  successive linearisation (an LP over Δ_G with cost ∇H(m_k) − Λ; H concave, so each step does
  not increase H − Λ·m) from the best of them, the master's basis and each group's maximiser;
* **verification** — every column is checked inside Δ at the design budgets (no tolerance) before it
  enters; one that round-off put outside is mixed with p_X (strictly inside) until it is inside.

**Bound** (weak duality): for any λ and every mechanism meeting the budgets (its rows lie in Δ and
Σ α = 1), Σ α H(v) ≥ λ·p_X + r*, r* = min_Δ H(v) − λ·v; so I(X;Y) ≤ H(X) − λ·p_X − r*. It is proved
at the *claimed* budgets (the design runs slightly inside them): with exact pricing r* is the minimum
over the enumerated vertices of Δ_G ("lagrangian-exact-pricing", tight at convergence); with heuristic
pricing r* ≥ min_Δ −λ·v (H ≥ 0: the convex envelope of H − λ·v on the simplex is −λ·v; one LP,
"lagrangian-linear-relaxation", loose). I(X;Y) ≤ H(X) ("entropy") always; the smallest is reported.
A round-off allowance of ``_ROUNDOFF`` nats is added to every bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rldp.shared.information import entropy

from ...primitives.errors import DesignError
from .lip_polytope import Admission, DeltaLP, Groups, Master, grouped_vertices, row_entropies, support_systems

__all__ = ["LIP_CG_MAX_SYMBOLS", "LipCGResult", "lip_cg"]

#: Column generation keeps dense columns over the input symbols: limited to this many with p_x > 0.
LIP_CG_MAX_SYMBOLS = 2000
_REDUCED_COST_TOL = 1e-10
_ROUNDOFF = 1e-9  # nats added to every bound (vertex and dual round-off)
_COLUMNS_PER_ROUND = 24
#: Weight of the previous pricing point in the smoothed one.
_SMOOTHING = 0.5
#: Columns per vertex: its mass on the r-th best member of every group, r < _MEMBER_RANKS.
_MEMBER_RANKS = 4
_LINEARISATION_STEPS = 12
_DESCENT_STARTS = 6
#: Heuristic pricing: when a round finds nothing, search again from this many times more starts.
_BREADTHS = (4, 16, 64)
#: Most small linear systems :func:`.lip_polytope.support_vertices` may solve for one vertex set.
_SYSTEMS_MAX = 2_000_000


@dataclass(frozen=True)
class LipCGResult:
    rows: np.ndarray  # columns v_y of the master's solution (|Y|, |X| live), each in Δ
    weights: np.ndarray  # α_y = P(Y = y)
    information: float  # H(X) − Σ α_y H(v_y), nats
    iterations: int
    columns: int
    status: str  # "converged", "time_budget", "iteration_limit" or "stalled" (the master failed numerically)
    pricing: str  # "exact" (vertices of Δ_G enumerated) or "heuristic"
    upper_bound: float
    bound_kind: str
    seconds: float


@dataclass
class _Pricer:
    groups: Groups
    vertices: np.ndarray | None  # every vertex of Δ_G (exact pricing) or None
    pool: np.ndarray  # small-support vertices of Δ_G (heuristic pricing)
    lp: DeltaLP | None
    n: int
    rng: np.random.Generator

    def price(self, lam: np.ndarray, basis: np.ndarray, deadline: float, breadth: int = 1) -> np.ndarray:
        """Columns over X with reduced cost H(v) − λ·v < −tol (most negative first, at most a round's).
        ``breadth``: heuristic pricing descends from that many times more starts."""
        ranked = self.groups.ranked(lam, _MEMBER_RANKS)  # (ranks, G)
        big = lam[ranked[0]]
        if self.vertices is not None:
            found = self.vertices
        else:
            found = self._descend(big, basis, deadline, breadth)
        # Each vertex with the r-th best member of every group (r = 0 is the pricing's own optimum):
        # columns for the other symbols of a group, which the argmax alone reaches one round at a time.
        red = row_entropies(found)[None, :] - lam[ranked] @ found.T  # (ranks, vertices)
        flat = np.argsort(red, axis=None)[:_COLUMNS_PER_ROUND]
        flat = flat[red.reshape(-1)[flat] < -_REDUCED_COST_TOL]
        rank, vert = np.unravel_index(flat, red.shape)
        out = np.zeros((len(flat), self.n))
        np.put_along_axis(out, ranked[rank], found[vert], axis=1)
        return out

    def _descend(self, big: np.ndarray, basis: np.ndarray, deadline: float, breadth: int) -> np.ndarray:
        """Vertex descent by successive linearisation from the best pool vertices, the basis and
        (``breadth`` > 1) random vertices."""
        out = [self.pool]
        if self.lp is None:
            return self.pool
        red = row_entropies(self.pool) - self.pool @ big if len(self.pool) else np.zeros(0)
        count = breadth * _DESCENT_STARTS
        starts = list(self.pool[np.argsort(red)[:count]]) + list(basis[self.rng.permutation(len(basis))[:count]])
        for _ in range(count if breadth > 1 else 0):
            if time.perf_counter() > deadline:
                break
            found = self.lp.minimise(self.rng.standard_normal(size=(self.lp.g,)))
            if found is not None:
                starts.append(found)
        for m in starts:
            for _ in range(_LINEARISATION_STEPS):
                if time.perf_counter() > deadline:
                    break
                nxt = self.lp.minimise(-np.log(np.maximum(m, 1e-12)) - 1.0 - big)
                if nxt is None or np.allclose(nxt, m, atol=1e-12):
                    break
                m = nxt
            out.append(m[None, :])
        return np.vstack(out)


def _seeds(groups: Groups, verts: np.ndarray, p_x: np.ndarray) -> np.ndarray:
    """Seed columns from the vertices of Δ_G (lowest entropy first, at most ~20·|X| columns): each spread
    over its groups in proportion to p_x (Σ α_i m_i = p_G then gives Σ α_i v_i = p_X: the master
    starts at the optimum over these grouped vertices) and each expanded with the r-th member of every
    group for r = 0, 1, … so that every symbol is in some column."""
    n = len(p_x)
    if len(verts) == 0:
        return np.zeros((0, n))
    sizes = np.bincount(groups.label, minlength=groups.size)
    rounds = int(sizes.max())
    verts = verts[np.argsort(row_entropies(verts))[: max(1, 20 * n // rounds)]]
    order = np.argsort(groups.label, kind="stable")
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    share = p_x / groups.mass(p_x[None, :])[0][groups.label]
    out = [verts[:, groups.label] * share]
    for r in range(rounds):
        members = order[first + r % sizes]
        out.append(groups.expand(verts, members, n))
    return np.vstack(out)


def _caps(lp: DeltaLP, deadline: float) -> np.ndarray:
    """u_g ≥ max_{m∈Δ_G} m_g (one LP each; 1 — always valid — for those left when ``deadline`` passes)."""
    caps = np.ones(lp.g)
    for g in range(lp.g):
        if time.perf_counter() > deadline:
            break
        cost = np.zeros(lp.g)
        cost[g] = -1.0
        if lp.minimise(cost, normalise=False) is not None:
            caps[g] = min(1.0, -lp.value() * (1 + 1e-9) + 1e-12)  # outward: HiGHS' tolerances
    return caps


def _bound(pricer: _Pricer, claimed: tuple[Any, ...], lam: np.ndarray, h_x: float, p_x: np.ndarray) -> dict[str, Any]:
    """The Lagrangian bound at the claimed budgets (module docstring) and its kind."""
    vertices, lp, caps = claimed
    big, _ = pricer.groups.best(lam)
    if vertices is not None:
        r, kind = float(np.min(row_entropies(vertices) - vertices @ big)), "lagrangian-exact-pricing"
    else:
        # H(m) ≥ −Σ_g m_g log u_g on Δ_G (each −m log m is concave on [0, u_g]: above its secant).
        if lp.minimise(-np.log(caps) - big, normalise=False) is None:
            return {"entropy": h_x + _ROUNDOFF}
        r, kind = lp.value(), "lagrangian-secant-relaxation"
    return {kind: h_x - float(lam @ p_x) - r + _ROUNDOFF, "entropy": h_x + _ROUNDOFF}


def lip_cg(
    cond: np.ndarray,
    p_s: np.ndarray,
    p_x: np.ndarray,
    budgets: tuple[float, float],
    claimed: tuple[float, float] | None = None,
    *,
    time_budget: float = 60.0,
    progress: Callable[[dict[str, Any]], None] | None = None,
    max_iterations: int = 100_000,
    pricing: str = "auto",
    seed: int = 0,
) -> LipCGResult:
    """The I(X;Y)-optimal (ε_l, ε_u)-ALIP rows for P(s|x) = ``cond`` (|S|, |X|), inputs with p_x > 0,
    by column generation (module docstring). ``budgets`` (ε_l, ε_u) are the design's; ``claimed``
    (default ``budgets``) are the levels the upper bound is proved at. ``pricing``: "exact" when the
    vertices of Δ_G are few enough to enumerate ("auto"), or "heuristic" (forced, for comparisons).
    Status "converged" with heuristic pricing means no search found an improving column (a local
    certificate, not a proof of optimality: the bound says how far the optimum can be). Deterministic
    for a given ``seed`` up to timing."""
    start = time.perf_counter()
    deadline = start + float(time_budget)
    keep = p_s > 0
    cond, p_s = np.asarray(cond, dtype=float)[keep], np.asarray(p_s, dtype=float)[keep]
    n = cond.shape[1]
    if n > LIP_CG_MAX_SYMBOLS:
        raise DesignError(
            f"optimal LIP/ALIP by column generation is limited to {LIP_CG_MAX_SYMBOLS} input symbols with "
            f"positive probability; this input has {n}"
        )
    claimed = budgets if claimed is None else claimed
    groups = Groups(cond)
    admit = Admission(cond, p_s, p_x, *budgets)
    rng = np.random.default_rng(seed)
    caps_until = start + 0.1 * float(time_budget)
    pricer, bound_at, exact = _pricer(groups, p_s, n, budgets, claimed, pricing, rng, caps_until)
    h_x = entropy(p_x)
    master = Master(p_x)
    master.add(admit(p_x[None, :]))
    # Each symbol alone, mixed with p_X just enough to enter Δ: with weights ∝ p_x/(1 − t_x) they carry
    # p_X, a feasible start that does not need the vertices (randomised response towards the prior).
    master.add(admit(np.eye(n)))
    master.add(admit(_seeds(groups, pricer.pool, p_x)))
    master.solve()
    run = _LipRun(start, deadline, pricer, admit, bound_at, exact, h_x, p_x, progress, center=master.duals)
    run.bounds = run.bound(master.duals) if exact else {"entropy": h_x + _ROUNDOFF}
    _generate_columns(run, master, max_iterations)
    return _result(run, master)


def _result(run: _LipRun, master: Master) -> LipCGResult:
    """The master's solution and its record, with the tightest bound (heuristic pricing: proved now, at the end)."""
    if not run.exact:
        run.bounds = {k: min(v, run.bounds.get(k, math.inf)) for k, v in run.bound(master.duals).items()}
    kind = min(run.bounds, key=run.bounds.__getitem__)
    rows, alpha = master.solution()
    return LipCGResult(
        rows,
        alpha,
        float(run.h_x - alpha @ row_entropies(rows)),
        run.iterations,
        len(master.cols),
        run.status,
        "exact" if run.exact else "heuristic",
        run.bounds[kind],
        kind,
        time.perf_counter() - run.start,
    )


def _pricer(
    groups: Groups,
    p_s: np.ndarray,
    n: int,
    budgets: tuple[float, float],
    claimed: tuple[float, float],
    pricing: str,
    rng: np.random.Generator,
    caps_until: float,
) -> tuple[_Pricer, tuple[Any, ...], bool]:
    """The pricer (exact over every vertex of Δ_G when they are few enough to enumerate, else heuristic), what the
    bound at the ``claimed`` budgets is proved with (those vertices, or the LP of Δ_G and its caps) and whether exact."""
    g, n_s = groups.size, len(p_s)
    exact = pricing != "heuristic" and support_systems(g, n_s, n_s) <= _SYSTEMS_MAX
    if exact:
        vertices = grouped_vertices(groups.cond, p_s, *budgets, max_k=n_s)
        pricer = _Pricer(groups, vertices, vertices, None, n, rng)
        return pricer, (grouped_vertices(groups.cond, p_s, *claimed, max_k=n_s), None, None), True
    k = max(j for j in (1, 2, 3) if j == 1 or support_systems(g, n_s, j) <= _SYSTEMS_MAX)
    pool = grouped_vertices(groups.cond, p_s, *budgets, max_k=k)
    low, high = math.exp(-budgets[0]) * p_s, math.exp(budgets[1]) * p_s
    lp = DeltaLP(groups.cond, low, high)
    pricer = _Pricer(groups, None, pool, lp, n, rng)
    c_low, c_high = math.exp(-claimed[0]) * p_s, math.exp(claimed[1]) * p_s
    bound_lp = DeltaLP(groups.cond, c_low, c_high)
    return pricer, (None, bound_lp, _caps(bound_lp, caps_until)), False


@dataclass
class _LipRun:
    """What the solve carries between rounds: its clock, its pricing and bound tools, its bounds and its status."""

    start: float  # time.perf_counter() at the start
    deadline: float
    pricer: _Pricer
    admit: Admission
    bound_at: tuple[Any, ...]  # see _bound
    exact: bool  # exact pricing
    h_x: float
    p_x: np.ndarray
    progress: Callable[[dict[str, Any]], None] | None
    center: np.ndarray  # the previous pricing point
    bounds: dict[str, Any] = field(default_factory=dict[str, Any])  # {kind: the best bound of that kind so far}
    iterations: int = 0
    status: str = "time_budget"

    def bound(self, lam: np.ndarray) -> dict[str, Any]:
        """The bounds at the duals ``lam`` (:func:`_bound`)."""
        return _bound(self.pricer, self.bound_at, lam, self.h_x, self.p_x)


def _generate_columns(run: _LipRun, master: Master, max_iterations: int) -> None:
    """Alternate pricing rounds and master solves until convergence, a stall, ``max_iterations`` or the deadline
    (the stop reason in ``run.status``); with exact pricing the bound is tightened after every solve."""
    while True:
        if time.perf_counter() > run.deadline:
            break
        if run.iterations >= max_iterations:
            run.status = "iteration_limit"
            break
        run.iterations += 1
        added = _price_round(run, master)
        if added == 0:
            run.status = "converged" if time.perf_counter() <= run.deadline else "time_budget"
            break
        if not master.solve():  # numerical failure of the master: keep the last solution
            run.status = "stalled"
            break
        if run.exact:
            found = run.bound(master.duals)
            run.bounds = {k: min(v, run.bounds.get(k, math.inf)) for k, v in found.items()}
        if run.progress is not None:
            best = min(run.bounds.values())
            info = {"iteration": run.iterations, "seconds": time.perf_counter() - run.start}
            columns = len(master.cols)
            run.progress({**info, "information": run.h_x - master.value, "columns": columns, "upper_bound": best})


def _price_round(run: _LipRun, master: Master) -> int:
    """One pricing round (at the smoothed point, then the duals, then — heuristic — broader searches): columns added."""
    pricer, admit, deadline = run.pricer, run.admit, run.deadline
    basis = pricer.groups.mass(master.basis())
    # Wentges smoothing: price between the previous pricing point and the duals (damps their
    # oscillation); a column enters only if it improves at the duals, else price at the duals.
    lam = master.duals
    smooth = _SMOOTHING * run.center + (1 - _SMOOTHING) * lam
    new = pricer.price(smooth, basis, deadline)
    new = new[row_entropies(new) - new @ lam < -_REDUCED_COST_TOL]
    run.center = smooth
    if len(new) == 0:
        new, run.center = pricer.price(lam, basis, deadline), lam
    added = master.add(admit(new)) if len(new) else 0
    for breadth in () if run.exact else _BREADTHS:  # search harder before calling it converged
        if added or time.perf_counter() > deadline:
            break
        new = pricer.price(master.duals, basis, deadline, breadth)
        added = master.add(admit(new)) if len(new) else 0
    return added
