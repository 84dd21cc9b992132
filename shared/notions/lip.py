"""ε-LIP [LTS20, Def 2] and (ε_l, ε_u)-ALIP [ZDS23, Def 3]: every lift P(y|s)/P(y) bounded on both sides.

:class:`LiftNotion` is what the lift notions share (srlip too): their audits report both sides of the lift,
which ``rldp audit`` prints. ALIP bounds each side by its own ε (its block carries both; ε is their max).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import DocumentError
from .base import AuditOutcome, Notion, cli_number, finite, number

__all__ = ["LiftNotion", "LIP", "ALIP", "NOTIONS"]


class LiftNotion(Notion):
    """A notion whose audit reports the two sides of the lift (extra: epsilon_lower/upper, worst_lower/upper)."""

    def audit_lines(self, result: AuditOutcome) -> tuple[dict[str, Any], list[str]]:
        extra = result.extra
        record = {
            "scope": extra.get("scope"),
            "epsilon_lower_audited": finite(extra.get("epsilon_lower", 0.0)),
            "epsilon_upper_audited": finite(extra.get("epsilon_upper", 0.0)),
            "worst": result.worst,
        }
        lines = [
            f"  min-lift side epsilon_lower {cli_number(extra.get('epsilon_lower', 0.0))}, max-lift side "
            f"epsilon_upper {cli_number(extra.get('epsilon_upper', 0.0))} ({extra.get('scope')})"
        ]
        lines += self._claimed_sides(record, extra)
        for side in ("lower", "upper"):
            place = extra.get(f"worst_{side}")
            if place:
                lines.append(f"  worst {side} lift at output {place['output']}, s={place['s']}")
        if "epsilon_upper_at_p_hat" in extra:
            lines.append(
                f"  at P̂: epsilon_lower {cli_number(extra['epsilon_lower_at_p_hat'])}, "
                f"epsilon_upper {cli_number(extra['epsilon_upper_at_p_hat'])}"
            )
        return record, lines

    def _claimed_sides(self, record: dict[str, Any], extra: Mapping[str, Any]) -> list[str]:
        """The claimed sides, when the claim has one per side (none: one ε, already in the verdict)."""
        return []


class Alip(LiftNotion):
    """(ε_l, ε_u)-ALIP: each side of the lift against its own bound."""

    def check_block(self, privacy: Mapping[str, Any], epsilon: float, positive: Callable[[str], float]) -> None:
        lower, upper = positive("epsilon_lower"), positive("epsilon_upper")
        if not math.isclose(epsilon, max(lower, upper), rel_tol=1e-12, abs_tol=0.0):
            raise DocumentError(
                f"privacy.epsilon must be max(epsilon_lower, epsilon_upper) = {max(lower, upper)!r} for notion "
                f"{self.name!r}, got {privacy['epsilon']!r}"
            )

    def audit_text(self, audit: Mapping[str, Any], lead: str) -> str:
        extra = audit.get("extra") or {}
        low, high = extra.get("epsilon_lower"), extra.get("epsilon_upper")
        claim_low, claim_high = extra.get("epsilon_lower_claimed"), extra.get("epsilon_upper_claimed")
        return (
            f"{lead}audited (ε_l, ε_u) = ({number(low)}, {number(high)}) against claimed "
            f"({number(claim_low)}, {number(claim_high)})"
        )

    def audited_text(self, epsilon_audited: float | None) -> str:
        return f"max(ε_l, ε_u) = {number(epsilon_audited)}"

    def drift_claim(self, privacy: Mapping[str, Any], epsilon: float) -> str:
        return f"(ε_l, ε_u) = ({float(privacy['epsilon_lower']):g}, {float(privacy['epsilon_upper']):g})"

    def _claimed_sides(self, record: dict[str, Any], extra: Mapping[str, Any]) -> list[str]:
        record.update(
            epsilon_lower=extra.get("epsilon_lower_claimed"), epsilon_upper=extra.get("epsilon_upper_claimed")
        )
        return [
            f"  claimed epsilon_lower {extra['epsilon_lower_claimed']:.6g}, "
            f"epsilon_upper {extra['epsilon_upper_claimed']:.6g}"
        ]


LIP = LiftNotion(
    "lip",
    "ε-LIP",
    "LTS20, Def 2",
    ("epsilon",),
    ("notion", "epsilon", "uncertainty"),
    help="epsilon-LIP: every lift P(y|s)/P(y) within [e^-epsilon, e^epsilon]",
    audit="lip:LipAudit",
    recommended="optimal",
    rank=30,
    funnel_claim="lift",
    label="LIP",
    optimal_iterates=True,
)

ALIP = Alip(
    "alip",
    "(ε_l, ε_u)-ALIP",
    "ZDS23, Def 3",
    ("epsilon_lower", "epsilon_upper"),
    ("notion", "epsilon", "epsilon_lower", "epsilon_upper", "uncertainty"),
    help="(eps_l, eps_u)-ALIP: every lift within [e^-eps_l, e^eps_u]",
    audit="lip:AlipAudit",
    recommended="optimal",
    rank=40,
    funnel_claim="asymmetric-lift",
    label="ALIP",
    optimal_iterates=True,
)

#: The notions this module defines.
NOTIONS = (LIP, ALIP)
