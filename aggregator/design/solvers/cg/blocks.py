"""Block enumeration: pricing and bounds on sections of Γ where it is a product of block polytopes.

On the section c = min_s B_s = 1 the cone Γ ([LZG24, Def 3]) is a product of per-block
polytopes (exactly for Definition 3 as printed; for RLDP after choosing the block
attaining c and the second-smallest level r, see :class:`BlockPricer`), and once −m log m
is replaced by a tangent the pricing objective separates over blocks, so the best row of
the section is found by enumerating each block's vertices (2^|U| subsets, vectorised).
The same enumeration bounds the best reduced cost over all of Γ (:meth:`BlockPricer.bound`),
which gives the Lagrangian upper bound on the PolyOpt optimum.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable
from typing import cast

import numpy as np

from ...primitives.cone import GammaCone

__all__ = ["BlockVertices", "BlockPricer", "BLOCK_ENUMERATION_MAX_RELEASED"]

# Blocks with at most this many released values are priced by enumerating their vertices.
BLOCK_ENUMERATION_MAX_RELEASED = 16


def _xlogx(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


@functools.lru_cache(maxsize=4)
def _bits(k: int) -> np.ndarray:
    """Row H of the table is the subset H (bit u of the index ↔ u ∈ H); shared, read-only."""
    out = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    out.flags.writeable = False
    return out


def _subset_sums(values: np.ndarray) -> np.ndarray:
    """Σ_{u ∈ H} values_u for every subset H (bit u of the index ↔ u ∈ H), in O(2^k)."""
    out = np.zeros(2**values.size)
    for j, v in enumerate(values):
        out[2**j : 2 ** (j + 1)] = out[: 2**j] + v
    return out


def _vertex_part(
    ok: np.ndarray, m: np.ndarray, high: np.ndarray, j: int = -1, t: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """The vertices of the high sets where ``ok``, as (H index, m, M, free cell j or −1, its value t)."""
    idx = np.flatnonzero(ok)
    return (
        idx,
        np.broadcast_to(m, idx.shape),
        np.broadcast_to(high, idx.shape),
        np.full(idx.size, j),
        np.zeros(idx.size) if t is None else t,
    )


def _vertex_candidates(low: np.ndarray, slack: float, e: float, bits: np.ndarray) -> tuple[np.ndarray, ...]:
    """The vertices of one block's polytope (cases (i)–(iv) and the constant rows of :class:`BlockVertices`):
    (H index, m, M, free cell j or −1, its value t), one entry per vertex."""
    k = low.size
    lam_h = _subset_sums(low)
    total = float(low.sum())
    parts: list[tuple[np.ndarray, ...]] = []  # (H index, m, M, free cell j or -1, its value t)
    some = np.arange(2**k) > 0  # H ≠ ∅ (index 0 is the empty set; bits.any(axis=1) was the cost here)
    nonempty = some & (np.arange(2**k) < 2**k - 1)
    # (i) both sides tight
    a_, b_, c_, d_ = total - lam_h, lam_h + slack, 1.0 - lam_h, lam_h
    det = a_ * d_ - b_ * c_
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = (e * d_ - b_) / det
        big1 = (a_ - c_ * e) / det
    ok = nonempty & (np.abs(det) > 1e-14) & (m1 >= 0) & (big1 >= m1) & np.isfinite(m1)
    parts.append(_vertex_part(ok, m1[ok], big1[ok]))
    # (ii) m = 0, A tight; (iii) m = 0, B tight
    with np.errstate(divide="ignore", invalid="ignore"):
        big2 = e / (lam_h + slack)
        big3 = 1.0 / lam_h
        tight2 = big2 * lam_h >= 1.0
        tight3 = big3 * (lam_h + slack) <= e
    ok = some & tight2 & np.isfinite(big2)
    parts.append(_vertex_part(ok, np.zeros(1), big2[ok]))
    ok = some & (lam_h > 0) & tight3 & np.isfinite(big3)
    parts.append(_vertex_part(ok, np.zeros(1), big3[ok]))
    # (iv) one free cell
    if slack > 1e-12:
        big4 = (e - 1.0) / slack
        for j in range(k):
            if low[j] <= 0:
                continue
            t = (1.0 - big4 * lam_h) / low[j]
            ok = some & ~bits[:, j] & (t >= 0) & (t <= big4)
            parts.append(_vertex_part(ok, np.zeros(1), np.full(1, big4), j, t[ok]))
    # constant rows z = 1 and z = e^ε (H = all cells, m = M)
    full = 2**k - 1
    parts.append((np.array([full, full]), np.array([1.0, e]), np.array([1.0, e]), np.array([-1, -1]), np.zeros(2)))
    return tuple(np.concatenate([part[i] for part in parts]) for i in range(5))


class BlockVertices:
    """Vertices of one block's polytope P_s = {z ≥ 0 : A_s(z) ≤ e^ε, B_s(z) ≥ 1}, where
    A_s = L_s·z + ℓ_s max z and B_s = L_s·z + ℓ_s min z (the two sides of [LZG24, eq. 41], see :mod:`..cone`).

    Why: with the s₁ = s₂ rows (Definition 3 as printed) Γ = ∪_c Π_s P_s·c, because
    max_s A_s ≤ e^ε min_s B_s ⟺ ∃c: A_s ≤ e^ε c ≤ e^ε B_s for all s; so on the section
    c = 1 the cone is a product of per-block polytopes, and a convex objective that
    separates over blocks is maximised block by block over their vertices. Those rows also
    lie in the RLDP cone (s₁ ≠ s₂ only), which is larger; they are starting points there.

    A vertex of P_s (variables z, M ≥ z ≥ m) has every cell at m or M except at most one,
    and then m = 0 with both sides tight; with high set H (λ_H = L(H)) the candidates are
    (i) A = e^ε and B = 1 (a 2×2 solve), (ii) m = 0, A = e^ε, (iii) m = 0, B = 1,
    (iv) m = 0, A = e^ε, B = 1 with one cell j ∉ H at t ∈ [0, M], and the constant rows 1, e^ε.
    """

    def __init__(self, low: np.ndarray, slack: float, epsilon: float, prob: np.ndarray, scale: float = 1.0):
        k = low.size
        self.bits = _bits(k)
        cells, m, high, js, t = _vertex_candidates(low, slack, math.exp(epsilon), self.bits)
        # Compact storage (~37 bytes a vertex; 140 k vertices at |U| = 16): m = 0 on the
        # one-free-cell vertices and t = 0 on the others, so no masks are needed when scoring.
        self.h, self.j = cells.astype(np.int32), js.astype(np.int8)
        self._jj = np.maximum(self.j, 0)
        # P_s(r, r·e^ε) = r·P_s(1, e^ε): scaled copies serve the RLDP sections below.
        self.m, self.big, self.t = m * scale, high * scale, t * scale
        self.prob = prob
        p_h = _subset_sums(prob)[self.h]
        p_j = np.where(self.j >= 0, prob[self._jj], 0.0)
        self._ent = p_h * _xlogx(self.big) + (prob.sum() - p_h) * _xlogx(self.m) + p_j * _xlogx(self.t)
        self._mass: np.ndarray | None = None
        self.k = k

    @property
    def mass(self) -> np.ndarray:
        """P̂_s·z for every vertex z (the block's share of m = P̂·z; independent of the prices)."""
        if self._mass is None:
            self._mass = self._ent - self.scores(self.prob)
        return self._mass

    def scores(self, cost: np.ndarray) -> np.ndarray:
        """Σ_u P̂_u z_u log z_u − cost·z for every vertex z."""
        c_h = _subset_sums(cost)[self.h]
        lin = c_h * self.big + (cost.sum() - c_h) * self.m + cost[self._jj] * self.t
        return cast("np.ndarray", self._ent - lin)

    def vertex(self, i: int) -> np.ndarray:
        h = self.bits[self.h[i]]
        z = np.where(h, self.big[i], self.m[i] if self.j[i] < 0 else 0.0)
        if self.j[i] >= 0:
            z[self.j[i]] = self.t[i]
        return z


class BlockPricer:
    """Pricing on sections of the cone where it is a product of block polytopes.

    With P_s(lo, hi) = {z_s : B_s ≥ lo, A_s ≤ hi} (see :class:`BlockVertices`) and c the
    smallest B_s: the paper's cone (s₁ = s₂ rows) on c = 1 is Π_s P_s(1, e^ε); the RLDP cone
    (s₁ ≠ s₂) on c = 1, with s* the block attaining c and r = min_{s≠s*} B_s ∈ [1, e^ε], is
    P_s*(1, e^ε r) × Π_{s≠s*} P_s(r, e^ε), exactly. Sections are taken for r on a grid
    (r = e^{εj/K}, more of them on small alphabets); every row they give lies in Γ.

    f(z) = Σ_x P̂_x z_x log z_x − m log m − λ·z with m = P̂·z; the concave −m log m is
    replaced by its tangent at m₀ (above it, exact at m₀), so the objective separates over
    blocks; m₀ is then updated to the m of the chosen row (a few rounds).
    """

    def __init__(self, cone: GammaCone, p: np.ndarray, sections: bool = True):
        self.cone = cone
        self.p = p.reshape(cone.a1, cone.a2)
        eps = cone.epsilon

        def make(s: int, e: float, scale: float = 1.0) -> BlockVertices:
            return BlockVertices(cone.lower[s], float(cone.slack[s]), e, self.p[s], scale)

        self.blocks = [make(s, eps) for s in range(cone.a1)]
        # RLDP sections: grid j = 1..K of r = e^{εj/K}; others at (r, e^ε) = r·(1, e^ε/r), s* at (1, e^ε r).
        # (On large blocks the extra enumerations cost more rounds than they gain.)
        self.grid = 0 if cone.same_sensitive or not sections else (8 if cone.a1 * 2**cone.a2 <= 8192 else 0)
        self.sections = []
        for j in range(1, self.grid + 1):
            r = math.exp(eps * j / self.grid)
            others = [make(s, eps * (1 - j / self.grid), r) for s in range(cone.a1)]
            star = [make(s, eps * (1 + j / self.grid)) for s in range(cone.a1)]
            self.sections.append((others, star))
        self.relaxed: list[BlockVertices] | None = None
        self.m0s: list[float] = [1.0]  # the tangent points visited by the last columns() call

    @staticmethod
    def usable(cone: GammaCone) -> bool:
        return bool(cone.a2 <= BLOCK_ENUMERATION_MAX_RELEASED and cone.a1 * 2**cone.a2 <= 2_000_000)

    def _best(
        self, blocks: list[BlockVertices], lam: np.ndarray, eta: float
    ) -> tuple[np.ndarray, list[int], list[int]]:
        """Per block: best score, its vertex index, the runner-up's index."""
        vals, first, second = np.empty(len(blocks)), [], []
        for s, blk in enumerate(blocks):
            sc = blk.scores(lam[s] + eta * self.p[s])
            i = int(np.argmax(sc))
            vals[s] = sc[i]
            first.append(i)
            sc[i] = -np.inf
            second.append(int(np.argmax(sc)))
        return vals, first, second

    def columns(self, lam: np.ndarray, rounds: int = 6) -> np.ndarray:
        """Rows from the best section found (several tangent points m₀) and one-block swaps
        to each block's runner-up vertex."""
        lam = lam.reshape(self.p.shape)
        pf = self.p.reshape(-1)
        m0 = 1.0
        out, visited = [], []
        for _ in range(rounds):
            eta = math.log(m0) + 1.0
            vals, first, second = self._best(self.blocks, lam, eta)
            best_val, blocks, choice, alts = vals.sum(), list(self.blocks), first, second
            for others, star in self.sections:
                o_vals, o_first, o_second = self._best(others, lam, eta)
                s_vals, s_first, s_second = self._best(star, lam, eta)
                gain = s_vals - o_vals
                k = int(np.argmax(gain))
                if o_vals.sum() + gain[k] > best_val:
                    best_val = o_vals.sum() + gain[k]
                    blocks = list(others)
                    blocks[k] = star[k]
                    choice, alts = list(o_first), list(o_second)
                    choice[k], alts[k] = s_first[k], s_second[k]
            z = np.concatenate([blk.vertex(i) for blk, i in zip(blocks, choice, strict=True)])
            out.append(z)
            m_new = float(pf @ z)
            visited.append(m0)
            if abs(m_new - m0) <= 1e-9 * m0:
                break
            m0 = m_new
        self.m0s = visited
        best = out[-1].reshape(self.p.shape)
        for s, blk in enumerate(blocks):
            z = best.copy()
            z[s] = blk.vertex(alts[s])
            out.append(z.reshape(-1))
        return np.array(out)

    def bound(
        self, lam: np.ndarray, m0s: Iterable[float] = (1.0,), steps: int = 14, deadline: float = math.inf
    ) -> float | None:
        """A proven upper bound on r* = max {μ(z) − λ·z : z ∈ Γ, P̂·z = 1}, or None.

        For z in the cone let c = min_s B_s(z) > 0. With the s₁ = s₂ rows z/c lies in the
        section Π_s P_s; without them (RLDP) every block but the one attaining c satisfies
        B_s ≥ c, A_s ≤ e^ε c, and that block B ≥ c, A ≤ e^ε·(second smallest B) ≤ e^{2ε} c,
        so z/c lies in the union over s* of the sections with block s* relaxed to e^{2ε}.
        μ and λ·z are homogeneous, so r* ≤ ρ as soon as h(ρ) = max over that (relaxed)
        section of μ(z) − λ·z − ρ P̂·z is ≤ 0. We bound h from above by replacing −m log m
        (m = P̂·z) with its tangent at m₀ (for any m₀ it lies above), after which the
        objective separates over blocks and each block's maximum is exact by enumerating
        its vertices. ρ is then found by bisection; the returned end is one where the
        bound on h is ≤ 0.
        """
        cone = self.cone
        if np.any((cone.slack <= 0) & (cone.lower.min(axis=1) <= 0)):
            return None  # a block without max/min control is unbounded on the section
        if not cone.same_sensitive and self.relaxed is None:
            self.relaxed = [
                BlockVertices(cone.lower[s], float(cone.slack[s]), 2.0 * cone.epsilon, self.p[s])
                for s in range(cone.a1)
            ]
        lam = lam.reshape(self.p.shape)
        m0s = sorted(set(float(m) for m in m0s if m > 0))

        def h(rho: float) -> float:
            best = math.inf
            for m0 in m0s:
                eta = math.log(m0) + 1.0 + rho
                base = np.array([blk.scores(lam[s] + eta * self.p[s]).max() for s, blk in enumerate(self.blocks)])
                total = m0 + base.sum()
                if not cone.same_sensitive:
                    assert self.relaxed is not None  # built above for this cone
                    wide = np.array([blk.scores(lam[s] + eta * self.p[s]).max() for s, blk in enumerate(self.relaxed)])
                    total += float(np.max(wide - base))
                best = min(best, total)
            return best

        if h(0.0) <= 0:
            return 0.0
        hi = 1.0
        while h(hi) > 0:
            hi *= 4.0
            if hi > 1e6 or time.perf_counter() > deadline:
                return None
        lo = 0.0
        for _ in range(steps):
            if time.perf_counter() > deadline:
                break  # hi is a proven bound at every step
            mid = 0.5 * (lo + hi)
            if h(mid) <= 0:
                hi = mid
            else:
                lo = mid
        return hi
