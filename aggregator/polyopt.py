"""PolyOpt (seed 000, Sec. 5): the optimal mechanism whose rows lie in the cone Γ.

Γ (Definition 3) is the robust counterpart of the RLDP constraint when each projected
ball F_U|s is enclosed in the polytope D_s = {R ∈ simplex : R_u ≥ L_u|s}:
max_{R ∈ D_s₁} R·v_s₁ ≤ e^ε min_{R ∈ D_s₂} R·v_s₂, i.e. for all u₁, u₂

    v_{s₁,u₁} + Σ_u L_{u|s₁}(v_{s₁,u} − v_{s₁,u₁}) ≤ e^ε (v_{s₂,u₂} + Σ_u L_{u|s₂}(v_{s₂,u} − v_{s₂,u₂})).

Theorem 3: the best mechanism uses vertices of Γ̂ = Γ ∩ {Σ v = 1} as rows, weighted by
the linear program max Σ θ_v μ(v) s.t. Σ θ_v v = 1, θ ≥ 0. Vertices come from cddlib
(pycddlib), the LP from HiGHS (scipy).

Two variants (DESIGN.md errata): ``same_sensitive=True`` also writes the rows for
s₁ = s₂, as the paper's Example 3 does (16 inequalities at 2×2, I = 0.4228);
RLDP does not constrain s₁ = s₂, so the default drops them: a larger cone, still
certified, more utility.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.utility import row_information

__all__ = ["PolyOptResult", "gamma_inequalities", "enumerate_vertices", "optimal_weights", "solve_polyopt"]

# Exact enumeration explodes beyond this many symbols (4×4 takes > 11 minutes).
EXACT_MAX_SYMBOLS = 12


class PolyOptError(RuntimeError):
    """Vertex enumeration or the linear program failed."""


class PolyOptTooLarge(PolyOptError):
    """The alphabet exceeds what exact enumeration can do (EXACT_MAX_SYMBOLS): not a numerical
    failure, so no fallback should hide it."""


@dataclass(frozen=True)
class PolyOptResult:
    matrix: np.ndarray  # (|Y|, |X|)
    vertices: np.ndarray  # every vertex of Γ̂, (|V|, |X|)
    weights: np.ndarray  # θ̂ for each vertex
    information: float  # I_P̂(X;Y) = Σ θ̂_v μ(v), nats
    seconds: float


def gamma_inequalities(lower_bounds: np.ndarray, epsilon: float, same_sensitive: bool = False) -> np.ndarray:
    """Rows A with A·v ≤ 0 describing Γ (Definition 3), deduplicated; shape (m, |X|).

    ``lower_bounds`` is L (|S|, |U|). Rows for s₁ = s₂ only when ``same_sensitive``.
    """
    low = np.asarray(lower_bounds, dtype=float)
    a1, a2 = low.shape
    a = a1 * a2
    e = math.exp(epsilon)
    # side[s, u₁] = coefficients over X of v_{s,u₁} + Σ_u L_{u|s}(v_{s,u} − v_{s,u₁}).
    side = np.zeros((a1, a2, a))
    for s in range(a1):
        block = np.tile(low[s], (a2, 1)) + np.eye(a2) * (1.0 - low[s].sum())
        side[s, :, s * a2:(s + 1) * a2] = block
    pairs = [(s1, s2) for s1 in range(a1) for s2 in range(a1) if same_sensitive or s1 != s2]
    rows = [
        (side[s1][:, None, :] - e * side[s2][None, :, :]).reshape(-1, a)
        for s1, s2 in pairs
    ]
    out = np.concatenate(rows, axis=0)
    # With ΣL = 1 (a point set, as for NR) every (u₁, u₂) gives the same row.
    _, keep = np.unique(np.round(out, 14), axis=0, return_index=True)
    return out[np.sort(keep)]


def _cdd_vertices(inequalities: np.ndarray, row_order: Any = None) -> np.ndarray:
    """One cddlib double-description run; raises RuntimeError on numerical trouble."""
    import cdd  # pycddlib-standalone (floating point only: no GMP in the standalone build)

    a = inequalities.shape[1]
    # cdd's H-representation rows are [b, A'] meaning b + A'·v ≥ 0.
    rows = np.zeros((len(inequalities) + a + 1, a + 1))
    rows[:len(inequalities), 1:] = -inequalities
    rows[len(inequalities):-1, 1:] = np.eye(a)
    rows[-1] = np.concatenate(([-1.0], np.ones(a)))  # Σ v = 1 (linearity row)
    mat = cdd.matrix_from_array(rows, lin_set={len(rows) - 1}, rep_type=cdd.RepType.INEQUALITY)
    poly = (cdd.polyhedron_from_matrix(mat) if row_order is None
            else cdd.polyhedron_from_matrix(mat, row_order=row_order))
    gen = np.array(cdd.copy_generators(poly).array, dtype=float).reshape(-1, a + 1)
    if np.any(np.abs(gen[:, 0]) < 1e-12):
        raise RuntimeError("cddlib returned a ray: Γ̂ must be bounded")
    return gen[:, 1:] / gen[:, :1]


def _feasible(points: np.ndarray, inequalities: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Points of Γ̂ (within tol), clipped to v ≥ 0 and renormalised to Σ v = 1."""
    if points.size == 0:
        return points
    pts = np.maximum(points, 0.0)
    pts = pts / pts.sum(axis=1, keepdims=True)
    ok = np.all(inequalities @ pts.T <= tol, axis=0) & np.all(points >= -tol, axis=1)
    return pts[ok]


def enumerate_vertices(inequalities: np.ndarray) -> np.ndarray:
    """Vertices of Γ̂ = {v ≥ 0, Σ v = 1, A v ≤ 0} by cddlib's double description.

    cddlib runs in floating point here, and on degenerate polytopes it can fail
    ("numerical inconsistency") or miss vertices depending on the row order. Rows are
    scaled to unit max-norm first; if the default run fails, every row order is tried
    (and then coefficients rounded to 12, 10, 8 digits) and the union of the points that
    are feasible for the *original* inequalities is kept. Any feasible point is a valid
    row for Theorem 3's LP, so the result is always certified; only optimality depends
    on cddlib having found every vertex.
    """
    import cdd

    scaled = inequalities / np.maximum(np.abs(inequalities).max(axis=1, keepdims=True), 1e-300)
    try:
        verts = _feasible(_cdd_vertices(scaled), inequalities)
        if len(verts):
            return verts
    except RuntimeError:
        pass
    found: list[np.ndarray] = []
    for digits in (None, 12, 10, 8):
        rows = scaled if digits is None else np.round(scaled, digits)
        for order in cdd.RowOrderType:
            try:
                found.append(_feasible(_cdd_vertices(rows, order), inequalities))
            except RuntimeError:
                continue
        if found and sum(len(f) for f in found):
            break
    if not found or not sum(len(f) for f in found):
        raise PolyOptError("vertex enumeration failed (cddlib reported numerical inconsistency for every "
                           "row order); try the column-generation solver")
    verts = np.concatenate(found)
    _, keep = np.unique(np.round(verts, 10), axis=0, return_index=True)
    return verts[np.sort(keep)]


def optimal_weights(vertices: np.ndarray, distribution: np.ndarray) -> tuple[np.ndarray, float]:
    """θ̂ of Theorem 3: maximise Σ θ_v μ(v) s.t. Σ θ_v v = 1_X, θ ≥ 0 (HiGHS)."""
    from scipy.optimize import linprog

    mu = row_information(vertices, np.asarray(distribution).reshape(-1))
    res = linprog(-mu, A_eq=vertices.T, b_eq=np.ones(vertices.shape[1]), bounds=(0, None), method="highs")
    if res.status != 0:
        raise PolyOptError(f"the PolyOpt linear program failed: {res.message}")
    return np.maximum(res.x, 0.0), float(mu @ np.maximum(res.x, 0.0))


def solve_polyopt(distribution: np.ndarray, lower_bounds: np.ndarray, epsilon: float,
                  same_sensitive: bool = False, max_symbols: int = EXACT_MAX_SYMBOLS) -> PolyOptResult:
    """Exact PolyOpt for P̂ (|S|, |U|) and bounds L (|S|, |U|) at privacy level ε.

    Returns the mechanism with one output per vertex of positive weight (Theorem 3:
    at most |X| outputs), its columns renormalised against LP round-off.
    """
    p = np.asarray(distribution, dtype=float)
    if p.size > max_symbols:
        raise PolyOptTooLarge(
            f"exact PolyOpt enumerates every vertex and is limited to {max_symbols} symbols; "
            f"this alphabet has {p.size} ({p.shape[0]}×{p.shape[1]})")
    start = time.perf_counter()
    ineq = gamma_inequalities(lower_bounds, epsilon, same_sensitive)
    verts = enumerate_vertices(ineq)
    theta, info = optimal_weights(verts, p)
    used = theta > 1e-12
    q = theta[used, None] * verts[used]
    q = q / q.sum(axis=0, keepdims=True)
    return PolyOptResult(q, verts, theta, info, time.perf_counter() - start)
