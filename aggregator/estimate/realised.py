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


def realised_upper_bound(matrix: Any, low: Any, high: Any) -> float:
    """max of ε*(θ) over the box low ≤ θ ≤ high (|S| × |U|), exact over the box (module docstring)."""
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    q = joint_matrix(matrix, lo.shape[0], lo.shape[1]).reshape(-1, lo.shape[0], lo.shape[1])
    top = np.stack([box_ratio_max(q[:, s, :], lo[s], hi[s]) for s in range(lo.shape[0])], axis=1)
    bottom = np.stack([-box_ratio_max(-q[:, s, :], lo[s], hi[s]) for s in range(lo.shape[0])], axis=1)
    # an s whose block may be all zero may have no users; still counted (conservative)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.log(top[:, :, None]) - np.log(np.maximum(bottom[:, None, :], 0.0))
    ratios = np.where(top[:, :, None] <= 0, -np.inf, ratios)
    k = lo.shape[0]
    ratios[:, np.arange(k), np.arange(k)] = -np.inf
    return max(float(np.max(ratios)), 0.0) if ratios.size else 0.0


def simultaneous_box(est: Estimate) -> tuple[np.ndarray, np.ndarray]:
    """The estimate's cell intervals made simultaneous (Bonferroni over the |X| cells)."""
    from scipy.stats import norm

    theta = est.joint
    cells = theta.size
    widen = float(norm.ppf(1.0 - (1.0 - LEVEL) / (2.0 * cells))) / Z95 if est.identifiable else 1.0
    low = np.clip(theta - (theta - est.ci95_low) * widen, 0.0, 1.0)
    high = np.clip(theta + (est.ci95_high - theta) * widen, 0.0, 1.0)
    return low, high
