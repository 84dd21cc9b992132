"""Robust LDP: the exact audit over the uncertainty set, and the measures around it.

* :func:`rldp_epsilon` — the exact robust audit. For every output y and s₁ ≠ s₂ it takes
  the worst case of P(Y=y|S=s₁)/P(Y=y|S=s₂) = (Q_y|s₁·P_U|s₁)/(Q_y|s₂·P_U|s₂) over every
  P whose conditionals lie in the projected balls F_U|s [LZG24, Thm 1]. Those
  conditionals vary independently, so the worst case is max_R Q_y|s₁·R / min_R Q_y|s₂·R,
  both computed by the Lagrange search of :mod:`rldp.shared.uncertainty`. The set
  F' = {P : P_U|s ∈ F_U|s ∀s} contains F, so the result is a valid (ε, F)-RLDP guarantee.
* :func:`all_distributions_epsilon` — (ε, P_X)-RLDP, i.e. F = the whole simplex [LZG24, Prop 3].
* :func:`realised_epsilon` — ε* of [LZG24, Sec 8.3] for one given (true) distribution.

S may be an input (Q has |S|·|U| columns) or latent (Q reads U only, |U| columns:
Q(y|s,u) = Q(y|u)); :func:`~rldp.shared.audit.base.joint_matrix` makes both one case.
A mechanism passes when its audited ε ≤ claimed ε + AUDIT_TOLERANCE: the audit's own
floating-point accuracy (the Lagrange search is accurate to ~1e-12 and rounds towards
leakage); designers keep their own margin below it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..divergence import confidence_radius
from ..document import epsilon, matrix_spec, mechanism_matrix, public_distribution, uncertainty_parameters
from ..errors import ValidationError
from ..tolerances import AUDIT_TOLERANCE, RADIUS_RTOL
from ..uncertainty import UncertaintySet
from .base import AuditResult, as_matrix, joint_matrix, pairwise_worst
from .structured import grr_extremes, grr_values, split_constant_blocks

__all__ = [
    "rldp_epsilon",
    "structured_rldp_epsilon",
    "audit_rldp",
    "all_distributions_epsilon",
    "realised_epsilon",
    "RldpAudit",
    "document_uncertainty",
    "confidence_shortfall",
]


def _pairwise(given: np.ndarray, low: np.ndarray | None = None) -> tuple[float, dict[str, int]]:
    # log(given[y, s1] / low[y, s2]) over s1 ≠ s2, worst (y, s1, s2).
    return pairwise_worst(given, given if low is None else low)


def rldp_epsilon(matrix: Any, uncertainty: UncertaintySet) -> tuple[float, dict[str, int]]:
    """Exact worst-case ε of Q over F' = {P : P_U|s ∈ F_U|s for all s} [LZG24, Thm 1].

    ε = max_{y, s₁ ≠ s₂} log(max_{R ∈ F_U|s₁} Q_y|s₁·R / min_{R ∈ F_U|s₂} Q_y|s₂·R).
    Returns (ε, {"output": y, "s1": s₁, "s2": s₂}) for the worst triple.
    """
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    q = as_matrix(matrix)
    grr = grr_values(q)
    if grr is not None and q.shape[1] in (a1 * a2, a2):  # GRR: closed form from its two values
        hi, lo = grr_extremes(*grr, q.shape[1], uncertainty)
        return _pairwise(hi, lo)
    q = joint_matrix(q, a1, a2)
    hi, lo = split_constant_blocks(q.reshape(-1, a1, a2), uncertainty)
    return _pairwise(hi, np.maximum(lo, 0.0))


def structured_rldp_epsilon(
    spec: Mapping[str, Any], uncertainty: UncertaintySet
) -> tuple[float, dict[str, int]] | None:
    """:func:`rldp_epsilon` from a compact matrix's structure without expanding it, or None when its form has
    no structured audit (GRR: its two values, :mod:`.structured`)."""
    if spec.get("form") != "grr":
        return None
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    size = int(spec["size"])
    if size not in (a1 * a2, a2):
        return None
    hi, lo = grr_extremes(float(spec["diagonal"]), float(spec["off_diagonal"]), size, uncertainty)
    return _pairwise(hi, lo)


def all_distributions_epsilon(matrix: Any, n_sensitive: int, n_released: int | None = None) -> float:
    """ε such that Q is (ε, P_X)-RLDP: max over y and s ≠ s' of log(Q_y|s,u / Q_y|s',u') [LZG24, Prop 3].

    ``n_released`` is needed only for a latent-S matrix (|U| columns).
    """
    if n_sensitive < 2:
        raise ValidationError(f"|S| must be at least 2; got {n_sensitive}")
    cols = np.shape(matrix)[1] if np.ndim(matrix) == 2 else 0
    a2 = n_released if n_released is not None else (cols // n_sensitive if cols % n_sensitive == 0 else -1)
    if a2 < 1:
        raise ValidationError(f"|X| = {cols} is not a multiple of |S| = {n_sensitive}; give n_released for latent S")
    blocks = joint_matrix(matrix, n_sensitive, a2).reshape(-1, n_sensitive, a2)
    eps, _ = _pairwise(blocks.max(axis=2), blocks.min(axis=2))
    return eps


def realised_epsilon(matrix: Any, distribution: Any) -> float:
    """Realised ε* for one distribution P [LZG24, Sec 8.3]:

    ε* = max_{y, s₁, s₂} log(Σ_u Q_y|s₁,u P_u|s₁ / Σ_u Q_y|s₂,u P_u|s₂); +inf if some
    P(Y=y|S=s₂) = 0 < P(Y=y|S=s₁). Values s with P_s = 0 are skipped (no such users).
    """
    p = np.asarray(distribution, dtype=float)
    if p.ndim != 2:
        raise ValidationError(f"distribution must have shape (|S|, |U|); got {p.shape}")
    q = joint_matrix(matrix, p.shape[0], p.shape[1])
    marg = p.sum(axis=1)
    keep = marg > 0
    cond = p[keep] / marg[keep, None]
    rows = q.reshape(q.shape[0], p.shape[0], p.shape[1])
    if not keep.all():  # no copy of Q (128 MB at K = 4,000) when every s has users
        rows = rows[:, keep, :]
    eps, _ = _pairwise(np.einsum("ysu,su->ys", rows, cond))
    return eps


def audit_rldp(matrix: Any, uncertainty: UncertaintySet, claimed: float | None = None) -> AuditResult:
    """Run the exact RLDP audit; ``passed`` compares with ``claimed`` when given."""
    eps, worst = rldp_epsilon(matrix, uncertainty)
    return _result(eps, worst, claimed)


def _result(eps: float, worst: dict[str, int], claimed: float | None) -> AuditResult:
    passed = None if claimed is None else bool(eps <= claimed + AUDIT_TOLERANCE)
    reasons = (
        ()
        if passed in (None, True)
        else (
            f"audited epsilon {eps:.12g} exceeds the claimed {claimed:.12g} at output {worst.get('output')} "
            f"(s1={worst.get('s1')}, s2={worst.get('s2')})",
        )
    )
    return AuditResult("rldp", eps, claimed, passed, worst, reasons)


class RldpAudit:
    """Notion ``"rldp"``: (ε, F)-RLDP over the document's uncertainty set.

    When the document also states ``n`` and ``beta``, its radius must be at least the
    confidence radius they imply (a smaller radius would overstate the confidence level).
    The guarantee is relative to the document's P̂: it holds for the true distribution
    only if that lies in F (with probability 1 − β when P̂ is the empirical distribution
    of n public samples from it).
    """

    name = "rldp"
    #: ε-LDP / (ε, F)-RLDP of R·Q is the same audit on another column-stochastic matrix.
    supports_per_report = True
    #: Compact forms audited from their structure, never expanded (dense_audit_entries).
    structured_forms = ("grr",)

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        claimed = epsilon(doc)
        uset, params = document_uncertainty(doc)
        spec = matrix_spec(doc)
        structured = None if spec is None else structured_rldp_epsilon(spec, uset)
        if structured is not None:
            result = _result(*structured, claimed)
        else:
            result = audit_rldp(mechanism_matrix(doc), uset, claimed)
        reason = confidence_shortfall(uset, params)
        if reason is not None:
            return AuditResult(self.name, result.epsilon, claimed, False, result.worst, (*result.reasons, reason))
        return result


def document_uncertainty(doc: Mapping[str, Any]) -> tuple[UncertaintySet, dict[str, Any]]:
    """The document's uncertainty set F around its P̂, and its ``privacy.uncertainty`` parameters."""
    params = uncertainty_parameters(doc)
    return UncertaintySet(public_distribution(doc), params["radius"], params["order"], params["box"]), params


def confidence_shortfall(uset: UncertaintySet, params: Mapping[str, Any]) -> str | None:
    """Why the stated radius overstates the confidence level, or None.

    When a document states n and β, its radius must be at least the (1 − β)-confidence radius
    they imply [LZG24, eq 9] (less by round-off, ``RADIUS_RTOL``): a smaller set would claim a
    confidence it does not have. Shared by every notion whose guarantee is over F.
    """
    n, beta = params.get("n"), params.get("beta")
    if n is None or beta is None or not math.isfinite(uset.radius):
        return None
    needed = confidence_radius(int(n), float(beta), uset.public_distribution.size, uset.order)
    if uset.radius >= needed * (1 - RADIUS_RTOL):
        return None
    return (
        f"radius {uset.radius:.12g} is smaller than the {1 - beta:g}-confidence radius "
        f"{needed:.12g} implied by n={n} and beta={beta}"
    )
