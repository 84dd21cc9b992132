"""Records of every accepted form turned into one value sequence per attribute.

An app hands the SDK records as dicts, tuples, a dict of columns, a 2-D array or a
:class:`~rldp.shared.tables.Table`; the alphabet encodes columns. These functions do the
reshaping, with C-level fast paths for the common homogeneous cases and a checked loop
that names the offending record for everything else.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .errors import RecordError
from .tables import Table, frame_columns, is_data_frame

__all__ = [
    "as_columns",
    "python_values",
    "as_str",
    "fields_text",
    "record_field",
    "record_tuple",
    "columns_from_mapping",
    "columns_from_rows",
]


def python_values(column: Any) -> Any:
    """A numpy column of variable-width strings (numpy's StringDType) as a list, so that the
    attributes look each value up in a dict (~4× faster than converting it to a fixed-width
    string array and searching it, measured with bench/bench_scale.py). Object columns (e.g.
    from pandas) are iterated as they are (cheaper than their ``tolist()``); any other column
    is returned as it is."""
    if isinstance(column, np.ndarray) and column.ndim == 1 and column.dtype.kind == "T":
        return column.tolist()
    return column


def as_str(v: Any) -> Any:
    """A value's string form: values are matched to an attribute's values by it."""
    return v if isinstance(v, str) else str(v)


def fields_text(names: Sequence[str]) -> str:
    """``"2 fields (sex, race)"``: how messages describe a tuple record."""
    return f"{len(names)} fields ({', '.join(names)})"


def record_field(record: Mapping[str, Any], name: str, i: int, sensitive: Collection[str]) -> Any:
    """``record[name]``; RecordError naming the record, the attribute and its role if absent."""
    try:
        return record[name]
    except KeyError:
        role = "sensitive" if name in sensitive else "released"
        raise RecordError(f"record {i} is missing the {role} attribute {name!r}") from None


def record_tuple(names: Sequence[str], rec: Any, i: int) -> Sequence[Any]:
    """A tuple record checked to have one value per attribute of ``names``."""
    if isinstance(rec, (str, bytes)) or not isinstance(rec, (Sequence, np.ndarray)):
        raise RecordError(f"record {i} must be a dict or a tuple of {fields_text(names)}, got {type(rec).__name__}")
    if len(rec) != len(names):
        raise RecordError(f"record {i} has {len(rec)} fields; expected {fields_text(names)}")
    return list(rec) if isinstance(rec, np.ndarray) else rec


def columns_from_mapping(names: Sequence[str], columns: Mapping[str, Any]) -> list[Any]:
    """The columns ``names`` of a dict of columns, checked to be sequences of one length."""
    out = []
    for name in names:
        if name not in columns:
            raise RecordError(f"missing column for attribute {name!r}; got columns: {', '.join(map(str, columns))}")
        col = columns[name]
        if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
            raise RecordError(
                f"column {name!r} is a single value, not a sequence; encode() takes many records "
                "(use encode_one() for a single record dict)"
            )
        out.append(col)
    if len({len(c) for c in out}) > 1:
        lengths = ", ".join(f"{nm}={len(c)}" for nm, c in zip(names, out, strict=True))
        raise RecordError(f"columns have different lengths: {lengths}")
    return out


def columns_from_rows(names: Sequence[str], records: Iterable[Any], sensitive: Collection[str]) -> list[list[Any]]:
    """One list per attribute of ``names`` from dict or tuple records (in any mix)."""
    rows = records if isinstance(records, (list, tuple)) else list(records)
    # Fast paths (C-level iteration) for the common homogeneous cases; anything unusual,
    # and every error, goes through the checked loop below, which names the record.
    types = set(map(type, rows))
    try:
        if types == {dict}:
            return [list(map(operator.itemgetter(name), rows)) for name in names]
        if types and types <= {tuple, list} and set(map(len, rows)) == {len(names)}:
            return [list(map(operator.itemgetter(j), rows)) for j in range(len(names))]
    except (KeyError, TypeError):
        pass
    cols: list[list[Any]] = [[] for _ in names]
    appenders = [c.append for c in cols]
    for i, rec in enumerate(rows):
        if isinstance(rec, Mapping):
            for app, name in zip(appenders, names, strict=True):
                app(record_field(rec, name, i, sensitive))
        else:
            for app, v in zip(appenders, record_tuple(names, rec, i), strict=True):
                app(v)
    return cols


def as_columns(records: Any, names: Sequence[str], sensitive: Collection[str] = ()) -> list[Any]:
    """The one boundary of record input: any accepted form as one value sequence per name, in
    ``names`` order (the alphabet then encodes columns only, :meth:`rldp.shared.records.Alphabet.encode`).

    Accepted: a :class:`~rldp.shared.tables.Table`, a pandas DataFrame, a mapping of columns
    ``{name: values}``, a 2-D array of rows in ``names`` order, or an iterable of records (dicts
    ``{name: value}``, extra keys ignored, or tuples in ``names`` order). ``sensitive`` names the
    attributes a record may lack only with a clearer message (they are S). RecordError naming the
    record or column otherwise."""
    if isinstance(records, Table):
        missing = [name for name in names if name not in records.columns]
        if missing:
            raise RecordError(
                f"table has no column {missing[0]!r} (attribute of the alphabet); available: {', '.join(records.columns)}"
            )
        return [records.column(n) for n in names]
    if is_data_frame(records):  # a pandas DataFrame: its columns, as a mapping of columns
        records = frame_columns(records)
    if isinstance(records, Mapping):
        return columns_from_mapping(names, records)
    if isinstance(records, np.ndarray):
        if records.ndim != 2 or records.shape[1] != len(names):
            raise RecordError(
                f"an array of records must have shape (n, {len(names)}) for {fields_text(names)}; got {records.shape}"
            )
        return [records[:, j] for j in range(len(names))]
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise RecordError(f"cannot encode records of type {type(records).__name__}")
    return columns_from_rows(names, records, sensitive)
