"""Optimal ε-LIP [LTS20, Thm 3] and its asymmetric form AORR [ZDS23, eq 12], by vertex enumeration + one LP.

A mechanism is written as (R, q) with R_{x|y} = P(X = x | Y = y) and q_y = P(Y = y) [LTS20, eq 8].
Each row v = R_{·|y} lies in the polytope [LTS20, eq 15] / [ZDS23, eq 25]

    Δ = {v ∈ R^X : v ≥ 0, Σ_x v_x = 1, e^{−ε_l} p_s ≤ Σ_x P(s|x) v_x ≤ e^{ε_u} p_s  for all s}

(the lift P(s|y)/p_s = Σ_x P(s|x) v_x / p_s, [LTS20, eqs 13-14]; LIP is ε_l = ε_u = ε). The optimum
uses vertices of Δ as rows, weighted by the LP of [LTS20, eq 17]: minimise Σ_i α_i H(v_i) subject to
Σ_i α_i v_i = p_X, α ≥ 0 (I(X;Y) = H(X) − Σ α_i H(v_i)); then Q(y|x) = α_y v_{y,x} / p_x [eqs 18-20].

A vertex has at most |S| + 1 non-zero entries (|X| − 1 active constraints, at most one side of each
slab), so Δ is small for the sizes of the papers (|X| = 17, |S| = 5: well under a second). Symbols
with p_x = 0 are left out of Δ (no row can carry them) and sent to the outputs in proportion to q.
Beyond ``LIP_EXACT_MAX_SYMBOLS`` symbols (or with ``solver="cg"``) the same LP is solved by column
generation (:mod:`.lip_cg`), with a proven upper bound on the optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import cdd
import numpy as np

from rldp.shared.information import entropy

from ...primitives.errors import DesignError, PolyOptError
from .lip_cg import lip_cg
from .lip_polytope import VERTEX_TOL, support_vertices

__all__ = ["LIP_EXACT_MAX_SYMBOLS", "LipResult", "lip_vertices", "optimal_lip", "optimal_lip_rows"]

#: Vertex enumeration of Δ is limited to this many input symbols with positive probability.
LIP_EXACT_MAX_SYMBOLS = 24


@dataclass(frozen=True)
class LipResult:
    matrix: np.ndarray  # Q (|Y|, |X|)
    vertices: int  # how many vertices Δ has (0 for column generation: not enumerated)
    information: float  # I(X;Y) at P, nats
    seconds: float
    solver: str = "exact"  # "exact" (vertex enumeration) or "cg" (column generation)
    cg: dict[str, Any] | None = None  # column generation's record: status, columns, bound, …

    def parameters(self) -> dict[str, Any]:
        """The design parameters a document records for this solve."""
        if self.cg is None:
            return {"solver": "exact", "vertices": self.vertices, "lp_value": self.information}
        return {"solver": "cg", "lp_value": self.information, **self.cg}


def _support_count(a: int, c: int) -> int:
    """Linear systems :func:`support_vertices` solves: supports of size k ≤ min(a, c) with k − 1
    active slab sides from distinct secrets (c = |S| with p_s > 0)."""
    return sum(math.comb(a, k) * math.comb(c, k - 1) * 2 ** (k - 1) for k in range(1, min(a, c) + 1))


#: Above this many small linear systems, cddlib's double description enumerates Δ instead.
_SUPPORT_MAX_SYSTEMS = 2_000_000
#: From this ε_l + ε_u on, Δ has few vertices (|X| = 17, |S| = 5: ~200 at 2) and cddlib is faster.
_CDD_FROM_BUDGET = 2.0


def _cdd_vertices(c: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Every vertex of Δ by cddlib's double description (floating point).

    Slab sides no point of the simplex can violate (low_s ≤ min_x P(s|x), high_s ≥ max_x P(s|x)) are
    left out: they do not change Δ, but each makes its vertices more degenerate, and cddlib's floating
    point double description then returned no vertex at all (Adult, S = occupation, X = relationship,
    ε = 3, where 13 lower and all 15 upper sides are redundant)."""
    keep_low, keep_high = low > c.min(axis=1), high < c.max(axis=1)
    c_low, low = c[keep_low], low[keep_low]
    c_high, high = c[keep_high], high[keep_high]
    n_low, n_high, a = len(low), len(high), c.shape[1]
    # cdd H-representation rows [b, A]: b + A·v ≥ 0.
    rows = np.zeros((a + n_low + n_high + 1, a + 1))
    rows[:a, 1:] = np.eye(a)
    rows[a : a + n_low, 0], rows[a : a + n_low, 1:] = -low, c_low
    rows[a + n_low : -1, 0], rows[a + n_low : -1, 1:] = high, -c_high
    rows[-1, 0], rows[-1, 1:] = -1.0, 1.0
    mat = cdd.matrix_from_array(rows.tolist(), lin_set={len(rows) - 1}, rep_type=cdd.RepType.INEQUALITY)
    try:
        gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array, dtype=float).reshape(-1, a + 1)
    except RuntimeError as exc:  # cddlib's floating point can fail on degenerate inputs
        raise PolyOptError(f"vertex enumeration of the LIP polytope failed: {exc}") from exc
    gen = gen[np.abs(gen[:, 0]) > 1e-12]
    return cast("np.ndarray", gen[:, 1:] / gen[:, :1])


def lip_vertices(
    cond: np.ndarray, p_s: np.ndarray, eps_lower: float, eps_upper: float, method: str = "auto"
) -> np.ndarray:
    """Vertices of Δ for P(s|x) = ``cond`` (|S|, |X|) and prior ``p_s``; shape (|V|, |X|), rows sum to 1.

    Empty (0 rows) when Δ is empty (a subset of symbols that cannot meet the budgets on its own).
    Small supports are enumerated directly (:func:`support_vertices`, ~10× faster than cddlib at
    |X| = 17, |S| = 5), larger problems by cddlib; ``method`` "support" or "cdd" forces one."""
    keep = p_s > 0
    c, ps = np.asarray(cond, dtype=float)[keep], np.asarray(p_s, dtype=float)[keep]
    low, high = math.exp(-eps_lower) * ps, math.exp(eps_upper) * ps
    a = c.shape[1]
    # cddlib is fastest when Δ has few vertices (large budgets), the supports otherwise.
    small = eps_lower + eps_upper < _CDD_FROM_BUDGET and _support_count(a, len(ps)) <= _SUPPORT_MAX_SYSTEMS
    if method == "support" or (method == "auto" and small):
        verts = support_vertices(c, low, high)
    else:
        verts = _cdd_vertices(c, low, high)
    if len(verts) == 0:
        return np.zeros((0, a))
    verts = np.maximum(verts, 0.0)
    verts = verts / verts.sum(axis=1, keepdims=True)
    # Only points inside Δ after clipping (round-off).
    lift = verts @ c.T
    ok = np.all(lift >= low - VERTEX_TOL, axis=1) & np.all(lift <= high + VERTEX_TOL, axis=1)
    return cast("np.ndarray", verts[ok])


def _row_entropies(rows: np.ndarray) -> np.ndarray:
    """H(v) per row, nats (0 log 0 = 0) [LTS20, eq 16]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return cast("np.ndarray", -np.sum(np.where(rows > 0, rows * np.log(rows), 0.0), axis=1))


def _lp(verts: np.ndarray, p_x: np.ndarray) -> Any:
    """HiGHS's solution of [LTS20, eq 17] over ``verts``, or None when it reports no optimum."""
    from scipy.optimize import linprog  # lazy: scipy.optimize takes ~0.3 s to import

    if len(verts) == 0:
        return None
    res = linprog(_row_entropies(verts), A_eq=verts.T, b_eq=p_x, bounds=(0, None), method="highs")
    return res if res.status == 0 else None


def optimal_lip_rows(
    cond: np.ndarray, p_s: np.ndarray, p_x: np.ndarray, eps_lower: float, eps_upper: float
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(rows v_y, weights q_y, number of vertices) of the optimum for inputs with p_x > 0, or None
    when Δ is empty or the LP has no solution (then no mechanism on these symbols meets the budgets)."""
    verts = lip_vertices(cond, p_s, eps_lower, eps_upper)
    res = _lp(verts, p_x)
    if res is None and _support_count(cond.shape[1], int(np.sum(p_s > 0))) <= _SUPPORT_MAX_SYSTEMS:
        # p_X lies in Δ, so its vertices always carry p_X; if they do not, the enumeration lost
        # vertices (floating point) and the direct one by supports settles it.
        verts = lip_vertices(cond, p_s, eps_lower, eps_upper, method="support")
        res = _lp(verts, p_x)
    if res is None:
        return None
    alpha = np.maximum(res.x, 0.0)
    used = alpha > 1e-13
    return verts[used], alpha[used], len(verts)


def optimal_lip(
    joint: np.ndarray,
    eps_lower: float,
    eps_upper: float,
    *,
    solver: str = "auto",
    time_budget: float = 60.0,
    progress: Callable[[dict[str, Any]], None] | None = None,
    claimed: tuple[float, float] | None = None,
    max_iterations: int = 100_000,
) -> LipResult:
    """The I(X;Y)-optimal (ε_l, ε_u)-ALIP mechanism for the joint P(s, x) (|S|, |X|) [ZDS23, eq 12];
    ε_l = ε_u = ε gives the optimal ε-LIP mechanism [LTS20, Thm 3].

    ``solver``: "exact" (vertex enumeration, at most ``LIP_EXACT_MAX_SYMBOLS`` symbols with p_x > 0),
    "cg" (column generation within ``time_budget`` seconds, :func:`.lip_cg.lip_cg`; ``progress``
    receives its rounds) or "auto" (exact up to the limit, column generation beyond). ``claimed``
    (default the budgets) are the levels column generation proves its upper bound at; ``max_iterations``
    bounds its pricing rounds (tests: a budget of work, the same on any machine, where time is not)."""
    start = time.perf_counter()
    joint = np.asarray(joint, dtype=float)
    p_x, p_s = joint.sum(axis=0), joint.sum(axis=1)
    live = p_x > 0
    size = int(live.sum())
    if solver == "exact" and size > LIP_EXACT_MAX_SYMBOLS:
        raise DesignError(
            f"exact optimal LIP/ALIP enumerates the vertices of its polytope and is limited to "
            f"{LIP_EXACT_MAX_SYMBOLS} input symbols with positive probability; this input has {size} "
            "(solver 'cg' or 'auto' uses column generation)"
        )
    cond = joint[:, live] / p_x[live]
    record = None
    if solver == "cg" or (solver == "auto" and size > LIP_EXACT_MAX_SYMBOLS):
        rows, alpha, count, record = _cg_rows(
            cond, p_s, p_x[live], (eps_lower, eps_upper), claimed, time_budget, progress, max_iterations
        )
    else:
        rows, alpha, count = _exact_rows(cond, p_s, p_x[live], eps_lower, eps_upper)
    q = np.zeros((len(rows), joint.shape[1]))
    q[:, live] = alpha[:, None] * rows / p_x[live]
    q[:, live] /= q[:, live].sum(axis=0, keepdims=True)  # LP round-off
    q[:, ~live] = (alpha / alpha.sum())[:, None]
    info = float(entropy(p_x[live]) - alpha @ _row_entropies(rows))
    seconds = time.perf_counter() - start
    if record is not None:
        record["seconds"] = seconds
    return LipResult(q, count, info, seconds, "exact" if record is None else "cg", record)


def _cg_rows(
    cond: np.ndarray,
    p_s: np.ndarray,
    p_x: np.ndarray,
    budgets: tuple[float, float],
    claimed: tuple[float, float] | None,
    time_budget: float,
    progress: Callable[[dict[str, Any]], None] | None,
    max_iterations: int,
) -> tuple[np.ndarray, np.ndarray, int, dict[str, Any]]:
    """The optimum's rows and weights by column generation (:func:`.lip_cg.lip_cg`), 0 vertices, and its record."""
    res = lip_cg(
        cond, p_s, p_x, budgets, claimed, time_budget=time_budget, progress=progress, max_iterations=max_iterations
    )
    record = {
        "status": res.status,
        "converged": res.status == "converged",
        "iterations": res.iterations,
        "columns": res.columns,
        "pricing": res.pricing,
        "upper_bound": res.upper_bound,
        "upper_bound_kind": res.bound_kind,
        "upper_bound_note": (
            "nats of I_P(X;Y) at the claimed budgets, over every mechanism meeting them: Lagrangian "
            "(weak duality) bound of [LTS20, eq 17] with the master's duals; exact-pricing: the "
            "minimum reduced cost over every vertex of the polytope on distinct columns; "
            "secant-relaxation: over a linear under-estimator of H; entropy: I(X;Y) <= H(X)"
        ),
    }
    return res.rows, res.weights, 0, record


def _exact_rows(
    cond: np.ndarray, p_s: np.ndarray, p_x: np.ndarray, eps_lower: float, eps_upper: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """The optimum's rows, weights and vertex count by vertex enumeration (:func:`optimal_lip_rows`)."""
    found = optimal_lip_rows(cond, p_s, p_x, eps_lower, eps_upper)
    if found is None:  # v = p_X (the constant mechanism) is always in Δ: only round-off gets here
        raise PolyOptError(
            f"the LIP linear program found no optimum over the enumerated vertices of its polytope at "
            f"epsilon_lower={eps_lower:g}, epsilon_upper={eps_upper:g} (a numerical problem in the vertex "
            "enumeration)"
        )
    return found
