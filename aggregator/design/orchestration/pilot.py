"""The pilot mechanism: private for every distribution, chosen to learn P̂ fastest, and the switch after it.

A collection without public data starts with a pilot (docs/design.md, "P̂ from a private pilot").
Its mechanism needs no P̂: each candidate claims (ε, F)-RLDP over F = every distribution (radius ∞),
which the exact audit checks like any claim — GRR on X ([LZG24, eq. 56]), SRR ([LZG24, Def 4]) and
PolyOpt over all distributions (only the pairs s ≠ s′ constrained, [LZG24, Thm 3] with B = ∞).
Among those the audit certifies and whose reports identify P (full column rank), the pilot is the
one whose planned n₁ reports would give the smallest confidence radius B at the uniform distribution
(:func:`rldp.shared.pilot.expected_pilot_radius`): a pilot exists to learn P, and B is what the next
design pays for its uncertainty. Where n₁ is too few for every candidate (B = ∞ for all), the radius at
10 n₁, 100 n₁, … decides — the pilot that learns P sooner — and only then the NMI, recorded beside each.

After the pilot, :func:`switch_after_pilot` designs over the pilot's confidence set and decides
whether to switch: never to a mechanism with less utility at P̂ than the pilot's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rldp.shared.collection import DEFAULT_WINDOW, collection_window
from rldp.shared.document import DocumentView, report_matrix
from rldp.shared.errors import ValidationError
from rldp.shared.information import normalized_mutual_information
from rldp.shared.notions import NOTIONS, lookup
from rldp.shared.pilot import expected_pilot_radius
from rldp.shared.records import Alphabet

from ..primitives.errors import DesignError
from ..primitives.options import DesignRequest
from .build import design_document
from .sources import PilotData, design_from

__all__ = ["PILOT_CANDIDATES", "PilotChoice", "design_pilot", "Switch", "switch_after_pilot"]

#: The methods tried as a pilot, each over F = every distribution.
PILOT_CANDIDATES = ("polyopt", "srr", "grr")
# The pilot sizes (n₁ × 10^j) at which the candidates' expected radii are compared, in order (see design_pilot).
_LATER = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class PilotChoice:
    """The chosen pilot document and what every candidate scored."""

    document: dict[str, Any]
    candidates: tuple[dict[str, Any], ...]  # {method, nmi_uniform, expected_radius, identifiable, error?}


def design_pilot(
    alphabet: Alphabet,
    epsilon: float,
    *,
    planned_reports: int,
    beta: float = 0.05,
    time_budget: float = 20.0,
    window: str | None = DEFAULT_WINDOW,
) -> PilotChoice:
    """The pilot mechanism at level ε for ``alphabet`` (see the module docstring); ``planned_reports`` is
    n₁, the pilot's size, at which the candidates' confidence radii are compared. ``window``: the
    collection window of the pilot (and so of its collection; None for none)."""
    if alphabet.latent:
        raise DesignError("a pilot must read S (a latent S cannot be estimated from its reports); use S as an input")
    uniform = np.full(alphabet.shape, 1.0 / alphabet.size)
    scored: list[dict[str, Any]] = []
    best: tuple[tuple[float, ...], dict[str, Any]] | None = None
    for method in PILOT_CANDIDATES:
        request = DesignRequest(method=method, epsilon=epsilon, radius=math.inf, time_budget=time_budget, window=window)
        try:
            doc = design_document(request, alphabet=alphabet, public_distribution=uniform)
        except DesignError as exc:  # e.g. a size a candidate does not design for
            scored.append({"method": method, "error": str(exc)})
            continue
        q = report_matrix(doc)
        nmi = normalized_mutual_information(q, uniform.ravel())
        try:
            radii = tuple(expected_pilot_radius(q, uniform, planned_reports * 10**j, beta) for j in _LATER)
        except ValidationError:  # not of full column rank: cannot identify P
            scored.append({"method": method, "nmi_uniform": nmi, "identifiable": False})
            continue
        scored.append({"method": method, "nmi_uniform": nmi, "expected_radius": radii[0], "identifiable": True})
        # The radius at n₁ decides; where it ties (∞ for every candidate: too few planned reports for the
        # alphabet), the radius at 10×, 100×, … n₁ does — the pilot that learns P sooner — and only then NMI.
        key = (*radii, -nmi)
        if best is None or key < best[0]:
            best = (key, doc)
    if best is None:
        raise DesignError(f"no pilot candidate could be designed: {scored}")
    return PilotChoice(best[1], tuple(scored))


@dataclass(frozen=True)
class Switch:
    """The outcome of a pilot: the designed mechanism, both utilities at the pilot's estimate kept in its box
    (what the design optimised for), and the decision."""

    document: dict[str, Any]  # the mechanism designed over the pilot's confidence set
    switch: bool
    pilot_nmi: float  # the pilot's NMI at that estimate
    nmi: float  # the new mechanism's NMI at that estimate
    radius: float
    reason: str


#: A design replaces the pilot only if its NMI is above the pilot's by more than this share: two designs for every
#: distribution (an unbounded F) can tie up to the solver's round-off, and a switch on a tie would trade a mechanism
#: for an equal one on a solver's noise (seen: 0.0675 against 0.0675, switched or not from run to run).
SWITCH_MARGIN = 1e-6


def switch_after_pilot(
    request: DesignRequest,
    pilot: Mapping[str, Any],
    counts: Sequence[int],
    *,
    beta: float = 0.05,
    collection: str | None = None,
    redesign: bool = False,
    contamination: float = 0.0,
) -> Switch:
    """Design ``request`` over the pilot's confidence set and decide whether to switch to it: only if
    its NMI at the pilot's estimate (kept in its box) is above the pilot's own by more than :data:`SWITCH_MARGIN`
    (else the pilot stays, and the reason says why).

    ``contamination``: the share γ of the reports that may have been forged (the confidence set holds the
    honest users' P whatever they were). ``redesign`` (a collection's drift policy): ``pilot`` is the current mechanism whose population
    drifted out of its F, so its claim may not hold for the people reporting; the design over where they
    are now is switched to whatever its utility — keeping the current mechanism for its NMI would keep a
    claim that is not true of its population (privacy first).

    The design collects by the pilot's window (none if the pilot has none): a collection's mechanisms
    share one window, whatever ``request.window`` says."""
    window = collection_window(pilot)
    alphabet = DocumentView.of(pilot).alphabet
    if redesign and int(np.linalg.matrix_rank(report_matrix(pilot))) < alphabet.size:
        return _back_to_a_pilot(request, pilot, counts, alphabet, None if window is None else window.text)
    source = PilotData(pilot, counts, beta, collection, order=request.order, contamination=contamination)
    request = replace(request, radius=None, beta=None, window=None if window is None else window.text)
    doc = design_from(source, request, alphabet)
    # Both utilities at the pilot's estimate kept in its box (what the design optimised for), not at F's centre.
    p_hat = source.design_point.ravel()
    pilot_nmi = normalized_mutual_information(report_matrix(pilot), p_hat)
    nmi = normalized_mutual_information(report_matrix(doc), p_hat)
    uncertainty = DocumentView.of(doc).uncertainty
    radius = math.inf if uncertainty is None else uncertainty.radius
    if redesign:
        reason = (
            f"redesign: the current mechanism's claim may not hold for its drifted population; the design over "
            f"the live reports' confidence set (radius {radius:.4g}) keeps NMI {nmi:.4f} at their estimate "
            f"(the current one {pilot_nmi:.4f})"
        )
        return Switch(doc, True, pilot_nmi, nmi, radius, reason)
    if nmi > pilot_nmi * (1 + SWITCH_MARGIN):
        reason = (
            f"switch: NMI {nmi:.4f} at the pilot's estimate against the pilot's {pilot_nmi:.4f} (radius {radius:.4g})"
        )
        return Switch(doc, True, pilot_nmi, nmi, radius, reason)
    reason = (
        f"kept the pilot: the design over the pilot's confidence set (radius {radius:.4g} from {sum(counts)} "
        f"reports) keeps NMI {nmi:.4f} at the pilot's estimate, not above the pilot's {pilot_nmi:.4f}; more pilot "
        "reports shrink the radius"
    )
    return Switch(doc, False, pilot_nmi, nmi, radius, reason)


def _back_to_a_pilot(
    request: DesignRequest, current: Mapping[str, Any], counts: Sequence[int], alphabet: Alphabet, window: str | None
) -> Switch:
    """The redesign of a drifted mechanism whose report matrix has rank < |X|: its reports identify only
    QP, not P, so no confidence set for P comes from them alone and no design over one can be certified.
    What can be certified is a pilot private for every distribution (its claim needs no F, so no drift can
    void it): the collection goes back to one, and its switch policy (if any) designs over the new pilot's
    reports once it has them. Only for rldp, the notion pilots are designed for (DesignError otherwise)."""
    rank = int(np.linalg.matrix_rank(report_matrix(current)))
    if not lookup(request.notion).pilots:
        piloted = ", ".join(name for name, entry in NOTIONS.items() if entry.pilots)
        raise DesignError(
            f"the current mechanism's report matrix has rank {rank} < |X| = {alphabet.size}, so its reports cannot "
            f"identify P, and a pilot (private for every distribution) is designed for {piloted} only, not "
            f"{request.notion!r}: rotate the collection to a mechanism designed by hand"
        )
    choice = design_pilot(
        alphabet,
        request.level,
        planned_reports=max(int(sum(counts)), 10_000),
        time_budget=request.time_budget or 20.0,
        window=window,
    )
    p_hat = np.asarray(current["public_distribution"], dtype=float).ravel()
    reason = (
        f"redesign: the current mechanism's report matrix has rank {rank} < |X| = {alphabet.size}, so its reports "
        f"cannot identify P; back to a pilot private for every distribution ({choice.document['method']}), whose "
        "claim holds whatever the population"
    )
    nmi = normalized_mutual_information(report_matrix(choice.document), p_hat)
    current_nmi = normalized_mutual_information(report_matrix(current), p_hat)
    return Switch(choice.document, True, current_nmi, nmi, math.inf, reason)
