"""Numeric attributes: a number's bin, the bins' edges from public data, and the rules for odd input.

A numeric attribute (an age, a duration) is released as its *bin*: the edges e_0 < e_1 < … < e_k cut
[lo, hi] = [e_0, e_k] into k bins, and the mechanism's alphabet is the bins (their labels). The edges and
their closed side are part of the attribute in the mechanism document, so the content id covers them.

The rules (the TypeScript SDK applies the same ones; docs/design.md, "Numbers"):

* **Bin of x.** ``closed="left"``: bin i holds e_i ≤ x < e_{i+1}; ``closed="right"``: e_i < x ≤ e_{i+1}. A
  value equal to an inner edge goes to the bin that edge closes.
* **Out of range.** A finite x < lo is clamped to the first bin, x > hi to the last (so lo and hi
  themselves are always in the first and the last bin, whatever the closed side).
* **Numbers.** Integers and floats are compared as IEEE-754 doubles (an integer beyond 2**53 is first
  rounded to the nearest double); -0.0 equals 0.0; booleans are refused.
* **Text.** A string is a number when it is a plain ASCII decimal: optional sign, digits with at most
  one point, optional exponent (``^[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?$``), parsed to the nearest
  double. Anything else is refused, also blanks, surrounding spaces, ``1_000``, ``0x10``, ``nan``, ``inf``.
  A string equal to one of the bin labels is that bin.
* **Refused.** NaN, ±inf, empty cells and non-numbers raise :class:`~rldp.shared.errors.RecordError`
  naming the record: a missing or broken measurement is not silently put in a bin.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import AlphabetError, RecordError

__all__ = [
    "CLOSED_SIDES",
    "DETECT_MIN_DISTINCT",
    "MAX_BINS",
    "NumericSpec",
    "default_bins",
    "looks_numeric",
    "parse_numbers",
    "quantile_edges",
]

#: The sides a bin may be closed on.
CLOSED_SIDES = ("left", "right")
#: The most bins a numeric attribute may have (a document is refused beyond it, before any matrix is read).
MAX_BINS = 1024
#: A column is detected as numeric when every non-empty cell is a decimal number and it has more distinct values.
DETECT_MIN_DISTINCT = 32
#: The default number of bins is at most this many (more bins cost PolyOpt's joint designs utility). A task on
#: U (distribution, mean) chooses its own k instead: rldp.aggregator.design.orchestration.bins, measured in
#: docs/experiments/numeric.md (there 16 bins of Adult age were 1.4-1.7x their floor at ε = 1, 12 bins 1.0x).
DEFAULT_MAX_BINS = 16

_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _label(x: float) -> str:
    # Short and exact: integers without ".0", others by Python's shortest round-trip repr.
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class NumericSpec:
    """The edges e_0 < … < e_k of a numeric attribute's k bins and the side each bin is closed on."""

    edges: tuple[float, ...]
    closed: str = "left"

    def __post_init__(self) -> None:
        edges = self.edges
        if isinstance(edges, (str, bytes)) or not isinstance(edges, (list, tuple, np.ndarray)):
            raise AlphabetError(f"numeric edges must be a list of numbers, got {type(edges).__name__}")
        out = []
        for i, e in enumerate(list(edges)):
            if isinstance(e, (bool, np.bool_)) or not isinstance(e, (int, float, np.integer, np.floating)):
                raise AlphabetError(f"numeric edge {i} must be a number, got {e!r}")
            try:
                value = float(e)
            except OverflowError:
                raise AlphabetError(f"numeric edge {i} ({e!r}) is too large for a float") from None
            if not math.isfinite(value):
                raise AlphabetError(f"numeric edge {i} is {value}; edges must be finite")
            out.append(value + 0.0)
        if len(out) < 2:
            raise AlphabetError(f"a numeric attribute needs at least 2 edges (1 bin); got {len(out)}")
        if len(out) - 1 > MAX_BINS:
            raise AlphabetError(f"a numeric attribute has at most {MAX_BINS} bins; these edges make {len(out) - 1}")
        for i in range(1, len(out)):
            if not out[i] > out[i - 1]:
                raise AlphabetError(
                    f"numeric edges must be strictly increasing; edge {i} ({out[i]!r}) is not above edge {i - 1} "
                    f"({out[i - 1]!r})"
                )
        if self.closed not in CLOSED_SIDES:
            raise AlphabetError(f"numeric 'closed' must be 'left' or 'right', got {self.closed!r}")
        object.__setattr__(self, "edges", tuple(out))

    @property
    def bins(self) -> int:
        """k, the number of bins."""
        return len(self.edges) - 1

    @property
    def lo(self) -> float:
        return self.edges[0]

    @property
    def hi(self) -> float:
        return self.edges[-1]

    def labels(self) -> tuple[str, ...]:
        """One label per bin: ``[17, 25)`` … ``[71, 90]`` (closed left; the last bin holds hi too)."""
        e = [_label(x) for x in self.edges]
        k = self.bins
        if self.closed == "left":
            return tuple(f"[{e[i]}, {e[i + 1]}{']' if i == k - 1 else ')'}" for i in range(k))
        return tuple(f"{'[' if i == 0 else '('}{e[i]}, {e[i + 1]}]" for i in range(k))

    def bin_of(self, x: np.ndarray) -> np.ndarray:
        """The bin (int64) of each finite double in ``x``; values outside [lo, hi] are clamped."""
        inner = np.asarray(self.edges[1:-1], dtype=np.float64)
        values = np.asarray(x, dtype=np.float64)
        found = (
            np.searchsorted(inner, values, side="right") if self.closed == "left" else np.searchsorted(inner, values)
        )
        out: np.ndarray = found.astype(np.int64)
        return out

    def midpoints(self) -> np.ndarray:
        e = np.asarray(self.edges)
        out: np.ndarray = (e[:-1] + e[1:]) / 2.0
        return out

    def widths(self) -> np.ndarray:
        return np.diff(np.asarray(self.edges))

    def to_dict(self) -> dict[str, Any]:
        """The document's form: ``{"edges": [...], "closed": "left"}`` (edges as floats)."""
        return {"edges": list(self.edges), "closed": self.closed}

    @classmethod
    def from_dict(cls, data: Any, name: str) -> NumericSpec:
        """Inverse of :meth:`to_dict`, strict: only ``edges`` (a list of finite numbers) and ``closed``."""
        if not isinstance(data, Mapping):
            raise AlphabetError(f"attribute {name!r}: 'numeric' must be an object with 'edges' and 'closed'")
        unknown = sorted(set(data) - {"edges", "closed"})
        if unknown:
            raise AlphabetError(f"attribute {name!r}: unknown numeric field(s) {', '.join(unknown)}")
        for key in ("edges", "closed"):
            if key not in data:
                raise AlphabetError(f"attribute {name!r}: 'numeric' is missing {key!r}")
        if not isinstance(data["edges"], (list, tuple)):
            raise AlphabetError(f"attribute {name!r}: numeric 'edges' must be a list of numbers")
        try:
            return cls(tuple(data["edges"]), data["closed"])
        except AlphabetError as exc:
            raise AlphabetError(f"attribute {name!r}: {exc}") from None


def parse_numbers(values: Any, name: str, labels: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """``(x, label_codes)``: each value as a double (NaN where it was a label) and the label's position
    (-1 where it was a number). Vectorised; RecordError naming the first value the module's rules refuse."""
    arr = np.asarray(values)
    if isinstance(values, (list, tuple)):
        _screen_python_values(values, name)
    elif arr.dtype.kind == "O":  # an object array or column (pandas): astype(str) would drop the NULs
        _screen_python_values(arr.tolist(), name)
    if arr.ndim != 1:
        raise RecordError(f"attribute {name!r}: expected a 1-D sequence of values, got shape {arr.shape}")
    codes = np.full(arr.size, -1, dtype=np.int64)
    if arr.dtype.kind == "b":
        raise RecordError(f"record 0: attribute {name!r} is numeric; got a boolean")
    if arr.dtype.kind in "iuf":
        x = arr.astype(np.float64)
    else:
        if arr.dtype.kind == "O":
            kinds = {type(v) for v in arr.tolist()}
            if kinds <= {int, float} and arr.size:
                try:
                    x = np.array(arr.tolist(), dtype=np.float64)
                except OverflowError:  # an int beyond the largest double, as "1e400" is
                    first = next(i for i, v in enumerate(arr.tolist()) if not _fits_double(v))
                    raise RecordError(
                        f"record {first}: attribute {name!r} is numeric; an integer of {len(str(arr[first]))} digits "
                        "is beyond the largest double (NaN and infinities are refused)"
                    ) from None
                _check_finite(x, arr, name)
                return x, codes
            if any(k is bool for k in kinds):
                first = next(i for i, v in enumerate(arr.tolist()) if isinstance(v, bool))
                raise RecordError(f"record {first}: attribute {name!r} is numeric; got a boolean ({arr[first]!r})")
        text = arr.astype(str) if arr.dtype.kind != "U" else arr
        x = np.full(arr.size, np.nan)
        is_label = np.zeros(arr.size, dtype=bool)
        if labels:
            keys = np.asarray(labels, dtype=str)
            order = np.argsort(keys)
            pos = np.minimum(np.searchsorted(keys[order], text), keys.size - 1)
            is_label = keys[order][pos] == text
            codes[is_label] = order[pos][is_label]
        rest = text[~is_label]
        if rest.size:
            x[~is_label] = _parse_text(rest, np.flatnonzero(~is_label), name)
        return x, codes
    _check_finite(x, arr, name)
    return x, codes


def _fits_double(v: int | float) -> bool:
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _screen_python_values(values: Sequence[Any], name: str) -> None:
    # Python objects: numpy would read True as 1 beside numbers, and drop a string's trailing NULs
    # ("4\x00" as "4"). Refused here, as the TypeScript SDK refuses them (conformance/cases/numeric-records.json).
    # One pass over the types (and the strings' text) first: the common list of numbers costs ~20 ns a value.
    kinds = set(map(type, values))
    if kinds <= {int, float}:
        return
    suspect = bool(kinds & {bool, np.bool_}) or "\x00" in "".join(v for v in values if isinstance(v, str))
    if not suspect:
        return
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)):
            raise RecordError(f"record {i}: attribute {name!r} is numeric; got a boolean ({v!r})")
        if isinstance(v, str) and v.endswith("\x00"):
            raise RecordError(f"record {i}: attribute {name!r} is numeric; {v!r} is not a finite decimal number")


def _parse_text(text: np.ndarray, where: np.ndarray, name: str) -> np.ndarray:
    # Python's float() grammar on ASCII text without spaces or underscores is exactly the decimal rule
    # plus nan/inf (refused below as non-finite): so these vectorised screens and one astype decide it.
    out = np.full(text.size, np.nan)
    ok = (np.char.str_len(text) > 0) & (np.char.find(text, "_") < 0) & (np.char.find(text, " ") < 0)
    ok &= np.char.strip(text) == text
    try:
        text.astype("S")
    except UnicodeEncodeError:
        ok &= np.array([str(t).isascii() for t in text])  # the error path only: a non-ASCII value
    bad = ~ok
    if ok.all():
        try:
            out = text.astype(np.float64)
            bad = ~np.isfinite(out)
        except ValueError:  # name the bad one (the error path only)
            bad = np.array([_DECIMAL.fullmatch(str(t)) is None for t in text])
    if not bad.any():
        return out
    i = int(np.argmax(bad))
    raise RecordError(
        f"record {int(where[i])}: attribute {name!r} is numeric; {str(text[i])!r} is not a finite decimal "
        "number (expected e.g. 42, -3.5 or 1e3: ASCII digits, no spaces, no NaN or infinity)"
    )


def _check_finite(x: np.ndarray, arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.argmax(bad))
        raise RecordError(
            f"record {i}: attribute {name!r} is numeric; got {arr[i]!r}, but NaN and infinities are refused "
            "(a missing or broken measurement is not put in a bin)"
        )


def looks_numeric(cells: np.ndarray) -> bool:
    """The detection rule: every non-empty cell is a decimal number (the text rule above) and the column
    has more than :data:`DETECT_MIN_DISTINCT` distinct values."""
    text = np.asarray(cells, dtype=str)
    text = text[text != ""]
    if text.size == 0 or np.unique(text).size <= DETECT_MIN_DISTINCT:
        return False
    try:
        parse_numbers(text, "?")
    except RecordError:
        return False
    return True


def default_bins(n: int, distinct: int) -> int:
    """The default number of bins: ⌈n^(1/3)⌉ (the rate of Freedman–Diaconis), at most
    :data:`DEFAULT_MAX_BINS` and at most the number of distinct public values, at least 2."""
    return int(max(2, min(DEFAULT_MAX_BINS, math.ceil(round(n ** (1 / 3), 9)), distinct)))


def quantile_edges(
    values: np.ndarray, bins: int | None = None, lo: float | None = None, hi: float | None = None
) -> tuple[float, ...]:
    """Edges from public values: lo and hi (the data's min and max unless given), and the inner edges at
    the public quantiles j/k (``inverted_cdf``: each is a public value), duplicates dropped; a value that
    fills two quantiles or more (a spike at 40 hours) gets a bin of its own, closed by the next public value."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise AlphabetError("no public values to place bin edges")
    lo = float(x.min()) if lo is None else float(lo)
    hi = float(x.max()) if hi is None else float(hi)
    if not hi > lo:
        raise AlphabetError(f"the range [{lo!r}, {hi!r}] is empty; need lo < hi")
    x = np.clip(x, lo, hi)
    distinct = int(np.unique(x).size)
    k = default_bins(x.size, distinct) if bins is None else int(bins)
    if k < 1 or k > MAX_BINS:
        raise AlphabetError(f"the number of bins must be in 1..{MAX_BINS}; got {k}")
    inner = np.quantile(x, np.arange(1, k) / k, method="inverted_cdf") if k > 1 else np.zeros(0)
    spikes, reps = np.unique(inner, return_counts=True)
    distinct_values = np.unique(x)
    # A value filling two quantiles or more (a spike) gets a bin of its own: the next public value closes it.
    after = np.searchsorted(distinct_values, spikes[reps > 1], side="right")
    closers = distinct_values[after[after < distinct_values.size]]
    inner = np.unique(np.r_[inner, closers])
    inner = inner[(inner > lo) & (inner < hi)]
    return (lo, *inner.tolist(), hi)


def spec_from_cells(
    cells: Any,
    name: str,
    *,
    bins: int | None = None,
    lo: float | None = None,
    hi: float | None = None,
    edges: Sequence[float] | None = None,
    closed: str = "left",
) -> NumericSpec:
    """The bins of public column ``name``: the ``edges`` given, or :func:`quantile_edges` of its cells (each a
    number by the text rule; AlphabetError naming the first that is not) with ``bins`` and the range."""
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, (int, np.integer))):
        raise AlphabetError(f"column {name!r}: the number of bins must be an integer; got {bins!r}")
    for what, v in (("lo", lo), ("hi", hi)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise AlphabetError(f"column {name!r}: the range's {what} must be a finite number; got {v!r}")
    if edges is not None:
        if bins is not None or lo is not None or hi is not None:
            raise AlphabetError(f"column {name!r}: give its edges, or a number of bins and a range, not both")
        return NumericSpec(tuple(edges), closed)
    try:
        x, _ = parse_numbers(np.asarray(cells), name)
    except RecordError as exc:
        raise AlphabetError(f"public column {name!r} is declared numeric, but {exc}") from None
    if lo is not None and hi is not None and not hi > lo:
        raise AlphabetError(f"column {name!r}: the range [{lo!r}, {hi!r}] is empty; need lo < hi")
    return NumericSpec(quantile_edges(x, bins, lo, hi), closed)
