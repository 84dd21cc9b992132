"""A pilot's confidence box as a constraint on the conditionals P_U|s: the bounds it implies and the
support function of the set they cut out (docs/design.md, "A pilot's F: the ball and its box").

A pilot proves more than a Rényi ball: with probability ≥ 1 − β every cell lies in a box,
ℓ_x ≤ P_x ≤ u_x (:mod:`rldp.shared.pilot_dual`). The smallest ball holding that box is far wider than the
box where cells are rare, so a document made from a pilot states F = ball ∩ box
(``privacy.uncertainty.box``). What the audits need of F are the conditional projections F_U|s; for the
box part this module gives, per (s, u),

    m_s = Σ_u ℓ_su,  M_s = Σ_u u_su,
    P_s ∈ [lo_s, hi_s] = [max(m_s, 1 − Σ_{s'≠s} M_s'), min(M_s, 1 − Σ_{s'≠s} m_s')]   (the other rows fill the rest)
    L_u|s = ℓ_su / min(ℓ_su + M_s − u_su, hi_s),   U_u|s = u_su / max(u_su + m_s − ℓ_su, lo_s)

(R_u = P_su / (P_su + rest) is increasing in P_su and decreasing in the rest, which lies between
m_s − ℓ_su and M_s − u_su and makes P_s ∈ [lo_s, hi_s]). So every conditional of a P in the box lies in
K_s = {R in the simplex : L_s ≤ R ≤ U_s}, and the support function of K_s is a fractional knapsack:
fill every cell to L, then the mass left, 1 − Σ L, into the cells in decreasing order of q up to U.

Both bounds are rounded outwards (L down, U up) by a few ulps, so values built from them are
conservative. numpy only: the client imports this module to check a mechanism on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ValidationError
from .tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT

__all__ = ["check_box", "conditional_bounds", "knapsack_maximum", "knapsack_l1_radii"]

# Relative outward rounding of the conditional bounds (a handful of ulps of the divisions above).
_ROUND = 8 * np.finfo(float).eps
# Subsets of U enumerated for the exact l1 radius of K_s up to this many released symbols.
_EXACT_L1_MAX_SYMBOLS = 16


def check_box(lower: Any, upper: Any, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(ℓ, u) as float arrays of ``shape`` (|S|, |U|), or a ValidationError naming what is wrong:
    finite, 0 ≤ ℓ ≤ u ≤ 1, and a box that meets the simplex (Σℓ ≤ 1 ≤ Σu, to the stochastic tolerance)."""
    out = []
    for name, value in (("lower", lower), ("upper", upper)):
        try:
            arr = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValidationError(f"box.{name} must be a {shape[0]}×{shape[1]} array of numbers") from None
        if arr.shape != shape:
            raise ValidationError(f"box.{name} has shape {arr.shape}; expected {shape[0]}×{shape[1]} (|S| × |U|)")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
            raise ValidationError(f"box.{name} must hold finite numbers in [0, 1]")
        out.append(arr)
    lo, up = out
    if np.any(lo > up):
        raise ValidationError("box.lower must be ≤ box.upper in every cell")
    if lo.sum() > 1 + STOCHASTIC_TOLERANCE or up.sum() < 1 - STOCHASTIC_TOLERANCE:
        raise ValidationError(
            f"the box must meet the simplex: Σ lower ≤ 1 ≤ Σ upper ({STOCHASTIC_TOLERANCE_TEXT}); "
            f"got Σ lower = {lo.sum():.12g}, Σ upper = {up.sum():.12g}"
        )
    return lo, up


def conditional_bounds(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, U), each (|S|, |U|): bounds on P_U|s for every P in the box ∩ simplex (module docstring)."""
    m, big_m = lower.sum(axis=1), upper.sum(axis=1)
    low_s = np.maximum(m, 1.0 - (big_m.sum() - big_m))
    high_s = np.minimum(big_m, 1.0 - (m.sum() - m))
    den_l = np.minimum(lower + (big_m[:, None] - upper), high_s[:, None])
    den_u = np.maximum(upper + (m[:, None] - lower), low_s[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        cond_l = np.where((lower > 0) & (den_l > 0), lower / np.where(den_l > 0, den_l, 1.0), 0.0)
        cond_u = np.where(den_u > 0, upper / np.where(den_u > 0, den_u, 1.0), 1.0)
    cond_l = np.clip(cond_l * (1 - _ROUND), 0.0, 1.0)
    cond_u = np.clip(cond_u * (1 + _ROUND), 0.0, 1.0)
    return cond_l, np.maximum(cond_u, cond_l)


def knapsack_maximum(q: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """max q·R over {R in the simplex : low ≤ R ≤ high}, row by row (q, low, high of shape (N, k); every
    row with Σ low ≤ 1 ≤ Σ high): low everywhere, then 1 − Σ low into the largest q first, each up to high.
    Rounded up by a few ulps of Σ|q·R| (conservative for the audit)."""
    order = np.argsort(-q, axis=1, kind="stable")
    q_sorted = np.take_along_axis(q, order, axis=1)
    room = np.take_along_axis(high - low, order, axis=1)
    left = np.maximum(1.0 - low.sum(axis=1), 0.0)[:, None]
    before = np.cumsum(room, axis=1) - room  # room of the cells ahead in the order
    take = np.clip(left - before, 0.0, room)
    value: np.ndarray = np.einsum("ij,ij->i", q, low) + np.einsum("ij,ij->i", q_sorted, take)
    scale = np.einsum("ij,ij->i", np.abs(q), low) + np.einsum("ij,ij->i", np.abs(q_sorted), take)
    rounded: np.ndarray = value + _ROUND * scale
    return rounded


def knapsack_l1_radii(center: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """max ‖R − c‖₁ over {R in the simplex : low ≤ R ≤ high} per row (c a row of the simplex):
    2·max_A (max R(A) − c(A)) with max R(A) = min(Σ_A high, 1 − Σ_{A^c} low), over every subset A when
    |U| ≤ 16; otherwise the bound 2·min(Σ (high − c)⁺, Σ (c − low)⁺). Capped at 2."""
    k = center.shape[1]
    if k <= _EXACT_L1_MAX_SYMBOLS:
        bits = ((np.arange(1, 2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(float)  # (2^k − 1, k)
        reach = np.minimum(high @ bits.T, 1.0 - low @ (1.0 - bits).T)
        rad = 2.0 * np.max(reach - center @ bits.T, axis=1)
    else:
        rad = 2.0 * np.minimum(np.maximum(high - center, 0).sum(axis=1), np.maximum(center - low, 0).sum(axis=1))
    radii: np.ndarray = np.clip(rad * (1 + _ROUND), 0.0, 2.0)
    return radii
