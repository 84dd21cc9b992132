"""The record alphabet and record encoding.

A record holds the sensitive attributes S (one or several; S is their product) and the
released attributes (their product is U). The mechanism's input X is

* X = S × U when S is *released* (an input of the mechanism, as in RLDP [LZG24, Sec 2]),
  numbered with s major, attributes in listed order and the last one fastest:
  x = s·|U| + u;
* X = U when S is *latent* (the privacy funnel [LTS20, Sec II]: the mechanism never reads
  S, but S is correlated with U and must be protected).

Either way the public distribution P̂ is the joint over S × U, shape (|S|, |U|), with the
same numbering. This is the numbering the mechanism document uses for the columns of Q
and for ``public_distribution``.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .attributes import Attribute, product_strides, value_product
from .columns import (
    as_columns,
    as_str,
    python_values,
    record_field,
    record_tuple,
)
from .errors import AlphabetError, RecordError, TableError
from .numeric import NumericSpec
from .python_strings import holds_python_objects
from .tables import Table

__all__ = ["Alphabet", "Attribute", "product_strides"]

#: How the values of several sensitive attributes are joined into one label ("Female|White").
LABEL_SEPARATOR = "|"


def _as_attributes(value: Attribute | Sequence[Attribute], what: str) -> tuple[Attribute, ...]:
    attrs = (value,) if isinstance(value, Attribute) else tuple(value)
    for attr in attrs:
        if not isinstance(attr, Attribute):
            raise AlphabetError(f"{what}: expected Attribute objects, got {type(attr).__name__}")
    return attrs


class Alphabet:
    """The record space: sensitive attributes S, released attributes U, and the input X.

    ``Alphabet(sensitive, released, latent=False)``: ``sensitive`` is one
    :class:`Attribute` or a sequence of them (S is their product, last fastest); with
    ``latent=True`` the mechanism's input is U alone. With no released attributes |U| = 1.
    """

    def __init__(
        self, sensitive: Attribute | Sequence[Attribute], released: Sequence[Attribute] = (), *, latent: bool = False
    ) -> None:
        sens = _as_attributes(sensitive, "sensitive")
        rel = _as_attributes(tuple(released), "released")
        if not sens:
            raise AlphabetError("at least one sensitive attribute is required")
        names = [a.name for a in (*sens, *rel)]
        for i, name in enumerate(names):
            if name in names[:i]:
                what = "a sensitive attribute" if name in names[: len(sens)] else "a released attribute"
                raise AlphabetError(f"attribute {name!r} is listed twice (it is already {what})")
        a1 = math.prod(a.size for a in sens)
        if a1 < 2:
            if len(sens) == 1:
                raise AlphabetError(
                    f"sensitive attribute {sens[0].name!r} has only one value ({sens[0].values[0]!r}); need at least 2"
                )
            raise AlphabetError(f"the sensitive attributes {', '.join(names[: len(sens)])} have only one combination")
        if latent and not rel:
            raise AlphabetError("a latent S needs at least one released attribute (the mechanism's input X = U)")
        self._sens = sens
        self._released = rel
        self._latent = bool(latent)
        self._a1 = a1
        self._a2 = math.prod(a.size for a in rel)
        self._inputs = rel if latent else (*sens, *rel)
        self._strides = product_strides([a.size for a in self._inputs])
        self._joint_strides = product_strides([a.size for a in (*sens, *rel)])
        self._sensitive_names = frozenset(a.name for a in sens)

    # -- shape
    @property
    def sensitive_attributes(self) -> tuple[Attribute, ...]:
        """The sensitive attributes, in order (S is their product)."""
        return self._sens

    @property
    def sensitive(self) -> Attribute:
        """S as one attribute: the sensitive attribute itself, or for several their product
        (name ``"sex,race"``, values ``"Female|White"``, ... in S's numbering)."""
        if len(self._sens) == 1:
            return self._sens[0]
        values = [LABEL_SEPARATOR.join(combo) for combo in value_product([a.values for a in self._sens])]
        return Attribute(",".join(a.name for a in self._sens), tuple(values))

    @property
    def released(self) -> tuple[Attribute, ...]:
        """The released attributes, in order (their product is U)."""
        return self._released

    @property
    def latent(self) -> bool:
        """True when S is not an input of the mechanism (X = U)."""
        return self._latent

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        """The attributes of a mechanism input, in tuple-record order."""
        return self._inputs

    @property
    def joint_attributes(self) -> tuple[Attribute, ...]:
        """Every attribute, sensitive first: the order of records over S × U."""
        return (*self._sens, *self._released)

    @property
    def names(self) -> tuple[str, ...]:
        """Attribute names of a mechanism input, in tuple-record order."""
        return tuple(a.name for a in self._inputs)

    @property
    def n_sensitive(self) -> int:
        """a1 = |S|."""
        return self._a1

    @property
    def n_released(self) -> int:
        """a2 = |U| (product of the released sizes; 1 if nothing is released)."""
        return self._a2

    @property
    def size(self) -> int:
        """|X|, the number of mechanism inputs (columns of Q): a1·a2, or a2 when S is latent."""
        return self._a2 if self._latent else self._a1 * self._a2

    @property
    def shape(self) -> tuple[int, int]:
        """(a1, a2): the shape of a distribution over S × U (such as P̂)."""
        return (self._a1, self._a2)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alphabet):
            return NotImplemented
        return (self._sens, self._released, self._latent) == (other._sens, other._released, other._latent)

    def __hash__(self) -> int:
        return hash((self._sens, self._released, self._latent))

    def __repr__(self) -> str:
        sens = ", ".join(f"{a.name}[{a.size}]" for a in self._sens)
        rel = ", ".join(f"{a.name}[{a.size}]" for a in self._released)
        latent = ", latent" if self._latent else ""
        return f"Alphabet(sensitive=({sens}{latent}), released=({rel}), size={self.size})"

    # -- construction
    @classmethod
    def from_table(
        cls,
        table: Table,
        sensitive: str | Sequence[str],
        released: Sequence[str],
        *,
        latent: bool = False,
        numeric: Mapping[str, NumericSpec] | None = None,
    ) -> Alphabet:
        """Alphabet whose attribute values are the sorted distinct values of the table's columns; a column
        named in ``numeric`` is that numeric attribute (its values the labels of the spec's bins)."""
        numeric = dict(numeric or {})
        for name in numeric:
            if name not in (*([sensitive] if isinstance(sensitive, str) else sensitive), *released):
                raise AlphabetError(f"numeric column {name!r} is neither sensitive nor released")
        sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        rel = [released] if isinstance(released, str) else list(released)  # a lone name, not its characters
        for name in (*sens, *rel):
            if name not in table.columns:
                raise TableError(f"no column {name!r} in the table; available: {', '.join(table.columns)}")
        for name in sens:
            if name in rel:
                role = "the sensitive attribute" if len(sens) == 1 else "a sensitive attribute"
                raise AlphabetError(f"column {name!r} is {role} and cannot also be released")
        for what, names in (("sensitive", sens), ("released", rel)):
            for i, name in enumerate(names):
                if name in names[:i]:
                    raise AlphabetError(f"{what} column {name!r} is listed twice")
        if table.n_rows == 0:
            raise TableError("the table has no rows; cannot infer attribute values")
        # np.unique sorts by code point, the same order as Python's sorted().
        attrs = [
            Attribute.binned(name, numeric[name])
            if name in numeric
            else Attribute(name, tuple(np.unique(table.column(name)).tolist()))
            for name in (*sens, *rel)
        ]
        return cls(attrs[: len(sens)], attrs[len(sens) :], latent=latent)

    def to_dict(self) -> dict[str, Any]:
        """The document's form: ``{"sensitive": {...}, "released": [{...}, ...]}``.

        One released sensitive attribute: ``{"name", "values"}`` (format 1, unchanged).
        Several: ``{"attributes": [{...}, ...]}``; a latent S adds ``"released": false``.
        """
        sens: dict[str, Any]
        sens = self._sens[0].to_dict() if len(self._sens) == 1 else {"attributes": [a.to_dict() for a in self._sens]}
        if self._latent:
            sens["released"] = False
        return {"sensitive": sens, "released": [a.to_dict() for a in self._released]}

    @property
    def needs_format_2(self) -> bool:
        """True when the document form uses what a format-1 reader would misread (several or latent S)."""
        return self._latent or len(self._sens) > 1

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Alphabet:
        """Inverse of :meth:`to_dict`; extra keys (here and in each attribute) are ignored."""
        if not isinstance(data, Mapping):
            raise AlphabetError(f"alphabet must be an object, got {type(data).__name__}")
        if "sensitive" not in data:
            raise AlphabetError("alphabet is missing 'sensitive'")
        released = data.get("released", [])
        if not isinstance(released, (list, tuple)):
            raise AlphabetError(f"'released' must be a list of attributes, got {type(released).__name__}")
        sens = data["sensitive"]
        if not isinstance(sens, Mapping):
            raise AlphabetError(f"'sensitive' must be an object, got {type(sens).__name__}")
        flag = sens.get("released", True)
        if not isinstance(flag, bool):
            raise AlphabetError(f"sensitive.released must be true or false, got {flag!r}")
        if "attributes" in sens:
            parts = sens["attributes"]
            if not isinstance(parts, (list, tuple)) or not parts:
                raise AlphabetError("sensitive.attributes must be a non-empty list of attributes")
            attrs = [Attribute.from_dict(a) for a in parts]
        else:
            attrs = [Attribute.from_dict(sens)]
        return cls(attrs, [Attribute.from_dict(r) for r in released], latent=not flag)

    # -- encoding
    def _combine(self, attrs: Sequence[Attribute], strides: Sequence[int], cols: Sequence[Any]) -> np.ndarray:
        # cols: one value sequence per attribute of ``attrs``; mixed radix, last fastest.
        cols = [python_values(c) for c in cols]
        joined = self._combine_python_strings(attrs, strides, cols)
        if joined is not None:
            return joined
        # Codes come as uint8 or int64 (encode_compact); x is one int64 array, scaled and
        # summed in place (no 8 B/record temporaries; never a product in uint8, which would wrap).
        first = attrs[0].encode_compact(cols[0])
        x: np.ndarray = np.multiply(first, strides[0], dtype=np.int64)
        for attr, stride, col in zip(attrs[1:], strides[1:], cols[1:], strict=True):
            codes = attr.encode_compact(col)
            if codes.size != x.size:
                raise RecordError(f"attribute {attr.name!r} has {codes.size} values; {attrs[0].name!r} has {x.size}")
            x += codes if stride == 1 else np.multiply(codes, stride, dtype=np.int64)
        return x

    @staticmethod
    def _combine_python_strings(
        attrs: Sequence[Attribute], strides: Sequence[int], cols: Sequence[Any]
    ) -> np.ndarray | None:
        """x in one pass per column of the C accelerator when every column holds Python strings
        (lists, tuples, object arrays) of one length, each scaled and added in place (no
        per-column codes array); None otherwise, or if any item is not a value (the general
        path then names it)."""
        n = len(cols[0]) if isinstance(cols[0], (list, tuple, np.ndarray)) else -1
        for attr, col in zip(attrs, cols, strict=True):
            if not (holds_python_objects(col) and len(col) == n and n):
                return None
            if attr.numeric is not None or not attr.python_strings.native:
                return None
        x = np.empty(n, dtype=np.int64)
        for j, (attr, stride, col) in enumerate(zip(attrs, strides, cols, strict=True)):
            if not attr.python_strings.encode_scaled(col, x, stride, accumulate=j > 0):
                return None
        return x

    def encode(self, records: Any) -> np.ndarray:
        """Map records to their input indices x (int64 array).

        ``records`` may be a :class:`Table`, a pandas DataFrame, a dict of columns ``{name: values}``,
        an iterable of dicts ``{name: value}`` (extra keys ignored), an iterable of
        tuples in :attr:`names` order or a 2-D array of such rows. Tables, column
        dicts and 2-D arrays are encoded column-wise in numpy. Values are matched
        by their string form. Unknown values and missing attributes raise
        :class:`RecordError`. For one record use :meth:`encode_one`.
        """
        return self._encode(self._inputs, self._strides, records)

    def encode_joint(self, records: Any) -> np.ndarray:
        """Indices s·|U| + u over S × U (records must hold S too); equals :meth:`encode` unless S is latent."""
        return self._encode(self.joint_attributes, self._joint_strides, records)

    def _encode(self, attrs: Sequence[Attribute], strides: Sequence[int], records: Any) -> np.ndarray:
        names = tuple(a.name for a in attrs)
        return self._combine(attrs, strides, as_columns(records, names, self._sensitive_names))

    def encode_one(self, record: Mapping[str, Any] | Sequence[Any]) -> int:
        """Input index x of a single record given as a dict or a tuple in :attr:`names` order."""
        names = self.names
        values: Sequence[Any]
        if isinstance(record, Mapping):
            values = [record_field(record, name, 0, self._sensitive_names) for name in names]
        else:
            values = record_tuple(names, record, 0)
        return sum(
            attr.index(as_str(v)) * stride for attr, stride, v in zip(self._inputs, self._strides, values, strict=True)
        )

    # -- decoding
    def _check_indices(self, x: Any, size: int) -> np.ndarray:
        arr = np.atleast_1d(np.asarray(x))
        if arr.ndim != 1:
            raise RecordError(f"expected a 1-D array of indices, got shape {arr.shape}")
        if arr.size and arr.dtype.kind not in "iu":
            raise RecordError(f"indices must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= size)
        if bad.any():
            first = int(np.argmax(bad))
            raise RecordError(f"index {int(arr[first])} (position {first}) is outside the alphabet 0..{size - 1}")
        return arr

    def split(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """(s, u) index arrays for indices x over S × U (:meth:`encode_joint`'s numbering)."""
        arr = self._check_indices(x, self._a1 * self._a2)
        return arr // self._a2, arr % self._a2

    def decode(self, x: Any) -> list[tuple[str, ...]]:
        """Records (tuples in :attr:`names` order) for input indices x (an int or a 1-D integer array)."""
        arr = self._check_indices(x, self.size)
        cols = [
            np.array(attr.values, dtype=object)[(arr // stride) % attr.size]
            for attr, stride in zip(self._inputs, self._strides, strict=True)
        ]
        return list(zip(*cols, strict=True))

    def decode_one(self, x: int) -> tuple[str, ...]:
        """The record of a single input index x."""
        return self.decode([x])[0]

    def labels(self, sep: str = LABEL_SEPARATOR) -> list[str]:
        """A human-readable label for each input x in order, e.g. ``"Female|White"``."""
        return [sep.join(rec) for rec in self.decode(np.arange(self.size))]

    # -- statistics
    def counts(self, records: Any) -> np.ndarray:
        """Integer counts of the records over S × U, shape (a1, a2) (records must hold S)."""
        x = self.encode_joint(records)
        return np.bincount(x, minlength=self._a1 * self._a2).reshape(self.shape)

    def empirical_distribution(self, records: Any) -> np.ndarray:
        """Relative frequencies of the records over S × U, shape (a1, a2), summing to 1."""
        c = self.counts(records)
        total = int(c.sum())
        if total == 0:
            raise RecordError("no records: cannot form an empirical distribution")
        return c / total
