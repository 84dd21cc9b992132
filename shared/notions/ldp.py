"""ε-LDP w.r.t. S [LTS20, Def 1]: over an uncertainty set F when the block has one, else w.r.t. X for
every distribution. Its designers are the privacy funnel's (an LDP ratio w.r.t. S)."""

from __future__ import annotations

from typing import Any

from .base import AuditOutcome, Notion

__all__ = ["LDP", "NOTIONS"]


class Ldp(Notion):
    """ε-LDP: its audit w.r.t. S says where it holds (``extra.scope``) and the worst pair."""

    def audit_lines(self, result: AuditOutcome) -> tuple[dict[str, Any], list[str]]:
        extra = result.extra
        if "scope" not in extra:  # w.r.t. X: the verdict says it all
            return {}, []
        worst = result.worst
        where = f"output {worst['output']}, s={worst['s1']} vs s'={worst['s2']}" if worst else "nowhere"
        return {"scope": extra["scope"], "worst": worst}, [f"  LDP w.r.t. S {extra['scope']}; worst at {where}"]


LDP = Ldp(
    "ldp",
    "ε-LDP w.r.t. S",
    "LTS20, Def 1",
    ("epsilon",),
    ("notion", "epsilon", "uncertainty"),
    uncertainty="optional",
    help="epsilon-LDP w.r.t. S over F",
    audit="ldp:LdpAudit",
    recommended="optimal",
    rank=20,
    funnel_claim="ratio",
    label="LDP w.r.t. S",
)

#: The notions this module defines.
NOTIONS = (LDP,)
