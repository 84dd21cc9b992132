"""Parameter choice for the IR and CR families.

Two ways to pick the parameters of IR ([LZG24, Thm 5-6]) and CR ([LZG21, Thm 5-6]):

* ``theorem``: the papers' sufficient conditions. IR: δ₂ = log(1 + 2(e^ε₂ − 1)/d) with
  d = min(2, max_s 2d_s + max_{s,s'} ‖P̂_U|s − P̂_U|s'‖₁) and d_s = rad_s; CR:
  δ_s = log(1 + 2(e^ε₂ − 1)/d_s) — [LZG21] prints "2(ε₂ − 1)", but its proof ([LZG24,
  Lemma 3] applied to R^s) needs e^ε₂ − 1, which is what we use (docs/design.md, errata).
  ε₂ ∈ [0, ε] is then chosen by a one-dimensional search for the best I_P̂(X;Y).
* ``calibrated``: the same families, with each noise level set to the largest value
  whose *exact audit* stays within ε. The audit of both families factorises:
  for IR, ε_audit = ε₁ + g(δ) with g(δ) = max_{y_U, s₁≠s₂} log(max_{F_s₁} R_y·r / min_{F_s₂} R_y·r);
  for CR, report s̃ = t leaks ε₁ + max_z log(max R^t_z·r / R^t_z·P̂_U|t) and
  −ε₁ + max_z log(R^t_z·P̂_U|t / min R^t_z·r), independently for every t. Each is a
  bisection on δ for fixed ε₁, and ε₁ is found by a one-dimensional search.
  The theorem's point is always a candidate, so calibrated ≥ theorem.

Every returned mechanism is audited again by :func:`rldp.aggregator.design.design`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.information import mutual_information
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.families import cr_matrix, grr_matrix, ir_matrix
from .search import DELTA_CAP, largest_feasible, maximise_1d

__all__ = ["ir_theorem", "ir_calibrated", "cr_theorem", "cr_calibrated", "released_leak"]


def _ir_spread(uset: UncertaintySet) -> float:
    """d of [LZG24, Thm 5] with d_s = rad_s."""
    cond = uset.conditionals
    rad = uset.l1_radii()
    gap = np.abs(cond[:, None, :] - cond[None, :, :]).sum(axis=2).max()
    return float(min(2.0, 2.0 * rad.max() + gap))


def _relax(eps2: float, d: float) -> float:
    """δ = log(1 + 2(e^ε₂ − 1)/d), the noise level [LZG24, Lemma 3] allows for spread d."""
    if d <= 0:
        return math.inf
    return math.log1p(2.0 * math.expm1(eps2) / d)


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else float(x)


def ir_theorem(uset: UncertaintySet, epsilon: float) -> tuple[np.ndarray, dict[str, Any]]:
    """IR(GRR_ε₁, GRR_δ₂) with ε₂ chosen by 1-D search ([LZG24, Thm 5-6, Example 5])."""
    a1, a2 = uset.n_sensitive, uset.n_released
    p = uset.public_distribution
    eps = epsilon * (1 - DESIGN_MARGIN)
    d = _ir_spread(uset)

    def info(e2: float) -> float:
        return mutual_information(ir_matrix(a1, a2, eps - e2, _relax(e2, d)), p)

    eps2, _ = maximise_1d(info, 0.0, eps)
    delta = _relax(eps2, d)
    return ir_matrix(a1, a2, eps - eps2, delta), {
        "epsilon_s": eps - eps2,
        "epsilon_u": eps2,
        "delta_u": _finite(delta),
        "d": d,
    }


def _ir_leak(uset: UncertaintySet, delta: float) -> float:
    """g(δ): the audit's worst log-ratio contributed by GRR_δ on U (any s₁ ≠ s₂)."""
    rows = grr_matrix(uset.n_released, delta)  # (y_U, u)
    vec = np.broadcast_to(rows[:, None, :], (rows.shape[0], uset.n_sensitive, uset.n_released))
    hi, lo = uset.extremes(vec)
    with np.errstate(divide="ignore"):
        ratio = np.log(hi[:, :, None]) - np.log(np.maximum(lo[:, None, :], 0.0))
    k = uset.n_sensitive
    ratio[:, np.arange(k), np.arange(k)] = -np.inf
    return float(ratio.max())


#: ε(δ) of randomised response GRR_δ on U alone (the report independent of S given U), by the exact audit.
released_leak = _ir_leak


def ir_calibrated(uset: UncertaintySet, epsilon: float) -> tuple[np.ndarray, dict[str, Any]]:
    """IR(GRR_ε₁, GRR_δ) with (ε₁, δ) maximising I_P̂ subject to the exact audit ≤ ε.

    The audit is ε₁ + g(δ), so for each δ ≤ δ_max (g(δ_max) = ε) the best ε₁ is ε − g(δ):
    a one-dimensional search over δ, one support-function evaluation per point.
    """
    a1, a2 = uset.n_sensitive, uset.n_released
    p = uset.public_distribution
    eps = epsilon * (1 - DESIGN_MARGIN)

    def leak(dl: float) -> float:
        return _ir_leak(uset, float(dl))

    delta_max = float(largest_feasible(lambda d: np.array([leak(x) <= eps for x in d]), 1)[0])
    theorem_q, theorem_params = ir_theorem(uset, epsilon)
    if delta_max < 0:  # cannot happen: δ = 0 makes U's report independent of X
        return theorem_q, dict(theorem_params, chosen="theorem")
    if math.isinf(delta_max):
        delta_max = DELTA_CAP

    def info(dl: float) -> float:
        return mutual_information(ir_matrix(a1, a2, max(eps - leak(dl), 0.0), dl), p)

    delta, best = maximise_1d(info, 0.0, delta_max)
    if mutual_information(theorem_q, p) >= best:
        return theorem_q, dict(theorem_params, chosen="theorem")
    eps1 = max(eps - leak(delta), 0.0)
    return ir_matrix(a1, a2, eps1, delta), {"epsilon_s": eps1, "delta_u": _finite(delta)}


def cr_theorem(uset: UncertaintySet, epsilon: float) -> tuple[np.ndarray, dict[str, Any]]:
    """CR with R^s = GRR_{δ_s}, δ_s = log(1 + 2(e^ε₂ − 1)/rad_s) ([LZG21, Thm 5], corrected)."""
    p = uset.public_distribution
    cond = uset.conditionals
    rad = uset.l1_radii()
    eps = epsilon * (1 - DESIGN_MARGIN)

    def deltas(e2: float) -> np.ndarray:
        return np.array([_relax(e2, r) for r in rad])

    def info(e2: float) -> float:
        return mutual_information(cr_matrix(cond, eps - e2, deltas(e2)), p)

    eps2, _ = maximise_1d(info, 0.0, eps)
    return cr_matrix(cond, eps - eps2, deltas(eps2)), {
        "epsilon_s": eps - eps2,
        "epsilon_u": eps2,
        "deltas": [_finite(x) for x in deltas(eps2)],
    }


def _cr_leaks(uset: UncertaintySet, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every t, with R^t = GRR_{δ_t} and c_z = R^t_z·P̂_U|t, the two ways the report
    s̃ = t separates s = t from s ≠ t: (max_z log(max_r R^t_z·r / c_z),
    max_z log(c_z / min_r R^t_z·r)) over r ∈ F_U|t. Shapes (|S|,)."""
    a2 = uset.n_released
    rows = np.stack([grr_matrix(a2, d) for d in deltas], axis=1)  # (z, t, u)
    hi, lo = uset.extremes(rows)
    c = np.einsum("ztu,tu->zt", rows, uset.conditionals)
    with np.errstate(divide="ignore"):
        up = np.max(np.log(hi) - np.log(c), axis=0)
        down = np.max(np.log(c) - np.log(np.maximum(lo, 0.0)), axis=0)
    return up, down


def cr_calibrated(uset: UncertaintySet, epsilon: float) -> tuple[np.ndarray, dict[str, Any]]:
    """CR with ε₁ and every δ_s chosen to maximise I_P̂ subject to the exact audit ≤ ε.

    For fixed ε₁ the constraints separate by s̃ = t, so all δ_t come from one vectorised
    bisection; ε₁ ∈ [0, ε] is the outer one-dimensional search.
    """
    p = uset.public_distribution
    cond = uset.conditionals
    eps = epsilon * (1 - DESIGN_MARGIN)

    # Leak tables on a δ grid (one vectorised support-function call) make the outer
    # search cheap; the chosen ε₁ then gets exact δ_t by bisection.
    grid = np.concatenate([np.linspace(0.0, 12.0, 241), [16.0, 24.0, DELTA_CAP]])
    rows = np.stack([np.stack([grr_matrix(uset.n_released, d)] * uset.n_sensitive, axis=1) for d in grid])
    hi, lo = uset.extremes(rows)  # (grid, z, t)
    c = np.einsum("gztu,tu->gzt", rows, cond)
    with np.errstate(divide="ignore"):
        up_tab = np.max(np.log(hi) - np.log(c), axis=1)  # (grid, t)
        down_tab = np.max(np.log(c) - np.log(np.maximum(lo, 0.0)), axis=1)

    def approx_deltas(eps1: float) -> np.ndarray:
        ok = (eps1 + up_tab <= eps) & (-eps1 + down_tab <= eps)  # (grid, t)
        last = np.where(ok.all(axis=0), len(grid) - 1, np.argmin(ok, axis=0) - 1)
        return np.where(last >= 0, grid[np.maximum(last, 0)], -1.0)

    def deltas_for(eps1: float) -> np.ndarray:
        def ok(dl: np.ndarray) -> np.ndarray:
            up, down = _cr_leaks(uset, dl)
            return (eps1 + up <= eps) & (-eps1 + down <= eps)

        return largest_feasible(ok, uset.n_sensitive)

    def info(eps1: float) -> float:
        dl = approx_deltas(eps1)
        return -1.0 if np.any(dl < 0) else mutual_information(cr_matrix(cond, eps1, dl), p)

    eps1, best = maximise_1d(info, 0.0, eps, grid=17, refine=30)
    theorem_q, theorem_params = cr_theorem(uset, epsilon)
    if mutual_information(theorem_q, p) >= best:
        return theorem_q, dict(theorem_params, chosen="theorem")
    deltas = deltas_for(eps1)
    return cr_matrix(cond, eps1, deltas), {"epsilon_s": eps1, "deltas": [_finite(x) for x in deltas]}
