"""What every privacy notion is and does: the :class:`Notion` base, with the behaviour most notions share.

A notion is one object (one module of :mod:`rldp.shared.notions` per notion, or per family) carrying its
facts (claim fields, privacy-block fields, whether it needs an uncertainty set, whether rldp designs for it,
…) and its behaviour, as methods whose defaults fit a claim of one ε judged against the audited ε: its
block check beyond the common one, how its claim and its audit read, whether drift applies to it, the
lines ``rldp audit`` adds for it. A notion that differs overrides the method in its own module; code
elsewhere asks the object and never compares a notion's name (tests/architecture/test_notion_names.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..tolerances import AUDIT_TOLERANCE

__all__ = ["Notion", "AuditOutcome", "number", "relation", "SYMBOLS"]

#: How each claim field is written.
SYMBOLS = {"epsilon": "ε", "delta": "δ", "epsilon_lower": "ε_l", "epsilon_upper": "ε_u"}


def number(value: Any) -> str:
    """A short number: 4 significant digits, ∞ for infinity, — for none."""
    if value is None:
        return "—"
    value = float(value)
    return "∞" if math.isinf(value) else f"{value:.4g}"


def relation(audited: Any, claimed: Any) -> str:
    """ "≤" or ">" between an audited and a claimed number (within the audit's tolerance)."""
    # From the numbers, not the verdict: a claim can fail on something else (a confidence radius).
    if audited is None or claimed is None:
        return ">" if audited is None else "≤"
    return "≤" if float(audited) <= float(claimed) + AUDIT_TOLERANCE else ">"


def cli_number(x: float | None) -> str:
    """A number as the command line prints an audited ε (4 decimals; inf for none)."""
    return "inf" if x is None else f"{x:.4f}"


def finite(x: Any) -> float | None:
    """``x`` as a float, None for none or infinity (JSON has no ∞)."""
    return None if x is None or math.isinf(x) else float(x)


class AuditOutcome(Protocol):
    """What a notion reads of an audit's result (:class:`rldp.shared.audit.AuditResult`; the audits import
    the notions, so not that class itself)."""

    @property
    def notion(self) -> str: ...
    @property
    def claimed(self) -> float | None: ...
    @property
    def worst(self) -> Any: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Notion:
    """One privacy notion: its facts (the fields) and its behaviour (the methods; see the module docstring)."""

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
    #: without one, for every distribution; "none": the claim never rests on one (a notion rldp does not know).
    uncertainty: str = "required"
    #: Whether ε = 0 is a claim of this notion ((0, δ)-DistP bounds the total variation by δ).
    zero_epsilon: bool = False
    #: Whether rldp designs for it (else it is audited only).
    designable: bool = True
    #: One line for a person choosing a notion (CLI help, the dashboard's form).
    help: str = ""
    #: Its exact audit, "module:Class" in rldp.shared.audit (registered from the notions, by name).
    audit: str = ""
    #: The method a person is offered first (the dashboard's form): the one that keeps the most information
    #: under this claim among the registered designers (a test checks it is registered for the notion).
    recommended: str = ""
    #: Where it is offered among the notions (lowest first; the default notion is the lowest).
    rank: int = 100
    #: The privacy-funnel claim its funnel/lift designers enforce (rldp.aggregator.design.solvers.funnel):
    #: "ratio" (an LDP ratio w.r.t. S), "lift" (one bound on both lift sides), "asymmetric-lift" (one per
    #: side); None: its designers are not the funnel's.
    funnel_claim: str | None = None
    #: How a line of ``rldp design`` names its claim (the funnel notions), e.g. "LIP".
    label: str = ""
    #: Whether a pilot (private for every distribution, to collect the counts a design needs) is built for it.
    pilots: bool = False
    #: Another notion whose designers also serve it (besides those whose ``notions`` name it): a new notion
    #: whose mechanisms are designed like an existing one's names it here (aggregator/design/orchestration).
    designed_as: str | None = None
    #: Whether its "optimal" designer iterates (column generation: ``rldp design`` shows its rounds).
    optimal_iterates: bool = False

    @property
    def funnel(self) -> bool:
        """Whether its designers are the privacy-funnel/lift ones."""
        return self.funnel_claim is not None

    @property
    def judged_by_delta(self) -> bool:
        """Whether its claim carries a δ: the audited δ at the claimed ε decides (distp), not the audited ε."""
        return "delta" in self.claim

    @property
    def two_sided(self) -> bool:
        """Whether its claim bounds the two sides of the lift separately, (ε_l, ε_u) (alip)."""
        return "epsilon_lower" in self.claim

    @property
    def form_fields(self) -> tuple[str, ...]:
        """The numbers a design form always asks for its claim (δ is optional: 0 when left empty)."""
        return tuple(f for f in self.claim if f != "delta")

    # ------------------------------------------------------------------ the claim and its block

    def claim_values(self, privacy: Mapping[str, Any]) -> dict[str, float]:
        """The claim of a privacy block as {field: value} in the notion's order (δ defaults to 0)."""
        defaults = {"delta": 0.0}
        return {f: float(privacy.get(f, defaults.get(f, 0.0))) for f in self.claim}

    def check_block(self, privacy: Mapping[str, Any], epsilon: float, positive: Callable[[str], float]) -> None:
        """What its privacy block must satisfy beyond the common check (DocumentError otherwise);
        ``positive(field)``: the field, required and checked as an ε > 0. Nothing by default."""

    def rests_on_uncertainty(self, privacy: Mapping[str, Any]) -> bool:
        """Whether a claim in this block rests on an uncertainty set F (else it holds for every distribution)."""
        return self.uncertainty == "required" or (self.uncertainty == "optional" and "uncertainty" in privacy)

    def drift_exemption(self, radius: float) -> str | None:
        """Why no drift can void a claim over F of this radius (> 0, finite) although it rests on F; None: it can."""
        return None

    # ------------------------------------------------------------------ how it reads

    def audit_text(self, audit: Mapping[str, Any], lead: str) -> str:
        """The audit's verdict in one line (from ``AuditResult.to_dict``), after ``lead``: the audited ε
        against the claimed one."""
        rel = relation(audit.get("epsilon"), audit.get("claimed"))
        return f"{lead}audited ε = {number(audit.get('epsilon'))} {rel} claimed ε = {number(audit.get('claimed'))}"

    def audited_text(self, epsilon_audited: float | None) -> str:
        """What a catalogue's one stored audited number means for this notion."""
        return number(epsilon_audited)

    def drift_claim(self, privacy: Mapping[str, Any], epsilon: float) -> str:
        """The claim as the drift watch states it (3 significant digits)."""
        return f"ε = {epsilon:g}"

    def audit_lines(self, result: AuditOutcome) -> tuple[dict[str, Any], list[str]]:
        """What ``rldp audit`` adds for this notion after its verdict line: record fields and lines."""
        return {}, []
