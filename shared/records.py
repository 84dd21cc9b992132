"""Alphabets, CSV tables and record encoding.

A record is a pair (s, u): a value of the sensitive attribute S and one value
for each released attribute (their product is U).  The record space
X = S × U is numbered with s major, the released attributes in listed order
and the last one fastest: x = s·|U| + u.  That numbering is the one the
mechanism document uses for the columns of Q and for ``public_distribution``.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import operator
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = [
    "RecordError",
    "TableError",
    "AlphabetError",
    "Attribute",
    "Table",
    "read_csv",
    "Alphabet",
]

_GZIP_MAGIC = b"\x1f\x8b"
# Error messages list allowed values; beyond this many the list is cut short.
_MAX_LISTED = 50


class RecordError(ValueError):
    """A record or value that does not fit the alphabet (unknown value, missing attribute...)."""


class TableError(ValueError):
    """A CSV file or table column that cannot be used (missing file, ragged row, unknown column...)."""


class AlphabetError(ValueError):
    """An invalid attribute or alphabet definition (duplicate names, too few sensitive values...)."""


def _quote(value: Any) -> str:
    # str() first: repr of a numpy str_ would read "np.str_('x')".
    return repr(str(value)) if isinstance(value, (str, np.str_)) else repr(value)


def _listing(values: Sequence[str]) -> str:
    if len(values) <= _MAX_LISTED:
        return ", ".join(values)
    return ", ".join(values[:_MAX_LISTED]) + f", ... ({len(values) - _MAX_LISTED} more)"


# --------------------------------------------------------------------------- attributes


@dataclass(frozen=True)
class Attribute:
    """A categorical attribute: a name and its ordered, distinct string values."""

    name: str
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise AlphabetError(f"attribute name must be a non-empty string, got {self.name!r}")
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
        seen: set[str] = set()
        for v in values:
            if v in seen:
                raise AlphabetError(f"attribute {self.name!r}: value {v!r} appears more than once")
            seen.add(v)

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
    def _index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.values)}

    def index(self, value: str) -> int:
        """Position of ``value`` in ``values``; RecordError naming the allowed values if unknown."""
        try:
            return self._index[value]
        except (KeyError, TypeError):
            raise RecordError(self._unknown_message(value)) from None

    def encode(self, values: Any) -> np.ndarray:
        """Vectorised :meth:`index` over a 1-D sequence; returns int64 positions."""
        if isinstance(values, list) and values:
            # Python strings: one C-level dict lookup each (no string array, no sort).
            try:
                return np.fromiter(map(self._index.__getitem__, values), dtype=np.int64, count=len(values))
            except (KeyError, TypeError):
                pass  # other types or an unknown value: the array path matches string forms and names it
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise RecordError(f"attribute {self.name!r}: expected a 1-D sequence of values, got shape {arr.shape}")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.dtype.kind != "U":
            # Values are matched by their string form (ints from a parser, objects, bytes).
            arr = arr.astype(str)
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
        """The document's form: ``{"name": ..., "values": [...]}``."""
        return {"name": self.name, "values": list(self.values)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attribute:
        """Inverse of :meth:`to_dict`; extra keys are ignored."""
        if not isinstance(data, Mapping):
            raise AlphabetError(f"attribute must be an object with 'name' and 'values', got {type(data).__name__}")
        for key in ("name", "values"):
            if key not in data:
                raise AlphabetError(f"attribute {data.get('name', '?')!r} is missing {key!r}")
        if not isinstance(data["values"], (list, tuple)):
            raise AlphabetError(f"attribute {data['name']!r}: 'values' must be a list of strings")
        return cls(data["name"], tuple(data["values"]))


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True, eq=False)
class Table:
    """A table of string values stored by column (one read-only numpy str array per column)."""

    columns: tuple[str, ...]
    data: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        columns = tuple(self.columns)
        if len(columns) != len(self.data):
            raise TableError(f"table has {len(columns)} column names but {len(self.data)} columns of data")
        _check_names(columns, "table")
        arrays = []
        n = None
        for name, col in zip(columns, self.data):
            arr = np.asarray(col)
            if arr.ndim != 1:
                raise TableError(f"column {name!r} must be 1-D, got shape {arr.shape}")
            if arr.dtype.kind != "U":
                arr = arr.astype(str)
            elif arr.flags.writeable:
                arr = arr.copy()  # the table is immutable; do not alias the caller's array
            if n is not None and arr.size != n:
                raise TableError(f"column {name!r} has {arr.size} values; other columns have {n}")
            n = arr.size
            arr.setflags(write=False)
            arrays.append(arr)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "data", tuple(arrays))

    @classmethod
    def from_rows(cls, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
        """Build a table from row tuples (every row must have one value per column)."""
        columns = tuple(columns)
        rows = [tuple(r) for r in rows]
        for i, r in enumerate(rows):
            if len(r) != len(columns):
                raise TableError(f"row {i} has {len(r)} values; expected {len(columns)}")
        cols = list(zip(*rows)) if rows else [() for _ in columns]
        return cls(columns, tuple(np.array(c, dtype=str) for c in cols))

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[Any]]) -> Table:
        """Build a table from ``{name: values}`` (all columns the same length)."""
        return cls(tuple(columns), tuple(np.asarray(v) for v in columns.values()))

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.data[0].size) if self.data else 0

    def __len__(self) -> int:
        return self.n_rows

    def column(self, name: str) -> np.ndarray:
        """The values of column ``name`` (read-only numpy str array); TableError if there is none."""
        try:
            return self.data[self.columns.index(name)]
        except ValueError:
            raise TableError(f"no column {name!r}; available: {', '.join(self.columns)}") from None

    def rows(self) -> Iterator[tuple[str, ...]]:
        """Iterate over rows as tuples of Python strings."""
        return zip(*(c.tolist() for c in self.data))

    def __repr__(self) -> str:
        return f"Table({self.n_rows} rows × {len(self.columns)} columns: {', '.join(self.columns)})"


def _check_names(names: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise TableError(f"{where}: column {i + 1} has an empty or non-string name {name!r}")
        if name in seen:
            raise TableError(f"{where}: duplicate column name {name!r}")
        seen.add(name)


def read_csv(path: str | os.PathLike[str], *, names: Sequence[str] | None = None) -> Table:
    """Read a CSV file (plain or gzip, detected by its magic bytes) into a :class:`Table`.

    The first non-blank row is the header unless ``names`` is given.  Values are
    stripped of surrounding whitespace (the UCI files separate with ", "); ``?``
    stays an ordinary category; blank lines are skipped.  Every problem raises
    :class:`TableError` with a one-line message naming the file.
    """
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            magic = fh.read(2)
    except FileNotFoundError:
        raise TableError(f"{where}: no such file") from None
    except OSError as exc:
        raise TableError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if names is not None:
        names = tuple(names)
        _check_names(names, where)

    try:
        raw: io.BufferedIOBase = gzip.open(where, "rb") if magic == _GZIP_MAGIC else open(where, "rb")  # type: ignore[assignment]
        # utf-8-sig: spreadsheet exports often start with a byte-order mark.
        with io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
            header, rows = _parse(csv.reader(text, skipinitialspace=True), names, where)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        if magic == _GZIP_MAGIC:
            raise TableError(f"{where}: corrupt or truncated gzip data ({exc})") from None
        raise TableError(f"{where}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise TableError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise TableError(f"{where}: malformed CSV ({exc})") from None

    arrays = []
    for c in zip(*rows):
        # An explicit item size is several times faster than letting numpy discover it.
        arr = np.array(c, dtype=f"<U{max(1, max(map(len, c)))}")
        arr.setflags(write=False)  # read-only: Table then keeps it without a copy
        arrays.append(arr)
    return Table(header, tuple(arrays))


def _parse(reader: Any, names: tuple[str, ...] | None, where: str) -> tuple[tuple[str, ...], list[list[str]]]:
    header = names
    rows: list[list[str]] = []
    width = len(names) if names is not None else 0
    saw_any = False
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue  # blank line
        saw_any = True
        row = list(map(str.strip, row))
        if header is None:
            header = tuple(row)
            _check_names(header, f"{where} header")
            width = len(header)
            continue
        if len(row) != width:
            raise TableError(f"{where} line {reader.line_num}: expected {width} fields, found {len(row)}")
        rows.append(row)
    if not saw_any:
        raise TableError(f"{where}: file is empty")
    if not rows:
        raise TableError(f"{where}: no data rows")
    assert header is not None
    return header, rows


# --------------------------------------------------------------------------- alphabet


class Alphabet:
    """The record space X = S × U with its numbering x = s·|U| + u.

    U is the product of the released attributes in the listed order, the last
    one fastest (mixed radix).  With no released attributes |U| = 1.
    """

    def __init__(self, sensitive: Attribute, released: Sequence[Attribute] = ()) -> None:
        """Build from the sensitive attribute and the released attributes (in order)."""
        released = tuple(released)
        for attr in (sensitive, *released):
            if not isinstance(attr, Attribute):
                raise AlphabetError(f"expected Attribute objects, got {type(attr).__name__}")
        names = [a.name for a in (sensitive, *released)]
        for i, name in enumerate(names):
            if name in names[:i]:
                what = "the sensitive attribute" if name == sensitive.name else "a released attribute"
                raise AlphabetError(f"attribute {name!r} is listed twice (it is already {what})")
        if sensitive.size < 2:
            raise AlphabetError(
                f"sensitive attribute {sensitive.name!r} has only one value ({sensitive.values[0]!r}); need at least 2"
            )
        self._sensitive = sensitive
        self._released = released
        sizes = [a.size for a in released]
        # strides[j]: how far u moves when attribute j moves by one (last fastest).
        strides = [1] * len(sizes)
        for j in range(len(sizes) - 2, -1, -1):
            strides[j] = strides[j + 1] * sizes[j + 1]
        self._strides = tuple(strides)
        self._a2 = math.prod(sizes)

    # -- shape
    @property
    def sensitive(self) -> Attribute:
        """The sensitive attribute S."""
        return self._sensitive

    @property
    def released(self) -> tuple[Attribute, ...]:
        """The released attributes, in order (their product is U)."""
        return self._released

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        """(sensitive, *released) — the order of tuple records."""
        return (self._sensitive, *self._released)

    @property
    def names(self) -> tuple[str, ...]:
        """Attribute names in tuple-record order."""
        return tuple(a.name for a in self.attributes)

    @property
    def n_sensitive(self) -> int:
        """a1 = |S|."""
        return self._sensitive.size

    @property
    def n_released(self) -> int:
        """a2 = |U| (product of the released sizes; 1 if nothing is released)."""
        return self._a2

    @property
    def size(self) -> int:
        """a = |X| = a1·a2."""
        return self.n_sensitive * self._a2

    @property
    def shape(self) -> tuple[int, int]:
        """(a1, a2): the shape of a distribution over S × U."""
        return (self.n_sensitive, self._a2)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alphabet):
            return NotImplemented
        return self._sensitive == other._sensitive and self._released == other._released

    def __hash__(self) -> int:
        return hash((self._sensitive, self._released))

    def __repr__(self) -> str:
        parts = [f"{a.name}[{a.size}]" for a in self._released]
        return f"Alphabet(sensitive={self._sensitive.name}[{self.n_sensitive}], released=({', '.join(parts)}), size={self.size})"

    # -- construction
    @classmethod
    def from_table(cls, table: Table, sensitive: str, released: Sequence[str]) -> Alphabet:
        """Alphabet whose attribute values are the sorted distinct values of the table's columns."""
        if isinstance(released, str):
            released = [released]  # a lone column name, not its characters
        released = list(released)
        for name in (sensitive, *released):
            if name not in table.columns:
                raise TableError(f"no column {name!r} in the table; available: {', '.join(table.columns)}")
        if sensitive in released:
            raise AlphabetError(f"column {sensitive!r} is the sensitive attribute and cannot also be released")
        for i, name in enumerate(released):
            if name in released[:i]:
                raise AlphabetError(f"released column {name!r} is listed twice")
        if table.n_rows == 0:
            raise TableError("the table has no rows; cannot infer attribute values")
        # np.unique sorts by code point, the same order as Python's sorted().
        attrs = [Attribute(name, tuple(np.unique(table.column(name)).tolist())) for name in (sensitive, *released)]
        return cls(attrs[0], attrs[1:])

    def to_dict(self) -> dict[str, Any]:
        """The document's form: ``{"sensitive": {...}, "released": [{...}, ...]}``."""
        return {"sensitive": self._sensitive.to_dict(), "released": [a.to_dict() for a in self._released]}

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
        return cls(Attribute.from_dict(data["sensitive"]), [Attribute.from_dict(r) for r in released])

    # -- encoding
    def _combine(self, cols: Sequence[Any]) -> np.ndarray:
        # cols: one value sequence per attribute, in tuple-record order.
        x = self._sensitive.encode(cols[0]) * self._a2
        for attr, stride, col in zip(self._released, self._strides, cols[1:]):
            codes = attr.encode(col)
            if codes.size != x.size:
                raise RecordError(f"attribute {attr.name!r} has {codes.size} values; {self._sensitive.name!r} has {x.size}")
            x += codes * stride if stride != 1 else codes
        return x

    def encode(self, records: Any) -> np.ndarray:
        """Map records to their indices x (int64 array).

        ``records`` may be a :class:`Table`, a dict of columns ``{name: values}``,
        an iterable of dicts ``{name: value}`` (extra keys ignored), an iterable of
        tuples ``(s, u1, u2, ...)`` or a 2-D array of such rows.  Tables, column
        dicts and 2-D arrays are encoded column-wise in numpy.  Values are matched
        by their string form.  Unknown values and missing attributes raise
        :class:`RecordError`.  For one record use :meth:`encode_one`.
        """
        names = self.names
        if isinstance(records, Table):
            for name in names:
                if name not in records.columns:
                    raise RecordError(
                        f"table has no column {name!r} (attribute of the alphabet); available: {', '.join(records.columns)}"
                    )
            return self._combine([records.column(n) for n in names])
        if isinstance(records, Mapping):
            return self._combine(self._columns_from_mapping(records))
        if isinstance(records, np.ndarray):
            if records.ndim != 2 or records.shape[1] != len(names):
                raise RecordError(
                    f"an array of records must have shape (n, {len(names)}) for {self._expected_fields()}; got {records.shape}"
                )
            return self._combine([records[:, j] for j in range(len(names))])
        if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
            raise RecordError(f"cannot encode records of type {type(records).__name__}")
        return self._combine(self._columns_from_rows(records))

    def encode_one(self, record: Mapping[str, Any] | Sequence[Any]) -> int:
        """Index x of a single record given as a dict or a tuple ``(s, u1, ...)``."""
        if isinstance(record, Mapping):
            values = [self._get(record, name, 0) for name in self.names]
        else:
            values = self._check_tuple(record, 0)
        x = self._sensitive.index(_as_str(values[0])) * self._a2
        for attr, stride, v in zip(self._released, self._strides, values[1:]):
            x += attr.index(_as_str(v)) * stride
        return x

    def _columns_from_mapping(self, columns: Mapping[str, Any]) -> list[Any]:
        out = []
        for name in self.names:
            if name not in columns:
                raise RecordError(f"missing column for attribute {name!r}; got columns: {', '.join(map(str, columns))}")
            col = columns[name]
            if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
                raise RecordError(
                    f"column {name!r} is a single value, not a sequence; encode() takes many records "
                    "(use encode_one() for a single record dict)"
                )
            out.append(col)
        n = {len(c) for c in out}
        if len(n) > 1:
            lengths = ", ".join(f"{nm}={len(c)}" for nm, c in zip(self.names, out))
            raise RecordError(f"columns have different lengths: {lengths}")
        return out

    def _columns_from_rows(self, records: Iterable[Any]) -> list[list[Any]]:
        names = self.names
        if not isinstance(records, (list, tuple)):
            records = list(records)
        # Fast paths (C-level iteration) for the common homogeneous cases; anything unusual,
        # and every error, goes through the checked loop below, which names the record.
        types = set(map(type, records))
        try:
            if types == {dict}:
                return [list(map(operator.itemgetter(name), records)) for name in names]
            if types and types <= {tuple, list} and set(map(len, records)) == {len(names)}:
                return [list(map(operator.itemgetter(j), records)) for j in range(len(names))]
        except (KeyError, TypeError):
            pass
        cols: list[list[Any]] = [[] for _ in names]
        appenders = [c.append for c in cols]
        for i, rec in enumerate(records):
            if isinstance(rec, Mapping):
                for app, name in zip(appenders, names):
                    app(self._get(rec, name, i))
            else:
                for app, v in zip(appenders, self._check_tuple(rec, i)):
                    app(v)
        return cols

    def _get(self, record: Mapping[str, Any], name: str, i: int) -> Any:
        try:
            return record[name]
        except KeyError:
            role = "sensitive" if name == self._sensitive.name else "released"
            raise RecordError(f"record {i} is missing the {role} attribute {name!r}") from None

    def _expected_fields(self) -> str:
        return f"{len(self.names)} fields ({', '.join(self.names)})"

    def _check_tuple(self, rec: Any, i: int) -> Sequence[Any]:
        if isinstance(rec, (str, bytes)) or not isinstance(rec, (Sequence, np.ndarray)):
            raise RecordError(f"record {i} must be a dict or a tuple of {self._expected_fields()}, got {type(rec).__name__}")
        if len(rec) != len(self.names):
            raise RecordError(f"record {i} has {len(rec)} fields; expected {self._expected_fields()}")
        return rec

    def _check_indices(self, x: Any) -> np.ndarray:
        arr = np.atleast_1d(np.asarray(x))
        if arr.ndim != 1:
            raise RecordError(f"expected a 1-D array of indices, got shape {arr.shape}")
        if arr.size and arr.dtype.kind not in "iu":
            raise RecordError(f"indices must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= self.size)
        if bad.any():
            first = int(np.argmax(bad))
            raise RecordError(f"index {int(arr[first])} (position {first}) is outside the alphabet 0..{self.size - 1}")
        return arr

    def split(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """(s, u) index arrays for record indices x."""
        arr = self._check_indices(x)
        return arr // self._a2, arr % self._a2

    def decode(self, x: Any) -> list[tuple[str, ...]]:
        """Records ``(s, u1, ...)`` for indices x (an int or a 1-D integer array)."""
        s, u = self.split(x)
        cols = [np.array(self._sensitive.values, dtype=object)[s]]
        for attr, stride in zip(self._released, self._strides):
            cols.append(np.array(attr.values, dtype=object)[(u // stride) % attr.size])
        return list(zip(*cols))

    def decode_one(self, x: int) -> tuple[str, ...]:
        """The record ``(s, u1, ...)`` of a single index x."""
        return self.decode([x])[0]

    def labels(self, sep: str = "|") -> list[str]:
        """A human-readable label for each x in order, e.g. ``"Female|White"``."""
        return [sep.join(rec) for rec in self.decode(np.arange(self.size))]

    # -- statistics
    def counts(self, records: Any) -> np.ndarray:
        """Integer counts of the records over S × U, shape (a1, a2)."""
        x = self.encode(records)
        return np.bincount(x, minlength=self.size).reshape(self.shape)

    def empirical_distribution(self, records: Any) -> np.ndarray:
        """Relative frequencies of the records over S × U, shape (a1, a2), summing to 1."""
        c = self.counts(records)
        total = int(c.sum())
        if total == 0:
            raise RecordError("no records: cannot form an empirical distribution")
        return c / total


def _as_str(v: Any) -> Any:
    # Same rule as the vectorised path: values are matched by their string form.
    return v if isinstance(v, str) else str(v)
