"""What ``rldp audit`` and ``rldp evaluate`` add for the funnel and lift notions (ldp w.r.t. S, lip, alip, srlip)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.shared.audit import AuditResult, lip_leakage, secret_ldp_epsilon
from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import mechanism_matrix
from rldp.shared.lift import lift_measures
from rldp.shared.notions import lookup

from .common import finite, fmt

__all__ = ["audit_sides", "evaluate_lift"]


def audit_sides(result: AuditResult) -> tuple[dict[str, Any], list[str]]:
    """The record fields and lines ``rldp audit`` adds for the notion of ``result``: the notion's own
    (:meth:`rldp.shared.notions.Notion.audit_lines`): both lift sides for lip, alip and srlip, the scope for
    ldp w.r.t. S, δ at the claimed ε for distp."""
    return lookup(result.notion).audit_lines(result)


def evaluate_lift(doc: Mapping[str, Any], dist: np.ndarray, source: str) -> tuple[dict[str, Any], list[str]]:
    """Lift measures [ZDS23, Defs 5–6] and the funnel epsilons under ``dist`` (shape (|S|, |U|))."""
    q = mechanism_matrix(doc)
    if dist.sum() <= 0:
        return {}, []
    leak = lip_leakage(q, dist)
    m = lift_measures(q, dist, alpha=2.0)
    eps_s, _ = secret_ldp_epsilon(q, dist)
    record: dict[str, Any] = {
        "epsilon_ldp_wrt_s": finite(eps_s),
        "epsilon_lip": finite(leak.epsilon),
        "epsilon_lower": finite(leak.lower),
        "epsilon_upper": finite(leak.upper),
        "worst_lower": leak.worst_lower,
        "worst_upper": leak.worst_upper,
        "lift": {k: finite(v) for k, v in m.items()},
    }
    labels = doc_alphabet(doc).sensitive.values
    where_up = leak.worst_upper and f" at output {leak.worst_upper['output']}, s={labels[leak.worst_upper['s']]}"
    where_lo = leak.worst_lower and f" at output {leak.worst_lower['output']}, s={labels[leak.worst_lower['s']]}"
    lines = [
        f"  w.r.t. S under the {source} distribution: LDP epsilon {fmt(eps_s)}, LIP epsilon {fmt(leak.epsilon)} "
        f"(epsilon_lower {fmt(leak.lower)}{where_lo or ''}; epsilon_upper {fmt(leak.upper)}{where_up or ''})",
        f"  lift: max {fmt(m['max_lift'])}, min {fmt(m['min_lift'])}; l1-lift {fmt(m['l1_lift'])}, "
        f"chi2-lift {fmt(m['chi2_lift'])}, 2-lift {fmt(m['alpha_lift'])}; inverse: l1 {fmt(m['l1_lift_inverse'])}, "
        f"chi2 {fmt(m['chi2_lift_inverse'])}, 2 {fmt(m['alpha_lift_inverse'])}",
        f"  T(S;Y) = {fmt(m['total_variation'])}, chi2(S;Y) = {fmt(m['chi2'])}, Sibson I_2(S;Y) = {fmt(m['sibson'])}",
    ]
    return record, lines
