"""Optimal ε-LDP w.r.t. a latent S [LTS20, Thm 2], robust over F: PolyOpt with rows over U only.

[LTS20, eq 7] asks (Q P_{X|s})_y ≤ e^ε (Q P_{X|s′})_y for every y and s, s′; the optimum uses vertices
of that polytope as rows (Thm 2). With S part of X this is (ε, F)-RLDP [LZG24, Def 1], which
PolyOpt designs (:mod:`..polyopt`). With a latent S the mechanism reads U only: a row of Q is
w ∈ R^U, which is exactly PolyOpt's row v with v_{s,u} = w_u for every s. So the cone here is the
cone Γ of [LZG24, Def 3] restricted to rows that do not depend on s (:class:`LatentGammaCone`):
for every pair s₁ ≠ s₂,

    Σ_u L_{u|s₁} w_u + ℓ_{s₁} max_u w_u ≤ e^ε (Σ_u L_{u|s₂} w_u + ℓ_{s₂} min_u w_u)        ([LZG24, eq 41])

with L the lower bounds of the projected balls F_U|s ([LZG24, Prop 1]); at radius 0, L = P̂_U|s and
ℓ = 0, which is [LTS20, eq 7] exactly. Vertex enumeration of {w ≥ 0, Σ w = 1, rows of Def 3 summed
over s} and the LP of [LZG24, Thm 3] with P̂_U give the optimum; its dimension is |U| instead of
|S|·|U|, so it is much faster than PolyOpt on the same P̂.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ...primitives.errors import DesignError
from ...primitives.exact import enumerate_vertices, optimal_weights
from ...primitives.families import grr_matrix
from .latent_cg import latent_cg
from .latent_cone import LatentGammaCone

__all__ = ["LATENT_EXACT_MAX_FACETS", "LATENT_EXACT_MAX_SYMBOLS", "LatentGammaCone", "latent_polyopt"]

#: Exact enumeration for a latent S: at radius 0 the cone has one row per pair s₁ ≠ s₂, and
#: |S|(|S| − 1) + |U| ≤ this (Adult relationship × occupation, 30 + 15: ~2 s; 42 + 16: ~70 s);
LATENT_EXACT_MAX_FACETS = 45
#: over a positive radius it has |U|² rows per pair: |U| ≤ this (|S| = 6, |U| = 6: < 1 s; |U| = 7: 15-25 s).
LATENT_EXACT_MAX_SYMBOLS = 6


def latent_polyopt(
    uncertainty: UncertaintySet, epsilon: float, solver: str = "auto", time_budget: float = 60.0
) -> tuple[np.ndarray, dict[str, Any]]:
    """(Q over U, parameters): the optimal mechanism that is ε-LDP w.r.t. a latent S over F.

    ``solver``: "exact" (vertex enumeration, within the limits above), "cg" (column generation,
    :mod:`.latent_cg`, any size, within ``time_budget`` seconds) or "auto" (exact where it is fast)."""
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    exact_ok = a1 * (a1 - 1) + a2 <= LATENT_EXACT_MAX_FACETS and (
        uncertainty.radius == 0 or a2 <= LATENT_EXACT_MAX_SYMBOLS
    )
    if solver == "exact" and not exact_ok:
        raise DesignError(
            f"exact optimal LDP w.r.t. a latent S is limited to |S|(|S| − 1) + |U| ≤ {LATENT_EXACT_MAX_FACETS} "
            f"at radius 0 and also |U| ≤ {LATENT_EXACT_MAX_SYMBOLS} over a radius > 0 (this alphabet: |S| = {a1}, "
            f"|U| = {a2}); use solver 'cg' or 'auto'"
        )
    start = time.perf_counter()
    cone = LatentGammaCone(uncertainty.lower_bounds(), epsilon * (1 - DESIGN_MARGIN))
    p_u = uncertainty.public_distribution.sum(axis=0)
    if solver == "cg" or not exact_ok:
        seeds = [grr_matrix(a2, epsilon * (1 - DESIGN_MARGIN))]  # GRR on U is in Γ (ε-LDP w.r.t. U)
        rows, params = latent_cg(cone, p_u, time_budget, seeds)
        return cone.certify(rows), params
    verts = enumerate_vertices(cone)
    theta, info = optimal_weights(verts, p_u)
    used = theta > 1e-12
    q = cone.certify(theta[used, None] * verts[used])
    params = {"solver": "exact", "vertices": int(len(verts)), "lp_value": info, "seconds": time.perf_counter() - start}
    return q, params
