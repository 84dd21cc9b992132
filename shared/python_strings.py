"""Python strings (lists, tuples, object arrays) to their positions among an attribute's values.

Two implementations with the same results:

- the optional C accelerator :mod:`rldp.shared._string_index` (``shared/_string_index.c``),
  built at install time when a C compiler is present: per value one read of the str's
  header and its first and last 8 bytes, one probe of a small table, and an exact
  comparison (a value is found only if equal to an attribute value);
- the same accelerator reads numpy ``U`` arrays row by row (:meth:`PythonStringCodes.encode_units`)
  where the fixed-width encoder (:mod:`rldp.shared.fixed_width`) has no perfect hash and would
  search (thousands of values);
- a dict lookup per value (one C-level ``dict.__getitem__`` through ``map``), used without
  the accelerator and for items the accelerator leaves to it (str subclasses such as
  ``numpy.str_``, which compare and hash as their text).

Either answers None when some item is not one of the values; the caller's general path
then matches string forms and names the unknown value.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

try:  # built from shared/_string_index.c when a C compiler was there at install time
    from ._string_index import StringIndex
except ImportError:  # pragma: no cover - exercised by installs without a compiler
    StringIndex = None  # type: ignore[misc,assignment]

__all__ = ["PythonStringCodes", "HAVE_NATIVE_STRINGS", "holds_python_objects"]

HAVE_NATIVE_STRINGS = StringIndex is not None

# uint8 codes (the cheapest to write and to scale) for attributes with at most this many values.
_UINT8_VALUES = 256
# The widest numpy string rows (code points) the accelerator reads (MAX_UCS4_WIDTH in the C source).
_MAX_UNITS = 64


def holds_python_objects(values: Any) -> bool:
    """Whether ``values`` is a column these encoders read as it is: a list, a tuple or a 1-D
    object array (Python objects, expected to be str)."""
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "O" and values.ndim == 1
    return isinstance(values, (list, tuple))


class PythonStringCodes:
    """Codes of Python strings among ``values`` (distinct str), given their ``positions`` dict."""

    def __init__(self, values: tuple[str, ...], positions: Mapping[str, int], native: bool = True) -> None:
        self._positions = positions
        self.dtype = np.dtype(np.uint8 if len(values) <= _UINT8_VALUES else np.int64)
        exact = all(type(v) is str for v in values)  # the accelerator compares exact str only
        self._native = StringIndex(values) if native and exact and StringIndex is not None else None

    @property
    def native(self) -> bool:
        """Whether the C accelerator answers (else the dict lookup)."""
        return self._native is not None

    def encode_scaled(self, items: Any, out: np.ndarray, stride: int, accumulate: bool) -> bool:
        """``out = codes·stride`` (``+=`` with ``accumulate``) in one pass of the accelerator
        (``out``: int64, one per item); False, with ``out`` partly written, if the accelerator
        is absent or some item is not one of the values as an exact str."""
        if self._native is None or not len(items):
            return False
        return bool(self._native.encode_scaled(items, out, stride, accumulate) < 0)

    def encode_units(self, arr: np.ndarray) -> np.ndarray | None:
        """Codes (``dtype``) of a 1-D numpy ``U`` array by the accelerator, or None (no
        accelerator, rows wider than it takes, or some row not one of the values)."""
        if self._native is None or arr.ndim != 1 or arr.dtype.kind != "U" or arr.size == 0:
            return None
        width = arr.dtype.itemsize // 4
        if not 0 < width <= _MAX_UNITS:
            return None
        units = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("=")).view(np.uint32)
        out = np.empty(arr.size, dtype=self.dtype)
        return out if self._native.encode_ucs4(units, width, out) < 0 else None

    def encode(self, items: Any) -> np.ndarray | None:
        """Codes (``dtype``) of a non-empty list, tuple or 1-D object array of str, or None
        if some item is not a str equal to one of the values."""
        if self._native is not None:
            out = np.empty(len(items), dtype=self.dtype)
            if self._native.encode(items, out) < 0:
                return out
            # An item the accelerator does not take (a str subclass, or unknown): the dict
            # lookup below decides (it also matches str subclasses by their text).
        lookup = self._positions.__getitem__
        try:
            if self.dtype == np.uint8:  # bytes() of small ints is the cheapest C-level collection (~10 %)
                return np.frombuffer(bytes(map(lookup, items)), dtype=np.uint8)
            return np.fromiter(map(lookup, items), dtype=np.int64, count=len(items))
        except (KeyError, TypeError):
            return None
