"""What a mechanism claims and what its audit found, stated in its notion's own terms.

One home for the words every surface prints (the dashboard, the API's summaries, ``rldp mechanisms``,
``rldp publish``, ``rldp audit``), so no surface reduces a claim to "ε" when it is not one number:

* ``rldp``, ``ldp``, ``lip``, ``srlip``: one ε, and the audit's worst case is compared with it;
* ``distp``: (ε, δ) [KM19, Def 3]: the audit computes the smallest δ at the claimed ε (``extra.delta``)
  and the claim passes when it is at most the claimed δ. Its ``epsilon`` is ε at δ = 0, a different
  quantity, never to be compared with the claimed ε;
* ``alip``: (ε_l, ε_u) [ZDS23, Def 3]: each side against its own bound.

Each notion's object (:mod:`rldp.shared.notions`) states its own audit and its stored number; this module
is what the surfaces call. Text uses ε and δ; :func:`ascii_text` spells them out for a plain terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .notions import DEFAULT_NOTION, NOTIONS, lookup
from .notions.base import SYMBOLS, number

__all__ = [
    "claim_fields",
    "claim_text",
    "audit_text",
    "record_audited_text",
    "ascii_text",
    "number",
    "SYMBOLS",
]


def claim_fields(privacy: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers a document's ``privacy`` claims: ``notion`` and ``epsilon``, with the notion's other
    claim fields (the notion's own: ``delta`` for distp, default 0; ``epsilon_lower``/``epsilon_upper``
    for alip)."""
    notion = str(privacy.get("notion", DEFAULT_NOTION))
    out: dict[str, Any] = {"notion": notion, "epsilon": privacy.get("epsilon")}
    entry = NOTIONS.get(notion)
    for name in entry.claim if entry is not None else ():
        if name != "epsilon":
            out[name] = float(privacy.get(name, 0.0)) if name == "delta" else privacy.get(name)
    return out


def claim_text(privacy: Mapping[str, Any]) -> str:
    """The claim in one phrase, in the notion's own fields: "ε = 1", "(ε, δ) = (1, 0.05)" (distp),
    "(ε_l, ε_u) = (0.5, 1)" (alip)."""
    claim = claim_fields(privacy)
    entry = NOTIONS.get(claim["notion"])
    names = entry.claim if entry is not None else ("epsilon",)
    if len(names) == 1:
        return f"{SYMBOLS[names[0]]} = {number(claim[names[0]])}"
    return f"({', '.join(SYMBOLS[n] for n in names)}) = ({', '.join(number(claim[n]) for n in names)})"


def audit_text(audit: Mapping[str, Any], verdict: bool = True) -> str:
    """The audit's verdict in one line, from :meth:`~rldp.shared.audit.AuditResult.to_dict`: what was
    computed and against what it was compared, led by "Passed: " or "Failed: " (``verdict``)."""
    lead = ("Passed: " if audit.get("passed") else "Failed: ") if verdict else ""
    return lookup(audit.get("notion")).audit_text(audit, lead)


def record_audited_text(notion: str, epsilon_audited: float | None) -> str:
    """What a catalogue's one stored audited number means: ε, or for distp ε at δ = 0 (not the claim's ε)."""
    return lookup(notion).audited_text(epsilon_audited)


def ascii_text(text: str) -> str:
    """``text`` with Greek letters and symbols spelled out (eps, delta, <=, inf)."""
    for greek, plain in (("ε", "eps"), ("δ", "delta"), ("≤", "<="), ("∞", "inf"), ("—", "-")):
        text = text.replace(greek, plain)
    return text
