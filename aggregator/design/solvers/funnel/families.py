"""GRR, OUE and Conditional Reporting calibrated to the exact audit of a funnel/lift notion.

* GRR^α on X [LTS20, eq 28]: Q(y|x) = e^α/(e^α + a − 1) if y = x, else 1/(e^α + a − 1).
* OUE^α [LTS20, eqs 30-31]: each bit E_x′ is 1 with probability 1/2 if x′ = x, else 1/(e^α + 1);
  for an output y ⊆ X, Q(y|x) = ½·e^{α(a−#y)}/(e^α+1)^{a−1} if x ∈ y, ½·e^{α(a−#y−1)}/(e^α+1)^{a−1}
  otherwise. It has 2^|X| outputs: the document stores them all, so |X| ≤ :data:`OUE_MAX_SYMBOLS`.
* CR^α [LTS20, Alg 1]: reads (s, u); draws ŝ = s with probability e^α/(e^α + c − 1) (else one of the
  c − 1 others uniformly) and reports u if ŝ = s, else a fresh ũ ~ P̂_U|ŝ. Hence [LTS20, eq 46]
  Q(y | s, u) = (e^α 1{y = u} + Σ_{ŝ ≠ s} P̂(y|ŝ)) / (e^α + c − 1).

[LTS20, eqs 29, 32, 33] are these families' LIP; each is increasing in α ([LTS20, Sec VII]), so the
largest α whose exact audit passes is found by bisection on the audit itself ([LTS20, Prop 1]:
"solving L(α) = ε"), whatever the notion (ldp, lip, alip; at P̂ or over F). α = ∞ (no noise: the
identity, OUE's ½-coin, CR's exact u) is used when even that passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ...primitives.errors import DesignError
from ..search import largest_feasible

__all__ = ["OUE_MAX_SYMBOLS", "ALPHA_CAP", "grr_alpha", "oue_alpha", "cr_alpha", "calibrate"]

#: OUE has 2^|X| outputs; beyond this many input symbols the document would not fit.
OUE_MAX_SYMBOLS = 10
#: α beyond which the families equal their noiseless limit to double precision.
ALPHA_CAP = 40.0


def grr_alpha(a: int, alpha: float) -> np.ndarray:
    """GRR^α on a symbols [LTS20, eq 28]; α = inf is the identity."""
    if math.isinf(alpha):
        return np.eye(a)
    e = math.exp(alpha)
    return (np.full((a, a), 1.0) + (e - 1.0) * np.eye(a)) / (e + a - 1.0)


def oue_alpha(a: int, alpha: float) -> np.ndarray:
    """OUE^α on a symbols [LTS20, eq 31], outputs = subsets of X in binary order (bit x = x ∈ y)."""
    if a > OUE_MAX_SYMBOLS:
        raise DesignError(
            f"oue has 2^|X| outputs; it is limited to |X| ≤ {OUE_MAX_SYMBOLS} input symbols (this input has {a})"
        )
    bits = ((np.arange(2**a)[:, None] >> np.arange(a)[None, :]) & 1).astype(bool)  # (2^a, a): x ∈ y
    size = bits.sum(axis=1, keepdims=True)
    if math.isinf(alpha):  # bit x is a fair coin, every other bit 0
        return np.where(size == 1, 0.5 * bits, np.where(size == 0, 0.5, 0.0))
    # log of ½·e^{α(a − #y − 1{x ∉ y})}/(e^α + 1)^{a−1}
    log_q = math.log(0.5) + alpha * (a - size - (~bits)) - (a - 1) * math.log1p(math.exp(alpha))
    return cast("np.ndarray", np.exp(log_q))


def cr_alpha(p_hat: np.ndarray, alpha: float) -> np.ndarray:
    """CR^α [LTS20, Alg 1, eq 46]: columns (s, u) s major, outputs U; P̂_U|ŝ uniform where P̂_ŝ = 0."""
    p = np.asarray(p_hat, dtype=float)
    c, a2 = p.shape
    marg = p.sum(axis=1, keepdims=True)
    cond = np.where(marg > 0, p / np.where(marg > 0, marg, 1.0), 1.0 / a2)  # (c, |U|)
    others = cond.sum(axis=0)[None, :] - cond  # Σ_{ŝ ≠ s} P̂(y|ŝ), (s, y)
    if math.isinf(alpha):
        keep, mix = 1.0, 0.0
    else:
        e = math.exp(alpha)
        keep, mix = e / (e + c - 1.0), 1.0 / (e + c - 1.0)
    q = keep * np.eye(a2)[:, None, :] + mix * others.T[:, :, None]  # (y, s, u)
    return cast("np.ndarray", q.reshape(a2, c * a2))


def calibrate(
    family: Callable[[float], np.ndarray], passes: Callable[[np.ndarray], bool], name: str
) -> tuple[np.ndarray, dict[str, Any]]:
    """The family at the largest α ∈ [0, ∞] whose mechanism passes (bisection; the leakage is
    increasing in α). α = 0 is the constant mechanism (no leakage) for GRR and CR; OUE at α = 0
    still leaks a little, so it can be infeasible: then a DesignError."""
    if passes(family(math.inf)):
        return family(math.inf), {"alpha": None, "noiseless": True}

    def feasible(t: np.ndarray) -> np.ndarray:
        return np.array([passes(family(float(x))) for x in t])

    alpha = float(largest_feasible(feasible, 1, cap=ALPHA_CAP, steps=32)[0])
    if alpha < 0:
        raise DesignError(f"{name}: no α ≥ 0 meets the requested privacy (even α = 0 leaks more)")
    return family(alpha), {"alpha": alpha}
