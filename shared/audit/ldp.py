"""Plain ε-LDP with respect to the whole input X [LZG24, Def 2].

ε = max over y, x, x' of log(Q(y|x) / Q(y|x')). It holds for every distribution of the
data, so it needs nothing but Q; for a latent S (X = U) it implies ε-LDP w.r.t. S too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..document import epsilon, matrix_spec, mechanism_matrix
from ..tolerances import AUDIT_TOLERANCE
from .base import AuditResult, as_matrix, log_ratios, worst_case

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
    """Notion ``"ldp"``: ε-LDP w.r.t. every input x (no distribution involved)."""

    name = "ldp"
    #: ε-LDP / (ε, F)-RLDP of R·Q is the same audit on another column-stochastic matrix.
    supports_per_report = True

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        claimed = epsilon(doc)
        spec = matrix_spec(doc)
        if spec is not None and spec.get("form") == "grr":  # two values, not K² entries
            eps = grr_ldp_epsilon(float(spec["diagonal"]), float(spec["off_diagonal"]), int(spec["size"]))
        else:
            eps = ldp_epsilon(mechanism_matrix(doc))
        ok = eps <= claimed + AUDIT_TOLERANCE
        reasons = () if ok else (f"audited LDP epsilon {eps:.12g} exceeds the claimed {claimed:.12g}",)
        return AuditResult(self.name, eps, claimed, ok, {}, reasons)
