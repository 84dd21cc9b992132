"""Rényi divergences and the confidence radius B of the uncertainty set [LZG24, Sec 3].

* :func:`renyi_divergence` — D_α(P ‖ Q) of any order α > 0 (α = 1: Kullback–Leibler).
* :func:`confidence_radius` — the radius B such that F = {P : D_α(P̂ ‖ P) ≤ B} is a
  (1 − β)-confidence set for n public samples ([LZG24, eq 9] at α = 2; other orders by
  the Hellinger–χ² calibration B = log(1 + (α−1)αq/(2n))/(α−1), docs/design.md).
* :func:`chi2_quantile` — the χ² quantile it needs, without scipy (the client uses this).

numpy only.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ValidationError

__all__ = ["renyi_divergence", "confidence_radius", "chi2_quantile", "validate_order"]


def validate_order(order: float) -> float:
    order = float(order)
    if not (math.isfinite(order) and order > 0):
        raise ValidationError(f"order must be a finite number > 0 (Rényi order α); got {order!r}")
    return order


def renyi_divergence(p: np.ndarray, q: np.ndarray, order: float = 2.0, axis: int = -1) -> np.ndarray:
    """Rényi divergence D_α(p ‖ q) in nats along ``axis`` [LZG24, eq 7].

    D_α(p‖q) = 1/(α−1) · log Σ_x p_x^α q_x^(1−α) for α ≠ 1, and Σ_x p_x log(p_x/q_x)
    (Kullback–Leibler) for α = 1, with 0·anything = 0; a cell with p_x > 0 = q_x gives
    +inf when α ≥ 1.
    """
    alpha = validate_order(order)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    p, q = np.broadcast_arrays(p, q)
    pos = p > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if alpha == 1.0:
            terms = np.where(pos, p * (np.log(np.where(pos, p, 1.0)) - np.log(q)), 0.0)
            out: np.ndarray = np.sum(terms, axis=axis)
            return out
        terms = np.where(pos, p**alpha * q ** (1.0 - alpha), 0.0)
        out = np.log(np.sum(terms, axis=axis)) / (alpha - 1.0)
        return out


# ---------------------------------------------------------------------------
# χ² quantile (numpy/stdlib only, so the client can recompute B from n and β)
# ---------------------------------------------------------------------------


def _regularized_gamma_p(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x): series for x < a + 1, else a
    continued fraction for Q = 1 − P (modified Lentz), as in Numerical Recipes §6.2."""
    if x <= 0:
        return 0.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        return min(1.0, total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-17:
            break
    return max(0.0, 1.0 - math.exp(log_prefix) * h)


def chi2_quantile(probability: float, dof: int) -> float:
    """Quantile F⁻¹_{χ², dof}(probability) of the χ² distribution (relative accuracy ~1e-12).

    Uses P(χ²_k ≤ x) = P(k/2, x/2) (regularised incomplete gamma) and a bisection on x,
    so that the client can check a document's radius without scipy.
    """
    if not (0.0 < probability < 1.0):
        raise ValidationError(f"probability must be in (0, 1); got {probability!r}")
    if int(dof) != dof or dof < 1:
        raise ValidationError(f"dof must be a positive integer; got {dof!r}")
    a = dof / 2.0
    lo, hi = 0.0, max(1.0, 2.0 * dof)
    while _regularized_gamma_p(a, hi / 2.0) < probability:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _regularized_gamma_p(a, mid / 2.0) < probability:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def confidence_radius(n: int, beta: float, n_symbols: int, order: float = 2.0) -> float:
    """Radius B making F a (1 − β)-confidence set for P* from n public samples.

    For α = 2 this is [LZG24, eq 9]: B = log(1 + F⁻¹_{χ², a−1}(1 − β) / n).
    For other orders we use the same χ² calibration of the Hellinger divergence
    H_α = (e^{(α−1)D_α} − 1)/(α − 1), whose curvature at P = P̂ is α (Ben-Tal et al. 2013,
    ref. [40] of [LZG24]): B = log(1 + (α−1)·α·q/(2n)) / (α − 1) and B = q/(2n) at α = 1,
    with q = F⁻¹_{χ², a−1}(1 − β). At α = 2 both formulas coincide. Asymptotic for α ≠ 2.
    Returns inf when the ball covers the whole simplex (possible for α < 1).
    """
    alpha = validate_order(order)
    if int(n) != n or n < 1:
        raise ValidationError(f"n (number of public samples) must be a positive integer; got {n!r}")
    if not (0.0 < beta < 1.0):
        raise ValidationError(f"beta (significance level) must be in (0, 1); got {beta!r}")
    if n_symbols < 2:
        raise ValidationError(f"the alphabet needs at least 2 symbols; got {n_symbols}")
    q = chi2_quantile(1.0 - beta, n_symbols - 1)
    if alpha == 1.0:
        return q / (2.0 * n)
    inner = (alpha - 1.0) * alpha * q / (2.0 * n)
    if inner <= -1.0:
        return math.inf
    return math.log1p(inner) / (alpha - 1.0)
