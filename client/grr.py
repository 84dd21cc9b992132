"""Generalised randomised response sampled from its two parameters: no table at all.

GRR on k symbols [LZG24, eq. 56] keeps x with probability d and otherwise reports one of the
k − 1 other symbols uniformly (Q(y|x) = o for y ≠ x, d + (k − 1)·o = 1). Its k × k matrix at
k = 4,000 holds 16 M entries; an alias table for it takes seconds to build and its random
gathers miss the cache. The structure needs neither: one uniform integer u per record,

    u < m_d                                     → y = x
    m_d + (i − 1)·m_o ≤ u < m_d + i·m_o, 1 ≤ i < k → y = (x + i) mod k
    u ≥ M = m_d + (k − 1)·m_o                    → u is rejected and drawn again (P < 2⁻³⁰)

with u uniform on [0, 2⁵³) (53 bits of the OS CSPRNG, or an injected source's doubles at
53-bit resolution, as in :mod:`rldp.client.sampling`).

What is exact. Given acceptance u is uniform on [0, M), so the sampler draws

    P(y = x | x) = m_d / M,    P(y | x) = m_o / M for every y ≠ x        (exactly, as rationals)

with the integers m_d, m_o computed exactly (Python integers and fractions, no float
rounding) from the normalised column d̂ = d / (d + (k − 1)·o), ô = o / (d + (k − 1)·o) of
the document's float64 parameters and the scale S = 2⁵³ − 2ˢ (2ˢ ≥ k, s ≥ 22, so M < 2⁵³):

* the smaller of d̂, ô is rounded up and the larger down, but not below it (when d ≥ o:
  m_o = ⌈ô·S⌉, m_d = max(⌊d̂·S⌋, m_o)), so the ratio m_d / m_o lies between 1 and d / o:
  the sampled mechanism is never less private than the document's (|ln(m_d/m_o)| ≤ |ln(d/o)|);
* each probability is within (1 + k·Q̂(y|x))/M of the normalised Q̂(y|x) (M ≥ 2⁵³ − 2ˢ⁺¹),
  i.e. about 2⁻⁵² for the off-diagonal entries;
* every off-diagonal output has exactly the same probability (uniform over the others).

Cost: 8 bytes of keystream and a handful of vectorised passes per record (integer division
by one constant), in cache-sized chunks; building the sampler is O(1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from .indices import check_indices, output_dtype
from .randomness import OSRandom, RandomSource, random_into, u53_from
from .sampling import ColumnSampler

__all__ = ["GrrSampler", "grr_parameters", "sampler_for", "GRR_MIN_SIZE"]


def grr_parameters(matrix: Any) -> tuple[int, float, float] | None:
    """(k, d, o) when ``matrix`` is exactly GRR (square, k ≥ 2, one value d on the diagonal and
    one value o everywhere else), else None. Two vectorised passes over the matrix."""
    q = np.asarray(matrix, dtype=np.float64)
    if q.ndim != 2 or q.shape[0] != q.shape[1] or q.shape[0] < 2:
        return None
    k = q.shape[0]
    d, o = float(q[0, 0]), float(q[1, 0])
    if not np.all(q.diagonal() == d):
        return None
    if int(np.count_nonzero(q == o)) != k * k - (0 if d == o else k):
        return None
    return k, d, o


class GrrSampler:
    """Draws y ~ GRR(k; d, o)(·|x) for many records at once (see the module docstring)."""

    CHUNK = 1 << 15  # records per vectorised step: every temporary stays in cache

    def __init__(self, size: int, diagonal: float, off_diagonal: float) -> None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
            raise ValueError(f"size must be an integer ≥ 2 (the number of symbols k); got {size!r}")
        d, o = float(diagonal), float(off_diagonal)
        for name, v in (("diagonal", d), ("off_diagonal", o)):
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number ≥ 0; got {v!r}")
        k = int(size)
        total = Fraction(d) + (k - 1) * Fraction(o)
        if total == 0:
            raise ValueError("diagonal and off_diagonal are both 0: the columns have no mass")
        self.n_outputs = self.n_inputs = k
        self.diagonal, self.off_diagonal = d, o
        self.scale_bits = max(22, (k - 1).bit_length())
        scale = (1 << 53) - (1 << self.scale_bits)
        d_hat, o_hat = Fraction(d) / total * scale, Fraction(o) / total * scale
        # Round the larger parameter down and the smaller up, the ratio moving towards 1 (but
        # not past it: two values within one unit of each other get the same mass).
        if d >= o:
            m_o = math.ceil(o_hat)
            m_d = max(math.floor(d_hat), m_o)
        else:
            m_d = math.ceil(d_hat)
            m_o = max(math.floor(o_hat), m_d)
        total_mass = m_d + (k - 1) * m_o
        if not 0 < total_mass < 1 << 53:  # pragma: no cover - S + k − 1 < 2⁵³ by the choice of s
            raise AssertionError(f"GRR masses out of range: {total_mass}")
        #: The integer masses: P(y = x) = m_d / M, P(y ≠ x) = m_o / M each.
        self.masses = (m_d, m_o, total_mass)
        self._m_o, self._total, self._k = np.uint64(m_o), np.uint64(total_mass), np.uint64(k)
        self._shift_down = m_d >= m_o
        self._shift = np.uint64(abs(m_d - m_o))

    def __repr__(self) -> str:
        return f"GrrSampler(size={self.n_inputs}, diagonal={self.diagonal!r}, off_diagonal={self.off_diagonal!r})"

    def probabilities(self) -> tuple[Fraction, Fraction]:
        """(P(y = x | x), P(y | x) for one y ≠ x): the exact probabilities the sampler draws with."""
        m_d, m_o, total = self.masses
        return Fraction(m_d, total), Fraction(m_o, total)

    def output_dtype(self, dtype: Any = None) -> np.dtype:
        """The outputs' dtype: int64 by default, or a compact integer type that holds 0 … k − 1."""
        return output_dtype(self.n_outputs, dtype)

    def sample(self, x: Any, rng: RandomSource | None = None, dtype: Any = None) -> np.ndarray:
        """Outputs y for record indices ``x`` (integers in [0, k)).

        ``rng``: None for the OS CSPRNG, or any source with ``random(n)`` (used at 53-bit
        resolution). ``dtype``: int64 by default or a compact one (:meth:`output_dtype`).
        """
        out_dtype = self.output_dtype(dtype)
        xs = check_indices(x, self.n_inputs)
        n = xs.size
        out = np.empty(n, dtype=out_dtype)
        if n == 0:
            return out
        os_source = rng is None or isinstance(rng, OSRandom)
        source = rng if isinstance(rng, OSRandom) else OSRandom()
        u_all = None if os_source else u53_from(rng, n)  # type: ignore[arg-type]
        rejected = []
        xu = xs.view(np.uint64)
        size = min(n, self.CHUNK)
        wide = out_dtype == np.int64
        buffers = np.empty(0 if wide else size, dtype=np.uint64), np.empty(size, dtype=np.uint64)
        # The plain OS source fills one reused buffer chunk after chunk (no fresh pages per chunk).
        keystream = np.empty(8 * size + 15, dtype=np.uint8) if u_all is None and type(source) is OSRandom else None
        for start in range(0, n, self.CHUNK):
            stop = min(start + self.CHUNK, n)
            if keystream is not None:
                random_into(keystream, 8 * (stop - start))
                u = keystream[: 8 * (stop - start)].view("<u8")
                u >>= np.uint64(11)  # the top 53 bits, as OSRandom.bits(n, 53)
            else:
                u = source.bits(stop - start, 53) if u_all is None else u_all[start:stop]
            j, w = (buf[: stop - start] for buf in buffers)
            if wide:  # int64 outputs are computed in place in the result
                j = out[start:stop].view(np.uint64)
            y = self._map(u, xu[start:stop], j, w)
            if not wide:
                out[start:stop] = y
            if u.max() >= self._total:
                rejected.append(np.flatnonzero(u >= self._total) + start)
        if rejected:
            self._redraw(out, xu, np.concatenate(rejected), source if os_source else rng)
        return out

    def _map(
        self, u: np.ndarray, xu: np.ndarray, j: np.ndarray | None = None, w: np.ndarray | None = None
    ) -> np.ndarray:
        """y for 53-bit integers u < M and records x (uint64; ``j``, ``w``: optional buffers of
        their size, the result is written to ``j``); arbitrary where u ≥ M.

        y = (x + i) mod k with i = ⌊(u − m_d + m_o) / m_o⌋: i = 0 (y = x) for u < m_d, and
        i ∈ {1, …, k − 1} on the k − 1 intervals of m_o integers that follow. Branch-free
        in-place passes (a masked select on an unpredictable mask costs ~5× more).
        """
        j = np.empty_like(u) if j is None else j
        w = np.empty_like(u) if w is None else w
        if self._m_o == 0:  # the identity (o = 0): nothing else can be drawn
            np.copyto(j, xu)
            return j
        if self._shift_down:  # m_d ≥ m_o: clamp u < m_d − m_o up to it (all give i = 0)
            np.maximum(u, self._shift, out=j)
            j -= self._shift
        else:
            np.add(u, self._shift, out=j)
        j //= self._m_o
        j += xu
        # (x + i) mod k for x + i < 2k without a branch: x + i − k wraps around (huge) when x + i < k.
        np.subtract(j, self._k, out=w)
        np.minimum(j, w, out=j)
        return j

    def _redraw(self, out: np.ndarray, xu: np.ndarray, where: np.ndarray, source: Any) -> None:
        """Fresh draws for the records whose u was rejected, until every one is accepted."""
        while where.size:
            u = source.bits(where.size, 53) if isinstance(source, OSRandom) else u53_from(source, where.size)
            ok = u < self._total
            out[where[ok]] = self._map(u[ok], xu[where[ok]])
            where = where[~ok]


#: GRR with fewer symbols is sampled by the column sampler's guide table (faster there: ~4-7 ns
#: against ~7 ns per record, bench/bench_scale.py); from this size on by its two parameters.
GRR_MIN_SIZE = 64


def sampler_for(matrix: Any, spec: Mapping[str, Any] | None = None) -> ColumnSampler | GrrSampler:
    """The sampler for Q (``matrix[y, x] = Q(y|x)``): :class:`GrrSampler` when Q is GRR with at
    least :data:`GRR_MIN_SIZE` symbols — read from a document's ``{"form": "grr"}`` ``spec``
    when given, else detected in Q — otherwise a :class:`~rldp.client.sampling.ColumnSampler`."""
    if spec is not None and spec.get("form") == "grr":
        params: tuple[int, float, float] | None = (
            int(spec["size"]),
            float(spec["diagonal"]),
            float(spec["off_diagonal"]),
        )
    else:
        shape = np.shape(matrix)
        params = grr_parameters(matrix) if len(shape) == 2 and shape[0] >= GRR_MIN_SIZE else None
    if params is not None and params[0] >= GRR_MIN_SIZE:
        return GrrSampler(*params)
    return ColumnSampler(matrix)
