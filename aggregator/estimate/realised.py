"""The upper bound of the realised ε* over an estimate's 95 % confidence region (the drift watch's (a)).

The region is the box of the estimate's cell intervals made simultaneous by Bonferroni
(:func:`simultaneous_box`); over a box the maximum of ε* is computed exactly
(:func:`realised_upper_bound`). Why it is an upper bound: :mod:`.drift`'s docstring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rldp.shared.audit import joint_matrix

from .intervals import LEVEL, Z95
from .result import Estimate

__all__ = ["box_ratio_max", "realised_upper_bound", "simultaneous_box"]

# Rows of Q per call of box_ratio_max are capped at this many entries (2 MB of float64 per temporary).
_CHUNK_ENTRIES = 1 << 18


def box_ratio_max(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """max over l ≤ x ≤ h of Σ a_u x_u / Σ x_u, along the last axis (a: (..., k); l, h: (k,)).

    A linear-fractional maximum over a box sits at a threshold vertex: x_u = h_u for the j largest
    a_u and l_u for the others; the |U| + 1 candidates are all evaluated (exact). A box that allows
    x = 0 allows any single cell alone, so the largest a_u with h_u > 0 is among the candidates.
    """
    order = np.argsort(-a, axis=-1, kind="stable")
    a_s = np.take_along_axis(a, order, axis=-1)
    lo = np.broadcast_to(low, a.shape)
    hi = np.broadcast_to(high, a.shape)
    lo_s, hi_s = np.take_along_axis(lo, order, axis=-1), np.take_along_axis(hi, order, axis=-1)
    zero = np.zeros((*a.shape[:-1], 1))
    # numerator/denominator with the first j at h and the rest at l, j = 0 … k
    num = np.concatenate([zero, np.cumsum(a_s * hi_s, axis=-1)], axis=-1)
    num += np.concatenate([np.cumsum((a_s * lo_s)[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)
    den = np.concatenate([zero, np.cumsum(hi_s, axis=-1)], axis=-1)
    den += np.concatenate([np.cumsum(lo_s[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / den, -np.inf)
    single = np.where(hi > 0, a, -np.inf).max(axis=-1)  # x = h_u e_u, reachable when l can be 0
    can_vanish = lo.sum(axis=-1) <= 0
    return np.maximum(ratio.max(axis=-1), np.where(can_vanish, single, -np.inf))


def _by_rows(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """:func:`box_ratio_max` over the rows of ``a`` a few MB at a time (its temporaries are |Y|·|U| each)."""
    step = max(1, _CHUNK_ENTRIES // max(a.shape[1], 1))
    return np.concatenate([box_ratio_max(a[i : i + step], low, high) for i in range(0, a.shape[0], step)])


def _worst_pair(top: np.ndarray, bottom: np.ndarray) -> float:
    """max over y and s₁ ≠ s₂ of log top[y, s₁] − log bottom[y, s₂] (0/0 → no leakage, x/0 → inf),
    from the two largest tops and two smallest bottoms of each row (no |Y|·|S|² array)."""
    with np.errstate(divide="ignore"):
        lt = np.where(top > 0, np.log(np.maximum(top, 1e-300)), -np.inf)
        lb = np.where(bottom > 0, np.log(np.maximum(bottom, 1e-300)), -np.inf)
    rows = np.arange(top.shape[0])
    hi_order = np.argsort(-lt, axis=1, kind="stable")[:, :2]
    lo_order = np.argsort(lb, axis=1, kind="stable")[:, :2]
    best = np.full(top.shape[0], -np.inf)
    for i in range(2):
        for j in range(2):
            s1, s2 = hi_order[:, i], lo_order[:, j]
            num, den = lt[rows, s1], lb[rows, s2]
            with np.errstate(invalid="ignore"):
                value = np.where(num == -np.inf, -np.inf, num - den)
            best = np.maximum(best, np.where(s1 != s2, value, -np.inf))
    return max(float(best.max()), 0.0) if best.size else 0.0


def realised_upper_bound(matrix: Any, low: Any, high: Any) -> float:
    """max of ε*(θ) over the box low ≤ θ ≤ high (|S| × |U|), exact over the box (module docstring)."""
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    k = lo.shape[0]
    if k < 2:
        return 0.0
    q = joint_matrix(matrix, k, lo.shape[1]).reshape(-1, k, lo.shape[1])
    top = np.stack([_by_rows(q[:, s, :], lo[s], hi[s]) for s in range(k)], axis=1)
    bottom = np.stack([-_by_rows(-q[:, s, :], lo[s], hi[s]) for s in range(k)], axis=1)
    # an s whose block may be all zero may have no users; still counted (conservative)
    return _worst_pair(top, np.maximum(bottom, 0.0))


def simultaneous_box(est: Estimate) -> tuple[np.ndarray, np.ndarray]:
    """The estimate's cell intervals made simultaneous (Bonferroni over the |X| cells)."""
    from scipy.stats import norm

    theta = est.joint
    cells = theta.size
    widen = float(norm.ppf(1.0 - (1.0 - LEVEL) / (2.0 * cells))) / Z95 if est.identifiable else 1.0
    low = np.clip(theta - (theta - est.ci95_low) * widen, 0.0, 1.0)
    high = np.clip(theta + (est.ci95_high - theta) * widen, 0.0, 1.0)
    return low, high
