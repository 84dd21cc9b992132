"""CSV tables: string columns read from plain or gzipped CSV files.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import TableError

__all__ = [
    "Table",
    "read_csv",
    "header_looks_like_data",
    "blank_counts",
    "is_data_frame",
    "frame_columns",
    "csv_text_cell",
    "csv_document",
]

_GZIP_MAGIC = b"\x1f\x8b"
# A cell starting with one of these is run as a formula by spreadsheets (CSV injection, OWASP), the
# fullwidth forms too (some spreadsheets fold ＝ ＋ － ＠ to their ASCII forms).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_text_cell(value: str) -> str:
    """A text cell for a CSV a person may open in a spreadsheet: a leading ' when it would start a
    formula (=, +, -, @, tab, CR, or fullwidth ＝ ＋ － ＠), as OWASP recommends; other text unchanged.
    Numbers are not text cells: write them as they are."""
    return f"'{value}" if value.startswith(_FORMULA_START) else value


def csv_document(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """The one CSV writer of rldp's downloads: RFC 4180 (CRLF line ends; a cell holding a quote, a comma,
    CR or LF is quoted, so a bare CR inside a cell never starts a row), every text cell through
    :func:`csv_text_cell` (no formula), None as an empty cell, numbers as they are."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow([csv_text_cell(h) for h in header])
    for row in rows:
        writer.writerow(["" if v is None else csv_text_cell(v) if isinstance(v, str) else v for v in row])
    return out.getvalue()


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
        for name, col in zip(columns, self.data, strict=True):
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
        cols = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
        return cls(columns, tuple(np.array(c, dtype=str) for c in cols))

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[Any] | np.ndarray]) -> Table:
        """Build a table from ``{name: values}`` (all columns the same length)."""
        return cls(tuple(columns), tuple(np.asarray(v) for v in columns.values()))

    @classmethod
    def from_frame(cls, frame: Any) -> Table:
        """Build a table from a pandas DataFrame (duck-typed: pandas is never imported here). Values
        become their string form; missing values (NaN, None, NA) become empty cells, as in a CSV."""
        if not is_data_frame(frame):
            raise TableError(f"expected a pandas DataFrame, got {type(frame).__name__}")
        columns = {}
        for name in frame.columns:
            col = frame[name]
            values = col.astype(str).to_numpy(dtype=str)
            columns[str(name)] = np.where(col.isna().to_numpy(dtype=bool), "", values)
        return cls.from_columns(columns)

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
        return zip(*(c.tolist() for c in self.data), strict=True)

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


def read_csv(
    path: str | os.PathLike[str],
    *,
    names: Sequence[str] | None = None,
    delimiter: str = ",",
    encoding: str = "utf-8-sig",
) -> Table:
    """Read a CSV file (plain or gzip, detected by its magic bytes) into a :class:`Table`.

    The first non-blank row is the header unless ``names`` is given.  Values are
    stripped of surrounding whitespace (the UCI files separate with ", "); ``?``
    stays an ordinary category, and so does an empty cell (see :func:`blank_counts`);
    blank lines are skipped.  ``delimiter`` is one character (``"\\t"`` for TSV);
    ``encoding`` any Python codec (default UTF-8, with or without a byte-order mark).
    Every problem raises :class:`TableError` with a one-line message naming the file.
    """
    where = os.fspath(path)
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '\r\n"':
        raise TableError(f"delimiter must be one character other than a quote or a newline; got {delimiter!r}")
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise TableError(f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252)") from None
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
        raw: gzip.GzipFile | io.BufferedReader = gzip.open(where, "rb") if magic == _GZIP_MAGIC else open(where, "rb")
        # utf-8-sig (the default): spreadsheet exports often start with a byte-order mark.
        with io.TextIOWrapper(raw, encoding=encoding, newline="") as text:
            header, rows = _parse(csv.reader(text, delimiter=delimiter, skipinitialspace=True), names, where)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        if magic == _GZIP_MAGIC:
            raise TableError(f"{where}: corrupt or truncated gzip data ({exc})") from None
        raise TableError(f"{where}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        shown = "UTF-8" if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig") else encoding
        raise TableError(
            f"{where}: not {shown} text ({exc.reason} at byte {exc.start}); give the file's encoding "
            "(e.g. --encoding latin-1)"
        ) from None
    except csv.Error as exc:
        raise TableError(f"{where}: malformed CSV ({exc})") from None

    arrays = []
    for c in zip(*rows, strict=True):
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
            hint = " (is the delimiter right? see --delimiter)" if width == 1 or len(row) == 1 else ""
            raise TableError(f"{where} line {reader.line_num}: expected {width} fields, found {len(row)}{hint}")
        rows.append(row)
    if not saw_any:
        raise TableError(f"{where}: file is empty")
    if not rows:
        raise TableError(f"{where}: no data rows")
    assert header is not None
    return header, rows


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def header_looks_like_data(table: Table) -> bool:
    """True when the header row looks like a data row: a column name that is a number, or that
    is also one of that column's values (a file without a header row read as if it had one)."""
    for name, col in zip(table.columns, table.data, strict=True):
        if _is_number(name) or (col.size and bool(np.any(col == name))):
            return True
    return False


def blank_counts(table: Table, columns: Sequence[str]) -> dict[str, int]:
    """``{column: number of empty cells}`` for the ``columns`` that have any."""
    counts = {name: int(np.count_nonzero(table.column(name) == "")) for name in columns}
    return {name: n for name, n in counts.items() if n}


def is_data_frame(obj: Any) -> bool:
    """Whether ``obj`` looks like a pandas DataFrame (checked by its methods, without importing pandas)."""
    return not isinstance(obj, (np.ndarray, Table, Mapping)) and all(
        hasattr(obj, attr) for attr in ("columns", "to_numpy", "iloc", "isna")
    )


def frame_columns(frame: Any) -> dict[str, np.ndarray]:
    """``{name: values}`` of a DataFrame's columns (numpy arrays; values matched by string form later)."""
    return {str(name): frame[name].to_numpy() for name in frame.columns}
