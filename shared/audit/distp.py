"""(ε, δ)-distribution privacy between the distributions P_U|θ: exact at P̂, sound over F.

[KM19, Def 3] (its formula was lost in extraction; rebuilt from the prose and [KM19, Prop 1]):
A gives (ε, δ)-DistP for a pair (λ₀, λ₁) when for every set R of outputs
(Aλ₀)(R) ≤ e^ε (Aλ₁)(R) + δ, where (Aλ)(y) = Σ_x A(y|x) λ(x) is the output distribution of an
input drawn from λ. On a finite Y the worst R is {y : (Aλ₀)(y) > e^ε (Aλ₁)(y)}, so the smallest δ
at ε is the hockey-stick divergence E_t(Aλ₀ ‖ Aλ₁) = Σ_y max(0, (Aλ₀)(y) − t (Aλ₁)(y)), t = e^ε
(:func:`hockey_stick`); the smallest ε at δ is log of its inverse (:func:`hockey_stick_threshold`),
the δ-approximate max divergence of [KM19, Def 5] floored at 0.

In rldp the protected distributions are λ_θ = P_U|θ, θ the document's sensitive attribute S
(θ the auxiliary input of [KM19, Def 15]), for every ordered pair θ ≠ θ′ (so both directions). A
mechanism reading θ applies Q(·|θ, u), one with a latent S applies Q(·|u); ``joint_matrix`` makes
both one case: P(y|θ) = Σ_u Q(y|θ,u) λ_θ(u).

* At a distribution (P̂, or another one for evaluation): δ_θθ′(ε) = E_{e^ε}(P(·|θ) ‖ P(·|θ′))
  exactly (:func:`distp_delta`; values θ without mass have no users and are skipped).
* Over the uncertainty set F of RLDP, the conditionals varying independently in the projected
  balls F_U|θ [LZG24, Thm 1] (F′ ⊇ F): δ_θθ′(ε) = max_R [max_{λ∈F_U|θ} (Aλ)(R) −
  e^ε min_{λ′∈F_U|θ′} (Aλ′)(R)] — for a fixed R the two extremes are independent, so this is
  exact over F′. It enumerates the sets R for small shapes (:data:`EXACT_SUBSET_MAX_OUTPUTS`,
  :data:`EXACT_SUBSET_MAX_ENTRIES`); otherwise it takes the per-output bound
  Σ_y max(0, max P(y|θ) − e^ε min P(y|θ′)) ≥ the exact value, capped at 1 (every δ is). The
  extremes are ``UncertaintySet.extremes`` as in the RLDP audit (max rounded up, min down), so
  the result is sound (:func:`robust_distp_delta`).
* (ε, 0)-DistP between every pair is ε-LDP w.r.t. S: δ = 0 iff P(y|θ) ≤ e^ε P(y|θ′) for all y.
  So the robust ε at δ = 0 is the RLDP audit's ε, which the audit records as its ``epsilon``.

A document passes when the robust δ at its claimed ε is ≤ its claimed δ + AUDIT_TOLERANCE.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..document import epsilon, mechanism_matrix
from ..errors import DocumentError, ValidationError
from ..tolerances import AUDIT_TOLERANCE, STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT
from ..uncertainty import UncertaintySet
from .base import AuditResult, as_matrix, joint_matrix
from .rldp import confidence_shortfall, document_uncertainty, rldp_epsilon

__all__ = [
    "EXACT_SUBSET_MAX_OUTPUTS",
    "EXACT_SUBSET_MAX_ENTRIES",
    "hockey_stick",
    "hockey_stick_threshold",
    "smallest_delta",
    "smallest_epsilon",
    "conditional_outputs",
    "distp_delta",
    "distp_epsilon",
    "robust_distp_delta",
    "robust_distp_epsilon",
    "audit_distp",
    "claimed_delta",
    "DistpAudit",
]

#: The robust δ enumerates the 2^|Y| − 1 output sets (exact over F′) when |Y| is at most this and
#: the sets' vectors, (2^|Y| − 1)·|S|·|U| numbers, at most EXACT_SUBSET_MAX_ENTRIES (each costs a
#: Lagrange search: ~1 s at the limit on one core); otherwise the per-output bound. Both depend on
#: the shape only, so the server and the client (which re-runs the audit) always agree.
EXACT_SUBSET_MAX_OUTPUTS = 12
EXACT_SUBSET_MAX_ENTRIES = 2**17

_Pair = tuple[float, dict[str, int]]


# --------------------------------------------------------------------------- the arithmetic


def hockey_stick(p: Any, q: Any, t: float) -> float:
    """E_t(p ‖ q) = Σ_y max(0, p_y − t q_y) = max over sets R of p(R) − t q(R) (t = e^ε ≥ 0)."""
    a, b = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return float(np.sum(np.maximum(a - t * b, 0.0)))


def hockey_stick_threshold(p: Any, q: Any, delta: float) -> float:
    """The smallest t ≥ 0 with E_t(p ‖ q) ≤ δ (inf if none); log of it is D∞^δ(p ‖ q) [KM19, Def 5].

    E_t is convex, piecewise linear and non-increasing in t with kinks at the ratios p_y/q_y.
    Outputs with q_y = 0 are never covered (their p_y stays whatever t), so the answer is inf
    when those carry more than δ; otherwise, with the ratios r_1 ≥ r_2 ≥ … (A_k, B_k the
    sums of p and q over the first k), E_t = c + A_k − t B_k on [r_{k+1}, r_k]: solved exactly.
    """
    a, b = np.asarray(p, dtype=float).ravel(), np.asarray(q, dtype=float).ravel()
    uncovered = float(a[b <= 0].sum())
    if uncovered > delta:
        return math.inf
    pos = (b > 0) & (a > 0)
    a, b = a[pos], b[pos]
    order = np.argsort(-(a / b), kind="stable")
    a, b = a[order], b[order]
    ratio = a / b
    a_before = np.concatenate(([0.0], np.cumsum(a)))  # A_{k−1} for k = 1..m, then A_m
    b_before = np.concatenate(([0.0], np.cumsum(b)))
    at_kinks = uncovered + a_before[:-1] - ratio * b_before[:-1]  # E at t = r_k, non-decreasing in k
    over = np.flatnonzero(at_kinks > delta)
    k = int(over[0]) if over.size else len(ratio)  # the segment [r_{k+1}, r_k] (0-based: after kink k−1)
    if k == len(ratio) and uncovered + a_before[-1] <= delta:
        return 0.0  # E_0 = Σ p ≤ δ
    return max(float((uncovered + a_before[k] - delta) / b_before[k]), 0.0)


def _nonnegative(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValidationError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValidationError(f"{name} must be a finite number ≥ 0 (nats), got {value!r}")
    return v


def _delta(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValidationError(f"delta must be a number, got {value!r}")
    v = float(value)
    if not 0 <= v <= 1:
        raise ValidationError(f"delta must be a number in [0, 1], got {value!r}")
    return v


def _distribution(value: Any, name: str, size: int) -> np.ndarray:
    lam = np.asarray(value, dtype=float)
    if lam.shape != (size,):
        raise ValidationError(f"{name} must be a distribution over the matrix's {size} columns; got shape {lam.shape}")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValidationError(f"{name} must have finite entries ≥ 0")
    if abs(float(lam.sum()) - 1.0) > STOCHASTIC_TOLERANCE:
        raise ValidationError(f"{name} must sum to 1 ({STOCHASTIC_TOLERANCE_TEXT}); it sums to {float(lam.sum())!r}")
    return lam


def smallest_delta(matrix: Any, lambda0: Any, lambda1: Any, epsilon: float) -> float:
    """The smallest δ such that A is (ε, δ)-DistP from λ₀ to λ₁ [KM19, Def 3] (one direction).

    δ = Σ_y max(0, (Aλ₀)(y) − e^ε (Aλ₁)(y)); ``matrix`` is A with shape (|Y|, |X|), A[y, x] = A(y|x).
    """
    a = as_matrix(matrix)
    eps = _nonnegative(epsilon, "epsilon")
    lam0, lam1 = _distribution(lambda0, "lambda0", a.shape[1]), _distribution(lambda1, "lambda1", a.shape[1])
    return hockey_stick(a @ lam0, a @ lam1, math.exp(eps))


def smallest_epsilon(matrix: Any, lambda0: Any, lambda1: Any, delta: float = 0.0) -> float:
    """The smallest ε ≥ 0 such that A is (ε, δ)-DistP from λ₀ to λ₁ (inf if none) [KM19, Def 3, Prop 1]."""
    a = as_matrix(matrix)
    d = _delta(delta)
    lam0, lam1 = _distribution(lambda0, "lambda0", a.shape[1]), _distribution(lambda1, "lambda1", a.shape[1])
    return _log_floor(hockey_stick_threshold(a @ lam0, a @ lam1, d))


def _log_floor(t: float) -> float:
    return 0.0 if t <= 1.0 else math.log(t)


# --------------------------------------------------------------------------- at one distribution


def conditional_outputs(matrix: Any, distribution: Any) -> tuple[np.ndarray, np.ndarray]:
    """(P(y|θ) with shape (|S|, |Y|), the mask of θ with mass) for a joint P over (θ, u).

    ``distribution`` has shape (|S|, |U|) (a distribution or counts); P(y|θ) = Σ_u Q(y|θ,u) P(u|θ).
    Rows of θ without mass are zero and masked out.
    """
    p = np.asarray(distribution, dtype=float)
    if p.ndim != 2:
        raise ValidationError(f"distribution must have shape (|S|, |U|); got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValidationError("distribution must have finite entries ≥ 0")
    q = joint_matrix(matrix, p.shape[0], p.shape[1]).reshape(-1, p.shape[0], p.shape[1])
    mass = p.sum(axis=1)
    keep = mass > 0
    cond = np.where(keep[:, None], p / np.where(keep, mass, 1.0)[:, None], 0.0)
    return np.einsum("ysu,su->sy", q, cond), keep


def _worst(values: np.ndarray, keep: np.ndarray) -> _Pair:
    """Worst entry of a (|S|, |S|) table over θ ≠ θ′ both kept, and the pair {"s1", "s2"} ({} if 0)."""
    table = np.where(keep[:, None] & keep[None, :], values, -np.inf)
    np.fill_diagonal(table, -np.inf)
    idx = np.unravel_index(int(np.argmax(table)), table.shape)
    worst = float(table[idx])
    if worst <= 0:  # nothing leaks (or fewer than two values θ)
        return 0.0, {}
    return worst, {"s1": int(idx[0]), "s2": int(idx[1])}


def distp_delta(matrix: Any, distribution: Any, epsilon: float) -> _Pair:
    """The smallest δ for (ε, δ)-DistP between every pair P_U|θ, P_U|θ′ of ``distribution``.

    max over ordered θ ≠ θ′ of Σ_y max(0, P(y|θ) − e^ε P(y|θ′)); with the pair {"s1": θ, "s2": θ′}.
    """
    t = math.exp(_nonnegative(epsilon, "epsilon"))
    out, keep = conditional_outputs(matrix, distribution)
    table = np.maximum(out[:, None, :] - t * out[None, :, :], 0.0).sum(axis=2)
    return _worst(table, keep)


def distp_epsilon(matrix: Any, distribution: Any, delta: float = 0.0) -> _Pair:
    """The smallest ε ≥ 0 for (ε, δ)-DistP between every pair P_U|θ, P_U|θ′ (at δ = 0: realised ε*)."""
    d = _delta(delta)
    out, keep = conditional_outputs(matrix, distribution)
    k = out.shape[0]
    table = np.zeros((k, k))
    for s1, s2 in np.argwhere(keep[:, None] & keep[None, :] & ~np.eye(k, dtype=bool)):
        table[s1, s2] = _log_floor(hockey_stick_threshold(out[s1], out[s2], d))
    return _worst(table, keep)


# --------------------------------------------------------------------------- over the uncertainty set


class _RobustOutputs:
    """max/min of (Aλ)(R) over each ball F_U|θ, for every output set R (or every output y).

    ``hi``, ``lo`` have shape (n, |S|); the n rows are the non-empty sets R when ``subsets`` (small
    shapes, see EXACT_SUBSET_MAX_OUTPUTS), else the single outputs (the per-output bound).
    """

    def __init__(self, matrix: Any, uncertainty: UncertaintySet) -> None:
        a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
        q = joint_matrix(matrix, a1, a2)
        b = q.shape[0]
        self.subsets = b <= EXACT_SUBSET_MAX_OUTPUTS and (2**b - 1) * a1 * a2 <= EXACT_SUBSET_MAX_ENTRIES
        if self.subsets:
            bits = ((np.arange(1, 2**b)[:, None] >> np.arange(b)[None, :]) & 1).astype(float)
            q = bits @ q  # row R: Σ_{y∈R} Q(y|θ,u)
        self.hi, self.lo = uncertainty.extremes(q.reshape(-1, a1, a2))
        self.lo = np.maximum(self.lo, 0.0)
        self.keep = np.ones(a1, dtype=bool)
        # P̂ itself (its conditionals) is in F′: the bound never falls below its value there by round-off.
        self.point, _ = conditional_outputs(joint_matrix(matrix, a1, a2), uncertainty.conditionals)
        #: Exact over F′: by enumeration, or every ball is a point (then max = min per output).
        self.exact = self.subsets or bool(np.all(uncertainty.projected_radii == 0))

    def delta(self, t: float) -> np.ndarray:
        """(|S|, |S|) table of the robust δ_θθ′ at t = e^ε."""
        gap = self.hi[:, :, None] - t * self.lo[:, None, :]
        if self.subsets:
            bound = gap.max(axis=0)
        else:
            bound = np.minimum(np.maximum(gap, 0.0).sum(axis=0), 1.0)
        point = np.maximum(self.point[:, None, :] - t * self.point[None, :, :], 0.0).sum(axis=2)
        out: np.ndarray = np.maximum(np.maximum(bound, point), 0.0)
        return out

    def epsilon(self, delta: float) -> np.ndarray:
        """(|S|, |S|) table of the smallest ε ≥ 0 whose robust δ_θθ′ is ≤ δ."""
        k = self.hi.shape[1]
        if delta >= 1.0:
            return np.zeros((k, k))
        if self.subsets:  # e^ε ≥ (hi_R − δ) / lo_R for every R with hi_R > δ
            with np.errstate(divide="ignore", invalid="ignore"):
                need = np.log(self.hi[:, :, None] - delta) - np.log(self.lo[:, None, :])
            need = np.where(self.hi[:, :, None] > delta, need, 0.0)
            table: np.ndarray = np.maximum(need.max(axis=0), 0.0)
        else:
            table = np.zeros((k, k))
            for s1, s2 in itertools.product(range(k), repeat=2):
                table[s1, s2] = _log_floor(hockey_stick_threshold(self.hi[:, s1], self.lo[:, s2], delta))
        for s1, s2 in itertools.product(range(k), repeat=2):  # at least P̂'s own ε (round-off)
            point = _log_floor(hockey_stick_threshold(self.point[s1], self.point[s2], delta))
            table[s1, s2] = max(table[s1, s2], point)
        return table


def robust_distp_delta(matrix: Any, uncertainty: UncertaintySet, epsilon: float) -> _Pair:
    """A sound δ for (ε, δ)-DistP between every pair of conditionals in F′ (exact over F′ for small |Y|)."""
    robust = _RobustOutputs(matrix, uncertainty)
    return _worst(robust.delta(math.exp(_nonnegative(epsilon, "epsilon"))), robust.keep)


def robust_distp_epsilon(matrix: Any, uncertainty: UncertaintySet, delta: float = 0.0) -> _Pair:
    """The smallest ε ≥ 0 whose :func:`robust_distp_delta` is ≤ δ (at δ = 0: the RLDP audit's ε)."""
    robust = _RobustOutputs(matrix, uncertainty)
    return _worst(robust.epsilon(_delta(delta)), robust.keep)


def _scope(radius: float) -> str:
    if radius == 0:
        return "at P̂ only"
    if math.isinf(radius):
        return "for every input distribution"
    return f"over the uncertainty set (radius {radius:.6g} nats)"


def audit_distp(matrix: Any, uncertainty: UncertaintySet, epsilon: float, delta: float = 0.0) -> AuditResult:
    """Audit an (ε, δ)-DistP claim between every pair P_U|θ over F′.

    ``epsilon`` of the result is the robust ε at δ = 0 (the RLDP audit's ε), ``claimed`` the claimed
    ε, ``worst`` the pair {"s1", "s2"} of the largest robust δ; ``extra``: ``delta`` (robust δ at the
    claimed ε), ``delta_claimed``, ``delta_at_p_hat`` and ``epsilon_at_p_hat`` (exact at P̂: δ at the
    claimed ε, ε at δ = 0), ``epsilon_at_delta`` (the smallest ε whose robust δ is ≤ the claimed δ),
    ``delta_exact`` (whether the robust δ is exact over F′ or the per-output bound) and ``scope``
    ("at P̂ only" when the radius is 0).
    """
    eps, d = _nonnegative(epsilon, "epsilon"), _delta(delta)
    q = joint_matrix(matrix, uncertainty.n_sensitive, uncertainty.n_released)
    eps_zero, _ = rldp_epsilon(q, uncertainty)
    robust = _RobustOutputs(q, uncertainty)
    delta_robust, worst = _worst(robust.delta(math.exp(eps)), robust.keep)
    eps_at_delta, _ = _worst(robust.epsilon(d), robust.keep)
    delta_hat, _ = distp_delta(q, uncertainty.public_distribution, eps)
    eps_hat, _ = distp_epsilon(q, uncertainty.public_distribution, 0.0)
    passed = bool(delta_robust <= d + AUDIT_TOLERANCE)
    reasons = (
        ()
        if passed
        else (
            f"audited distp delta {delta_robust:.12g} at epsilon {eps:.12g} exceeds the claimed delta {d:.12g} "
            f"(from s1={worst.get('s1')} to s2={worst.get('s2')}, {_scope(uncertainty.radius)})",
        )
    )
    extra: dict[str, Any] = {
        "delta": delta_robust,
        "delta_claimed": d,
        "delta_at_p_hat": delta_hat,
        "epsilon_at_p_hat": eps_hat,
        "epsilon_at_delta": eps_at_delta,
        "delta_exact": robust.exact,
        "scope": _scope(uncertainty.radius),
    }
    return AuditResult("distp", eps_zero, eps, passed, worst, reasons, extra)


def claimed_delta(doc: Mapping[str, Any]) -> float:
    """The δ a distp document claims (``privacy.delta``, 0 when absent)."""
    value = doc["privacy"].get("delta", 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise DocumentError(f"privacy.delta must be a number in [0, 1), got {value!r}")
    return float(value)


class DistpAudit:
    """Notion ``"distp"``: (ε, δ)-DistP between every pair P_U|θ, P_U|θ′ over the uncertainty set.

    As for ``rldp``: a stated n and β must imply at most the stated radius, and the guarantee is
    relative to P̂ (radius 0: at P̂ only).
    """

    name = "distp"
    #: (ε₁, δ)-DistP of R·Q is the same audit on another column-stochastic matrix.
    supports_per_report = True

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        uset, params = document_uncertainty(doc)
        result = audit_distp(mechanism_matrix(doc), uset, epsilon(doc), claimed_delta(doc))
        reason = confidence_shortfall(uset, params)
        if reason is None:
            return result
        return AuditResult(
            result.notion, result.epsilon, result.claimed, False, result.worst, (*result.reasons, reason), result.extra
        )
