"""Reading a (validated) mechanism document: the accessors every part uses instead of the raw dict."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..errors import AlphabetError, DocumentError
from ..records import Alphabet
from .forms import expand_matrix, matrix_shape
from .privacy import check_box_form
from .schema import number

__all__ = [
    "mechanism_matrix",
    "matrix_form",
    "matrix_spec",
    "report_matrix",
    "mechanism_shape",
    "report_outputs",
    "PerReport",
    "per_report_layer",
    "public_distribution",
    "alphabet",
    "epsilon",
    "notion",
    "uncertainty_parameters",
]


def _field(doc: Mapping[str, Any], name: str) -> Any:
    try:
        return doc[name]
    except (KeyError, TypeError):
        raise DocumentError(f"document has no field {name!r}") from None


def mechanism_matrix(doc: Mapping[str, Any]) -> np.ndarray:
    """Q as a float64 array of shape (b, a); ``Q[y, x] = Q(y|x)`` (a compact matrix expanded)."""
    matrix = _field(doc, "matrix")
    if isinstance(matrix, Mapping):
        return expand_matrix(matrix)
    q = np.array(matrix, dtype=np.float64)
    if q.ndim != 2:
        raise DocumentError(f"matrix must be 2-D, got shape {q.shape}")
    return q


def matrix_form(doc: Mapping[str, Any]) -> str:
    """How ``matrix`` is written: ``"rows"`` (a list of rows) or a compact form's name (``"grr"``, ...)."""
    matrix = _field(doc, "matrix")
    return str(matrix.get("form")) if isinstance(matrix, Mapping) else "rows"


def matrix_spec(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The compact ``matrix`` object of a (validated) format-3 document, None for a list of rows.

    Why: an audit that exploits a form's structure (GRR's two values) reads it from here.
    """
    matrix = _field(doc, "matrix")
    return matrix if isinstance(matrix, Mapping) else None


def mechanism_shape(doc: Mapping[str, Any]) -> tuple[int, int]:
    """(|Y|, |X|) of a (validated) document's Q, without expanding a compact matrix."""
    matrix = _field(doc, "matrix")
    if isinstance(matrix, Mapping):
        return matrix_shape(matrix)
    return len(matrix), len(matrix[0]) if len(matrix) else 0


def report_outputs(doc: Mapping[str, Any]) -> int:
    """|Y'|, the number of report outputs (R's rows with a per-report layer, else Q's), without building R·Q."""
    layer = per_report_layer(doc)
    return int(layer.matrix.shape[0]) if layer is not None else mechanism_shape(doc)[0]


class PerReport(NamedTuple):
    """The per-report layer of a document (``collection.per_report``)."""

    #: R, shape (|Y'|, |Y|): ``R[y', y] = R(y'|y)``, applied afresh to the memoised y on every report.
    matrix: np.ndarray
    #: ε₁, the single-report guarantee the document claims for R·Q (nats).
    epsilon: float


def per_report_layer(doc: Mapping[str, Any]) -> PerReport | None:
    """The per-report layer (R, ε₁) of a document, or None when it has none."""
    collection = doc.get("collection") if isinstance(doc, Mapping) else None
    layer = collection.get("per_report") if isinstance(collection, Mapping) else None
    if layer is None:
        return None
    if not isinstance(layer, Mapping):
        raise DocumentError(f"collection.per_report must be an object, got {type(layer).__name__}")
    r = np.array(layer.get("matrix"), dtype=np.float64)
    if r.ndim != 2:
        raise DocumentError(f"collection.per_report.matrix must be 2-D, got shape {r.shape}")
    return PerReport(r, number(layer.get("epsilon"), "collection.per_report.epsilon"))


def report_matrix(doc: Mapping[str, Any]) -> np.ndarray:
    """The distribution of one report given x, shape (|Y'|, a): R·Q with a per-report layer, else Q.

    Why one accessor: whatever reads reports (the service's output count, range checks and
    estimates; the client's sampler) must agree on what one report is.
    """
    q = mechanism_matrix(doc)
    layer = per_report_layer(doc)
    return q if layer is None else layer.matrix @ q


def public_distribution(doc: Mapping[str, Any]) -> np.ndarray:
    """P̂ as a float64 array of shape (a1, a2)."""
    p = np.array(_field(doc, "public_distribution"), dtype=np.float64)
    if p.ndim != 2:
        raise DocumentError(f"public_distribution must be 2-D, got shape {p.shape}")
    return p


def alphabet(doc: Mapping[str, Any]) -> Alphabet:
    """The record alphabet of the document (S, U, and whether S is an input)."""
    try:
        return Alphabet.from_dict({"sensitive": _field(doc, "sensitive"), "released": _field(doc, "released")})
    except AlphabetError as exc:
        raise DocumentError(f"sensitive/released: {exc}") from None


def epsilon(doc: Mapping[str, Any]) -> float:
    """The privacy level ε the document claims."""
    privacy = _field(doc, "privacy")
    return number(privacy.get("epsilon") if isinstance(privacy, Mapping) else None, "privacy.epsilon")


def notion(doc: Mapping[str, Any]) -> str:
    """The privacy notion, e.g. ``"rldp"`` (later ``"ldp"``, ``"lip"``, ...)."""
    privacy = _field(doc, "privacy")
    value = privacy.get("notion") if isinstance(privacy, Mapping) else None
    if not isinstance(value, str):
        raise DocumentError(f"privacy.notion must be a string, got {value!r}")
    return value


def uncertainty_parameters(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The uncertainty set F: ``{"divergence", "order", "radius", "n", "beta", "box"}``.

    ``radius`` is a float, ``math.inf`` when the document says null (unbounded);
    ``n`` and ``beta`` are None when absent; ``box`` is None or (ℓ, u), two arrays of P̂'s shape
    (a pilot's confidence box, :mod:`rldp.shared.box_bounds`; checked by the document's validation).
    """
    privacy = _field(doc, "privacy")
    unc = privacy.get("uncertainty") if isinstance(privacy, Mapping) else None
    if not isinstance(unc, Mapping):
        raise DocumentError(f"document (notion {privacy.get('notion')!r}) has no privacy.uncertainty")
    radius = unc.get("radius")
    return {
        "divergence": unc.get("divergence", "renyi"),
        "order": number(unc.get("order"), "privacy.uncertainty.order"),
        "radius": math.inf if radius is None else number(radius, "privacy.uncertainty.radius"),
        "n": unc.get("n"),
        "beta": None if unc.get("beta") is None else number(unc["beta"], "privacy.uncertainty.beta"),
        "box": _box(unc.get("box")),
    }


def _box(value: Any) -> tuple[np.ndarray, np.ndarray] | None:
    if value is None:
        return None
    box = check_box_form(value)
    try:
        return np.array(box["lower"], dtype=np.float64), np.array(box["upper"], dtype=np.float64)
    except (TypeError, ValueError):
        raise DocumentError("privacy.uncertainty.box.lower and .upper must be arrays of numbers") from None
