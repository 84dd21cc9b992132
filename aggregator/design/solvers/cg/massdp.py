"""The best reduced cost on a piece of Γ's section without the tangent: a max-plus dynamic programme over m.

:mod:`.bound` bounds r*(λ) = max {μ(z) − λ·z : z ∈ Γ, P̂·z = 1} ([LZG24, Thm 3], weak duality,
(B1)) on a cover of Γ's section by *pieces*, each a product Π_s P_s of block polytopes. There the
concave −m log m (m = P̂·z) was replaced by a tangent so that the objective separates over blocks;
that is a Lagrangian relaxation of the coupling through m, and its duality gap is most of the
bound's looseness at the optimal duals (1.10-1.34× the optimum at ε = 1 on converged 2×5…4×4).
This module keeps −m log m exact and handles the coupling by a dynamic programme over m:

**Statement.** For a piece Π = Π_s P_s, prices λ and any θ ∈ ℝ let F_s(v) = Σ_u P̂_su v_u log v_u
− (λ_s + θ P̂_s)·v and m_s(v) = P̂_s·v for the vertices v of P_s, k_s(v) = ⌊m_s(v)/δ⌋ (any δ > 0),
D[K] = max {Σ_s F_s(v_s) : Σ_s k_s(v_s) = K} (max-plus convolution of the blocks' best F per k),
I_K = [max(Kδ, Σ_s min m_s), min((K + n)δ, Σ_s max m_s)] (n blocks) and

    ρ_K = θ + max_{m ∈ I_K} (D[K]/m − log m),    ρ(λ) = max_K ρ_K.                     (D1)

Then μ(z) − λ·z − ρ(λ) P̂·z ≤ 0 on Π. For a piece with a *wide* variant of each block (block s*
of :mod:`.bound`'s piece Π_j(s*) is taken from another polytope W_s*, the others from P_s; the
piece is the union over s*), D is the same programme with one flag: the best over tuples with
exactly one block from its W.

**Proof.** f(z) = μ(z) − λ·z − ρ P̂·z is convex (μ(z) = Σ_x P̂_x z_x log(z_x/m) is a sum of
perspectives of t log t composed with linear maps), so its maximum over the polytope Π is at a
vertex, a tuple (v_s) of block vertices. At a tuple with m = Σ_s m_s(v_s) and K = Σ_s k_s(v_s),
Kδ ≤ m < (K + n)δ and m lies between the sums of the blocks' extreme masses, so m ∈ I_K; and
f = Σ_s F_s(v_s) − m log m − (ρ − θ) m ≤ D[K] − m log m − (ρ − θ) m, which is ≤ 0 as soon as
ρ − θ ≥ D[K]/m − log m (m > 0): true for ρ ≥ ρ_K. A tuple with m = 0 has f ≤ D[K], fine when
D[K] < 0 (then g below tends to −∞ at 0); a bin reaching m = 0 with D[K] ≥ 0 has no finite ρ_K,
and the piece gives no bound (None). The maximum of g(m) = D/m − log m over an interval is
closed-form: g′(m) = −(D + m)/m², so g is decreasing
for D ≥ 0 and has its maximum at m = −D (clipped to the interval) for D < 0.

The bin width only costs resolution (m known within nδ): θ makes that second-order. With θ
equal to the slope of −m log m − ρm at the binding tuple (θ = ρ + log m + 1) the residual
D[K]/m − log m is flat in m there, so :meth:`MassDP.rho` runs the programme twice (θ = 0, then at
the first pass's binding mass) and keeps the smaller value (each is a proof).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .blocks import BlockVertices

__all__ = ["MassDP", "DP_BINS_PER_BLOCK", "DP_MIN_BINS", "DP_MAX_BINS", "max_plus", "max_plus_arg", "interval_rho"]

# Mass bins of the programme: m is known within n·δ (n blocks), so the bin count grows with n.
DP_BINS_PER_BLOCK = 400
DP_MIN_BINS = 3000
DP_MAX_BINS = 12_000


def max_plus(d: np.ndarray, v: np.ndarray) -> np.ndarray:
    """out[i + j] = max(d[i] + v[j]): max-plus convolution (loops over the sparser side's finite entries)."""
    if np.isfinite(v).sum() > np.isfinite(d).sum():
        d, v = v, d
    out = np.full(d.size + v.size - 1, -np.inf)
    for j in np.flatnonzero(np.isfinite(v)):
        seg = out[j : j + d.size]
        np.maximum(seg, d + v[j], out=seg)
    return out


def _binned(values: np.ndarray, mass: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Best value per bin ⌊mass/δ⌋ (−inf where a bin has no vertex) and a vertex attaining it (−1)."""
    k = np.floor(mass / delta).astype(np.int64)
    out = np.full(int(k.max()) + 1, -np.inf)
    np.maximum.at(out, k, values)
    who = np.full(out.size, -1, dtype=np.int64)
    hit = np.flatnonzero(values == out[k])
    who[k[hit]] = hit
    return out, who


def max_plus_arg(d: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`max_plus` and, per output entry, the index j into ``v`` that attains it (−1 if none)."""
    out = np.full(d.size + v.size - 1, -np.inf)
    arg = np.full(out.size, -1, dtype=np.int64)
    for j in np.flatnonzero(np.isfinite(v)):
        seg = out[j : j + d.size]
        cand = d + v[j]
        better = cand > seg
        seg[better] = cand[better]
        arg[j : j + d.size][better] = j
    return out, arg


def _pad_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = max(a.size, b.size)
    out = np.full(n, -np.inf)
    out[: a.size] = a
    np.maximum(out[: b.size], b, out=out[: b.size])
    return out


def interval_rho(d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max_{m ∈ [lo, hi]} (d/m − log m) elementwise (lo > 0): at lo for d ≥ 0, else at −d clipped."""
    m = np.where(d >= 0, lo, np.clip(-d, lo, hi))
    return d / m - np.log(m)


class MassDP:
    """(D1) for the pieces of :class:`.bound.SectionBound`: ``others`` are the blocks P_s, ``wide``
    (or None for a single product) the W_s of which exactly one block is taken."""

    def __init__(self, others: Sequence[BlockVertices], wide: Sequence[BlockVertices] | None, p: np.ndarray):
        self.others, self.wide = list(others), None if wide is None else list(wide)
        self.p = np.asarray(p, dtype=float).reshape(len(self.others), -1)
        both = self.others + ([] if self.wide is None else self.wide)
        lows = np.array([float(b.mass.min()) for b in self.others])
        highs = np.array([float(b.mass.max()) for b in self.others])
        if self.wide is None:
            self.m_lo, self.m_hi = float(lows.sum()), float(highs.sum())
        else:
            w_lo = np.array([float(b.mass.min()) for b in self.wide])
            w_hi = np.array([float(b.mass.max()) for b in self.wide])
            self.m_lo = float(lows.sum() + np.min(w_lo - lows))
            self.m_hi = float(highs.sum() + np.max(w_hi - highs))
        n = len(self.others)
        bins = int(min(DP_MAX_BINS, max(DP_MIN_BINS, DP_BINS_PER_BLOCK * n)))
        self.delta = max(max(float(b.mass.max()) for b in both) * n / bins, 1e-300)
        self.n = n

    def _table(self, lam: np.ndarray, theta: float) -> np.ndarray:
        """D[K] of (D1) at slope θ."""
        d0 = np.zeros(1)
        d1 = np.full(1, -np.inf)
        for s, blk in enumerate(self.others):
            cost = lam[s] + theta * self.p[s]
            o = _binned(blk.scores(cost), blk.mass, self.delta)[0]
            if self.wide is not None:
                w = self.wide[s]
                wv = _binned(w.scores(cost), w.mass, self.delta)[0]
                d1 = _pad_max(max_plus(d1, o), max_plus(d0, wv)) if s else max_plus(d0, wv)
            d0 = max_plus(d0, o)
        return d0 if self.wide is None else d1

    def _pass(self, lam: np.ndarray, theta: float) -> tuple[float, float]:
        """(ρ of (D1) at θ, the mass where it binds); ρ = inf when a bin reaches m = 0."""
        d = self._table(lam, theta)
        k = np.flatnonzero(np.isfinite(d))
        lo = np.maximum(k * self.delta, self.m_lo)
        hi = np.minimum((k + self.n) * self.delta, self.m_hi)
        hi = np.maximum(hi, lo)
        if np.any((lo <= 0) & (d[k] >= 0)):
            return math.inf, 1.0
        vals = interval_rho(d[k], lo, hi)
        i = int(np.argmax(vals))
        m_star = float(np.where(d[k[i]] >= 0, lo[i], np.clip(-d[k[i]], lo[i], hi[i])))
        return theta + float(vals[i]), m_star

    def rho(self, lam: np.ndarray) -> float | None:
        """The smaller ρ of two passes of (D1) (θ = 0, then θ at the first pass's binding mass),
        or None when the piece reaches m = 0."""
        lam = np.asarray(lam, dtype=float).reshape(self.p.shape)
        first, m_star = self._pass(lam, 0.0)
        if not math.isfinite(first):
            return None
        second, _ = self._pass(lam, first + math.log(m_star) + 1.0)
        return min(first, second)

    def binding(self, lam: np.ndarray, count: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
        """ρ_K of (D1) at slope θ = 0 for the ``count`` bins K with the largest (largest first: its
        ρ_K is ρ at θ = 0, a proof, if a little looser than :meth:`rho`) and each bin's vertex tuple
        (rows, flat |S|·|U|): the first an approximate maximiser of (μ(z) − λ·z)/P̂·z on the piece
        (the piece relaxes Γ's section, so it may lie slightly outside Γ), found by backtracking the
        programme; the others the best tuples of other masses (more linearisations of ρ for the
        search of :mod:`.proof`). None if the piece reaches m = 0."""
        lam = np.asarray(lam, dtype=float).reshape(self.p.shape)
        d0, d1 = np.zeros(1), np.full(1, -np.inf)
        trail: list[tuple[np.ndarray, np.ndarray, Any, Any, Any]] = []
        for s, blk in enumerate(self.others):
            o, o_who = _binned(blk.scores(lam[s]), blk.mass, self.delta)
            if self.wide is None:
                d0, a0 = max_plus_arg(d0, o)
                trail.append((o_who, a0, None, None, None))
                continue
            w, w_who = _binned(self.wide[s].scores(lam[s]), self.wide[s].mass, self.delta)
            via_o, a_o = max_plus_arg(d1, o)
            via_w, a_w = max_plus_arg(d0, w)
            n = max(via_o.size, via_w.size)
            via_o = np.concatenate([via_o, np.full(n - via_o.size, -np.inf)])
            via_w = np.concatenate([via_w, np.full(n - via_w.size, -np.inf)])
            a_o = np.concatenate([a_o, np.full(n - a_o.size, -1)])
            a_w = np.concatenate([a_w, np.full(n - a_w.size, -1)])
            wide_wins = via_w > via_o
            d1 = np.where(wide_wins, via_w, via_o)
            d0, a0 = max_plus_arg(d0, o)
            trail.append((o_who, a0, w_who, np.where(wide_wins, a_w, a_o), wide_wins))
        d = d0 if self.wide is None else d1
        k = np.flatnonzero(np.isfinite(d))
        lo = np.maximum(k * self.delta, self.m_lo)
        hi = np.maximum(np.minimum((k + self.n) * self.delta, self.m_hi), lo)
        if np.any((lo <= 0) & (d[k] >= 0)):
            return None
        vals = interval_rho(d[k], np.maximum(lo, 1e-300), hi)
        tops = np.argsort(-vals, kind="stable")[: max(int(count), 1)]
        rows = [self._backtrack(trail, int(k[t])) for t in tops]
        return vals[tops], np.array(rows)

    def _backtrack(self, trail: list[tuple[np.ndarray, np.ndarray, Any, Any, Any]], big: int) -> np.ndarray:
        """The vertex tuple (flat) attaining D[big] of :meth:`binding`'s programme."""
        flag = self.wide is not None
        parts: list[np.ndarray] = []
        for s in range(self.n - 1, -1, -1):
            o_who, a0, w_who, a1, wins = trail[s]  # (a1, w_who, wins) are None without a wide variant
            if flag and wins is not None and a1 is not None and w_who is not None and bool(wins[big]):
                j = int(a1[big])
                parts.append(self.wide[s].vertex(int(w_who[j])))  # type: ignore[index]
                flag = False
            else:
                j = int((a1 if flag and a1 is not None else a0)[big])
                parts.append(self.others[s].vertex(int(o_who[j])))
            big -= j
        return np.concatenate(parts[::-1])
