"""Lift and the lift-based / lift-inverse privacy measures [ZDS23, eq 1, Defs 5–6]; numpy only.

The lift of a secret value s and an output y is l(s, y) = P(s|y)/P(s) = P(y|s)/P(y) [ZDS23, eq 1],
with P(y|s) = Σ_u Q(y|s,u) P(u|s) (S latent or an input, as in the audits). Per output y:

* min-lift Ψ(y) = min_s l(s, y) and max-lift Λ(y) = max_s l(s, y) [ZDS23, eq 2];
* ℓ1-lift Λ_1(y) = Σ_s P(s) |l(s,y) − 1|, with T(S;Y) = ½ E_Y[Λ_1(Y)] [ZDS23, Def 5, eq 31];
* χ²-lift Λ_χ²(y) = Σ_s P(s) (l(s,y) − 1)², with χ²(S;Y) = E_Y[Λ_χ²(Y)] [ZDS23, eq 32];
* α-lift Λ_α(y) = (Σ_s P(s) l(s,y)^α)^{1/α}, with Sibson's I_α(S;Y) = α/(α−1) log E_Y[Λ_α(Y)] [ZDS23, eq 33];
* the lift-inverse versions Ψ_1, Ψ_χ², Ψ_α: the same with 1/l(s, y) in place of l(s, y) [ZDS23, Def 6].

(The extraction lost the absolute value, the square and the powers; they are rebuilt from the
identities above and the proofs of [ZDS23, Props 3 and 5] (Appendices D and F), e.g.
Λ_1(y) ≤ Λ(y) − 1 and Ψ_α(y) ≤ 1/Ψ(y).) Values s without mass and outputs with P(y) = 0 are
left out (no such users; never released).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .audit.base import joint_matrix
from .errors import ValidationError

__all__ = ["lift_table", "output_lift_measures", "lift_measures", "LIFT_MEASURES"]

#: The per-output measures :func:`lift_measures` reports (the worst over y of each).
LIFT_MEASURES = (
    "max_lift",
    "min_lift",
    "l1_lift",
    "chi2_lift",
    "alpha_lift",
    "l1_lift_inverse",
    "chi2_lift_inverse",
    "alpha_lift_inverse",
)


def lift_table(matrix: Any, joint: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(l(s, y) of shape (|S'|, |Y'|), P_S', P_Y') over the values s with mass and outputs y with P(y) > 0.

    ``joint`` is P over (S, U), shape (|S|, |U|) (counts are normalised); the matrix has |S|·|U|
    columns (S an input) or |U| (S latent).
    """
    p = np.asarray(joint, dtype=float)
    if p.ndim != 2 or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValidationError(
            f"joint must be a non-negative (|S|, |U|) array with a positive total; got shape {p.shape}"
        )
    p = p / p.sum()
    q = joint_matrix(matrix, p.shape[0], p.shape[1]).reshape(-1, p.shape[0], p.shape[1])
    ps = p.sum(axis=1)
    keep = ps > 0
    pys = np.einsum("ysu,su->ys", q[:, keep, :], p[keep])  # P(y, s)
    py = pys.sum(axis=1)
    out = py > 0
    lift = (pys[out] / (py[out, None] * ps[None, keep])).T
    return lift, ps[keep], py[out]


def _power_mean(values: np.ndarray, weights: np.ndarray, alpha: float) -> np.ndarray:
    """(Σ_s w_s v(s, y)^α)^{1/α} per column [ZDS23, eq 33, Def 6], scaled by the column maximum so that
    α = 100 on lifts of e^{±12} neither overflows nor underflows; inf where a column holds inf (a zero lift)."""
    top: np.ndarray = values.max(axis=0)
    if math.isinf(alpha):
        return top
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = top * (weights @ (values / top[None, :]) ** alpha) ** (1.0 / alpha)
    out: np.ndarray = np.where(np.isinf(top), np.inf, scaled)
    return out


def output_lift_measures(lift: np.ndarray, p_s: np.ndarray, alpha: float = 2.0) -> dict[str, np.ndarray]:
    """Each lift measure per output y, from a lift table ``lift`` (|S'|, |Y'|) and P_S' (:func:`lift_table`).

    Keys: ``max_lift`` Λ(y), ``min_lift`` Ψ(y), ``l1_lift``, ``chi2_lift``, ``alpha_lift`` (order
    ``alpha`` > 1, inf allowed: Λ) and their lift-inverse versions ``l1_lift_inverse``,
    ``chi2_lift_inverse``, ``alpha_lift_inverse`` (inf where a lift is 0)."""
    lift = np.asarray(lift, dtype=float)
    w = np.asarray(p_s, dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        inverse = 1.0 / lift
    return {
        "max_lift": lift.max(axis=0),
        "min_lift": lift.min(axis=0),
        "l1_lift": (w * np.abs(lift - 1)).sum(axis=0),
        "chi2_lift": (w * (lift - 1) ** 2).sum(axis=0),
        "alpha_lift": _power_mean(lift, w[:, 0], float(alpha)),
        "l1_lift_inverse": (w * np.abs(inverse - 1)).sum(axis=0),
        "chi2_lift_inverse": (w * (inverse - 1) ** 2).sum(axis=0),
        "alpha_lift_inverse": _power_mean(inverse, w[:, 0], float(alpha)),
    }


def lift_measures(matrix: Any, joint: Any, alpha: float = 2.0) -> dict[str, float]:
    """The worst over y of each lift measure, the log-lift leakages and the average leakages they bound.

    Keys: ``max_lift`` = max_y Λ(y), ``min_lift`` = min_y Ψ(y), ``log_max_lift`` (ALIP's ε_u side),
    ``log_min_lift`` (≤ 0; −ε_l side), the maxima over y of the ℓ1-, χ²- and α-lift and of their
    lift-inverse versions, and ``total_variation`` T(S;Y), ``chi2`` χ²(S;Y), ``sibson`` I_α(S;Y).
    ``alpha`` > 1 is the order of the α-lift (may be inf: then Λ_α = Λ and Ψ_α = 1/Ψ).
    """
    a = float(alpha)
    if not a > 1:
        raise ValidationError(f"alpha must be a number > 1 (inf allowed), got {alpha!r}")
    lift, ps, py = lift_table(matrix, joint)
    per = output_lift_measures(lift, ps, a)
    l1, chi2, alpha_lift = per["l1_lift"], per["chi2_lift"], per["alpha_lift"]
    l1_inv, chi2_inv, alpha_inv = per["l1_lift_inverse"], per["chi2_lift_inverse"], per["alpha_lift_inverse"]
    max_lift, min_lift = float(lift.max()), float(lift.min())
    sibson = a / (a - 1) * math.log(float(py @ alpha_lift)) if math.isfinite(a) else math.log(float(py @ alpha_lift))
    return {
        "max_lift": max_lift,
        "min_lift": min_lift,
        "log_max_lift": math.log(max_lift),
        "log_min_lift": math.log(min_lift) if min_lift > 0 else -math.inf,
        "l1_lift": float(l1.max()),
        "chi2_lift": float(chi2.max()),
        "alpha_lift": float(alpha_lift.max()),
        "l1_lift_inverse": float(l1_inv.max()),
        "chi2_lift_inverse": float(chi2_inv.max()),
        "alpha_lift_inverse": float(alpha_inv.max()),
        "alpha": a,
        "total_variation": 0.5 * float(py @ l1),
        "chi2": float(py @ chi2),
        "sibson": sibson,
    }
