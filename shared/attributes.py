"""Attributes: a name and its ordered, distinct string values (for a numeric attribute, its bins' labels).

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .errors import AlphabetError, RecordError, cut_list
from .fixed_width import FixedWidthCodes
from .numeric import NumericSpec, parse_numbers
from .parameters import check_text
from .python_strings import PythonStringCodes, holds_python_objects

__all__ = ["Attribute", "product_strides", "value_product"]

# Error messages list allowed values; beyond this many the list is cut short.
_MAX_LISTED = 50
# Fixed-width string encoders kept per attribute (one per string dtype seen, e.g. <U6, <U18).
_MAX_ENCODERS = 8


def _quote(value: Any) -> str:
    # str() first: repr of a numpy str_ would read "np.str_('x')".
    return repr(str(value)) if isinstance(value, (str, np.str_)) else repr(value)


def _listing(values: Sequence[str]) -> str:
    return cut_list(values, _MAX_LISTED)


def _alphabet_error(message: str, *, parameter: str) -> AlphabetError:
    return AlphabetError(message)


# --------------------------------------------------------------------------- attributes


@dataclass(frozen=True)
class Attribute:
    """An attribute: a name and its ordered, distinct string values.

    A numeric attribute also has ``numeric`` (:class:`~rldp.shared.numeric.NumericSpec`: the bins' edges
    and closed side); its values are the bins' labels, and :meth:`encode` maps numbers to their bins."""

    name: str
    values: tuple[str, ...]
    numeric: NumericSpec | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise AlphabetError(f"attribute name must be a non-empty string, got {self.name!r}")
        check_text(self.name, f"attribute name {self.name!r}", blank=True, error=_alphabet_error)
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Iterable):
            raise AlphabetError(f"attribute {self.name!r}: values must be a sequence of strings")
        values = tuple(str(v) if isinstance(v, np.str_) else v for v in self.values)
        # Frozen dataclass: normalise a list argument to the tuple the type promises.
        object.__setattr__(self, "values", values)
        if not values:
            raise AlphabetError(f"attribute {self.name!r} has no values; need at least 1")
        for v in values:
            if not isinstance(v, str):
                raise AlphabetError(f"attribute {self.name!r}: value {v!r} is not a string")
            if not (v.isascii() and v.isprintable()):  # names and values reach CSV files, terminals, pages
                check_text(v, f"attribute {self.name!r}: value {v!r}", blank=True, error=_alphabet_error)
        seen: set[str] = set()
        for v in values:
            if v in seen:
                raise AlphabetError(f"attribute {self.name!r}: value {v!r} appears more than once")
            seen.add(v)
        if self.numeric is not None:
            if not isinstance(self.numeric, NumericSpec):
                raise AlphabetError(f"attribute {self.name!r}: numeric must be a NumericSpec")
            if self.numeric.bins != len(values):
                raise AlphabetError(
                    f"attribute {self.name!r}: {self.numeric.bins} bins (from {self.numeric.bins + 1} edges) but "
                    f"{len(values)} values; a numeric attribute has one value (label) per bin"
                )

    @classmethod
    def binned(cls, name: str, spec: NumericSpec) -> Attribute:
        """The numeric attribute whose values are the labels of ``spec``'s bins."""
        return cls(name, spec.labels(), spec)

    @property
    def size(self) -> int:
        """Number of values."""
        return len(self.values)

    @cached_property
    def _lookup(self) -> tuple[np.ndarray, np.ndarray]:
        # Sorted values + their positions in ``values``: searchsorted needs sorted keys,
        # but the attribute order (e.g. from a document) need not be sorted.
        arr = np.array(self.values, dtype=str)
        order = np.argsort(arr, kind="stable")
        return arr[order], order.astype(np.int64)

    @cached_property
    def _fixed_width_encoders(self) -> dict[np.dtype, FixedWidthCodes | None]:
        return {}

    def _fixed_width(self, dtype: np.dtype) -> FixedWidthCodes | None:
        # Built once per (attribute, string dtype): a few numpy calls over the values.
        cache = self._fixed_width_encoders
        if dtype not in cache:
            if len(cache) >= _MAX_ENCODERS:
                cache.pop(next(iter(cache)))
            cache[dtype] = FixedWidthCodes.build(self.values, dtype)
        return cache[dtype]

    @cached_property
    def _index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.values)}

    @cached_property
    def python_strings(self) -> PythonStringCodes:
        """The encoder of Python strings (lists, tuples, object arrays) among the values."""
        return PythonStringCodes(self.values, self._index)

    def index(self, value: str) -> int:
        """Position of ``value`` in ``values``; RecordError naming the allowed values if unknown."""
        if self.numeric is not None:
            return int(self.encode_compact([value])[0])
        try:
            return self._index[value]
        except (KeyError, TypeError):
            raise RecordError(self._unknown_message(value)) from None

    def encode(self, values: Any) -> np.ndarray:
        """Vectorised :meth:`index` over a 1-D sequence; returns int64 positions."""
        return self.encode_compact(values).astype(np.int64, copy=False)

    def encode_compact(self, values: Any) -> np.ndarray:
        """:meth:`encode` in the type the lookup produced: uint8 for Python strings of an
        attribute with at most 256 values, else int64 (a caller that scales and sums codes
        saves a conversion pass). A numeric attribute maps numbers (and decimal strings) to their bins
        (:mod:`rldp.shared.numeric`: clamped to [lo, hi]; NaN, infinities and non-numbers refused)."""
        if self.numeric is not None:
            x, labels = parse_numbers(values, self.name, self.values)
            bins = self.numeric.bin_of(np.nan_to_num(x))
            return np.where(labels >= 0, labels, bins)
        if holds_python_objects(values) and len(values):
            # Python strings (a list, or an object array read as it is: no tolist()), looked up
            # one by one (shared/python_strings.py: no string array, no sort).
            codes = self.python_strings.encode(values)
            if codes is not None:
                return codes
            # Other types or an unknown value: the array path matches string forms and names it.
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise RecordError(f"attribute {self.name!r}: expected a 1-D sequence of values, got shape {arr.shape}")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.dtype.kind not in "US":
            # Values are matched by their string form (ints from a parser, objects).
            arr = arr.astype(str)
        fast = self._fixed_width(arr.dtype)
        if arr.dtype.kind == "U" and (fast is None or fast.searches):
            # Thousands of values (or none fits the fixed-width key): the C accelerator reads
            # the rows instead of a binary search, when it is there.
            codes = self.python_strings.encode_units(arr)
            if codes is not None:
                return codes
        if fast is not None:
            codes, bad = fast.encode(arr)
            if bad >= 0:
                value = arr[bad].decode("utf-8", "backslashreplace") if arr.dtype.kind == "S" else arr[bad]
                raise RecordError(f"record {bad}: " + self._unknown_message(value))
            return codes
        if arr.dtype.kind == "S":
            # Bytes are UTF-8 text (S arrays, lists of bytes); undecodable bytes stay distinct.
            arr = np.char.decode(arr, "utf-8", "surrogateescape")
        keys, order = self._lookup
        pos = np.searchsorted(keys, arr)
        np.minimum(pos, keys.size - 1, out=pos)
        ok = keys[pos] == arr
        if not ok.all():
            first = int(np.argmin(ok))
            raise RecordError(f"record {first}: " + self._unknown_message(arr[first]))
        return order[pos]

    def _unknown_message(self, value: Any) -> str:
        return f"unknown value {_quote(value)} for attribute {self.name!r}; allowed: {_listing(self.values)}"

    def to_dict(self) -> dict[str, Any]:
        """The document's form: ``{"name": ..., "values": [...]}``, plus ``"numeric": {"edges", "closed"}``."""
        out: dict[str, Any] = {"name": self.name, "values": list(self.values)}
        if self.numeric is not None:
            out["numeric"] = self.numeric.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attribute:
        """Inverse of :meth:`to_dict`; extra keys are ignored (``numeric`` is read strictly)."""
        if not isinstance(data, Mapping):
            raise AlphabetError(f"attribute must be an object with 'name' and 'values', got {type(data).__name__}")
        for key in ("name", "values"):
            if key not in data:
                raise AlphabetError(f"attribute {data.get('name', '?')!r} is missing {key!r}")
        if not isinstance(data["values"], (list, tuple)):
            raise AlphabetError(f"attribute {data['name']!r}: 'values' must be a list of strings")
        spec = NumericSpec.from_dict(data["numeric"], str(data["name"])) if "numeric" in data else None
        return cls(data["name"], tuple(data["values"]), spec)


def product_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Mixed-radix strides, last attribute fastest: index = Σ_j code_j · strides[j]."""
    strides = [1] * len(sizes)
    for j in range(len(sizes) - 2, -1, -1):
        strides[j] = strides[j + 1] * sizes[j + 1]
    return tuple(strides)


def value_product(value_lists: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Every combination of one value per list, last list fastest (the alphabet's numbering)."""
    out: list[tuple[str, ...]] = [()]
    for values in value_lists:
        out = [(*prefix, v) for prefix in out for v in values]
    return out
