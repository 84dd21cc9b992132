"""Compact exact forms of a mechanism matrix (format ``rldp.mechanism/3``).

A dense K × K matrix written as JSON numbers grows like K² text (K = 4,000: 16 M floats,
~384 MB). Format 3 lets ``matrix`` be an object naming its *form* instead of a list of rows;
every form stands for exactly one float64 matrix (no rounding on the way), so the audit,
the sampler and the estimators see the same numbers as from the dense rows:

* ``{"form": "grr", "size": k, "diagonal": d, "off_diagonal": o}`` — generalised randomised
  response [LZG24, eq. 56]: Q(y|x) = d if y = x else o (two numbers for k² entries).
* ``{"form": "palette", "shape": [b, a], "index_type": "uint8"|"uint16", "values": <float64>,
  "index": <uint>}`` — a matrix with few distinct entries (IR, SRR, CR, merges of them):
  the distinct values in increasing order and, row-major, each entry's position among them.
* ``{"form": "dense", "shape": [b, a], "data": <float64>}`` — any matrix, row-major.

``<float64>`` / ``<uint>`` are little-endian binary arrays: msgpack ``bin`` on the wire, the
standard padded base64 of the same bytes in JSON. The canonical form (what the id hashes)
always holds the base64 text, so one document gets one id whichever encoding it travelled in.
Entries must be finite and ≥ 0 with no negative zero (−0.0 has other bytes than 0.0, so it
would give one matrix two ids); columns sum to 1 (±1e-9).

New forms (e.g. watchdog merges) are added with :func:`register_form`; :func:`compact_matrix`
asks the registered forms in order for the first one that represents a dense matrix exactly.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from ..errors import DocumentError
from ..probability import check_columns_sum_to_one
from ..tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT
from .arrays import check_floats, decode_array, encode_array, raw_bytes, spec_digest

__all__ = [
    "COMPACT_MIN_ENTRIES",
    "MatrixForm",
    "register_form",
    "matrix_forms",
    "compact_matrix",
    "normalise_matrix",
    "expand_matrix",
    "matrix_shape",
    "for_msgpack",
    "decode_array",
    "encode_array",
]

#: Dense matrices with more entries than this are written in a compact form by default
#: (512 × 512 ≈ 5 MB of JSON text); smaller ones keep the list of rows older readers know.
COMPACT_MIN_ENTRIES = 512 * 512
_PALETTE_MAX_VALUES = 1 << 16


class MatrixForm(Protocol):
    """One compact form of ``matrix``: how it is checked, expanded and found."""

    #: The value of ``matrix.form``.
    name: str
    #: Fields holding little-endian binary arrays (bin in msgpack, base64 in JSON).
    binary_fields: tuple[str, ...]

    def normalise(self, spec: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[int, int]]:
        """Check a spec strictly; return its canonical copy (binary fields as base64) and shape (b, a)."""
        ...

    def expand(self, spec: Mapping[str, Any]) -> np.ndarray:
        """The dense float64 matrix (b, a) of a normalised spec."""
        ...

    def detect(self, q: np.ndarray) -> dict[str, Any] | None:
        """A spec that expands to exactly ``q``, or None."""
        ...


# --------------------------------------------------------------------------- helpers


def _fields(spec: Mapping[str, Any], allowed: tuple[str, ...], form: str) -> None:
    missing = [k for k in allowed if k not in spec]
    if missing:
        raise DocumentError(
            f"matrix (form {form!r}) is missing field {missing[0]!r}; its fields are {', '.join(allowed)}"
        )
    unknown = [k for k in spec if k not in allowed]
    if unknown:
        raise DocumentError(
            f"matrix (form {form!r}) has unknown field {unknown[0]!r}; its fields are {', '.join(allowed)}"
        )


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DocumentError(f"{field} must be a positive integer, got {value!r}")
    return value


def _shape(value: Any, field: str) -> tuple[int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise DocumentError(f"{field} must be [rows, columns] (two positive integers), got {value!r}")
    return _count(value[0], f"{field}[0]"), _count(value[1], f"{field}[1]")


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DocumentError(f"{field} must be a number, got {value!r}")
    out = float(value)
    if not math.isfinite(out) or out < 0 or math.copysign(1.0, out) < 0:
        raise DocumentError(f"{field} is {value!r}; it must be a finite number ≥ 0 (and not −0.0)")
    return out


def _columns_sum_to_one(q: np.ndarray) -> None:
    check_columns_sum_to_one(q, DocumentError)


# --------------------------------------------------------------------------- the forms


class GrrForm:
    """Q(y|x) = diagonal if y = x else off_diagonal, k × k [LZG24, eq. 56]."""

    name = "grr"
    binary_fields: tuple[str, ...] = ()
    _FIELDS = ("form", "size", "diagonal", "off_diagonal")

    def normalise(self, spec: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[int, int]]:
        _fields(spec, self._FIELDS, self.name)
        k = _count(spec["size"], "matrix.size")
        if k < 2:  # one symbol: off_diagonal would be free, so one matrix would have many spellings
            raise DocumentError(f"matrix.size must be at least 2 for form 'grr', got {k}")
        d = _number(spec["diagonal"], "matrix.diagonal")
        o = _number(spec["off_diagonal"], "matrix.off_diagonal")
        total = d + (k - 1) * o
        if abs(total - 1.0) > STOCHASTIC_TOLERANCE:
            raise DocumentError(
                f"matrix columns sum to {total:.12g} (diagonal + (size − 1) · off_diagonal), not 1 "
                f"({STOCHASTIC_TOLERANCE_TEXT}): Q(·|x) is a distribution"
            )
        return {"form": self.name, "size": k, "diagonal": d, "off_diagonal": o}, (k, k)

    def expand(self, spec: Mapping[str, Any]) -> np.ndarray:
        k = int(spec["size"])
        q = np.full((k, k), float(spec["off_diagonal"]))
        np.fill_diagonal(q, float(spec["diagonal"]))
        return q

    def detect(self, q: np.ndarray) -> dict[str, Any] | None:
        k = q.shape[0]
        if q.shape != (k, k) or k < 2:
            return None
        d, o = float(q[0, 0]), float(q[1, 0])
        if not np.all(q.diagonal() == d):
            return None
        same = int(np.count_nonzero(q == o))
        if same != k * k - (0 if d == o else k):
            return None
        return {"form": self.name, "size": k, "diagonal": d, "off_diagonal": o}


class DenseForm:
    """Every entry, row-major, as little-endian float64."""

    name = "dense"
    binary_fields: tuple[str, ...] = ("data",)
    _FIELDS = ("form", "shape", "data")

    def normalise(self, spec: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[int, int]]:
        _fields(spec, self._FIELDS, self.name)
        b, a = _shape(spec["shape"], "matrix.shape")
        data, text = decode_array(spec["data"], "float64", b * a, "matrix.data")
        check_floats(data, "matrix.data")
        _columns_sum_to_one(data.reshape(b, a))
        return {"form": self.name, "shape": [b, a], "data": text}, (b, a)

    def expand(self, spec: Mapping[str, Any]) -> np.ndarray:
        b, a = (int(v) for v in spec["shape"])
        data, _ = decode_array(spec["data"], "float64", b * a, "matrix.data")
        return data.reshape(b, a).astype(np.float64)  # a writable native copy

    def detect(self, q: np.ndarray) -> dict[str, Any] | None:
        return {"form": self.name, "shape": list(q.shape), "data": encode_array(q, "float64")}


class PaletteForm:
    """Few distinct entries: ``values`` (increasing) and each entry's index into them, row-major."""

    name = "palette"
    binary_fields: tuple[str, ...] = ("values", "index")
    _FIELDS = ("form", "shape", "index_type", "values", "index")
    _INDEX_TYPES = ("uint8", "uint16")

    def normalise(self, spec: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[int, int]]:
        _fields(spec, self._FIELDS, self.name)
        b, a = _shape(spec["shape"], "matrix.shape")
        kind = spec["index_type"]
        if kind not in self._INDEX_TYPES:
            raise DocumentError(f"matrix.index_type must be one of {', '.join(self._INDEX_TYPES)}, got {kind!r}")
        raw_values, _ = raw_bytes(spec["values"], "matrix.values")
        if len(raw_values) % 8 or not raw_values:
            raise DocumentError(f"matrix.values holds {len(raw_values)} bytes; expected a positive multiple of 8")
        n = len(raw_values) // 8
        values, values_text = decode_array(spec["values"], "float64", n, "matrix.values")
        check_floats(values, "matrix.values")
        if n > 1 and not np.all(np.diff(values) > 0):
            raise DocumentError("matrix.values must be strictly increasing (each distinct entry once, in order)")
        index, index_text = decode_array(spec["index"], kind, b * a, "matrix.index")
        if int(index.max()) >= n:
            raise DocumentError(f"matrix.index has entry {int(index.max())}; matrix.values has only {n} values")
        if np.count_nonzero(np.bincount(index, minlength=n)) != n:
            raise DocumentError("matrix.values lists a value no entry uses (each distinct entry exactly once)")
        if kind != self._index_type(n):
            raise DocumentError(f"matrix.index_type must be {self._index_type(n)!r} for {n} values (the smallest)")
        _columns_sum_to_one(values[index].reshape(b, a))
        out = {"form": self.name, "shape": [b, a], "index_type": kind, "values": values_text, "index": index_text}
        return out, (b, a)

    @staticmethod
    def _index_type(n: int) -> str:
        return "uint8" if n <= 256 else "uint16"

    def expand(self, spec: Mapping[str, Any]) -> np.ndarray:
        b, a = (int(v) for v in spec["shape"])
        raw, _ = raw_bytes(spec["values"], "matrix.values")
        values, _ = decode_array(spec["values"], "float64", len(raw) // 8, "matrix.values")
        index, _ = decode_array(spec["index"], str(spec["index_type"]), b * a, "matrix.index")
        out: np.ndarray = values.astype(np.float64)[index].reshape(b, a)
        return out

    def detect(self, q: np.ndarray) -> dict[str, Any] | None:
        # A cheap look at two columns first: most designed matrices have many distinct entries.
        if np.unique(q[:, :2]).size > _PALETTE_MAX_VALUES:
            return None
        flat = q.ravel()
        ordered = np.sort(flat)  # sort + searchsorted: several times faster than np.unique(return_inverse=True)
        values = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
        kind = self._index_type(values.size)
        if values.size > _PALETTE_MAX_VALUES or values.size * 8 + flat.size * np.dtype(kind).itemsize >= flat.size * 8:
            return None  # no smaller than the dense form
        index = np.searchsorted(values, flat)
        return {
            "form": self.name,
            "shape": list(q.shape),
            "index_type": kind,
            "values": encode_array(values, "float64"),
            "index": encode_array(index.reshape(-1), kind),
        }


_FORMS: dict[str, MatrixForm] = {}


def register_form(form: MatrixForm) -> MatrixForm:
    """Add a form; :func:`compact_matrix` tries forms in registration order, ``dense`` always last."""
    if form.name in _FORMS and _FORMS[form.name] is not form:
        raise ValueError(f"matrix form {form.name!r} is already registered")
    _FORMS[form.name] = form
    return form


def matrix_forms() -> tuple[str, ...]:
    """The names of the registered forms."""
    return tuple(_FORMS)


register_form(GrrForm())
register_form(PaletteForm())
_DENSE = DenseForm()
register_form(_DENSE)


def _form(spec: Mapping[str, Any]) -> MatrixForm:
    name = spec.get("form")
    try:
        return _FORMS[str(name)] if isinstance(name, str) else _FORMS[""]
    except KeyError:
        raise DocumentError(f"matrix.form must be one of {', '.join(map(repr, _FORMS))}, got {name!r}") from None


def compact_matrix(q: np.ndarray) -> dict[str, Any]:
    """The first registered form that represents ``q`` exactly (``dense`` when none does)."""
    q = np.asarray(q, dtype=np.float64) + 0.0  # + 0.0: no negative zeros
    for name, form in _FORMS.items():
        if name != _DENSE.name:
            spec = form.detect(q)
            if spec is not None:
                return spec
    spec = _DENSE.detect(q)
    assert spec is not None
    return spec


_CHECKED: dict[str, tuple[dict[str, Any], tuple[int, int]]] = {}  # digest of a canonical spec → its result
_CHECKED_MAX = 4


def normalise_matrix(spec: Any) -> tuple[dict[str, Any], tuple[int, int]]:
    """Strictly check a compact ``matrix`` object; (canonical copy, shape (b, a))."""
    if not isinstance(spec, Mapping):
        raise DocumentError(f"matrix must be a list of rows or a compact form object, got {type(spec).__name__}")
    form = _form(spec)
    if not form.binary_fields:
        return form.normalise(spec)
    key = spec_digest(spec)
    if key is not None and key in _CHECKED:
        out, shape = _CHECKED[key]
        return dict(out), shape
    out, shape = form.normalise(spec)
    if key is not None:
        while len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)))
        _CHECKED[key] = (dict(out), shape)
    return out, shape


def expand_matrix(spec: Mapping[str, Any]) -> np.ndarray:
    """The dense float64 matrix of a (validated) compact ``matrix`` object."""
    return _form(spec).expand(spec)


def matrix_shape(spec: Mapping[str, Any]) -> tuple[int, int]:
    """(b, a) of a validated compact matrix, without expanding it."""
    if spec.get("form") == "grr":
        return int(spec["size"]), int(spec["size"])
    b, a = spec["shape"]
    return int(b), int(a)


def for_msgpack(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a compact matrix with its binary fields as bytes (msgpack bin)."""
    out = dict(spec)
    for field in _form(spec).binary_fields:
        value = out.get(field)
        if isinstance(value, str):
            out[field], _ = raw_bytes(value, f"matrix.{field}")
    return out


def for_json(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a compact matrix with its binary fields as base64 text."""
    out = dict(spec)
    for field in _form(spec).binary_fields:
        value = out.get(field)
        if isinstance(value, (bytes, bytearray, memoryview)):
            out[field] = base64.b64encode(bytes(value)).decode("ascii")
    return out
