"""The notion ``ldp``: ε-LDP w.r.t. the secret S [LTS20, Def 1] — for every distribution, or over F.

* A document **without** ``privacy.uncertainty`` (every ldp document written before the funnel
  notions) claims ε-LDP w.r.t. the whole input X [LZG24, Def 2]: ε = max over y, x, x' of
  log(Q(y|x)/Q(y|x')). It needs nothing but Q and holds for every distribution of the data.
  That is ε-LDP w.r.t. S for *every* P_X|S: for a latent S (X = U) exactly
  (max_R Q_y·R / min_R Q_y·R over the whole simplex is max_u Q(y|u)/min_u Q(y|u)), and for S an
  input a sufficient condition ([LZG24, Prop 3]'s pairs s ≠ s' are a subset of all pairs x, x').
  Its audit is unchanged, so every existing ldp document and its id stay valid.
* A document **with** ``privacy.uncertainty`` claims ε-LDP w.r.t. S for every P whose conditionals
  lie in the projected balls F_U|s around P̂_U|s. That condition is (ε, F)-RLDP [LZG24, Def 1]
  (RLDP *is* LDP w.r.t. S demanded for every P ∈ F), so the exact RLDP audit over F′ decides it
  ([LZG24, Thm 1], S latent or an input). Radius 0 is [LTS20, Def 1] at P̂ exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..document import epsilon, matrix_spec, mechanism_matrix
from ..tolerances import AUDIT_TOLERANCE
from .base import AuditResult, as_matrix, log_ratios, worst_case
from .rldp import _result, audit_rldp, confidence_shortfall, document_uncertainty, structured_rldp_epsilon
from .secret import scope

__all__ = ["ldp_epsilon", "grr_ldp_epsilon", "LdpAudit"]


def ldp_epsilon(matrix: Any) -> float:
    """Ordinary LDP ε w.r.t. X: max_{y, x, x'} log(Q_y|x / Q_y|x') [LZG24, Def 2]."""
    q = as_matrix(matrix)
    eps, _ = worst_case(log_ratios(q.max(axis=1), q.min(axis=1)), ("output",))
    return eps


def grr_ldp_epsilon(diagonal: float, off_diagonal: float, size: int) -> float:
    """LDP ε of GRR from its two values: |log(d/o)| (0 on one symbol; inf when exactly one of them is 0)."""
    if size < 2 or diagonal == off_diagonal:
        return 0.0
    if min(diagonal, off_diagonal) == 0:
        return math.inf
    return abs(math.log(diagonal) - math.log(off_diagonal))


class LdpAudit:
    """Notion ``"ldp"``: ε-LDP w.r.t. every input x, or (with an uncertainty set) w.r.t. S over F."""

    name = "ldp"
    #: ε-LDP / (ε, F)-RLDP of R·Q is the same audit on another column-stochastic matrix.
    supports_per_report = True
    #: Compact forms audited from their structure, never expanded (dense_audit_entries).
    structured_forms = ("grr",)

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        claimed = epsilon(doc)
        if isinstance(doc["privacy"], Mapping) and "uncertainty" in doc["privacy"]:
            return self._over_uncertainty(doc, claimed)
        spec = matrix_spec(doc)
        if spec is not None and spec.get("form") == "grr":  # two values, not K² entries
            eps = grr_ldp_epsilon(float(spec["diagonal"]), float(spec["off_diagonal"]), int(spec["size"]))
        else:
            eps = ldp_epsilon(mechanism_matrix(doc))
        ok = eps <= claimed + AUDIT_TOLERANCE
        reasons = () if ok else (f"audited LDP epsilon {eps:.12g} exceeds the claimed {claimed:.12g}",)
        return AuditResult(self.name, eps, claimed, ok, {}, reasons)

    def _over_uncertainty(self, doc: Mapping[str, Any], claimed: float) -> AuditResult:
        uset, params = document_uncertainty(doc)
        spec = matrix_spec(doc)
        structured = None if spec is None else structured_rldp_epsilon(spec, uset)  # GRR: its two values
        result = (
            _result(*structured, claimed)
            if structured is not None
            else audit_rldp(mechanism_matrix(doc), uset, claimed)
        )
        reasons = tuple(
            r.replace("audited epsilon", "audited LDP epsilon w.r.t. S") + f" ({scope(uset.radius)})"
            for r in result.reasons
        )
        shortfall = confidence_shortfall(uset, params)
        if shortfall is not None:
            reasons = (*reasons, shortfall)
        extra = {"scope": scope(uset.radius), "with_respect_to": "S"}
        passed = bool(result.passed) and shortfall is None
        return AuditResult(self.name, result.epsilon, claimed, passed, result.worst, reasons, extra)
