"""The privacy notions: every notion a document may claim, each one object carrying its behaviour.

A notion (:class:`~.base.Notion`) has its facts — name (``privacy.notion``), claim fields (ε; ε and δ;
ε_l and ε_u), privacy-block fields, whether it needs an uncertainty set F, whether it can be designed (or
is audited only), which privacy-funnel claim its designers enforce, one line of help — and its behaviour:
its block check, how its claim and audit read (:mod:`rldp.shared.claims`), whether drift applies to it,
the lines ``rldp audit`` prints for it. One module here per notion (or family): :mod:`.rldp`,
:mod:`.distp`, :mod:`.ldp`, :mod:`.lip` (lip and alip), :mod:`.srlip`. Each module's ``NOTIONS`` tuple
is found by walking this package: a new notion's module adds no line here.

Everything else reads this registry and asks the notion object, never its name: the privacy-block check
(:mod:`..document.privacy`), the design request's rules and its CLI and HTTP choices, the designers'
registry (each designer declares the notions it serves; a notion may be ``designed_as`` another, by its
designers), the dashboard's form, the drift watch. The exact audit of each notion is registered from
its ``audit`` (``"module:Class"`` in :mod:`rldp.shared.audit`; a test checks the two agree).

Adding a notion (CONTRIBUTING.md, "Adding a notion"): its module here, its audit (a
:class:`~..audit.registry.NotionAudit` in a module of :mod:`rldp.shared.audit`), and — only if no existing
designer serves it — its designer: three files at most.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Mapping
from importlib import import_module
from types import MappingProxyType
from typing import Any

from ..errors import ParameterError
from .base import Notion

__all__ = [
    "Notion",
    "NOTIONS",
    "DESIGN_NOTIONS",
    "FUNNEL_NOTIONS",
    "DEFAULT_NOTION",
    "notion",
    "lookup",
    "register",
    "claim_values",
]

_BY_NAME: dict[str, Notion] = {}
#: Every notion, by name, in the order they are offered (the lowest ``rank`` first: the default).
NOTIONS: Mapping[str, Notion] = MappingProxyType(_BY_NAME)
DEFAULT_NOTION = ""
#: The notions rldp designs for, in the order they are offered.
DESIGN_NOTIONS: tuple[str, ...] = ()
#: The notions whose designers are the privacy-funnel ones.
FUNNEL_NOTIONS: tuple[str, ...] = ()


def register(*notions: Notion) -> None:
    """Add notions to the registry (a name can be registered once). The notion modules of this package
    are registered when it is imported; code that reads the registry at import time (a command line's
    choices, the designers' registry) must be imported after a later registration."""
    global DEFAULT_NOTION, DESIGN_NOTIONS, FUNNEL_NOTIONS
    for new in notions:
        if new.name in _BY_NAME and _BY_NAME[new.name] is not new:
            raise ValueError(f"privacy notion {new.name!r} is defined twice ({_BY_NAME[new.name]!r})")
        _BY_NAME[new.name] = new
    ordered = sorted(_BY_NAME.values(), key=lambda n: n.rank)
    _BY_NAME.clear()
    _BY_NAME.update((n.name, n) for n in ordered)
    DEFAULT_NOTION = ordered[0].name
    DESIGN_NOTIONS = tuple(n.name for n in ordered if n.designable)
    FUNNEL_NOTIONS = tuple(n.name for n in ordered if n.funnel)


def _discover() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            register(*import_module(f"{__name__}.{module.name}").NOTIONS)


_discover()


def notion(name: Any, *, designable: bool = False) -> Notion:
    """The notion called ``name`` (a designable one with ``designable``); ParameterError naming the choices."""
    known = DESIGN_NOTIONS if designable else tuple(NOTIONS)
    if not isinstance(name, str) or name not in known:
        raise ParameterError(f"notion must be one of {', '.join(known)}; got {name!r}", parameter="notion")
    return NOTIONS[name]


def lookup(name: Any) -> Notion:
    """The notion called ``name``, or for a name no notion has (a document written elsewhere, read as it
    stands) a generic one: one ε, judged against the audited ε, resting on no uncertainty set."""
    found = NOTIONS.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    return Notion(str(name), str(name), "", ("epsilon",), None, uncertainty="none", designable=False)


def claim_values(privacy: Mapping[str, Any]) -> dict[str, float]:
    """The claim of a privacy block as {field: value} in the notion's order (δ defaults to 0)."""
    return lookup(privacy.get("notion", "")).claim_values(privacy)
