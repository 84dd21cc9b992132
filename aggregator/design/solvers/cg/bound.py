"""A tighter Lagrangian bound for PolyOpt: the section of Γ cut into pieces, each bounded by (D1) or (B3).

For any prices λ, weak duality on [LZG24, Thm 3, eq. 46] gives (:mod:`.nr` for the argument)

    OPT ≤ Σ_x λ_x + r*(λ),    r*(λ) = max {μ(z) − λ·z : z ∈ Γ, P̂·z = 1}.             (B1)

μ and Γ are homogeneous, so r* ≤ ρ as soon as h(ρ) = max_{z ∈ S} μ(z) − λ·z − ρ P̂·z ≤ 0 on any
set S that meets every ray of Γ. :meth:`.blocks.BlockPricer.bound` takes S = the section
c = min_s B_s = 1 relaxed to one union over s* (block s* allowed A ≤ e^{2ε}); this module
takes the exact section, cut into pieces:

**Pieces (RLDP cone, s₁ ≠ s₂).** On c = 1 let s* attain c and r = min_{s≠s*} B_s. Every other
block has A_s ≤ e^ε B_s* = e^ε, so r ≤ e^ε, and A_s* ≤ e^ε r; conversely these conditions give
every pair of [LZG24, eq. 41]. So the section is exactly ∪_{s*} ∪_{r∈[1,e^ε]}
P_s*(1, e^ε r) × Π_{s≠s*} P_s(r, e^ε) (P_s(lo, hi) = {z_s ≥ 0 : B_s ≥ lo, A_s ≤ hi}, see
:class:`.blocks.BlockVertices`). With the grid r_j = e^{εj/K}, r ∈ [r_j, r_{j+1}] lies in the
*piece* Π_j(s*) = P_s*(1, e^ε r_{j+1}) × Π_{s≠s*} P_s(r_j, e^ε) (lower sides only loosened),
and the K·|S| pieces cover the section. K = 1 is the old relaxation. With the s₁ = s₂ rows
(Definition 3 as printed) the section is Π_s P_s(1, e^ε), one piece.

**A tangent per piece.** μ(z) = Σ_x P̂_x z_x log z_x − m log m with m = P̂·z; the concave
−m log m lies below its tangent m₀ − (log m₀ + 1)m for every m₀ > 0, after which the objective
separates over blocks and each block's maximum over a polytope is attained at a vertex
(enumerated exactly, :class:`.blocks.BlockVertices`; P_s(r, e^ε) = r·P_s(1, e^ε/r)). So

    h(ρ) ≤ max_{j, s*} min_{m₀ ∈ M_j} [m₀ + Σ_s O_j,s(η) + W_j,s*(η) − O_j,s*(η)],   η = log m₀ + 1 + ρ,  (B2)

with O_j,s(η) = max_{P_s(r_j, e^ε)} and W_j,s(η) = max_{P_s(1, e^ε r_{j+1})} of
Σ_u P̂_su z_u log z_u − (λ_s + η P̂_s)·z_s, T_j,s*(η) the bracket without m₀. The minimum over m₀ is
taken *per piece* (each piece is a separate set), so every piece gets the tangent suited to its
own range of m.

**A partition of m.** For z with m in an interval I, −m log m − (log m₀ + 1)(−m) is at most
g_I(m₀) = max_{m ∈ I} (m (log m₀ + 1) − m log m), which is m₀ when m₀ ∈ I and smaller otherwise.
With a partition {I_k} of (0, ∞) (geometric edges e^{-3}…e^{10}, open tails):

    h(ρ) ≤ max_{j, s*, k} min_{m₀ ∈ M_j} [g_{I_k}(m₀) + T_j,s*(log m₀ + 1 + ρ)]  ≤  (B2).        (B3)

Every bracket is decreasing in ρ, so the smallest ρ with (B3) ≤ 0 is found by false position on
a bracket; the returned end always has (B3) ≤ 0 (plus a 1e-9 relative margin for the round-off
of the enumerations), so Σλ + ρ is a proven upper bound on the PolyOpt optimum, for any λ.

Measured (the tangent bound (B3)): at the optimal duals of converged problems at ε = 1 (2×5…4×4
Jeffreys draws) 1.10-1.34× the optimum, 1.39-1.55× at ε = 2: the Lagrangian gap of the coupling
through m, which neither more tangents nor the partition of m closed.

**(D1) instead of the tangent.** :mod:`.massdp` keeps −m log m exact and couples the blocks by a
max-plus dynamic programme over binned masses (statement and proof there); each piece then costs
two sweeps of its vertices per λ and is exact up to the bins' resolution. At the same optimal
duals the bound is 1.001-1.05× exact PolyOpt with 16 pieces and 1.004-1.016× with 64; the rest is
the pieces' relaxation, which shrinks as they narrow. (B3) remains for the pieces where (D1) does
not apply (a vertex tuple of zero mass with a non-negative score).

**Refinement.** Any intervals of r covering [1, e^ε] are pieces, so after a geometric grid the
piece that binds the best λ's bound is halved again and again (:meth:`SectionBound.values`). On
Adult occupation×education at ε = 1 (lifted duals of the 15×4 rung) the binding piece is the
first (r near 1; ρ falls from 0.08 there to −0.14 at r = e^ε with 13 pieces).

Cost: a piece needs 2|S| block enumerations (0.9 s on occupation×education, 15×16 with 140 k
vertices per block; 7 ms on native-country×relationship, 42×6) and per λ two passes of (D1)
(~0.1 s and 5 ms); pieces are kept in :data:`VERTEX_BUDGET` stored vertices and enumerated again
beyond it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from typing import cast

import numpy as np

from ...primitives.cone import GammaCone
from .blocks import BlockVertices
from .massdp import MassDP

__all__ = [
    "SectionBound",
    "VERTEX_BUDGET",
    "MAX_PIECES",
    "PLANNED_PRICES",
    "DP_COST",
    "TANGENTS_PER_PIECE",
    "SMALL_PIECE",
]

# Block vertices kept for the pieces (~45 bytes each with their masses): caps memory. Pieces beyond
# it are enumerated again at each sweep of SectionBound.values.
VERTEX_BUDGET = 8_000_000
# Pieces: at most this many; within it, what fits in the time planned (enumerations and (D1)).
MAX_PIECES = 64
# Pieces after refinement (SectionBound.values), at most.
MAX_REFINED = 256
# λ the planner expects to price (the coarse rungs' lifted duals and the master's), and the cost
# of one λ's two passes of (D1) on a piece in units of that piece's enumerations (measured 0.15 on
# Adult occupation×education, 0.07 on native-country×relationship).
PLANNED_PRICES = 3
DP_COST = 0.2
# Pieces with at most this many block vertices get the tangent grid (cheap to score).
SMALL_PIECE = 3_000_000
# Tangent points m₀ per piece: a geometric grid over the piece's range of P̂·z, plus 1, e^{ε/2} (the
# old bound's) and the caller's.
TANGENTS_PER_PIECE = 9
# The partition of m = P̂·z ∈ (0, ∞) of (B3): geometric edges, open-ended tails.
_EDGES = np.concatenate([[1e-300], np.exp(np.linspace(-3.0, 10.0, 131)), [np.inf]])


def margin(lam: np.ndarray, rho: float) -> float:
    """What is added to the largest ρ of (D1) for the round-off of the enumerations (1e-9 relative)."""
    return 1e-9 * (1.0 + abs(float(np.sum(lam))) + abs(rho))


Interval = tuple[float, float]  # a piece: r ∈ [lo, hi]
Blocks = tuple[list[BlockVertices], list[BlockVertices] | None]


class SectionBound:
    """The proven bound on r*(λ) for the cone ``cone`` and P̂ ``p`` (flat or (|S|, |U|)): (D1) of
    :mod:`.massdp` on every piece, (B3) where (D1) does not apply.

    A piece is an interval [lo, hi] of r (others P_s(lo, e^ε), block s* P_s*(1, e^ε hi)); any
    intervals covering [1, e^ε] give a proof. They start as a geometric grid and
    :meth:`values` can refine them: it halves the piece where the best λ's bound is attained
    (the parent's value stays valid for the other λ). The base blocks are enumerated here, the
    pieces' when first needed, kept while they fit :data:`VERTEX_BUDGET` (beyond it a piece is
    enumerated again at each sweep)."""

    def __init__(
        self,
        cone: GammaCone,
        p: np.ndarray,
        pieces: int | None = None,
        deadline: float = math.inf,
        plan_until: float | None = None,
        prices: int = PLANNED_PRICES,
    ):
        self.complete = False  # the base blocks enumerated (and the pieces planned) before ``deadline``
        self.cone = cone
        self.p = np.asarray(p, dtype=float).reshape(cone.a1, cone.a2)
        self._cache: dict[Interval, Blocks] = {}
        self._sizes: dict[Interval, int] = {}
        self.base: list[BlockVertices] = []
        self.intervals: list[Interval] = []
        self.tangents = TANGENTS_PER_PIECE
        try:
            self._plan(pieces, deadline, deadline if plan_until is None else min(plan_until, deadline), prices)
        except TimeoutError:
            return
        self.complete = True

    @classmethod
    def build(
        cls, cone: GammaCone, p: np.ndarray, deadline: float = math.inf, plan_until: float | None = None
    ) -> SectionBound | None:
        """The bound's base enumerations for ``cone``, or None if they do not fit before ``deadline``;
        the number of pieces is planned to fit, with their evaluations, before ``plan_until``."""
        out = cls(cone, p, deadline=deadline, plan_until=plan_until)
        return out if out.complete else None

    def _make(self, s: int, e: float, scale: float = 1.0, deadline: float = math.inf) -> BlockVertices:
        if time.perf_counter() > deadline:
            raise TimeoutError
        return BlockVertices(self.cone.lower[s], float(self.cone.slack[s]), e, self.p[s], scale)

    def _plan(self, pieces: int | None, deadline: float, plan_until: float, prices: int) -> None:
        cone, eps = self.cone, self.cone.epsilon
        began = time.perf_counter()
        self.base = [self._make(s, eps, deadline=deadline) for s in range(cone.a1)]
        if cone.same_sensitive:
            self.intervals = [(1.0, math.exp(eps))]
            self._cache[self.intervals[0]] = (self.base, None)
            return
        build = time.perf_counter() - began
        per_piece = 2 * sum(b.h.size for b in self.base)
        self.tangents = TANGENTS_PER_PIECE if per_piece <= SMALL_PIECE else 0
        if pieces is None:
            # A piece costs two enumerations of every block and, per λ, two passes of (D1): about
            # DP_COST enumerations. Half the time goes to the grid, the rest to refining it.
            cost = 2.0 * build * (1.0 + DP_COST * prices)
            by_time = 0.5 * (plan_until - time.perf_counter()) / max(cost, 1e-9)
            pieces = int(max(1, min(MAX_PIECES, by_time)))
        rs = [1.0, *(math.exp(eps * j / pieces) for j in range(1, pieces)), math.exp(eps)]  # ends exact: a cover
        self.intervals = list(zip(rs[:-1], rs[1:], strict=True))

    @property
    def pieces(self) -> list[tuple[list[BlockVertices], list[BlockVertices] | None, float]]:
        """Every piece (others, wide, its lower r), enumerated now if not kept (tests, small problems)."""
        return [(*self._piece_blocks(iv), iv[0]) for iv in self.intervals]

    def _piece_blocks(self, iv: Interval, deadline: float = math.inf) -> Blocks:
        if iv in self._cache:
            return self._cache[iv]
        eps, (lo, hi), a1 = self.cone.epsilon, iv, self.cone.a1
        # P_s(r, e^ε) = r·P_s(1, e^ε/r): the lower sides of the piece, and block s*'s wider top.
        others = self.base if lo == 1.0 else [self._make(s, eps - math.log(lo), lo, deadline) for s in range(a1)]
        wide = [self._make(s, eps + math.log(hi), 1.0, deadline) for s in range(a1)]
        size = sum(b.h.size for b in wide) + (0 if lo == 1.0 else sum(b.h.size for b in others))
        if sum(self._sizes.values()) + size <= VERTEX_BUDGET:
            self._sizes[iv] = size
            self._cache[iv] = (others, wide)
        return others, wide

    def _forget(self, iv: Interval) -> None:
        self._cache.pop(iv, None)
        self._sizes.pop(iv, None)

    def fits(self) -> bool:
        """Whether every piece of the grid fits :data:`VERTEX_BUDGET` (so each is enumerated once)."""
        return 2 * sum(b.h.size for b in self.base) * self.n_pieces <= VERTEX_BUDGET

    def all_kept(self) -> bool:
        return all(iv in self._cache for iv in self.intervals)

    def price(self, lam: np.ndarray, deadline: float = math.inf, cuts: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
        """Per piece, ρ_K of (D1) at λ (one pass, θ = 0; none above the two-pass :meth:`.massdp.MassDP.rho`) in its ``cuts`` largest bins and their vertex tuples
        (:meth:`.massdp.MassDP.binding`; normalised to P̂·z = 1: points of the piece, maybe slightly outside
        Γ), or None (see :meth:`values`). A proven bound on r*(λ) is the largest ρ plus :func:`margin`."""
        lam = np.asarray(lam, dtype=float).reshape(self.p.shape)
        pf = self.p.reshape(-1)
        rhos, tuples = [], []
        try:
            for iv in self.intervals:
                if time.perf_counter() > deadline:
                    raise TimeoutError
                dp = MassDP(*self._piece_blocks(iv, deadline), self.p)
                found = dp.binding(lam, cuts)
                if found is None or float(found[1][0] @ pf) <= 0:
                    return None
                tight = dp.rho(lam)  # two passes (θ at the binding mass): also a proof for the piece
                mass = found[1] @ pf
                values = found[0] if tight is None else np.minimum(found[0], tight)
                rhos.extend(values[mass > 0])
                tuples.extend(found[1][mass > 0] / mass[mass > 0, None])
        except TimeoutError:
            return None
        return np.array(rhos), np.array(tuples)

    @property
    def n_pieces(self) -> int:
        return len(self.intervals)

    def usable(self) -> bool:
        """False when a block has neither max nor min control (ℓ_s = 0 and some L = 0): the
        section is then unbounded and (B2) is +∞."""
        cone = self.cone
        return not bool(np.any((cone.slack <= 0) & (cone.lower.min(axis=1) <= 0)))

    def _tangents(self, iv: Interval, wide: bool, m0s: list[float]) -> list[float]:
        top, (low_r, high_r) = math.exp(self.cone.epsilon), iv
        # m = P̂·z on the piece lies roughly in [lo, e^ε hi] (block s* may exceed e^ε).
        high = top * high_r if wide else top
        grid = np.exp(np.linspace(math.log(low_r), math.log(high), self.tangents))
        return sorted({*m0s, 1.0, math.sqrt(top), *(float(g) for g in grid)})

    def _piece(
        self, others: list[BlockVertices], wide: list[BlockVertices] | None, lam: np.ndarray, eta: float
    ) -> np.ndarray:
        """T_j(η) per s*: Σ_s O_j,s(η) + W_j,s*(η) − O_j,s*(η) (the piece's separated maximum)."""
        o = np.array([b.scores(lam[s] + eta * self.p[s]).max() for s, b in enumerate(others)])
        if wide is None:
            return np.array([o.sum()])
        w = np.array([b.scores(lam[s] + eta * self.p[s]).max() for s, b in enumerate(wide)])
        return cast("np.ndarray", o.sum() + (w - o))

    def _h(self, lam: np.ndarray, rho: float, m0s: list[float]) -> float:
        """The right-hand side of (B3) at ρ (≤ that of (B2))."""
        worst = -math.inf
        for iv in self.intervals:
            others, wide = self._cache[iv]
            tangents = np.array(self._tangents(iv, wide is not None, m0s))
            slopes = np.log(tangents) + 1.0  # η of the tangent at m₀
            t = np.array([self._piece(others, wide, lam, float(e) + rho) for e in slopes])  # (η, s*)
            # g_k(η) = max_{m ∈ I_k} (η m − m log m): the concave maximum m₀ = e^{η−1} clipped to I_k.
            m_hat = np.clip(tangents[None, :], _EDGES[:-1, None], _EDGES[1:, None])  # (k, η)
            g = slopes[None, :] * m_hat - m_hat * np.log(m_hat)
            worst = max(worst, float(np.max(np.min(g[:, :, None] + t[None, :, :], axis=1))))
        return worst

    def values(
        self,
        lams: Sequence[np.ndarray],
        deadline: float = math.inf,
        refine_until: float | None = None,
        target: float = -math.inf,
    ) -> list[float | None]:
        """(D1) of :mod:`.massdp` for every λ of ``lams`` in one sweep over the pieces: per λ a proven
        bound on r*(λ) (the largest ρ over the pieces, plus a 1e-9 relative margin for the round-off
        of the enumerations), or None where a piece reaches m = 0, the section is unbounded, or the
        sweep did not end before ``deadline``. Until ``refine_until`` the piece binding the best λ's
        bound is then halved (both halves priced at that λ), again and again."""
        if not self.usable() or not self.complete:
            return [None] * len(lams)
        lams = [np.asarray(lam, dtype=float).reshape(self.p.shape) for lam in lams]
        rho: list[dict[Interval, float] | None] = [{} for _ in lams]
        try:
            for iv in self.intervals:
                dp = MassDP(*self._piece_blocks(iv, deadline), self.p)
                for i, lam in enumerate(lams):
                    if time.perf_counter() > deadline:
                        raise TimeoutError
                    table = rho[i]
                    r = None if table is None else dp.rho(lam)
                    if table is not None and r is not None:
                        table[iv] = r
                    else:
                        rho[i] = None
        except TimeoutError:
            return [None] * len(lams)
        if refine_until is not None:
            self._refine(lams, rho, min(refine_until, deadline), target)
        return [
            None if t is None else max(t.values()) + margin(lam, max(t.values()))
            for t, lam in zip(rho, lams, strict=True)
        ]

    def _refine(
        self, lams: list[np.ndarray], rho: list[dict[Interval, float] | None], until: float, target: float
    ) -> None:
        """Halve the binding piece of the best λ until ``until`` (see :meth:`values`)."""
        while not self.cone.same_sensitive and time.perf_counter() < until and self.n_pieces < MAX_REFINED:
            live = [i for i, t in enumerate(rho) if t is not None]
            if not live:
                return
            i = min(live, key=lambda k: float(lams[k].sum()) + max(rho[k].values()))  # type: ignore[union-attr]
            table = rho[i]
            assert table is not None
            iv = max(table, key=table.__getitem__)
            if (
                float(lams[i].sum()) + table[iv] <= target + 1e-4 * abs(target)
                or math.log(iv[1] / iv[0]) < self.cone.epsilon / 4096
            ):
                return
            mid = math.sqrt(iv[0] * iv[1])
            halves = [(iv[0], mid), (mid, iv[1])]
            try:
                found = [MassDP(*self._piece_blocks(h, until), self.p).rho(lams[i]) for h in halves]
            except TimeoutError:
                return
            sure = [r for r in found if r is not None]
            if len(sure) < len(halves):
                return
            # The halves lie inside the parent: its value stays a proof for the other λ.
            for k, t in enumerate(rho):
                if t is not None:
                    parent = t.pop(iv)
                    for h, r in zip(halves, sure, strict=True):
                        t[h] = min(r, parent) if k == i else parent  # both the parent's ρ and its own bound it
            at = self.intervals.index(iv)
            self.intervals[at : at + 1] = halves
            self._forget(iv)

    def value(
        self, lam: np.ndarray, m0s: Iterable[float] = (), deadline: float = math.inf, rtol: float = 1e-3
    ) -> float | None:
        """A proven bound on r*(λ): (D1) (:meth:`values`); where it does not apply and every piece
        is kept, (B3) (the ``m0s`` are extra tangent points; ``rtol`` its search's resolution).
        None if neither gives one before ``deadline``."""
        (r,) = self.values([lam], deadline)
        if r is not None or any(iv not in self._cache for iv in self.intervals):
            return r
        return self._value_b3(lam, m0s, deadline, rtol)

    def _value_b3(
        self, lam: np.ndarray, m0s: Iterable[float] = (), deadline: float = math.inf, rtol: float = 1e-3
    ) -> float | None:
        """The smallest ρ found with (B3) ≤ 0 (a proven bound on r*(λ)), or None if the
        section is unbounded or no such ρ was found before ``deadline``. Stops when the
        bracket is within ``rtol`` (relative to Σλ + ρ) or at the deadline (the returned end
        is proven at every step)."""
        if not self.usable() or not self.complete:
            return None
        lam = np.asarray(lam, dtype=float).reshape(self.p.shape)
        tangents = [float(m) for m in m0s if m > 0]
        if (h_lo := self._h(lam, 0.0, tangents)) <= 0:
            return 1e-9 * (1.0 + abs(float(lam.sum())))
        lo, hi = 0.0, 1.0
        while (h_hi := self._h(lam, hi, tangents)) > 0:
            lo, h_lo, hi = hi, h_hi, 4.0 * hi
            if hi > 1e6 or time.perf_counter() > deadline:
                return None
        scale = abs(float(lam.sum())) + hi
        side = 0
        while hi - lo > rtol * scale and time.perf_counter() < deadline:
            # False position (Illinois): h is decreasing in ρ; hi always has h ≤ 0.
            mid = hi - h_hi * (hi - lo) / (h_hi - h_lo)
            if not lo < mid < hi:
                mid = 0.5 * (lo + hi)
            h_mid = self._h(lam, mid, tangents)
            if h_mid <= 0:
                hi, h_hi = mid, h_mid
                if side == -1:
                    h_lo *= 0.5
                side = -1
            else:
                lo, h_lo = mid, h_mid
                if side == 1:
                    h_hi *= 0.5
                side = 1
        return hi + 1e-9 * (1.0 + scale)
