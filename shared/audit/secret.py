"""Privacy w.r.t. a secret S: ε-LDP w.r.t. S, ε-LIP and (ε_l, ε_u)-ALIP — exact at P̂, exact over F″.

With P(y|s) = Σ_u Q(y|s,u) P(u|s) (``joint_matrix``: a latent S reads U only, Q(y|s,u) = Q(y|u))
and P(y) = Σ_s P(s) P(y|s):

* ε-LDP w.r.t. S [LTS20, Def 1, eq 1]: max_{y, s ≠ s′} log P(y|s)/P(y|s′) ≤ ε (needs P_U|S only).
* ε-LIP [LTS20, Def 2, eq 3]: e^{−ε} ≤ P(y|s)/P(y) ≤ e^{ε} (needs the joint, P_S included);
  equivalently P(s|y)/P(s) = l(s, y), the lift [ZDS23, eq 1].
* (ε_l, ε_u)-ALIP [ZDS23, Def 3]: e^{−ε_l} ≤ Ψ(y) = min_s l(s, y) and Λ(y) = max_s l(s, y) ≤ e^{ε_u}.

So one pair of numbers decides both lift notions: ε_upper = max_{y,s} log l(s, y) and
ε_lower = max_{y,s} −log l(s, y) (each floored at 0); ε-LIP holds iff max(ε_lower, ε_upper) ≤ ε.
At a distribution (:func:`lip_leakage`, :func:`secret_ldp_epsilon`) values s without mass are
skipped (no such users) and so are outputs with P(y) = 0 (never released).

Robust versions over the uncertainty set F = {P : D_α(P̂ ‖ P) ≤ B} [LZG24, eq 10] (ours):

* LDP w.r.t. S over F is (ε, F)-RLDP [LZG24, Def 1]: the RLDP condition *is* ε-LDP w.r.t. S for
  every P ∈ F, so its exact audit over F′ = {P : P_U|s ∈ F_U|s} [LZG24, Thm 1] is reused
  (:func:`robust_secret_ldp_epsilon`); radius 0 is [LTS20, Def 1] at P̂.
* LIP/ALIP over F″ = {P : P_S ∈ F_S, P_U|s ∈ F_U|s ∀s} ⊇ F, F_S the Rényi ball of radius B around
  P̂_S (it contains the marginal of every P ∈ F by the data-processing inequality for D_α; the
  conditional balls are Theorem 1's). Exact over F″ (:func:`robust_lip_leakage`): l(s, y) =
  P(y|s)/(P_s P(y|s) + Σ_{s′≠s} P_{s′} P(y|s′)) is increasing in P(y|s) and decreasing in every
  other P(y|s′), whatever P_S, so max l = hi_s / min_{P_S ∈ F_S} (P_s hi_s + Σ_{s′≠s} P_{s′} lo_{s′})
  and min l = lo_s / max_{P_S ∈ F_S} (P_s lo_s + Σ_{s′≠s} P_{s′} hi_{s′}), hi/lo the extremes of
  P(y|s) over F_U|s. Both denominators are support functions of the ball F_S, computed by the same
  Lagrange search. This is at most the RLDP ε on each side (P(y) is a mixture of the P(y|s′)),
  i.e. tighter than the generic "ε-LDP over F ⇒ ε-LIP over F" bound.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import ValidationError
from ..uncertainty import UncertaintySet
from .base import joint_matrix, log_ratios, pairwise_worst, worst_case
from .distp import conditional_outputs
from .rldp import rldp_epsilon

__all__ = [
    "LipLeakage",
    "secret_ldp_epsilon",
    "robust_secret_ldp_epsilon",
    "lip_leakage",
    "lip_epsilons",
    "robust_lip_leakage",
    "robust_lip_epsilons",
    "scope",
]


class LipLeakage(NamedTuple):
    """Both sides of the lift leakage and where each worst ratio occurs ({"output": y, "s": s})."""

    #: ε_lower = max_{y,s} −log l(s, y) ≥ 0 (the min-lift side, ALIP's ε_l).
    lower: float
    #: ε_upper = max_{y,s} log l(s, y) ≥ 0 (the max-lift side, ALIP's ε_u).
    upper: float
    worst_lower: dict[str, int]
    worst_upper: dict[str, int]

    @property
    def epsilon(self) -> float:
        """The LIP ε: max(ε_lower, ε_upper)."""
        return max(self.lower, self.upper)


def scope(radius: float) -> str:
    """How far a guarantee over F reaches: "at P̂ only" (radius 0) or "robust over F"."""
    return "at P̂ only" if radius == 0 else "robust over F"


def _joint(joint: Any) -> np.ndarray:
    p = np.asarray(joint, dtype=float)
    if p.ndim != 2:
        raise ValidationError(f"joint must have shape (|S|, |U|); got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValidationError("joint must have finite entries ≥ 0 and a positive total")
    normalised: np.ndarray = p / p.sum()
    return normalised


def secret_ldp_epsilon(matrix: Any, joint: Any) -> tuple[float, dict[str, int]]:
    """ε-LDP w.r.t. S at one distribution [LTS20, Def 1, eq 1]: max_{y, s≠s′} log P(y|s)/P(y|s′).

    ``joint`` is P over (S, U), shape (|S|, |U|) (counts are normalised); values s without mass
    are skipped. Returns (ε, {"output": y, "s1": s, "s2": s′}) for the worst triple.
    """
    out, keep = conditional_outputs(matrix, _joint(joint))  # (|S|, |Y|)
    cond = out.T  # (|Y|, |S|)
    return pairwise_worst(cond, cond, keep)


def robust_secret_ldp_epsilon(matrix: Any, uncertainty: UncertaintySet) -> tuple[float, dict[str, int]]:
    """ε-LDP w.r.t. S for every P with P_U|s ∈ F_U|s: the exact (ε, F)-RLDP audit [LZG24, Thm 1]."""
    return rldp_epsilon(matrix, uncertainty)


def _sides(upper: np.ndarray, lower: np.ndarray) -> LipLeakage:
    # ``upper``/``lower`` are log-ratio tables of shape (|Y|, |S|), −inf where nothing is constrained.
    up, w_up = worst_case(upper, ("output", "s"))
    lo, w_lo = worst_case(lower, ("output", "s"))
    return LipLeakage(lo, up, w_lo, w_up)


def lip_leakage(matrix: Any, joint: Any) -> LipLeakage:
    """ε_lower and ε_upper of the lift at one distribution [LTS20, eq 3; ZDS23, Def 3], exact.

    ``joint`` is P over (S, U), shape (|S|, |U|) (counts are normalised); the matrix has |S|·|U|
    columns (S an input) or |U| (S latent).
    """
    p = _joint(joint)
    out, keep = conditional_outputs(matrix, p)
    cond = out.T  # P(y|s), (|Y|, |S|)
    py = cond @ p.sum(axis=1)  # P(y)
    upper = log_ratios(cond, py[:, None])
    lower = log_ratios(py[:, None], cond)
    lower = np.where(py[:, None] > 0, lower, -np.inf)  # an output never released constrains nothing
    upper[:, ~keep] = -np.inf
    lower[:, ~keep] = -np.inf
    return _sides(upper, lower)


def lip_epsilons(matrix: Any, joint: Any) -> tuple[float, float]:
    """(ε_lower, ε_upper) at one distribution: the smallest (ε_l, ε_u) of ALIP; LIP's ε is their max."""
    leak = lip_leakage(matrix, joint)
    return leak.lower, leak.upper


def robust_lip_leakage(matrix: Any, uncertainty: UncertaintySet) -> LipLeakage:
    """ε_lower and ε_upper over F″ = F_S × Π_s F_U|s ⊇ F, exact over F″ (see the module docstring).

    Never below the value at P̂ (the Lagrange search rounds towards leakage; the max with P̂'s own
    value guards the last ulp). Values s that no P_S in F_S gives mass to are skipped.
    """
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    q = joint_matrix(matrix, a1, a2)
    hi, lo = uncertainty.extremes(q.reshape(-1, a1, a2))  # extremes of P(y|s), (|Y|, |S|)
    hi, lo = np.minimum(hi, 1.0), np.maximum(lo, 0.0)
    marginal = uncertainty.marginal_set()
    eye = np.eye(a1, dtype=bool)
    # Row (y, s) of each family: the vector c over s′ whose support function over F_S is the denominator.
    c_up = np.where(eye[None, :, :], hi[:, :, None], lo[:, None, :])  # c[y, s, s′]
    c_lo = np.where(eye[None, :, :], lo[:, :, None], hi[:, None, :])
    _, den_up = marginal.extremes(c_up.reshape(-1, 1, a1))
    den_lo, _ = marginal.extremes(c_lo.reshape(-1, 1, a1))
    den_up = np.maximum(den_up.reshape(hi.shape), 0.0)
    den_lo = den_lo.reshape(hi.shape)
    upper = log_ratios(hi, den_up)
    lower = np.where(den_lo > 0, log_ratios(den_lo, lo), -np.inf)
    reachable, _ = marginal.extremes(np.eye(a1)[:, None, :])  # max P_s over F_S
    unused = reachable.reshape(-1) <= 0
    upper[:, unused] = -np.inf
    lower[:, unused] = -np.inf
    robust = _sides(upper, lower)
    point = lip_leakage(q, uncertainty.public_distribution)
    return LipLeakage(
        max(robust.lower, point.lower),
        max(robust.upper, point.upper),
        robust.worst_lower if robust.lower >= point.lower else point.worst_lower,
        robust.worst_upper if robust.upper >= point.upper else point.worst_upper,
    )


def robust_lip_epsilons(matrix: Any, uncertainty: UncertaintySet) -> tuple[float, float]:
    """(ε_lower, ε_upper) over F″ ⊇ F (:func:`robust_lip_leakage`); at radius 0 equal to :func:`lip_epsilons` at P̂."""
    leak = robust_lip_leakage(matrix, uncertainty)
    return leak.lower, leak.upper
