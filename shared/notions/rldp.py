"""(ε, F)-RLDP [LZG24, Def 1]: every ratio P(y|s)/P(y|s') ≤ e^ε for every P in the uncertainty set F.

The default notion, and the one pilots are designed for (a pilot is private for every distribution).
"""

from __future__ import annotations

from .base import Notion

__all__ = ["RLDP", "NOTIONS"]

RLDP = Notion(
    "rldp",
    "(ε, F)-RLDP",
    "LZG24, Def 1",
    ("epsilon",),
    None,
    help="(epsilon, F)-RLDP: every ratio P(y|s)/P(y|s') <= e^epsilon for every P in F (default)",
    audit="rldp:RldpAudit",
    recommended="polyopt",
    rank=0,
    pilots=True,
)

#: The notions this module defines.
NOTIONS = (RLDP,)
