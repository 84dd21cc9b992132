"""GRR, OUE and Conditional Reporting calibrated to ε-LIP [LTS20, Sec VII] for the ``funnel-*`` experiments.

Each family has one parameter α (ε-LDP w.r.t. X, or for CR a randomised response on S) whose LIP
level grows with α [LTS20, eqs 29, 32, 33]; ``calibrate`` finds the largest α whose *exact* LIP
audit (:func:`.lift_mechanisms.lip_level`) is ≤ ε by bracketing and bisection (scipy's brentq), and
returns α = ∞ (the identity) when even that meets ε.

* GRR^α [LTS20, eq 28]: Q(y|x) = e^α/(e^α + a − 1) if y = x, else 1/(e^α + a − 1).
* OUE^α [LTS20, eqs 30–31]: one Bernoulli bit per symbol, P(bit x′ = 1) = ½ if x′ = x, else
  1/(e^α + 1); the 2^a outputs are enumerated, so a is limited to :data:`OUE_MAX_SYMBOLS`.
* CR^α [LTS20, Alg 1]: ŝ = s with probability e^α/(e^α + c − 1), else a uniform other value; report x
  if ŝ = s, else a draw from P_X|ŝ. It reads S, so Q has shape (|Y|, |S|, |X|) (eq 46).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .lift_mechanisms import lip_level

__all__ = ["OUE_MAX_SYMBOLS", "grr", "oue", "cr", "calibrate", "FAMILIES"]

OUE_MAX_SYMBOLS = 16  # 2^16 outputs × 16 inputs: 8 MB; Adult's education (16 values) still fits
_ALPHA_MAX = 60.0  # beyond this e^α overflows nothing but every family equals the identity to 1e-26


def grr(a: int, alpha: float) -> np.ndarray:
    """GRR^α on a symbols [LTS20, eq 28]."""
    if math.isinf(alpha):
        return np.eye(a)
    e = math.exp(alpha)
    return (np.full((a, a), 1.0) + (e - 1.0) * np.eye(a)) / (e + a - 1.0)


def oue(a: int, alpha: float) -> np.ndarray:
    """OUE^α [LTS20, eqs 30–31] as a (2^a, a) matrix: output y is a subset of X (bit mask)."""
    if a > OUE_MAX_SYMBOLS:
        raise ValueError(f"OUE enumerates 2^|X| outputs; |X| must be ≤ {OUE_MAX_SYMBOLS}, got {a}")
    alpha = min(alpha, 700.0)  # α = ∞: q = 0 (kept finite so that 0·log q stays 0)
    bits = ((np.arange(2**a)[:, None] >> np.arange(a)[None, :]) & 1).astype(float)  # [y, x′]
    q = 1.0 / (math.exp(alpha) + 1.0)
    # P(y|x) = ½ · Π_{x′ ≠ x} q^{y_x′} (1 − q)^{1 − y_x′}
    log_other = bits * math.log(q) + (1 - bits) * math.log1p(-q)
    total = log_other.sum(axis=1, keepdims=True) - log_other  # drop x's own factor
    out: np.ndarray = 0.5 * np.exp(total)
    return out


def cr(joint: np.ndarray, alpha: float) -> np.ndarray:
    """CR^α [LTS20, Alg 1, eq 46] as Q[y, s, x]."""
    c, a = joint.shape
    pxs = joint / joint.sum(axis=1, keepdims=True)
    if math.isinf(alpha):
        keep, other = 1.0, 0.0
    else:
        e = math.exp(alpha)
        keep, other = e / (e + c - 1.0), 1.0 / (e + c - 1.0)
    # draw from P_X|ŝ summed over ŝ ≠ s, with probability `other` each: [y, s]
    mix = other * (pxs.sum(axis=0)[None, :] - pxs).T  # [y, s]
    q = np.repeat(mix[:, :, None], a, axis=2)
    q[np.arange(a), :, np.arange(a)] += keep
    return q


def _matrix(family: str, joint: np.ndarray, alpha: float) -> np.ndarray:
    a = joint.shape[1]
    if family == "grr":
        return grr(a, alpha)
    if family == "oue":
        return oue(a, alpha)
    return cr(joint, alpha)


FAMILIES = ("grr", "oue", "cr")


def calibrate(family: str, joint: np.ndarray, epsilon: float) -> tuple[float, np.ndarray]:
    """(α, Q): the largest α whose exact LIP level is ≤ ε (α = ∞ when Q = identity meets ε)."""
    from scipy.optimize import brentq

    def gap(alpha: float) -> float:
        return lip_level(_matrix(family, joint, alpha), joint) - epsilon

    if gap(_ALPHA_MAX) <= 0:
        return math.inf, _matrix(family, joint, math.inf)
    lo, hi = 0.0, 1.0
    while gap(hi) <= 0:
        lo, hi = hi, 2 * hi
    f: Callable[[float], float] = gap
    alpha = brentq(f, lo, min(hi, _ALPHA_MAX), xtol=1e-10, rtol=1e-12)
    q = _matrix(family, joint, alpha)
    while lip_level(q, joint) > epsilon:  # brentq's root may sit a hair above ε
        alpha *= 1 - 1e-9
        q = _matrix(family, joint, alpha)
    return alpha, q
