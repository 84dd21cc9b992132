"""(ε, δ)-distribution privacy [KM19, Def 3] between every pair P(U|s) over the uncertainty set F.

Its claim is (ε, δ) and its audit computes the smallest δ at the claimed ε (``extra.delta``): the claim
passes when that δ is at most the claimed one. The audit's ``epsilon`` is ε at δ = 0, a different quantity,
never compared with the claimed ε. ε = 0 is a claim ((0, δ)-DistP bounds the total variation by δ).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import AuditOutcome, Notion, number, relation

__all__ = ["DISTP", "NOTIONS"]


class Distp(Notion):
    """(ε, δ)-DistP: judged by its audited δ at the claimed ε."""

    def audit_text(self, audit: Mapping[str, Any], lead: str) -> str:
        extra = audit.get("extra") or {}
        rel = relation(extra.get("delta"), extra.get("delta_claimed"))
        return (
            f"{lead}audited δ = {number(extra.get('delta'))} {rel} claimed δ = {number(extra.get('delta_claimed'))} "
            f"at the claimed ε = {number(audit.get('claimed'))} (ε at δ = 0: {number(audit.get('epsilon'))})"
        )

    def audited_text(self, epsilon_audited: float | None) -> str:
        return f"{number(epsilon_audited)} at δ = 0"

    def drift_claim(self, privacy: Mapping[str, Any], epsilon: float) -> str:
        if "delta" in privacy:
            return f"(ε, δ) = ({epsilon:g}, {float(privacy['delta']):g})"
        return super().drift_claim(privacy, epsilon)

    def audit_lines(self, result: AuditOutcome) -> tuple[dict[str, Any], list[str]]:
        extra = result.extra
        record = {"delta": extra.get("delta_claimed"), "delta_audited": extra.get("delta"), "scope": extra.get("scope")}
        line = (
            f"  delta claimed {extra.get('delta_claimed', 0.0):.6g}, audited {extra.get('delta', 0.0):.6g} at epsilon "
            f"{result.claimed:.6g} {extra.get('scope', '')} ({extra.get('delta_at_p_hat', 0.0):.6g} at P̂)"
        )
        return record, [line]


DISTP = Distp(
    "distp",
    "(ε, δ)-distribution privacy",
    "KM19, Def 3",
    ("epsilon", "delta"),
    ("notion", "epsilon", "delta", "uncertainty"),
    zero_epsilon=True,
    help="(epsilon, delta)-distribution privacy between every pair P(U|s) over the same set F",
    audit="distp:DistpAudit",
    recommended="coupling",
    rank=10,
)

#: The notions this module defines.
NOTIONS = (DISTP,)
