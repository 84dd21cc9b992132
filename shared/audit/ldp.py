"""Plain ε-LDP with respect to the whole input X [LZG24, Def 2].

ε = max over y, x, x' of log(Q(y|x) / Q(y|x')). It holds for every distribution of the
data, so it needs nothing but Q; for a latent S (X = U) it implies ε-LDP w.r.t. S too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..document import epsilon, mechanism_matrix
from ..tolerances import AUDIT_TOLERANCE
from .base import AuditResult, as_matrix, log_ratios, worst_case

__all__ = ["ldp_epsilon", "LdpAudit"]


def ldp_epsilon(matrix: Any) -> float:
    """Ordinary LDP ε w.r.t. X: max_{y, x, x'} log(Q_y|x / Q_y|x') [LZG24, Def 2]."""
    q = as_matrix(matrix)
    eps, _ = worst_case(log_ratios(q.max(axis=1), q.min(axis=1)), ("output",))
    return eps


class LdpAudit:
    """Notion ``"ldp"``: ε-LDP w.r.t. every input x (no distribution involved)."""

    name = "ldp"
    #: ε-LDP / (ε, F)-RLDP of R·Q is the same audit on another column-stochastic matrix.
    supports_per_report = True

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        claimed = epsilon(doc)
        eps = ldp_epsilon(mechanism_matrix(doc))
        ok = eps <= claimed + AUDIT_TOLERANCE
        reasons = () if ok else (f"audited LDP epsilon {eps:.12g} exceeds the claimed {claimed:.12g}",)
        return AuditResult(self.name, eps, claimed, ok, {}, reasons)
