"""ε-SRLIP [LTS20, Def 3]: audited only (rldp has no designer for it). Over F ⊋ {P̂} its audit is ε-LDP
w.r.t. the input (rldp.shared.audit.srlip), which holds for every distribution: no drift can void it."""

from __future__ import annotations

from .lip import LiftNotion

__all__ = ["SRLIP", "NOTIONS"]


class Srlip(LiftNotion):
    """ε-SRLIP: a lift notion whose claim over a ball larger than {P̂} needs no population."""

    def drift_exemption(self, radius: float) -> str | None:
        if radius > 0:
            return (
                "an srlip claim over F > {P̂} is audited as ε-LDP w.r.t. the input, which holds for every distribution"
            )
        return None


SRLIP = Srlip(
    "srlip",
    "ε-SRLIP",
    "LTS20, Def 3",
    ("epsilon",),
    ("notion", "epsilon", "uncertainty"),
    designable=False,
    help="epsilon-SRLIP (audited only)",
    audit="srlip:SrlipAudit",
    rank=50,
)

#: The notions this module defines.
NOTIONS = (SRLIP,)
