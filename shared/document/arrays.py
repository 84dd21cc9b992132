"""Little-endian binary arrays of compact matrices: msgpack bin on the wire, canonical base64 in JSON.

Used by :mod:`.forms`. Why strict: two texts for one array (non-zero padding bits) or two byte
strings for one matrix (−0.0 vs 0.0) would give one mechanism two ids.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DocumentError

__all__ = ["encode_array", "decode_array", "raw_bytes", "check_floats", "spec_digest"]


def encode_array(arr: np.ndarray, dtype: str) -> str:
    """Standard padded base64 of ``arr`` as little-endian ``dtype`` (the canonical text)."""
    return base64.b64encode(np.ascontiguousarray(arr, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()).decode(
        "ascii"
    )


def raw_bytes(value: Any, field: str) -> tuple[bytes, str]:
    # (bytes, canonical base64 text) of a binary field given as bytes (msgpack) or base64 (JSON).
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return raw, base64.b64encode(raw).decode("ascii")
    if not isinstance(value, str):
        raise DocumentError(f"{field} must be binary (msgpack bin) or base64 text (JSON), got {type(value).__name__}")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise DocumentError(f"{field} is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with =)") from None
    text = base64.b64encode(raw).decode("ascii")
    if text != value:  # non-zero padding bits: two texts for one array would give two ids
        raise DocumentError(f"{field} is not canonical base64 (its padding bits must be zero)")
    return raw, text


def decode_array(value: Any, dtype: str, count: int, field: str) -> tuple[np.ndarray, str]:
    """(array of ``count`` little-endian ``dtype`` values, canonical base64) of a binary field."""
    raw, text = raw_bytes(value, field)
    dt = np.dtype(dtype).newbyteorder("<")
    if len(raw) != count * dt.itemsize:
        raise DocumentError(
            f"{field} holds {len(raw)} bytes; expected {count} × {dt.itemsize} = {count * dt.itemsize} "
            f"({dtype}, little-endian)"
        )
    return np.frombuffer(raw, dtype=dt, count=count), text


def check_floats(arr: np.ndarray, field: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise DocumentError(f"{field}[{i}] is {float(arr[i])}; entries must be finite")
    neg = np.signbit(arr)
    if neg.any():
        i = int(np.argmax(neg))
        raise DocumentError(f"{field}[{i}] is {float(arr[i])!r}; entries must be ≥ 0 (and not −0.0)")


def spec_digest(spec: Mapping[str, Any]) -> str | None:
    # sha256 of a spec whose binary fields are all base64 text (a parse, a validation or a download
    # check the same document several times; hashing 20 MB is ~20× cheaper than checking it again).
    if not all(isinstance(v, (str, int, float, list)) for v in spec.values()):
        return None
    h = hashlib.sha256()
    for key in sorted(spec):
        value = spec[key]
        text = f"s{value}" if isinstance(value, str) else f"r{value!r}"  # a type tag: "12" is not 12
        h.update(f"{len(key)}:{key}{len(text)}:".encode())
        h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
