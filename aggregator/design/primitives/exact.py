"""Exact PolyOpt ([LZG24, Sec 5]): every vertex of Γ̂, then the linear program of Theorem 3.

Theorem 3: the best mechanism whose rows lie in the cone Γ (:mod:`.cone`) uses vertices of
Γ̂ = Γ ∩ {Σ v = 1} as rows, weighted by the linear program max Σ θ_v μ(v) s.t.
Σ θ_v v = 1, θ ≥ 0. Vertices come from cddlib (pycddlib), the LP from HiGHS (scipy).
Enumeration explodes beyond about ten symbols; :mod:`.cg` solves the same LP without it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, cast

import cdd  # pycddlib-standalone (floating point only: no GMP in the standalone build)
import numpy as np

from rldp.shared.information import row_information

from .cone import GammaCone
from .errors import PolyOptError, PolyOptTooLarge

__all__ = ["EXACT_MAX_SYMBOLS", "PolyOptResult", "enumerate_vertices", "optimal_weights", "solve_polyopt"]

# Exact enumeration explodes beyond this many symbols (4×4 takes > 11 minutes).
EXACT_MAX_SYMBOLS = 12
# A point counts as a member of Γ̂ (and as non-negative) within this: cddlib's own accuracy.
_VERTEX_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PolyOptResult:
    matrix: np.ndarray  # (|Y|, |X|)
    vertices: np.ndarray  # every vertex of Γ̂, (|V|, |X|)
    weights: np.ndarray  # θ̂ for each vertex
    information: float  # I_P̂(X;Y) = Σ θ̂_v μ(v), nats
    seconds: float


def _cdd_vertices(inequalities: np.ndarray, row_order: Any = None) -> np.ndarray:
    """One cddlib double-description run; raises RuntimeError on numerical trouble."""
    a = inequalities.shape[1]
    # cdd's H-representation rows are [b, A'] meaning b + A'·v ≥ 0.
    rows = np.zeros((len(inequalities) + a + 1, a + 1))
    rows[: len(inequalities), 1:] = -inequalities
    rows[len(inequalities) : -1, 1:] = np.eye(a)
    rows[-1] = np.concatenate(([-1.0], np.ones(a)))  # Σ v = 1 (linearity row)
    mat = cdd.matrix_from_array(rows.tolist(), lin_set={len(rows) - 1}, rep_type=cdd.RepType.INEQUALITY)
    poly = (
        cdd.polyhedron_from_matrix(mat) if row_order is None else cdd.polyhedron_from_matrix(mat, row_order=row_order)
    )
    gen = np.array(cdd.copy_generators(poly).array, dtype=float).reshape(-1, a + 1)
    if np.any(np.abs(gen[:, 0]) < 1e-12):
        raise RuntimeError("cddlib returned a ray: Γ̂ must be bounded")
    return cast("np.ndarray", gen[:, 1:] / gen[:, :1])


def _members(points: np.ndarray, cone: GammaCone) -> np.ndarray:
    """Points of Γ̂ (within _VERTEX_TOLERANCE), clipped to v ≥ 0 and renormalised to Σ v = 1."""
    if points.size == 0:
        return points
    pts = np.maximum(points, 0.0)
    pts = pts / pts.sum(axis=1, keepdims=True)
    ok = (cone.violations(pts) <= _VERTEX_TOLERANCE) & np.all(points >= -_VERTEX_TOLERANCE, axis=1)
    return cast("np.ndarray", pts[ok])


def enumerate_vertices(cone: GammaCone) -> np.ndarray:
    """Vertices of Γ̂ = {v ≥ 0, Σ v = 1, A v ≤ 0} (A = ``cone.inequalities()``) by cddlib's
    double description.

    cddlib runs in floating point here, and on degenerate polytopes it can fail
    ("numerical inconsistency") or miss vertices depending on the row order. Rows are
    scaled to unit max-norm first; if the default run fails, every row order is tried
    (and then coefficients rounded to 12, 10, 8 digits) and the union of the points that
    are in the cone is kept. Any member is a valid row for Theorem 3's LP, so the result
    is always certified; only optimality depends on cddlib having found every vertex.
    """
    inequalities = cone.inequalities()
    scaled = inequalities / np.maximum(np.abs(inequalities).max(axis=1, keepdims=True), 1e-300)
    try:
        verts = _members(_cdd_vertices(scaled), cone)
        if len(verts):
            return verts
    except RuntimeError:
        pass
    found: list[np.ndarray] = []
    for digits in (None, 12, 10, 8):
        rows = scaled if digits is None else np.round(scaled, digits)
        for order in cdd.RowOrderType:
            try:
                found.append(_members(_cdd_vertices(rows, order), cone))
            except RuntimeError:
                continue
        if found and sum(len(f) for f in found):
            break
    if not found or not sum(len(f) for f in found):
        raise PolyOptError(
            "vertex enumeration failed (cddlib reported numerical inconsistency for every "
            "row order); try the column-generation solver"
        )
    verts = np.concatenate(found)
    _, keep = np.unique(np.round(verts, 10), axis=0, return_index=True)
    return verts[np.sort(keep)]


def optimal_weights(vertices: np.ndarray, distribution: np.ndarray) -> tuple[np.ndarray, float]:
    """θ̂ of Theorem 3: maximise Σ θ_v μ(v) s.t. Σ θ_v v = 1_X, θ ≥ 0 (HiGHS)."""
    # Lazy: scipy.optimize takes ~0.3 s to import, and the CLI and the service import this
    # package for its method names and validation only.
    from scipy.optimize import linprog

    mu = row_information(vertices, np.asarray(distribution).reshape(-1))
    res = linprog(-mu, A_eq=vertices.T, b_eq=np.ones(vertices.shape[1]), bounds=(0, None), method="highs")
    if res.status != 0:
        raise PolyOptError(f"the PolyOpt linear program failed: {res.message}")
    return np.maximum(res.x, 0.0), float(mu @ np.maximum(res.x, 0.0))


def solve_polyopt(
    distribution: np.ndarray,
    lower_bounds: np.ndarray,
    epsilon: float,
    same_sensitive: bool = False,
    max_symbols: int = EXACT_MAX_SYMBOLS,
) -> PolyOptResult:
    """Exact PolyOpt for P̂ (|S|, |U|) and bounds L (|S|, |U|) at privacy level ε.

    Returns the mechanism with one output per vertex of positive weight (Theorem 3:
    at most |X| outputs), its columns renormalised against LP round-off.
    """
    p = np.asarray(distribution, dtype=float)
    if p.size > max_symbols:
        raise PolyOptTooLarge(
            f"exact PolyOpt enumerates every vertex and is limited to {max_symbols} symbols; "
            f"this alphabet has {p.size} ({p.shape[0]}×{p.shape[1]})"
        )
    start = time.perf_counter()
    verts = enumerate_vertices(GammaCone(lower_bounds, epsilon, same_sensitive))
    theta, info = optimal_weights(verts, p)
    used = theta > 1e-12
    q = theta[used, None] * verts[used]
    q = q / q.sum(axis=0, keepdims=True)
    return PolyOptResult(q, verts, theta, info, time.perf_counter() - start)
