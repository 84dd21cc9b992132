"""Exact lookups for columns with many outputs: alias tables (Walker, ACM TOMS 1977; Vose,
IEEE TSE 1991) and a vectorised search among the inversion thresholds.

With |Y| in the thousands a guide table indexed by the top bits of u cannot separate the
outputs (4,000 thresholds per column against ≤ 2¹⁰ table entries per column), so nearly
every record would need a search among the thresholds. An alias table answers in one
lookup: u's top L bits pick one of B = 2ᴸ ≥ |Y| equal buckets, each holding at most two
outputs, and u's low 53 − L bits pick between them.

Exactness. Every output y has an integer mass m_y = T[y] − T[y−1] (units of 2⁻⁵³, the
thresholds of :mod:`rldp.client.sampling`; Σ m_y = 2⁵³). The table is built in integers:
bucket i keeps ``prob[i]`` units for output i and gives C − ``prob[i]`` units
(C = 2⁵³⁻ᴸ) to ``alias[i]``; Vose's construction conserves mass exactly, so

    P(y) = (prob[y] + Σ_{i : alias[i] = y} (C − prob[i])) · 2⁻⁵³ = m_y · 2⁻⁵³,

the same probabilities as inversion (a different function of u, the same distribution).
An output with m_y = 0 is never an alias (only buckets with ≥ C units donate) and keeps
``prob[y]`` = 0, so it is never drawn. numpy only; the construction is vectorised over
the columns (one step per bucket). At K = 4,000 every array is 128 MB and touching fresh
memory costs more than the arithmetic, so the build makes few of them: the thresholds are
read output-major, the per-column order comes from a radix sort along contiguous rows, and
the masses become ``prob`` in place (the table is the same, byte for byte, as the
construction that kept them apart; 1.2–2.9 s instead of 3.0–4.1 s for the whole sampler).
"""

from __future__ import annotations

import numpy as np

try:  # built from client/_alias.c when a C compiler was there at install time
    from . import _alias as _native
except ImportError:  # pragma: no cover - exercised by installs without a compiler
    _native = None  # type: ignore[assignment]

__all__ = ["AliasTable", "search_thresholds", "HAVE_NATIVE_ALIAS"]

HAVE_NATIVE_ALIAS = _native is not None

_ALIAS_BITS = 16  # the alias index sits in the low 16 bits of each entry (|Y| ≤ 2¹⁶)


class AliasTable:
    """Alias tables for every column of Q, from the integer thresholds T (|X| × |Y|)."""

    MAX_OUTPUTS = 1 << _ALIAS_BITS

    def __init__(self, thresholds: np.ndarray, native: bool = HAVE_NATIVE_ALIAS) -> None:
        """``native``: build and read the tables in C (client/_alias.c) when it was built;
        False: numpy (the same table, byte for byte, and the same outputs)."""
        a, b = thresholds.shape
        if b > self.MAX_OUTPUTS:
            raise ValueError(f"alias tables hold at most {self.MAX_OUTPUTS} outputs; got {b}")
        # L: B = 2ᴸ ≥ |Y| buckets, and L ≥ 6 so that prob (≤ C = 2⁵³⁻ᴸ) fits above the alias.
        self.bits = max(6, (b - 1).bit_length())
        n_buckets = 1 << self.bits
        cap = 1 << (53 - self.bits)  # C: units per bucket
        self.n_buckets = n_buckets
        self.native = native and _native is not None
        if self.native:
            # Output-major thresholds ((|Y|, |X|): the sampler's layout, so no copy) → the table,
            # column by column in cache (1.6 s → ~0.1 s at K = 4,000).
            t = np.ascontiguousarray(thresholds.T, dtype=np.uint64)
            self.table = np.empty(a * n_buckets, dtype=np.uint64)
            _native.alias_build(t, b, a, self.bits, _ALIAS_BITS, self.table)
        else:
            self.table = _numpy_table(thresholds, n_buckets, cap)

    def sample(self, xs: np.ndarray, u53: np.ndarray) -> np.ndarray:
        """y for records x given their 53-bit integers u (vectorised, in cache-sized chunks)."""
        out = np.empty(xs.size, dtype=np.int64)
        self.sample_words(xs, u53, out, shift=0)
        return out

    def sample_words(self, xs: np.ndarray, words: np.ndarray, out: np.ndarray, shift: int) -> None:
        """Write y for records ``xs`` (int64) into ``out`` (int64), with u = ``words`` >> ``shift``
        (uint64; 11 for raw 64-bit keystream words: the same u as ``OSRandom.bits(n, 53)``).

        With the C accelerator one loop does everything; else numpy, in cache-sized chunks
        (``words`` may be shifted in place: it is scratch).
        """
        xs = np.ascontiguousarray(xs, dtype=np.int64)  # no copy for the samplers' own arrays
        words = np.ascontiguousarray(words, dtype=np.uint64)
        if self.native and _native is not None and _native_ready(out):  # (a table built in numpy reads the same)
            bad = _native.alias_sample(self.table, xs, words, out, self.bits, _ALIAS_BITS, shift)
            if bad >= 0:  # callers check the indices first
                raise IndexError(f"record {bad}: input index {int(xs[bad])} outside the alias tables")
            return
        if shift:
            words >>= np.uint64(shift)
        step = min(xs.size, self.CHUNK)
        buffers = self.buffers(step)
        for start in range(0, xs.size, step):
            stop = min(start + step, xs.size)
            self.sample_chunk(xs[start:stop], words[start:stop], out[start:stop], buffers)

    CHUNK = 1 << 13  # records per vectorised step: ~5 temporaries of 64 KiB stay in a core's L2

    @staticmethod
    def buffers(size: int) -> tuple[np.ndarray, ...]:
        """Scratch arrays for :meth:`sample_chunk` of up to ``size`` records (reused chunk after chunk)."""
        return tuple(np.empty(size, dtype=np.uint64) for _ in range(3)) + (np.empty(size, dtype=bool),)

    def sample_chunk(self, xs: np.ndarray, u: np.ndarray, out: np.ndarray, buffers: tuple[np.ndarray, ...]) -> None:
        """Write y for records ``xs`` (int64) and 53-bit integers ``u`` (uint64) into ``out`` (int64).

        A handful of in-place passes; the choice between the bucket's own output and its
        alias is arithmetic (alias + keep·(bucket − alias)): a masked copy on a mask that is
        true about half the time costs ~4× more (branch mispredictions).
        """
        m = xs.size
        bk, en, lw, kp = (b[:m] for b in buffers)
        y = out.view(np.uint64)
        np.right_shift(u, np.uint64(53 - self.bits), out=bk)  # the bucket: u's top L bits (< 2ᴸ)
        ix = y  # the entry x·2ᴸ + bucket, built in the output's memory
        np.left_shift(xs.view(np.uint64), np.uint64(self.bits), out=ix)
        ix |= bk
        self.table.take(ix.view(np.int64), out=en, mode="clip")  # in range by construction
        np.bitwise_and(u, np.uint64((1 << (53 - self.bits)) - 1), out=lw)
        np.right_shift(en, np.uint64(_ALIAS_BITS), out=ix)  # prob
        np.less(lw, ix, out=kp)  # u's low bits below prob: the bucket's own output
        en &= np.uint64(self.MAX_OUTPUTS - 1)  # alias
        np.subtract(bk, en, out=y)
        np.multiply(y, kp.view(np.uint8), out=y)
        y += en


def _numpy_table(thresholds: np.ndarray, n_buckets: int, cap: int) -> np.ndarray:
    """The packed table (column-major: x·2ᴸ + bucket) by :func:`_vose` in numpy."""
    a, b = thresholds.shape
    # Bucket-major masses (entry b·|X| + x), written straight from the thresholds (≤ 2⁵³:
    # the same values as int64); at K = 4,000 every temporary is 128 MB, so there are few.
    # Read output-major ((|Y|, |X|), as the sampler builds them, so the differences run
    # along contiguous rows; any other layout is copied once).
    t = np.ascontiguousarray(thresholds.T).view(np.int64)
    mass = np.zeros((n_buckets, a), dtype=np.int64)
    mass[0] = t[0]
    np.subtract(t[1:], t[:-1], out=mass[1:b])
    prob, alias = _vose(mass, cap)
    # One uint64 per bucket: prob (≤ C = 2⁵³⁻ᴸ, so ≤ 54 − L bits) above a 16-bit alias.
    packed = prob.view(np.uint64)
    packed <<= np.uint64(_ALIAS_BITS)
    packed |= alias.view(np.uint64)
    return np.ascontiguousarray(packed.reshape(n_buckets, a).T).reshape(-1)  # column-major: x·2ᴸ + bucket


def _native_ready(out: np.ndarray) -> bool:
    """Whether the C loop can write ``out`` as it is (contiguous native int64)."""
    return out.dtype == np.int64 and out.dtype.isnative and out.flags.c_contiguous and out.flags.writeable


def _vose(mass: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """(prob, alias), flat bucket-major (entry b·|X| + x), from integer masses (B, |X|), each
    column summing to B·C, in exact integers (``mass`` is used as scratch).

    Per column: the buckets with less than C units ("small") are filled in index order from
    the donors ("large", ≥ C units) in index order; a donor that drops below C is filled
    next (from the following donor). Every step fills one bucket and moves exactly C units
    out of the remaining total, so the buckets left unfilled at the end hold exactly C
    each. All columns advance together: one numpy step per bucket.
    """
    n_buckets, a = mass.shape
    # Bucket-major flat arrays (entry b·|X| + x) and 1-D indices: the columns advance in
    # step, so each step's gathers and scatters touch neighbouring memory. At K = 4,000 each
    # array is 128 MB and its first touch (page faults) costs more than the loop, so there
    # are as few as possible: ``mass`` doubles as prob (see below).
    w = mass.reshape(-1)
    alias = np.empty(n_buckets * a, dtype=np.int64)
    alias.reshape(n_buckets, a)[:] = np.arange(n_buckets, dtype=np.int64)[:, None]  # unfilled: their own output
    small = mass < cap
    cols = np.arange(a, dtype=np.int64)
    # Per column, its smalls (in index order) then its larges: order[x, i] is column x's i-th
    # bucket (a stable radix sort of each column's flags, along contiguous rows).
    order = np.argsort(np.ascontiguousarray(~small.T), axis=1, kind="stable").reshape(-1)
    n_small = small.sum(axis=0)
    del small
    si = np.zeros(a, dtype=np.int64)  # position of the next small in the column's order
    li = n_small.copy()  # position of the current donor
    pending = np.full(a, -1, dtype=np.int64)  # a donor that dropped below C (flat entry), to fill next
    for _ in range(n_buckets):
        has_pending = pending >= 0
        active = (has_pending | (si < n_small)) & (li < n_buckets)
        if active.all():
            rows: slice | np.ndarray = slice(None)
        elif active.any():
            rows = np.flatnonzero(active)
        else:
            break
        hp = has_pending[rows]
        r = cols[rows]
        base = r * n_buckets  # column r's row of ``order``
        nxt = order.take(np.minimum(si[rows], n_buckets - 1) + base) * a + r
        cur = np.where(hp, pending[rows], nxt)
        don_bucket = order.take(li[rows] + base)
        don = don_bucket * a + r
        wc = w.take(cur)
        alias[cur] = don_bucket
        wd = w.take(don) - (cap - wc)
        w[don] = wd
        si[rows] += ~hp
        dropped = wd < cap
        pending[rows] = np.where(dropped, don, -1)
        li[rows] += dropped
    # prob = w: a filled bucket keeps the units it held when filled (it is never a donor
    # afterwards), and an unfilled one holds exactly C (mass conservation). The unfilled ones
    # are those still their own alias (a filled bucket's donor is another bucket).
    left = alias.reshape(n_buckets, a) == np.arange(n_buckets, dtype=np.int64)[:, None]
    if np.any(mass[left] != cap):  # pragma: no cover - mass conservation makes this impossible
        raise AssertionError("alias construction lost mass")
    return w, alias


def search_thresholds(
    thresholds: np.ndarray, xs: np.ndarray, u53: np.ndarray, lo: np.ndarray | None, span: int | None, chunk: int
) -> np.ndarray:
    """Inversion y = #{y' : T[x, y'] ≤ u} when the answer is known to lie in
    [lo, min(lo + span, |Y| − 1)] (the whole range without ``lo``): the smallest such y with
    T[x, y] > u (it exists: T[x, |Y| − 1] = 2⁵³ > u), for all records at once, in chunks.

    Up to 8 candidates it is counted directly, y = lo + #{i < span : T[x, lo + i] ≤ u}
    (one gather of adjacent thresholds per record); else by bisection.
    """
    b = thresholds.shape[1]
    flat = thresholds.reshape(-1)
    width = b - 1 if span is None else min(int(span), b - 1)
    out = np.empty(xs.size, dtype=np.int64)
    step = chunk if width <= 8 else chunk // 4
    offsets = np.arange(width, dtype=np.int64)
    for start in range(0, xs.size, step):
        sl = slice(start, start + step)
        low = np.zeros(xs[sl].size, dtype=np.int64) if lo is None else lo[sl].astype(np.int64)
        base = xs[sl] * b
        u = u53[sl]
        if width <= 8:
            idx = np.minimum(low[:, None] + offsets, b - 1)  # T[x, b − 1] = 2⁵³ never counts
            idx += base[:, None]
            out[sl] = low + np.count_nonzero(flat.take(idx) <= u[:, None], axis=1)
            continue
        high = np.minimum(low + width, b - 1)
        for _ in range(width.bit_length()):  # ⌈log₂(width + 1)⌉ halvings
            mid = (low + high) >> 1
            go = flat.take(base + mid) <= u
            np.copyto(low, mid + 1, where=go)
            np.copyto(high, mid, where=~go)
        out[sl] = low
    return out
