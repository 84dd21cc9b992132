"""Where P̂ and its confidence set come from: public data, or a private pilot. One entry point for both.

Every design path (``rldp design``, the service's design jobs, a collection's switch after its pilot,
the demo and the experiments) designs through :func:`design_from`, so a new source of P̂ is added here
alone. A source gives the centre P̂ of the uncertainty set, fills in the request's set (n and β for
public data, the radius for a pilot) and the document's provenance:

* :class:`PublicData` — the empirical distribution of n public records; F is the (1 − β)-confidence
  Rényi ball of [LZG24, eq 9] (the request's β, default 0.05).
* :class:`PilotData` — a pilot mechanism's report counts; F is the ball of
  :func:`rldp.shared.pilot.pilot_confidence_set` (the smallest ball holding its confidence box) intersected with
  that box (coverage ≥ 1 − β).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from rldp.shared.divergence import confidence_radius
from rldp.shared.document import DocumentView, report_matrix
from rldp.shared.pilot import PilotSet, pilot_confidence_set, pilot_provenance
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet

from ..primitives.errors import DesignParameterError
from ..primitives.options import DEFAULT_BETA, DesignRequest
from .build import design_document
from .pilot_tuning import PilotTuning

__all__ = [
    "PriorSource",
    "PublicData",
    "PilotData",
    "design_from",
    "few_public_rows",
    "MIN_PUBLIC_ROWS",
    "ROWS_PER_CELL",
]

#: P̂ from fewer public rows than max(MIN_PUBLIC_ROWS, ROWS_PER_CELL · |S × U|) gets a warning (``rldp design`` and
#: the service's design jobs). No floor refuses: the confidence radius grows as n shrinks, so the claim
#: stays as true at n = 5 as at 32,561; what is lost is utility (a ball that wide keeps little of X).
MIN_PUBLIC_ROWS = 100
ROWS_PER_CELL = 10


class PriorSource(Protocol):
    """A source of P̂ and of the uncertainty set around it."""

    @property
    def distribution(self) -> np.ndarray: ...

    def bind(self, request: DesignRequest) -> DesignRequest:
        """``request`` with the fields of its uncertainty set that this source determines."""
        ...

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(ℓ, u) when F is the ball intersected with a confidence box (a pilot's), else None."""
        ...

    @property
    def tuning(self) -> PilotTuning | None:
        """What a design optimises for when it is not the centre, and how it stays identifiable (None: the
        centre, as designed)."""
        ...

    def provenance(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PublicData:
    """P̂ from n public records (their counts, :class:`~rldp.shared.provenance.PublicCounts`)."""

    counts: PublicCounts

    @property
    def distribution(self) -> np.ndarray:
        return self.counts.distribution

    def bind(self, request: DesignRequest) -> DesignRequest:
        return replace(request, n=self.counts.n)

    @property
    def box(self) -> None:
        return None

    @property
    def tuning(self) -> None:
        return None

    def provenance(self) -> dict[str, Any]:
        return self.counts.provenance()


@dataclass(frozen=True)
class PilotData:
    """P̂ and F from a pilot: its document (private for every distribution) and its report counts."""

    pilot: Mapping[str, Any]
    counts: Sequence[int]
    beta: float
    collection: str | None = None

    order: float = 2.0  # of the Rényi ball; bind() takes the request's
    contamination: float = 0.0  # γ: the share of the pilot's reports that may have been forged

    @cached_property
    def confidence_set(self) -> PilotSet:
        alphabet = DocumentView.of(self.pilot).alphabet
        return pilot_confidence_set(
            report_matrix(self.pilot),
            self.counts,
            self.beta,
            self.order,
            alphabet.shape,
            contamination=self.contamination,
        )

    @property
    def distribution(self) -> np.ndarray:
        return self.confidence_set.center

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.confidence_set.box

    @property
    def design_point(self) -> np.ndarray:
        """The pilot's unbiased estimate kept in its box and normalised (the box's centre if nothing is left): the
        ball's centre P₀ puts no mass on the cells whose lower bound is 0 and more on the others, so a design
        tuned to P₀ serves the real P less well (docs/design.md, "Tuned to the estimate, kept identifiable")."""
        pset = self.confidence_set
        kept = np.clip(pset.estimate, pset.lower, pset.upper)
        if float(kept.sum()) <= 0:
            kept = (pset.lower + pset.upper) / 2
        return np.asarray(kept / kept.sum(), dtype=float)

    @property
    def tuning(self) -> PilotTuning:
        return PilotTuning(self.design_point)

    def bind(self, request: DesignRequest) -> DesignRequest:
        if request.radius is not None or request.beta is not None:
            raise DesignParameterError(
                "a design over a pilot's confidence set takes its radius from the pilot (give neither radius nor beta)",
                parameter="radius" if request.radius is not None else "beta",
            )
        return replace(request, radius=self.confidence_set.radius, beta=None, n=None)

    def provenance(self) -> dict[str, Any]:
        view = DocumentView.of(self.pilot)
        return pilot_provenance(
            pilot_id=view.id,
            counts=self.counts,
            beta=self.beta,
            columns=[a.name for a in view.alphabet.joint_attributes],
            collection=self.collection,
            contamination=self.contamination,
        )


def design_from(source: PriorSource, request: DesignRequest, alphabet: Alphabet) -> dict[str, Any]:
    """The audited document ``request`` asks for, over the uncertainty set ``source`` gives."""
    return design_document(
        source.bind(request),
        alphabet=alphabet,
        public_distribution=source.distribution,
        provenance=source.provenance(),
        box=source.box,
        tuning=source.tuning,
    )


def few_public_rows(n: int, cells: int, request: DesignRequest) -> str | None:
    """A warning when P̂ rests on few public rows (None when there are enough): the count, the threshold,
    and the radius of the uncertainty set it then has, next to the radius at the threshold."""
    threshold = max(MIN_PUBLIC_ROWS, ROWS_PER_CELL * cells)
    if n >= threshold or cells < 2:
        return None
    beta = float(request.beta) if request.beta is not None else DEFAULT_BETA
    order = float(request.order)
    wide = confidence_radius(threshold, beta, cells, order)
    if request.radius is None:
        radius = f"the {100 * (1 - beta):g} % confidence set around P̂ has radius {confidence_radius(n, beta, cells, order):.3g}"
    else:
        radius = f"the radius given is {float(request.radius):.3g} (the {100 * (1 - beta):g} % confidence radius for {n:,} rows: {confidence_radius(n, beta, cells, order):.3g})"
    return (
        f"only {n:,} public rows for {cells:,} cells of S × U (fewer than {threshold:,}): {radius} nats "
        f"(at {threshold:,} rows: {wide:.3g}), so the design keeps little information; use more public rows if there "
        "are any"
    )
