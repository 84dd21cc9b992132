"""The canonical form of a mechanism document and its content id.

The ``id`` is the sha256 of the canonical serialisation of every other field except ``run``:
sorted keys, no whitespace, UTF-8, no NaN/Infinity, the numeric leaves of ``matrix`` and
``public_distribution`` always floats — so JSON and msgpack round trips hash alike and a
published mechanism can never change under the same id.

``run`` (optional) holds the facts of one design run that another run of the same design
would not repeat (how long it took): left out of the id, so equal designs have equal ids.
Documents written before it existed kept such facts in hashed fields; they read and hash
as before.

A compact ``matrix`` (format 3, :mod:`.forms`) is hashed in its canonical form: its binary
arrays as standard base64 text, so a document hashes alike whether it travelled as JSON (base64) or msgpack (bin).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DocumentError
from .forms import normalise_matrix

__all__ = [
    "FORMAT",
    "FORMAT_2",
    "FORMAT_3",
    "FORMATS",
    "REQUIRED_FIELDS",
    "UNHASHED",
    "canonical_bytes",
    "content_id",
    "plain",
]

FORMAT = "rldp.mechanism/1"
FORMAT_2 = "rldp.mechanism/2"
#: Format 2 plus a compact ``matrix`` object (:mod:`.forms`) instead of a list of rows.
FORMAT_3 = "rldp.mechanism/3"
FORMATS = (FORMAT, FORMAT_2, FORMAT_3)
REQUIRED_FIELDS = ("format", "id", "method", "privacy", "sensitive", "released", "public_distribution", "matrix")
#: Top-level fields the id does not cover: ``id`` itself, and ``run`` (run-dependent facts).
UNHASHED = ("id", "run")
# Fields whose numeric leaves are always floats in the canonical form.
FLOAT_FIELDS = ("matrix", "public_distribution")

# --------------------------------------------------------------------------- canonical form


_SCALAR_TYPES = frozenset({int, float, str, bool, type(None)})


def plain(obj: Any, path: str) -> Any:
    """JSON/msgpack-neutral copy: mappings → dicts, tuples/arrays → lists, numpy scalars → Python."""
    if isinstance(obj, (list, tuple)) and set(map(type, obj)) <= _SCALAR_TYPES:
        return list(obj)  # fast path: a matrix row
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                # JSON would turn the key into a string and change the hash.
                raise DocumentError(f"{path or 'document'}: key {k!r} is not a string")
            out[k] = plain(v, f"{path}.{k}" if path else k)
        return out
    if isinstance(obj, (list, tuple)):
        return [plain(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)) and path.startswith("matrix."):
        return bytes(obj)  # a binary array of a compact matrix (msgpack bin); forms.py checks it
    raise DocumentError(f"{path or 'document'}: value of type {type(obj).__name__} cannot be stored in a document")


def floats(obj: Any) -> Any:
    # Numeric leaves → float so that 0 and 0.0 (and -0.0) hash alike; others left for validation.
    if isinstance(obj, list):
        if obj and set(map(type, obj)) <= {int, float}:
            # Fast path for a row; + 0.0 turns -0.0 into 0.0.
            return (np.array(obj, dtype=np.float64) + 0.0).tolist()
        return [floats(v) for v in obj]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj) + 0.0
    return obj


def _canonical_obj(doc: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(doc, Mapping):
        raise DocumentError(f"a mechanism document must be an object (mapping), got {type(doc).__name__}")
    body = plain({k: v for k, v in doc.items() if k not in UNHASHED}, "")
    for field in FLOAT_FIELDS:
        if field in body:
            body[field] = floats(body[field])
    if isinstance(body.get("matrix"), Mapping):
        body["matrix"], _ = normalise_matrix(body["matrix"])
    return dict(body)


def encode_canonical(body: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:  # NaN or infinity somewhere
        raise DocumentError(
            f"document contains a non-finite number ({exc}); use null for an unbounded radius"
        ) from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, from an escaped JSON string
        raise DocumentError(
            f"document holds a lone surrogate U+{ord(text[exc.start]):04X}; text must be valid Unicode (UTF-8)"
        ) from None


def canonical_bytes(doc: Mapping[str, Any]) -> bytes:
    """The canonical serialisation of every field except ``id`` and ``run`` (what the id hashes).

    Sorted keys, no whitespace, UTF-8, no NaN/Infinity; entries of ``matrix`` and
    ``public_distribution`` are always floats, tuples become lists, other values
    are kept as given.  JSON and msgpack round trips give the same bytes.
    """
    return encode_canonical(_canonical_obj(doc))


def content_id(doc: Mapping[str, Any]) -> str:
    """sha256 hex digest of :func:`canonical_bytes` — the document's ``id``."""
    return hashlib.sha256(canonical_bytes(doc)).hexdigest()
