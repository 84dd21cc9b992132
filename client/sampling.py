"""A vectorised per-column sampler, exact at 53-bit resolution.

A user's output is drawn from the column Q(·|x) of their record x, with randomness from the
OS CSPRNG (:mod:`rldp.client.randomness`, re-exported here) or, in tests, an injected source
whose ``random(n)`` numbers are used at 53-bit resolution.

The draw is exact inversion at 53-bit resolution. With the normalised cumulative sums
C[x, y] = Σ_{y' ≤ y} Q(y'|x) / Σ_{y'} Q(y'|x) (so C[x, |Y|−1] = 1 exactly) and the integer
thresholds T[x, y] = ⌈C[x, y]·2⁵³⌉, a uniform 53-bit integer u gives

    y = #{y' : T[x, y'] ≤ u}        (= the first y with u·2⁻⁵³ < C[x, y])

so P(y | x) = (T[x, y] − T[x, y−1])·2⁻⁵³ = Q(y|x) up to 2⁻⁵³, and an output with
Q(y|x) = 0 (equal thresholds) can never be drawn.

Speed without giving up exactness (guide tables with lazily drawn bits): the top w bits
of u (w = 8 or 16) are drawn first. A table maps (the top k ≤ w bits, x) to y when the whole
interval of u those bits cover lies between two thresholds of column x — the common case.
It is laid out top-major (entry j·|X| + x), so a record's entry is one multiply and one add
away from its random bits, and it holds the smallest signed integer type that fits (int8
for up to 127 outputs), so that gathering from it stays in cache. With w = 16 (chosen when
the table stays within 1 MiB) an interval holds a threshold for a fraction ≤ |Y|/2¹⁶ of the
records, which draw their remaining 37 bits and are resolved by comparing u with the
thresholds. With w = 8 that fraction is ≈ |Y|/2⁸: those records draw one more byte and look
it up in a second table, and only those still undecided draw the remaining bits. The result
is the same function of the same 53-bit u as plain inversion, so the distribution is
identical; it needs one or two bytes of OS randomness per record instead of eight. No Python
loop runs over records. Ambiguous entries (outputs > 32) carry the first output their
interval can give, and the records are resolved by a vectorised search of the few
thresholds the interval holds (:func:`~rldp.client.alias.search_thresholds`).

Thousands of outputs (more than 1/16 of a column's table entries would be ambiguous): an
exact alias table (:mod:`rldp.client.alias`) instead, built in integers from the same
thresholds, so every output keeps exactly the probability (T[x, y] − T[x, y−1])·2⁻⁵³; each
record draws 53 bits and makes one table lookup (a different function of u than
inversion, the same distribution).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .alias import AliasTable, search_thresholds
from .indices import check_indices, output_dtype
from .randomness import (
    HAVE_AES,
    OSRandom,
    RandomSource,
    random_array,
    random_bytes,
    random_into,
    u53_from,
    uniform_from_bytes,
)

__all__ = [
    "RandomSource",
    "OSRandom",
    "random_array",
    "random_bytes",
    "random_into",
    "uniform_from_bytes",
    "u53_from",
    "ColumnSampler",
    "HAVE_AES",
]

_ONE = np.uint64(1)
# Guide tables hold at most this many entries (|X|·2ᵏ, ≤ 2 bytes each → ≤ 8 MiB).
_MAX_TABLE = 1 << 22
# A 16-bit first level is used for few outputs when its table has at most this many entries
# (1 MiB of int8: it stays in a core's L2 cache, which random gathers need).
_FAST_TABLE = 1 << 20
# Alias tables (client/alias.py) for at least this many outputs, when the guide table would
# leave more than 1/16 of its entries ambiguous, and up to this many entries (8 bytes each).
_ALIAS_MIN_OUTPUTS = 64
_MAX_ALIAS = 1 << 27
# The alias path draws its keystream this many 53-bit words (1 MiB) at a time.
_ALIAS_KEYSTREAM_WORDS = 1 << 17
# Second-level blocks (256 int64 entries each, 2 KiB): at most 4 MiB.
_MAX_BLOCKS = 2048


class ColumnSampler:
    """Draws y ~ Q(·|x) for many records at once (see the module docstring).

    ``matrix[y, x] = Q(y|x)``; its columns are normalised here (they sum to 1 within the
    document's tolerance). Tables are built once per mechanism.
    """

    CHUNK = 1 << 16  # records per vectorised step

    def __init__(self, matrix: Any) -> None:
        q = np.asarray(matrix, dtype=np.float64)
        if q.ndim != 2 or q.shape[0] < 1 or q.shape[1] < 1:
            raise ValueError(f"matrix must be 2-D (|Y| × |X|); got shape {q.shape}")
        if not np.all(np.isfinite(q)) or q.min() < 0:
            raise ValueError("matrix entries must be finite and ≥ 0")
        # Running sums down each column of Q, row by row: the same additions in the same order as
        # np.cumsum(q.T, axis=1) (bit for bit), but along contiguous rows instead of a strided
        # axis (K = 4,000: 0.04 s instead of 0.6 s). One Python step per output, not per record.
        cum = np.empty(q.shape, dtype=np.float64)  # (|Y|, |X|)
        cum[0] = q[0]
        for y in range(1, q.shape[0]):
            np.add(cum[y - 1], q[y], out=cum[y])
        total = cum[-1].copy()
        if np.any(total <= 0):
            raise ValueError(f"column {int(np.argmin(total))} of the matrix has no mass")
        # In place (K = 4,000: 128 MB per temporary): x/x = 1 exactly, the last threshold is exactly 2⁵³.
        cum /= total
        cum *= float(1 << 53)
        np.ceil(cum, out=cum)
        self.n_outputs, self.n_inputs = q.shape
        by_output = cum.astype(np.uint64)  # (|Y|, |X|)
        del cum
        b, a = self.n_outputs, self.n_inputs
        # First-stage width w (bits of OS randomness drawn per record) and table bits k ≤ w.
        if b <= 16 and a << 16 <= _FAST_TABLE:
            self.width = 16  # ambiguous entries are rare: no second level needed
        else:
            self.width = 8 if b <= 16 else 16
        k_max = int(math.floor(math.log2(_MAX_TABLE / a))) if a <= _MAX_TABLE else 0
        self.table_bits = min(self.width, k_max)
        self.table: np.ndarray | None = None
        self.table2: np.ndarray | None = None
        # Ambiguous first-level entries: −1 − lo, lo the first output their interval can give
        # (the answer lies in [lo, lo + span]); with a second level −1 / −2 − block instead.
        self.span = b
        # Thousands of outputs: the guide table cannot separate them (nearly every entry
        # ambiguous); an exact alias table answers each record with one lookup instead.
        self.alias: AliasTable | None = None
        buckets = 1 << max(6, (b - 1).bit_length())
        use_alias = (
            _ALIAS_MIN_OUTPUTS <= b <= AliasTable.MAX_OUTPUTS
            and b > (1 << self.table_bits) >> 4
            and a * buckets <= _MAX_ALIAS
        )
        # T (|X| × |Y|): row x = column x's thresholds. The alias tables read them output-major
        # and nothing else does, so they keep the transposed view (no 128 MB copy at K = 4,000);
        # the guide tables and the threshold search want each column's thresholds contiguous.
        self.thresholds = by_output.T if use_alias else np.ascontiguousarray(by_output.T)
        if use_alias:
            self.alias = AliasTable(self.thresholds)
        elif self.table_bits >= 6:
            second = self.table_bits == self.width == 8
            guide = self._guide_table(self.table_bits, ranges=not second)  # (|X|, 2ᵏ), int64
            if second:
                self._second_level(guide)
            lowest = int(guide.min())
            dtype = next(
                t
                for t in (np.int8, np.int16, np.int32, np.int64)
                if np.iinfo(t).min <= lowest and b - 1 <= np.iinfo(t).max
            )
            self.table = np.ascontiguousarray(guide.T, dtype=dtype).reshape(-1)  # top-major: j·|X| + x

    def _alias_os(self, xs: np.ndarray) -> np.ndarray:
        """The alias tables fed from one reused keystream buffer (no fresh pages per draw): the
        same function of the same 53-bit words as ``OSRandom.bits(n, 53)``.

        The keystream is drawn a MiB at a time (one AES key each, so the cipher's set-up is
        paid once per 2¹⁷ records) and handed to the table as raw words (u = word >> 11).
        """
        assert self.alias is not None
        n = xs.size
        out = np.empty(n, dtype=np.int64)
        block = min(n, _ALIAS_KEYSTREAM_WORDS)
        keystream = np.empty(8 * block + 15, dtype=np.uint8)
        words = keystream[: 8 * block].view("<u8")
        for start in range(0, n, block):
            m = min(block, n - start)
            random_into(keystream, 8 * m)
            self.alias.sample_words(xs[start : start + m], words[:m], out[start : start + m], shift=11)
        return out

    def _second_level(self, guide: np.ndarray) -> None:
        """Second guide table (one more byte) for the first-level intervals that hold a threshold.

        First-level entry −2 − i sends the record to block i of ``table2``, indexed by the
        next 8 bits of u; −1 there still means "compare with the thresholds".
        """
        xs, js = np.nonzero(guide < 0)
        if xs.size == 0 or xs.size > _MAX_BLOCKS:
            return
        sub = np.arange(256, dtype=np.uint64) << np.uint64(37)
        span = np.uint64((1 << 37) - 1)
        table2 = np.empty((xs.size, 256), dtype=np.int64)
        for i, (x, j) in enumerate(zip(xs, js, strict=True)):  # per interval, once per mechanism
            starts = (np.uint64(int(j)) << np.uint64(45)) + sub
            lo = np.searchsorted(self.thresholds[x], starts, side="right")
            hi = np.searchsorted(self.thresholds[x], starts + span, side="right")
            table2[i] = np.where(lo == hi, lo, -1)
        guide[xs, js] = -2 - np.arange(xs.size)
        self.table2 = table2.reshape(-1)

    def _guide_table(self, k: int, ranges: bool) -> np.ndarray:
        """G[x, j] = y if every u with top k bits j maps to y, else −1, or −1 − lo with
        ``ranges`` (lo = the output of the interval's first u; shape |X| × 2ᵏ). Sets
        ``span``, the most thresholds one ambiguous interval holds."""
        shift = np.uint64(53 - k)
        starts = np.arange(1 << k, dtype=np.uint64) << shift
        ends = starts + ((_ONE << shift) - _ONE)
        table = np.empty((self.n_inputs, 1 << k), dtype=np.int64)
        span = 0
        for x in range(self.n_inputs):  # once per mechanism, per column (not per record)
            lo = np.searchsorted(self.thresholds[x], starts, side="right")
            hi = np.searchsorted(self.thresholds[x], ends, side="right")
            table[x] = np.where(lo == hi, lo, -1 - lo if ranges else -1)
            span = max(span, int((hi - lo).max()))
        if ranges:
            self.span = span
        return table

    def output_dtype(self, dtype: Any = None) -> np.dtype:
        """The dtype of the outputs: int64 by default, or a compact unsigned type that holds
        every output 0 … |Y| − 1 (``np.uint8`` for |Y| ≤ 256, ``np.uint16`` for |Y| ≤ 65,536)."""
        return output_dtype(self.n_outputs, dtype)

    def sample(self, x: Any, rng: RandomSource | None = None, dtype: Any = None) -> np.ndarray:
        """Outputs y for record indices ``x`` (integers in [0, |X|)).

        ``rng``: None for the OS CSPRNG, or any source with ``random(n)``. ``dtype``: the
        outputs' type, int64 by default or a compact one (:meth:`output_dtype`).
        """
        out_dtype = self.output_dtype(dtype)
        y = self._sample(x, rng)
        return y if out_dtype == y.dtype else y.astype(out_dtype)

    def _sample(self, x: Any, rng: RandomSource | None) -> np.ndarray:
        """:meth:`sample` with int64 outputs."""
        xs = check_indices(x, self.n_inputs)
        n = xs.size
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        os_source = rng is None or isinstance(rng, OSRandom)
        source = rng if isinstance(rng, OSRandom) else OSRandom()
        if self.alias is not None:
            if type(source) is OSRandom and os_source:
                return self._alias_os(xs)
            return self.alias.sample(xs, source.bits(n, 53) if os_source else u53_from(rng, n))  # type: ignore[arg-type]
        rest = np.uint64(53 - self.width)
        spare = None  # second-level bytes drawn with the first ones (one CSPRNG call, not two)
        if os_source:
            if self.table2 is not None:
                # ~|Y|/2⁸ ≤ 6.25 % of records need a second byte; draw that many more at once.
                both = source.bits(n + n // 16 + 64, 8)
                first, spare = both[:n], both[n:]
            else:
                first = source.bits(n, self.width)  # the top w bits of u; the rest only if needed
            u53 = None
        else:
            u53 = u53_from(rng, n)  # type: ignore[arg-type]
            first = (u53 >> rest).astype(np.uint16)
        if self.table is None:
            if u53 is None:
                u53 = (first.astype(np.uint64) << rest) | source.bits(n, int(rest))
            return self._exact(xs, u53)
        k, a = self.table_bits, self.n_inputs
        top = first >> (self.width - k) if k < self.width else first
        out = np.empty(n, dtype=np.int64)
        # Chunks keep every temporary in cache (and avoid page-faulting fresh 8 MB arrays). The
        # few records whose first-level entry is ambiguous (< 0) are collected and resolved
        # together afterwards, so each chunk costs only a handful of numpy calls.
        size = min(n, self.CHUNK)
        idx_buf, y_buf = np.empty(size, dtype=np.int64), np.empty(size, dtype=self.table.dtype)
        pending = []
        for start in range(0, n, self.CHUNK):
            stop = min(start + self.CHUNK, n)
            idx, y = idx_buf[: stop - start], y_buf[: stop - start]
            np.multiply(top[start:stop], a, out=idx, dtype=np.int64)  # entry j·|X| + x
            np.add(idx, xs[start:stop], out=idx)
            # Indices are in range by construction (x validated, top < 2ᵏ); "clip" skips the
            # per-element bounds check of the default mode.
            np.take(self.table, idx, out=y, mode="clip")
            if y.min() < 0:
                pending.append(np.flatnonzero(y < 0) + start)
            out[start:stop] = y
        if not pending:
            return out
        amb = np.concatenate(pending) if len(pending) > 1 else pending[0]
        if self.table2 is None:
            if u53 is None:
                full = (first[amb].astype(np.uint64) << rest) | source.bits(amb.size, int(rest))
            else:
                full = u53[amb]
            out[amb] = self._exact(xs[amb], full, -1 - out[amb], self.span)
            return out
        # Second level: 8 more bits of u (bits 45..38), drawn only for these records.
        if u53 is None:
            second = spare[: amb.size] if spare is not None and amb.size <= spare.size else source.bits(amb.size, 8)
        else:
            second = ((u53[amb] >> np.uint64(37)) & np.uint64(0xFF)).astype(np.uint8)
        block = -2 - out[amb]
        y2 = self.table2.take((block << 8) | second, mode="clip")
        out[amb] = y2
        left = np.flatnonzero(y2 < 0)
        if left.size:
            where = amb[left]
            if u53 is None:
                full = (
                    (first[where].astype(np.uint64) << np.uint64(45))
                    | (second[left].astype(np.uint64) << np.uint64(37))
                    | source.bits(left.size, 37)
                )
            else:
                full = u53[where]
            out[where] = self._exact(xs[where], full)
        return out

    def _exact(
        self, xs: np.ndarray, u53: np.ndarray, lo: np.ndarray | None = None, span: int | None = None
    ) -> np.ndarray:
        """y = #{y' : T[x, y'] ≤ u} for each record (vectorised; no loop over records or columns).

        With ``lo`` (each record's first possible output) and ``span`` (the answer is at
        most lo + span), a binary search of ⌈log₂(span + 1)⌉ vectorised steps.
        """
        b = self.n_outputs
        if b > 32:
            return search_thresholds(self.thresholds, xs, u53, lo, span, self.CHUNK)
        out = np.empty(xs.size, dtype=np.int64)
        if b <= 32:
            step = max(1, (1 << 22) // b)  # bounds the (records × |Y|) temporary
            for start in range(0, xs.size, step):
                sl = slice(start, start + step)
                out[sl] = np.count_nonzero(self.thresholds[xs[sl]] <= u53[sl, None], axis=1)
            return out
        return out  # pragma: no cover - b ≤ 32 returned above
