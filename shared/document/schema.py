"""Building and validating mechanism documents: structure, shapes, stochasticity, the id.

Raises :class:`~rldp.shared.errors.DocumentError` naming the field and what was expected
(:class:`~rldp.shared.errors.IdMismatch` when the id is not the content hash). The privacy
audit is separate (:mod:`rldp.shared.audit`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..box_bounds import check_box
from ..collection import validate_collection
from ..errors import AlphabetError, DocumentError, IdMismatch, ValidationError
from ..probability import check_columns_sum_to_one
from ..provenance import validate_provenance
from ..records import Alphabet
from ..tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT
from .canonical import (
    FLOAT_FIELDS,
    FORMAT,
    FORMAT_2,
    FORMAT_3,
    FORMATS,
    REQUIRED_FIELDS,
    UNHASHED,
    encode_canonical,
    floats,
    plain,
)
from .forms import COMPACT_MIN_ENTRIES, compact_matrix, normalise_matrix
from .privacy import check_privacy, number

__all__ = ["MAX_SYMBOLS", "build_document", "validate_document", "number"]

_HEX64 = re.compile(r"[0-9a-f]{64}")

#: The largest alphabet |X| a document may have: what rldp designs for (aggregator.frames). Checked
#: before any matrix is read, because a compact form can stand for a K × K matrix in a few bytes
#: (GRR: 4 numbers; K = 16,384 would be 2 GiB of float64): a hostile document must not make a
#: reader (an app, the server) allocate it.
MAX_SYMBOLS = 8192


# --------------------------------------------------------------------------- building


def _normalise_privacy(privacy: Mapping[str, Any]) -> dict[str, Any]:
    # One spelling per value (2 vs 2.0, inf vs null) so equal designs get equal ids.
    if not isinstance(privacy, Mapping):
        raise DocumentError(f"privacy must be an object, got {type(privacy).__name__}")
    out = plain(privacy, "privacy")
    for key in ("epsilon", "delta", "epsilon_lower", "epsilon_upper"):  # 1 and 1.0 (0 and 0.0): one id
        if key in out and isinstance(out[key], (int, float)) and not isinstance(out[key], bool):
            out[key] = float(out[key])
    unc = out.get("uncertainty")
    if isinstance(unc, dict):
        unc.setdefault("divergence", "renyi")
        for key in ("order", "radius", "beta"):
            v = unc.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                unc[key] = None if (key == "radius" and math.isinf(v) and v > 0) else float(v)
        n = unc.get("n")
        if isinstance(n, float) and n.is_integer():
            unc["n"] = int(n)
        box = unc.get("box")
        if isinstance(box, dict):  # 0 and 0.0: one id, as in public_distribution
            for side in ("lower", "upper"):
                if isinstance(box.get(side), list):
                    box[side] = floats(box[side])
    return dict(out)


def build_document(
    *,
    method: str,
    matrix: Any,
    alphabet: Alphabet,
    public_distribution: Any,
    privacy: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    compact: bool | None = None,
    audit: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble, hash and validate a mechanism document.

    ``matrix`` is Q with shape (b, a), ``matrix[y][x] = Q(y|x)``; ``public_distribution``
    is P̂ with shape (a1, a2) (or a flat vector of length a).  ``privacy`` is e.g.
    ``{"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": r, "n": n, "beta": 0.05}}``;
    numbers are normalised (epsilon/order/radius/beta → float, a radius of ``math.inf``
    → ``None`` = unbounded, ``divergence`` defaults to ``"renyi"``).  ``extra`` adds
    optional fields (they are covered by the id); it cannot replace required ones. A
    per-report layer (``extra["collection"]["per_report"]``) makes the document format 2.

    ``compact``: write ``matrix`` in its compact exact form (:mod:`.forms`: GRR by its two
    values, a palette of distinct entries, or binary float64) — a format-3 document. The
    default (None) does so when Q has more than ``COMPACT_MIN_ENTRIES`` entries, so small
    mechanisms keep the list of rows (and the format) older readers understand. ``matrix`` may
    also be a compact form object already (then the document is format 3).

    ``audit``: called once on the validated content (every field but the id) and its result becomes the
    document's ``audit`` field, hashed with the rest — so a designer audits what it publishes and the
    document is assembled and validated once (not a draft for the audit, then the final). It replaces an
    ``audit`` of ``extra`` in its place (a layer added to an audited document), else comes last. Whatever
    it raises propagates.
    """
    if not isinstance(alphabet, Alphabet):
        raise DocumentError(f"alphabet must be an rldp.shared.records.Alphabet, got {type(alphabet).__name__}")
    spec: dict[str, Any] | None = None
    if isinstance(matrix, Mapping):
        spec, _ = normalise_matrix(matrix)
    else:
        q = np.asarray(matrix, dtype=np.float64)
        if q.ndim != 2:
            raise DocumentError(f"matrix must be 2-D (b × a), got shape {q.shape}")
        if compact or (compact is None and q.size > COMPACT_MIN_ENTRIES):
            spec = compact_matrix(q)
    p = np.asarray(public_distribution, dtype=np.float64)
    if p.ndim == 1 and p.size == math.prod(alphabet.shape):
        p = p.reshape(alphabet.shape)
    collection = (extra or {}).get("collection")
    layered = isinstance(collection, Mapping) and "per_report" in collection
    doc: dict[str, Any] = {
        "format": FORMAT_3 if spec is not None else FORMAT_2 if alphabet.needs_format_2 or layered else FORMAT,
        "id": "",
        "method": method,
        "privacy": _normalise_privacy(privacy),
        **alphabet.to_dict(),
        "public_distribution": (p + 0.0).tolist(),
        "matrix": spec if spec is not None else (q + 0.0).tolist(),
    }
    for key, value in (extra or {}).items():
        if key in doc:
            raise DocumentError(f"extra field {key!r} would replace a required field")
        doc[key] = plain(value, key)
    out, doc_id = _checked(doc)
    if audit is not None:
        out["audit"] = plain(audit(out), "audit")
        doc_id = hashlib.sha256(encode_canonical({k: v for k, v in out.items() if k not in UNHASHED})).hexdigest()
    out["id"] = doc_id
    return out


# --------------------------------------------------------------------------- validation


def _numeric_matrix(value: Any, field: str) -> np.ndarray:
    """A list of equally long lists of numbers (no bools, no strings) as a float64 array."""
    if not isinstance(value, list):
        raise DocumentError(f"{field} must be a list of lists of numbers, got {type(value).__name__}")
    for i, row in enumerate(value):
        if not isinstance(row, list):
            raise DocumentError(f"{field} row {i} must be a list of numbers, got {type(row).__name__}")
        # One set() per row keeps the type check near C speed for large matrices.
        if not set(map(type, row)) <= {int, float}:
            j = next(j for j, v in enumerate(row) if type(v) not in (int, float))
            raise DocumentError(f"{field}[{i}][{j}] must be a number, got {row[j]!r}")
        if len(row) != len(value[0]):
            raise DocumentError(f"{field} row {i} has {len(row)} entries but row 0 has {len(value[0])}")
    try:
        return np.array(value, dtype=np.float64).reshape(len(value), len(value[0]) if value else 0)
    except OverflowError as exc:
        raise DocumentError(f"{field} holds a number too large for a float ({exc})") from None


def _check_entries(arr: np.ndarray, field: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.unravel_index(int(np.argmax(bad)), arr.shape)
        raise DocumentError(f"{field}{''.join(f'[{i}]' for i in idx)} is {float(arr[idx])}; entries must be finite")
    neg = arr < 0
    if neg.any():
        idx = np.unravel_index(int(np.argmax(neg)), arr.shape)
        raise DocumentError(f"{field}{''.join(f'[{i}]' for i in idx)} is {float(arr[idx])!r}; entries must be ≥ 0")


def _check_per_report(layer: Mapping[str, Any], outputs: int, epsilon: float) -> None:
    """R of ``collection.per_report`` (structure checked by validate_collection): |Y'| × |Y| with |Y| = the
    matrix's rows, entries finite and ≥ 0, every column R(·|y) summing to 1; its ε₁ at most the document's ε
    (R·Q is post-processing of Q, so a weaker single-report claim than the long-run one says nothing)."""
    field = "collection.per_report.matrix"
    r = _numeric_matrix(layer["matrix"], field)
    if r.shape[0] < 1 or r.shape[1] != outputs:
        raise DocumentError(
            f"{field} has shape {r.shape[0]}×{r.shape[1]}; expected |Y'| ≥ 1 rows and |Y| = {outputs} columns "
            "(one per output of matrix: R[y'][y] = R(y'|y))"
        )
    _check_entries(r, field)
    try:
        check_columns_sum_to_one(r, DocumentError)
    except DocumentError as exc:
        raise DocumentError(f"{field}: {exc}") from None
    if float(layer["epsilon"]) > epsilon:
        raise DocumentError(
            f"collection.per_report.epsilon is {layer['epsilon']!r}, more than privacy.epsilon {epsilon!r}; the "
            "single-report guarantee must be at most the long-run one"
        )


def validate_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Check structure, shapes, stochasticity and the id; return a plain-dict copy.

    The copy has lists for tuples, Python numbers for numpy ones and floats in
    ``matrix``/``public_distribution``.  Raises :class:`DocumentError` naming the
    field and what was expected.  The privacy audit is separate (``rldp.shared.audit``).
    """
    out, expected = _checked(doc)
    if out["id"] != expected:
        raise IdMismatch(f"id mismatch: document says {out['id']}, content hashes to {expected}", out["id"], expected)
    return out


def _checked(doc: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Everything but the id comparison: (normalised copy, the id its content hashes to)."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"a mechanism document must be an object (mapping), got {type(doc).__name__}")
    try:
        out: dict[str, Any] = plain(doc, "")
    except RecursionError:
        raise DocumentError("document is nested too deeply") from None
    missing = [f for f in REQUIRED_FIELDS if f not in out]
    if missing:
        raise DocumentError(f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    if out["format"] not in FORMATS:
        raise DocumentError(f"unsupported format {out['format']!r}; this reader understands {', '.join(FORMATS)}")
    if out["id"] != "" and (not isinstance(out["id"], str) or not _HEX64.fullmatch(out["id"])):
        raise DocumentError(f"id must be 64 lowercase hex characters (a sha256), got {out['id']!r}")
    if not isinstance(out["method"], str) or not out["method"]:
        raise DocumentError(f"method must be a non-empty string, got {out['method']!r}")
    check_privacy(out["privacy"])
    if "collection" in out:
        validate_collection(out["collection"])
    if "provenance" in out:
        validate_provenance(out["provenance"])
    if "run" in out and not isinstance(out["run"], dict):
        raise DocumentError(
            f"run must be an object (facts of one design run, not covered by the id), got {out['run']!r}"
        )

    try:
        alpha = Alphabet.from_dict({"sensitive": out["sensitive"], "released": out["released"]})
    except AlphabetError as exc:
        raise DocumentError(f"sensitive/released: {exc}") from None
    if alpha.size > MAX_SYMBOLS:
        raise DocumentError(
            f"the alphabet has |X| = {alpha.size:,} symbols; documents may have at most {MAX_SYMBOLS:,} "
            "(the largest alphabet rldp designs for)"
        )
    if alpha.needs_format_2 and out["format"] == FORMAT:
        raise DocumentError(f"several or latent sensitive attributes need format {FORMAT_2!r}, not {out['format']!r}")
    a1, a2 = alpha.shape
    inputs = "a = a2" if alpha.latent else "a = a1·a2"

    p = _numeric_matrix(out["public_distribution"], "public_distribution")
    if p.shape != (a1, a2):
        raise DocumentError(f"public_distribution has shape {p.shape[0]}×{p.shape[1]}; expected {a1}×{a2} (|S| × |U|)")
    _check_entries(p, "public_distribution")
    total = float(p.sum())
    if abs(total - 1.0) > STOCHASTIC_TOLERANCE:
        raise DocumentError(f"public_distribution sums to {total:.12g}; it must sum to 1 ({STOCHASTIC_TOLERANCE_TEXT})")
    unc = out["privacy"].get("uncertainty")
    box = unc.get("box") if isinstance(unc, Mapping) else None  # a notion rldp does not know is not checked
    if isinstance(box, Mapping):
        try:
            check_box(box.get("lower"), box.get("upper"), (a1, a2))
        except ValidationError as exc:
            raise DocumentError(f"privacy.uncertainty.{exc}") from None

    matrix = out["matrix"]
    if isinstance(matrix, Mapping):
        if out["format"] != FORMAT_3:
            raise DocumentError(
                f"matrix must be a list of lists of numbers in format {out['format']!r}; a compact matrix (an object) "
                f"needs format {FORMAT_3!r}, which older readers refuse"
            )
        out["matrix"], (outputs, inputs_count) = normalise_matrix(matrix)
        if inputs_count != alpha.size:
            raise DocumentError(f"matrix has {inputs_count} columns; expected {inputs} = {alpha.size} ({a1} × {a2})")
    else:
        outputs = _dense_matrix(matrix, alpha.size, inputs, a1, a2)
    if "collection" in out and "per_report" in out["collection"]:
        if out["format"] == FORMAT:
            raise DocumentError(
                f"a per-report layer (collection.per_report) needs format {FORMAT_2!r}, not {out['format']!r}: "
                "a format-1 reader would send the memoised output itself"
            )
        _check_per_report(out["collection"]["per_report"], outputs, number(out["privacy"]["epsilon"], "epsilon"))

    for field in FLOAT_FIELDS:
        out[field] = floats(out[field])
    body = {k: v for k, v in out.items() if k not in UNHASHED}
    return out, hashlib.sha256(encode_canonical(body)).hexdigest()


def _dense_matrix(matrix: Any, size: int, inputs: str, a1: int, a2: int) -> int:
    """Check a matrix given as a list of rows (formats 1 and 2); return its number of rows."""
    if isinstance(matrix, (list, tuple)) and len(matrix) == 0:
        raise DocumentError("matrix has no rows; it needs at least one output y")
    if isinstance(matrix, (list, tuple)):
        for i, row in enumerate(matrix):
            if isinstance(row, (list, tuple)) and len(row) != size:
                raise DocumentError(f"matrix row {i} has {len(row)} entries; expected {inputs} = {size} ({a1} × {a2})")
    q = _numeric_matrix(matrix, "matrix")
    if q.shape[0] < 1 or q.shape[1] != size:
        raise DocumentError(f"matrix has shape {q.shape}; expected (b ≥ 1, a = {size})")
    _check_entries(q, "matrix")
    check_columns_sum_to_one(q, DocumentError)
    return int(q.shape[0])
