"""The mechanism document: schema, canonical form, content id, (de)serialisation.

The document is the contract between every part (see DESIGN.md, "The
mechanism document").  JSON on disk, the same structure in msgpack on the
wire.  Its ``id`` is the sha256 of the canonical form of every other field,
so a published mechanism can never change under the same id.

Everyone else reads documents through the accessors at the bottom
(:func:`mechanism_matrix`, :func:`alphabet`, ...) rather than the raw dict.
This module validates structure, shapes, stochasticity and the id; it does
not audit privacy (that is ``rldp.shared.audit``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any

import msgpack
import numpy as np

from .records import Alphabet

__all__ = [
    "FORMAT",
    "TOLERANCE",
    "DocumentError",
    "build_document",
    "canonical_bytes",
    "content_id",
    "validate_document",
    "to_json",
    "from_json",
    "to_msgpack",
    "from_msgpack",
    "write_document",
    "read_document",
    "mechanism_matrix",
    "public_distribution",
    "alphabet",
    "epsilon",
    "notion",
    "uncertainty_parameters",
]

FORMAT = "rldp.mechanism/1"
# Column sums of Q and the total of P̂ must be 1 within this.
TOLERANCE = 1e-9
_TOL_TEXT = "±1e-9"

REQUIRED_FIELDS = ("format", "id", "method", "privacy", "sensitive", "released", "public_distribution", "matrix")
# Fields whose numeric leaves are always floats in the canonical form.
_FLOAT_FIELDS = ("matrix", "public_distribution")
_JSON_EXTENSIONS = (".json",)
_MSGPACK_EXTENSIONS = (".msgpack", ".mpk")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class DocumentError(ValueError):
    """A mechanism document that is malformed, inconsistent or cannot be read."""


# --------------------------------------------------------------------------- canonical form


_SCALAR_TYPES = frozenset({int, float, str, bool, type(None)})


def _plain(obj: Any, path: str) -> Any:
    """JSON/msgpack-neutral copy: mappings → dicts, tuples/arrays → lists, numpy scalars → Python."""
    if isinstance(obj, (list, tuple)) and set(map(type, obj)) <= _SCALAR_TYPES:
        return list(obj)  # fast path: a matrix row
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                # JSON would turn the key into a string and change the hash.
                raise DocumentError(f"{path or 'document'}: key {k!r} is not a string")
            out[k] = _plain(v, f"{path}.{k}" if path else k)
        return out
    if isinstance(obj, (list, tuple)):
        return [_plain(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    raise DocumentError(f"{path or 'document'}: value of type {type(obj).__name__} cannot be stored in a document")


def _floats(obj: Any) -> Any:
    # Numeric leaves → float so that 0 and 0.0 (and -0.0) hash alike; others left for validation.
    if isinstance(obj, list):
        if obj and set(map(type, obj)) <= {int, float}:
            # Fast path for a row; + 0.0 turns -0.0 into 0.0.
            return (np.array(obj, dtype=np.float64) + 0.0).tolist()
        return [_floats(v) for v in obj]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj) + 0.0
    return obj


def _canonical_obj(doc: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(doc, Mapping):
        raise DocumentError(f"a mechanism document must be an object (mapping), got {type(doc).__name__}")
    body = _plain({k: v for k, v in doc.items() if k != "id"}, "")
    for field in _FLOAT_FIELDS:
        if field in body:
            body[field] = _floats(body[field])
    return body


def _encode_canonical(body: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:  # NaN or infinity somewhere
        raise DocumentError(f"document contains a non-finite number ({exc}); use null for an unbounded radius") from None
    return text.encode("utf-8")


def canonical_bytes(doc: Mapping[str, Any]) -> bytes:
    """The canonical serialisation of every field except ``id`` (what the id hashes).

    Sorted keys, no whitespace, UTF-8, no NaN/Infinity; entries of ``matrix`` and
    ``public_distribution`` are always floats, tuples become lists, other values
    are kept as given.  JSON and msgpack round trips give the same bytes.
    """
    return _encode_canonical(_canonical_obj(doc))


def content_id(doc: Mapping[str, Any]) -> str:
    """sha256 hex digest of :func:`canonical_bytes` — the document's ``id``."""
    return hashlib.sha256(canonical_bytes(doc)).hexdigest()


# --------------------------------------------------------------------------- building


def _number(value: Any, field: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DocumentError(f"{field} must be a number, got {value!r}")
    return float(value)


def _normalise_privacy(privacy: Mapping[str, Any]) -> dict[str, Any]:
    # One spelling per value (2 vs 2.0, inf vs null) so equal designs get equal ids.
    if not isinstance(privacy, Mapping):
        raise DocumentError(f"privacy must be an object, got {type(privacy).__name__}")
    out = _plain(privacy, "privacy")
    if "epsilon" in out and isinstance(out["epsilon"], (int, float)) and not isinstance(out["epsilon"], bool):
        out["epsilon"] = float(out["epsilon"])
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
    return out


def build_document(
    *,
    method: str,
    matrix: Any,
    alphabet: Alphabet,
    public_distribution: Any,
    privacy: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble, hash and validate a mechanism document.

    ``matrix`` is Q with shape (b, a), ``matrix[y][x] = Q(y|x)``; ``public_distribution``
    is P̂ with shape (a1, a2) (or a flat vector of length a).  ``privacy`` is e.g.
    ``{"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": r, "n": n, "beta": 0.05}}``;
    numbers are normalised (epsilon/order/radius/beta → float, a radius of ``math.inf``
    → ``None`` = unbounded, ``divergence`` defaults to ``"renyi"``).  ``extra`` adds
    optional fields (they are covered by the id); it cannot replace required ones.
    """
    if not isinstance(alphabet, Alphabet):
        raise DocumentError(f"alphabet must be an rldp.shared.records.Alphabet, got {type(alphabet).__name__}")
    q = np.asarray(matrix, dtype=np.float64)
    if q.ndim != 2:
        raise DocumentError(f"matrix must be 2-D (b × a), got shape {q.shape}")
    p = np.asarray(public_distribution, dtype=np.float64)
    if p.ndim == 1 and p.size == alphabet.size:
        p = p.reshape(alphabet.shape)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "id": "",
        "method": method,
        "privacy": _normalise_privacy(privacy),
        **alphabet.to_dict(),
        "public_distribution": (p + 0.0).tolist(),
        "matrix": (q + 0.0).tolist(),
    }
    for key, value in (extra or {}).items():
        if key in doc:
            raise DocumentError(f"extra field {key!r} would replace a required field")
        doc[key] = _plain(value, key)
    out, doc_id = _checked(doc)
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


def _check_privacy(privacy: Any) -> None:
    if not isinstance(privacy, Mapping):
        raise DocumentError(f"privacy must be an object, got {type(privacy).__name__}")
    for key in ("notion", "epsilon"):
        if key not in privacy:
            raise DocumentError(f"privacy is missing required field {key!r}")
    if not isinstance(privacy["notion"], str) or not privacy["notion"]:
        raise DocumentError(f"privacy.notion must be a non-empty string such as 'rldp', got {privacy['notion']!r}")
    eps = _number(privacy["epsilon"], "privacy.epsilon")
    if not (math.isfinite(eps) and eps > 0):
        raise DocumentError(f"privacy.epsilon must be a finite number > 0, got {privacy['epsilon']!r}")
    if privacy["notion"] != "rldp":
        return  # other notions define their own parameters; the audit checks them
    unc = privacy.get("uncertainty")
    if not isinstance(unc, Mapping):
        raise DocumentError("privacy.uncertainty (an object) is required for notion 'rldp'")
    if unc.get("divergence") != "renyi":
        raise DocumentError(f"privacy.uncertainty.divergence must be 'renyi', got {unc.get('divergence')!r}")
    if "order" not in unc:
        raise DocumentError("privacy.uncertainty is missing required field 'order'")
    order = _number(unc["order"], "privacy.uncertainty.order")
    if not (math.isfinite(order) and order > 0):
        raise DocumentError(f"privacy.uncertainty.order must be a finite number > 0, got {unc['order']!r}")
    if "radius" not in unc:
        raise DocumentError("privacy.uncertainty is missing required field 'radius' (null means unbounded)")
    if unc["radius"] is not None:
        radius = _number(unc["radius"], "privacy.uncertainty.radius")
        if not (math.isfinite(radius) and radius >= 0):
            raise DocumentError(f"privacy.uncertainty.radius must be a finite number ≥ 0 or null, got {unc['radius']!r}")
    n = unc.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise DocumentError(f"privacy.uncertainty.n must be a positive integer or absent, got {n!r}")
    beta = unc.get("beta")
    if beta is not None:
        b = _number(beta, "privacy.uncertainty.beta")
        if not 0 < b < 1:
            raise DocumentError(f"privacy.uncertainty.beta must be in (0, 1), got {beta!r}")


def validate_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Check structure, shapes, stochasticity and the id; return a plain-dict copy.

    The copy has lists for tuples, Python numbers for numpy ones and floats in
    ``matrix``/``public_distribution``.  Raises :class:`DocumentError` naming the
    field and what was expected.  The privacy audit is separate (``rldp.shared.audit``).
    """
    out, expected = _checked(doc)
    if out["id"] != expected:
        raise DocumentError(f"id mismatch: document says {out['id']}, content hashes to {expected}")
    return out


def _checked(doc: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Everything but the id comparison: (normalised copy, the id its content hashes to)."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"a mechanism document must be an object (mapping), got {type(doc).__name__}")
    try:
        doc = _plain(doc, "")
    except RecursionError:
        raise DocumentError("document is nested too deeply") from None
    missing = [f for f in REQUIRED_FIELDS if f not in doc]
    if missing:
        raise DocumentError(f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    if doc["format"] != FORMAT:
        raise DocumentError(f"unsupported format {doc['format']!r}; this reader understands {FORMAT!r}")
    if doc["id"] != "" and (not isinstance(doc["id"], str) or not _HEX64.fullmatch(doc["id"])):
        raise DocumentError(f"id must be 64 lowercase hex characters (a sha256), got {doc['id']!r}")
    if not isinstance(doc["method"], str) or not doc["method"]:
        raise DocumentError(f"method must be a non-empty string, got {doc['method']!r}")
    _check_privacy(doc["privacy"])

    try:
        alpha = Alphabet.from_dict({"sensitive": doc["sensitive"], "released": doc["released"]})
    except ValueError as exc:
        raise DocumentError(f"sensitive/released: {exc}") from None
    a1, a2 = alpha.shape

    p = _numeric_matrix(doc["public_distribution"], "public_distribution")
    if p.shape != (a1, a2):
        raise DocumentError(
            f"public_distribution has shape {p.shape[0]}×{p.shape[1]}; expected {a1}×{a2} "
            f"(|{alpha.sensitive.name}| × |U|)"
        )
    _check_entries(p, "public_distribution")
    total = float(p.sum())
    if abs(total - 1.0) > TOLERANCE:
        raise DocumentError(f"public_distribution sums to {total:.12g}; it must sum to 1 ({_TOL_TEXT})")

    matrix = doc["matrix"]
    if isinstance(matrix, (list, tuple)) and len(matrix) == 0:
        raise DocumentError("matrix has no rows; it needs at least one output y")
    if isinstance(matrix, (list, tuple)):
        for i, row in enumerate(matrix):
            if isinstance(row, (list, tuple)) and len(row) != alpha.size:
                raise DocumentError(
                    f"matrix row {i} has {len(row)} entries; expected a = a1·a2 = {alpha.size} ({a1} × {a2})"
                )
    q = _numeric_matrix(matrix, "matrix")
    if q.shape[0] < 1 or q.shape[1] != alpha.size:
        raise DocumentError(f"matrix has shape {q.shape}; expected (b ≥ 1, a = {alpha.size})")
    _check_entries(q, "matrix")
    sums = q.sum(axis=0)
    off = np.abs(sums - 1.0) > TOLERANCE
    if off.any():
        x = int(np.argmax(off))
        raise DocumentError(
            f"matrix column {x} sums to {sums[x]:.12g}; every column must sum to 1 ({_TOL_TEXT})"
        )

    for field in _FLOAT_FIELDS:
        doc[field] = _floats(doc[field])
    body = {k: v for k, v in doc.items() if k != "id"}
    return doc, hashlib.sha256(_encode_canonical(body)).hexdigest()


# --------------------------------------------------------------------------- serialisation


def _pretty(obj: Any, level: int) -> str:
    # indent 1, but lists of scalars (matrix rows, value lists) stay on one line.
    pad = " " * level
    dump = lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False)  # noqa: E731
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f'{pad} {dump(k)}: {_pretty(v, level + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
        return "[\n" + ",\n".join(f"{pad} {_pretty(v, level + 1)}" for v in obj) + f"\n{pad}]"
    return dump(obj)


def to_json(doc: Mapping[str, Any]) -> str:
    """Pretty JSON text of a document (one matrix row per line).  Does not validate."""
    try:
        return _pretty(_plain(doc, ""), 0) + "\n"
    except ValueError as exc:
        if isinstance(exc, DocumentError):
            raise
        raise DocumentError(f"document contains a non-finite number ({exc})") from None


def _reject_constant(name: str) -> Any:
    raise DocumentError(f"not valid JSON for a document: {name} is not allowed")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Duplicate keys would let two parsers see two different documents under one id.
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DocumentError(f"not a valid document: key {k!r} appears twice in one object")
        out[k] = v
    return out


def from_json(text: str | bytes) -> dict[str, Any]:
    """Parse and validate a JSON document."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(f"not a JSON document: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not isinstance(text, str):
        raise DocumentError(f"from_json expects str or bytes, got {type(text).__name__}")
    if not text.strip():
        raise DocumentError("empty document")
    try:
        obj = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise DocumentError("not a valid document: nested too deeply") from None
    return validate_document(obj)


def to_msgpack(doc: Mapping[str, Any]) -> bytes:
    """msgpack bytes of a document (binary type on; floats as float64).  Does not validate."""
    try:
        return msgpack.packb(_plain(doc, ""), use_bin_type=True)
    except (OverflowError, TypeError, ValueError) as exc:
        if isinstance(exc, DocumentError):
            raise
        raise DocumentError(f"document cannot be encoded as msgpack ({exc})") from None


def from_msgpack(data: bytes) -> dict[str, Any]:
    """Parse and validate a msgpack document; any malformed input raises :class:`DocumentError`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DocumentError(f"from_msgpack expects bytes, got {type(data).__name__}")
    if len(data) == 0:
        raise DocumentError("empty document")
    try:
        obj = msgpack.unpackb(bytes(data), raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, ValueError, ...)
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise DocumentError(f"not a valid msgpack document ({type(exc).__name__}{': ' + detail if detail else ''})") from None
    if not isinstance(obj, dict):
        raise DocumentError(f"a mechanism document must be a map, got msgpack {type(obj).__name__}")
    return validate_document(obj)


def _kind(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    if ext in _JSON_EXTENSIONS:
        return "json"
    if ext in _MSGPACK_EXTENSIONS:
        return "msgpack"
    return None


def write_document(doc: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Validate and write a document: JSON for ``.json``, msgpack for ``.msgpack``/``.mpk``.

    The file is replaced atomically, so a reader never sees half a document.
    """
    where = os.fspath(path)
    kind = _kind(where)
    if kind is None:
        raise DocumentError(f"{where}: unknown extension; use .json, .msgpack or .mpk")
    valid = validate_document(doc)
    data = to_json(valid).encode("utf-8") if kind == "json" else to_msgpack(valid)
    tmp = f"{where}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, where)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a document (format by extension; sniffed from the content otherwise)."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise DocumentError(f"{where}: no such file") from None
    except OSError as exc:
        raise DocumentError(f"{where}: cannot read: {exc.strerror or exc}") from None
    kind = _kind(where)
    if kind is None:
        # A JSON object starts with "{" (after whitespace / BOM); msgpack maps never do.
        kind = "json" if data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{" else "msgpack"
    try:
        return from_json(data) if kind == "json" else from_msgpack(data)
    except DocumentError as exc:
        raise DocumentError(f"{where}: {exc}") from None


# --------------------------------------------------------------------------- accessors


def _field(doc: Mapping[str, Any], name: str) -> Any:
    try:
        return doc[name]
    except (KeyError, TypeError):
        raise DocumentError(f"document has no field {name!r}") from None


def mechanism_matrix(doc: Mapping[str, Any]) -> np.ndarray:
    """Q as a float64 array of shape (b, a); ``Q[y, x] = Q(y|x)``."""
    q = np.array(_field(doc, "matrix"), dtype=np.float64)
    if q.ndim != 2:
        raise DocumentError(f"matrix must be 2-D, got shape {q.shape}")
    return q


def public_distribution(doc: Mapping[str, Any]) -> np.ndarray:
    """P̂ as a float64 array of shape (a1, a2)."""
    p = np.array(_field(doc, "public_distribution"), dtype=np.float64)
    if p.ndim != 2:
        raise DocumentError(f"public_distribution must be 2-D, got shape {p.shape}")
    return p


def alphabet(doc: Mapping[str, Any]) -> Alphabet:
    """The record alphabet X = S × U of the document."""
    try:
        return Alphabet.from_dict({"sensitive": _field(doc, "sensitive"), "released": _field(doc, "released")})
    except DocumentError:
        raise
    except ValueError as exc:
        raise DocumentError(f"sensitive/released: {exc}") from None


def epsilon(doc: Mapping[str, Any]) -> float:
    """The privacy level ε the document claims."""
    privacy = _field(doc, "privacy")
    return _number(privacy.get("epsilon") if isinstance(privacy, Mapping) else None, "privacy.epsilon")


def notion(doc: Mapping[str, Any]) -> str:
    """The privacy notion, e.g. ``"rldp"`` (later ``"ldp"``, ``"lip"``, ...)."""
    privacy = _field(doc, "privacy")
    value = privacy.get("notion") if isinstance(privacy, Mapping) else None
    if not isinstance(value, str):
        raise DocumentError(f"privacy.notion must be a string, got {value!r}")
    return value


def uncertainty_parameters(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The uncertainty set F: ``{"divergence", "order", "radius", "n", "beta"}``.

    ``radius`` is a float, ``math.inf`` when the document says null (unbounded);
    ``n`` and ``beta`` are None when absent.
    """
    privacy = _field(doc, "privacy")
    unc = privacy.get("uncertainty") if isinstance(privacy, Mapping) else None
    if not isinstance(unc, Mapping):
        raise DocumentError(f"document (notion {privacy.get('notion')!r}) has no privacy.uncertainty")
    radius = unc.get("radius")
    return {
        "divergence": unc.get("divergence", "renyi"),
        "order": _number(unc.get("order"), "privacy.uncertainty.order"),
        "radius": math.inf if radius is None else _number(radius, "privacy.uncertainty.radius"),
        "n": unc.get("n"),
        "beta": None if unc.get("beta") is None else _number(unc["beta"], "privacy.uncertainty.beta"),
    }
