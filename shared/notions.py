"""The notion table: every privacy notion a document may claim, defined once.

Per notion: its name (``privacy.notion``), its claim fields (ε; ε and δ; ε_l and ε_u), the fields of
its privacy block, whether it needs an uncertainty set F, whether it can be designed (or is audited
only), whether its designers are the privacy-funnel ones, and one line of help. Everything else reads
this table: the privacy-block check (:mod:`.document.privacy`), the design request's rules and its CLI
and HTTP choices, the designers' registry (each designer declares which of these notions it serves),
and the way a claim is shown. The exact audit of each notion is registered under the same name in
:mod:`.audit.registry` (a test checks the two agree).

Adding a notion: a row here (naming its audit), its audit (a :class:`~.audit.registry.NotionAudit`
in a module of :mod:`rldp.shared.audit`), and the designers that serve it (CONTRIBUTING.md, "Adding a
notion"): three files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .errors import ParameterError

__all__ = [
    "Notion",
    "NOTIONS",
    "DESIGN_NOTIONS",
    "FUNNEL_NOTIONS",
    "DEFAULT_NOTION",
    "notion",
    "claim_values",
]


@dataclass(frozen=True)
class Notion:
    """One privacy notion (see the module docstring)."""

    name: str
    #: How the claim is named to a person, e.g. "(ε, F)-RLDP".
    title: str
    #: Where it is defined (a key of docs/references.md).
    reference: str
    #: The fields of the claim, in the order they are stated: ("epsilon",), ("epsilon", "delta"), …
    claim: tuple[str, ...]
    #: The fields its privacy block may have (None: not restricted).
    block: tuple[str, ...] | None
    #: "required": the block must carry an uncertainty set F; "optional": with one, the claim holds over F,
    #: without one, for every distribution.
    uncertainty: str = "required"
    #: Whether ε = 0 is a claim of this notion ((0, δ)-DistP bounds the total variation by δ).
    zero_epsilon: bool = False
    #: Whether rldp designs for it (else it is audited only).
    designable: bool = True
    #: Whether its designers are the privacy-funnel/lift ones (rldp.aggregator.design.solvers.funnel).
    funnel: bool = False
    #: One line for a person choosing a notion (CLI help, the dashboard's form).
    help: str = ""
    #: Its exact audit, "module:Class" in rldp.shared.audit (registered from this table, by name).
    audit: str = ""
    #: The method a person is offered first (the dashboard's form): the one that keeps the most information
    #: under this claim among the registered designers (a test checks it is registered for the notion).
    recommended: str = ""


_TABLE = (
    Notion(
        "rldp",
        "(ε, F)-RLDP",
        "LZG24, Def 1",
        ("epsilon",),
        None,
        help="(epsilon, F)-RLDP: every ratio P(y|s)/P(y|s') <= e^epsilon for every P in F (default)",
        audit="rldp:RldpAudit",
        recommended="polyopt",
    ),
    Notion(
        "distp",
        "(ε, δ)-distribution privacy",
        "KM19, Def 3",
        ("epsilon", "delta"),
        ("notion", "epsilon", "delta", "uncertainty"),
        zero_epsilon=True,
        help="(epsilon, delta)-distribution privacy between every pair P(U|s) over the same set F",
        audit="distp:DistpAudit",
        recommended="coupling",
    ),
    Notion(
        "ldp",
        "ε-LDP w.r.t. S",
        "LTS20, Def 1",
        ("epsilon",),
        ("notion", "epsilon", "uncertainty"),
        uncertainty="optional",
        funnel=True,
        help="epsilon-LDP w.r.t. S over F",
        audit="ldp:LdpAudit",
        recommended="optimal",
    ),
    Notion(
        "lip",
        "ε-LIP",
        "LTS20, Def 2",
        ("epsilon",),
        ("notion", "epsilon", "uncertainty"),
        funnel=True,
        help="epsilon-LIP: every lift P(y|s)/P(y) within [e^-epsilon, e^epsilon]",
        audit="lip:LipAudit",
        recommended="optimal",
    ),
    Notion(
        "alip",
        "(ε_l, ε_u)-ALIP",
        "ZDS23, Def 3",
        ("epsilon_lower", "epsilon_upper"),
        ("notion", "epsilon", "epsilon_lower", "epsilon_upper", "uncertainty"),
        funnel=True,
        help="(eps_l, eps_u)-ALIP: every lift within [e^-eps_l, e^eps_u]",
        audit="lip:AlipAudit",
        recommended="optimal",
    ),
    Notion(
        "srlip",
        "ε-SRLIP",
        "LTS20, Def 3",
        ("epsilon",),
        ("notion", "epsilon", "uncertainty"),
        designable=False,
        help="epsilon-SRLIP (audited only)",
        audit="srlip:SrlipAudit",
    ),
)

#: Every notion, by name, in the order they are offered (rldp first: the default).
NOTIONS: Mapping[str, Notion] = MappingProxyType({n.name: n for n in _TABLE})
DEFAULT_NOTION = "rldp"
#: The notions rldp designs for, in the order they are offered.
DESIGN_NOTIONS: tuple[str, ...] = tuple(n.name for n in _TABLE if n.designable)
#: The notions whose designers are the privacy-funnel ones.
FUNNEL_NOTIONS: tuple[str, ...] = tuple(n.name for n in _TABLE if n.funnel)


def notion(name: Any, *, designable: bool = False) -> Notion:
    """The notion called ``name`` (a designable one with ``designable``); ParameterError naming the choices."""
    known = DESIGN_NOTIONS if designable else tuple(NOTIONS)
    if not isinstance(name, str) or name not in known:
        raise ParameterError(f"notion must be one of {', '.join(known)}; got {name!r}", parameter="notion")
    return NOTIONS[name]


def claim_values(privacy: Mapping[str, Any]) -> dict[str, float]:
    """The claim of a privacy block as {field: value} in the notion's order (δ defaults to 0)."""
    entry = NOTIONS.get(privacy.get("notion", ""))
    fields = entry.claim if entry is not None else ("epsilon",)
    defaults = {"delta": 0.0}
    return {f: float(privacy.get(f, defaults.get(f, 0.0))) for f in fields}
