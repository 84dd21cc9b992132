"""A typed, read-only view of a mechanism document: parsed once, read as fields.

The document stays the plain dict that is hashed, stored and sent (:mod:`.schema`); library code that reads
it — the service, the design package — parses it once into a :class:`DocumentView` and reads
``view.uncertainty.radius`` instead of chasing ``doc["privacy"]["uncertainty"]["radius"]`` (and forgetting
that null means unbounded, or that δ defaults to 0). Nothing of it is computed from Q: building a view never
expands a compact matrix (its shape is read from the form).

    view = DocumentView.of(doc)          # a validated document (validate_document / build_document / storage)
    view.notion, view.epsilon, view.claim, view.uncertainty, view.alphabet, view.matrix_shape, view.audit
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..claims import claim_fields
from ..collection import Window, collection_window
from ..errors import DocumentError
from ..records import Alphabet
from .access import alphabet, epsilon, mechanism_shape, notion, per_report_layer, report_outputs, uncertainty_parameters

__all__ = ["DocumentView", "UncertaintyView", "AuditView"]


def _frozen(value: Any) -> Mapping[str, Any]:
    """A read-only mapping of ``value`` (an empty one for a missing or non-object field)."""
    return MappingProxyType(dict(value)) if isinstance(value, Mapping) else MappingProxyType({})


@dataclass(frozen=True)
class UncertaintyView:
    """The uncertainty set F = {P : D_α(P̂‖P) ≤ B} a document's claim rests on."""

    divergence: str
    order: float
    #: B in nats; ``math.inf`` when the document says null (every distribution).
    radius: float
    #: The public records behind P̂ and the confidence set's significance level (None when absent).
    n: int | None
    beta: float | None
    #: Whether F is also held to a pilot's confidence box (``privacy.uncertainty.box``).
    boxed: bool = False

    @property
    def bounded(self) -> bool:
        """Whether F is a bounded set (a finite radius), not every distribution."""
        return not math.isinf(self.radius)


@dataclass(frozen=True)
class AuditView:
    """The ``audit`` block a designer stored with the document (not re-computed: see :mod:`rldp.shared.audit`)."""

    passed: bool
    #: The audited ε (``math.inf`` when the block writes null: unbounded, JSON has no infinity).
    epsilon: float
    reasons: tuple[str, ...]
    #: The whole block, read-only (notion-specific entries: ``delta``, ``per_report``, ...).
    fields: Mapping[str, Any]

    @classmethod
    def of(cls, block: Mapping[str, Any]) -> AuditView:
        value = block.get("epsilon")
        eps = math.inf if value is None else float(value)
        return cls(bool(block.get("passed")), eps, tuple(map(str, block.get("reasons") or ())), _frozen(block))


@dataclass(frozen=True)
class DocumentView:
    """What a validated mechanism document says, as typed read-only fields (:meth:`of`)."""

    id: str
    format: str
    method: str
    notion: str
    #: ε the document claims (nats; for alip the max of ε_l, ε_u).
    epsilon: float
    #: The claim in its notion's own fields (:func:`rldp.shared.claims.claim_fields`: notion, ε, δ, ε_l, ε_u).
    claim: Mapping[str, Any]
    #: None when the claim rests on no uncertainty set (ldp with respect to X).
    uncertainty: UncertaintyView | None
    #: (|Y|, |X|) of Q, read without expanding a compact matrix.
    matrix_shape: tuple[int, int]
    #: |Y'|, the report outputs (R's rows with a per-report layer, else Q's).
    outputs: int
    #: The collection window, None without windows.
    window: Window | None
    #: ε₁ of a per-report layer, None without one.
    per_report_epsilon: float | None
    audit: AuditView | None
    utility: Mapping[str, Any]
    parameters: Mapping[str, Any]
    provenance: Mapping[str, Any] | None
    #: ``sensitive`` and ``released`` as the document writes them (:attr:`alphabet` parses them when first read).
    attributes: Mapping[str, Any]

    @functools.cached_property
    def alphabet(self) -> Alphabet:
        """The record alphabet (S, U, whether S is an input); DocumentError if the document's is not valid now
        (parsed on first use: a document stored by an older rldp may hold text this version refuses)."""
        return alphabet(self.attributes)

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> DocumentView:
        """Parse a validated document once (:class:`~rldp.shared.errors.DocumentError` naming a missing field)."""
        privacy = doc.get("privacy")
        if not isinstance(privacy, Mapping):
            raise DocumentError("document has no privacy object")
        unc = None
        if isinstance(privacy.get("uncertainty"), Mapping):
            params = uncertainty_parameters(doc)
            n = params["n"]
            unc = UncertaintyView(
                str(params["divergence"]),
                params["order"],
                params["radius"],
                None if n is None else int(n),
                params["beta"],
                params["box"] is not None,
            )
        layer = per_report_layer(doc)
        audit = doc.get("audit")
        provenance = doc.get("provenance")
        return cls(
            id=str(doc.get("id", "")),
            format=str(doc.get("format", "")),
            method=str(doc.get("method", "")),
            notion=notion(doc),
            epsilon=epsilon(doc),
            claim=MappingProxyType(claim_fields(privacy)),
            uncertainty=unc,
            matrix_shape=mechanism_shape(doc),
            outputs=report_outputs(doc),
            window=collection_window(doc),
            per_report_epsilon=None if layer is None else layer.epsilon,
            audit=AuditView.of(audit) if isinstance(audit, Mapping) else None,
            utility=_frozen(doc.get("utility")),
            parameters=_frozen(doc.get("parameters")),
            provenance=_frozen(provenance) if isinstance(provenance, Mapping) else None,
            attributes=MappingProxyType({"sensitive": doc.get("sensitive"), "released": doc.get("released")}),
        )
