"""The proven upper bound of a PolyOpt solve: the sectioned bound priced at several λ, and a search for better λ.

Weak duality ([LZG24, Thm 3, eq. 46]; (B1) of :mod:`.bound`) gives OPT ≤ Σλ + r*(λ) for *any* λ,
and :class:`.bound.SectionBound` bounds r*(λ) on pieces covering Γ's section. :class:`Prover`
keeps the smallest such bound over the λ it is given (the coarse rungs' lifted duals, the master's).

**A search over λ.** The rungs' lifted duals are good prices but not the best: the bound is
B(λ) = Σλ + r*(λ), convex in λ. :meth:`Prover.search` minimises its version on a grid of pieces
that fits in memory (2-16 pieces; any pieces give a proof) by a trust-region cutting-plane
method: each priced λ_k gives, per piece j and for the few bins K of (D1) with the largest
ρ_jK, the vertex tuple z_jK of that bin (:meth:`.massdp.MassDP.binding`, normalised to
P̂·z = 1), i.e. the linearisation ρ_jK(λ_k) − z_jK·(λ − λ_k) of the piece's ρ_j = max_K ρ_jK
(at θ = 0 each ρ_jK is a maximum over m of functions convex in λ, and −z_jK is, up to the bins,
a subgradient). The next trial minimises
Σλ + max of these cuts over the box |λ − λ̂|_∞ ≤ Δ around the best λ̂ so far (a small LP, HiGHS
through scipy); a trial that realises a tenth of the predicted decrease becomes λ̂ and widens
Δ (×1.5), any other halves it (a null step, whose cuts still sharpen the model). Every λ it
tries is priced by (D1), so every bound it keeps is proven as before; the search only chooses
λ, which is then priced on the refined pieces too.

Measured on Adult occupation×education at ε = 2 (2-piece grid, from the 15×4 rung's lifted
duals, 40 s offline): the grid bound falls from 0.417 to 0.383 NMI, where Polyak subgradient
steps (the previous search, along the smallest-norm subgradient of the nearly binding pieces)
stalled at 0.397 after 240 prices; priced on 12 → 21 refined pieces, 0.325 against Polyak's
0.348. Tried before: column generation on the pieces' relaxed LP with Wentges smoothing (the
relaxed master stayed at the design's value, degenerate: no gain).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linprog

from ...primitives.cone import GammaCone
from .bound import VERTEX_BUDGET, SectionBound, margin

__all__ = ["Prover", "SEARCH_PIECES", "SEARCH_RADIUS", "SEARCH_CUTS", "SEARCH_ACCEPT", "SEARCH_BINS"]

# Pieces of the grid the search prices its λ on.
SEARCH_PIECES = 16
# Cuts per piece and priced λ: the tuples of the (D1) bins with the largest ρ_K (8 rather than the
# binding one alone: grid bound 0.3879 against 0.3894 NMI after 8 s on occupation×education, ε = 2).
SEARCH_BINS = 8
# The trust region's first half-width, relative to the mean |λ| of the start.
SEARCH_RADIUS = 0.05
# Cuts kept in the model (the newest): bounds the LP's size.
SEARCH_CUTS = 2000
# A trial becomes the centre when it realises this share of the model's predicted decrease.
SEARCH_ACCEPT = 0.1


class Prover:
    """The smallest proven bound so far (``upper``) on the PolyOpt optimum for the cone at ``bound_eps``."""

    def __init__(self, lower: np.ndarray, bound_eps: float, same_sensitive: bool, p: np.ndarray, deadline: float):
        self.cone = GammaCone(lower, bound_eps, same_sensitive)
        self.p = np.asarray(p, dtype=float).reshape(-1)
        self.deadline = deadline
        self.upper: float | None = None
        self.best: np.ndarray | None = None  # the λ of ``upper``
        self.bounder: SectionBound | None = None
        self._built = False  # the enumerations are attempted once

    def _offer(self, lam: np.ndarray, r: float | None) -> bool:
        if r is None:
            return False
        cand = float(lam.sum() + r)
        if self.upper is None or cand < self.upper:
            self.upper, self.best = cand, lam
            return True
        return False

    def build(self, until: float, planned: int) -> None:
        """Enumerate the base blocks (once) and plan the pieces for ``planned`` λ before ``until``; the
        enumerations may use the time until the solve's deadline (under load they take longer)."""
        if not self._built:
            self._built = True
            bounder = SectionBound(self.cone, self.p, deadline=self.deadline, plan_until=until, prices=planned)
            self.bounder = bounder if bounder.complete else None

    def update(self, lams: list[np.ndarray], until: float, target: float, planned: int) -> None:
        """Price every λ of ``lams`` in one sweep, then refine the pieces at the best until ``until``
        or until within 1e-4 of ``target`` (a lower bound on the optimum); see :meth:`build`."""
        self.build(until, planned)
        if self.bounder is None or not lams:
            return
        rs = self.bounder.values(lams, deadline=until, refine_until=until, target=target)
        if len(lams) == 1 and rs[0] is None:  # (D1) does not apply: the tangent bound (B3)
            rs = [self.bounder.value(lams[0], deadline=until)]
        for lam, r in zip(lams, rs, strict=True):
            self._offer(lam, r)

    def search(self, lams: list[np.ndarray], until: float, target: float) -> np.ndarray | None:
        """A λ with a smaller bound than every one of ``lams`` on a coarse grid of pieces, found
        before ``until`` (see the module docstring), or None. Its bounds on the grid are proofs
        too and are kept; the caller prices it on the refined pieces."""
        if self.bounder is None or not lams:
            return None
        per_piece = 2 * sum(b.h.size for b in self.bounder.base)
        pieces = int(max(2, min(SEARCH_PIECES, VERTEX_BUDGET // max(per_piece, 1))))
        grid = SectionBound(self.cone, self.p, pieces=pieces, deadline=until)
        if not grid.complete:
            return None
        start: tuple[float, np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None
        for lam in lams:
            priced = grid.price(lam, until, SEARCH_BINS)
            if priced is not None:
                value = float(lam.sum() + priced[0].max())
                self._offer(lam, float(priced[0].max()) + margin(lam, float(priced[0].max())))
                if start is None or value < start[0]:
                    start = (value, lam, priced)
        if start is None:
            return None
        best, lam, priced = start
        cuts = _Cuts(lam.size)
        cuts.add(lam, *priced)
        scale = max(float(np.mean(np.abs(lam))), 1e-12)
        radius, found = SEARCH_RADIUS * scale, None
        while time.perf_counter() < until and best - target > 1e-4 * abs(target) and radius > 1e-9 * scale:
            step = cuts.minimise(lam, radius)
            if step is None:
                break
            trial, model = step
            priced = grid.price(trial, until, SEARCH_BINS)
            if priced is None:
                break
            cuts.add(trial, *priced)
            value = float(trial.sum() + priced[0].max())
            if value < best - SEARCH_ACCEPT * max(best - model, 0.0):
                lam, best, found = trial, value, trial
                self._offer(trial, float(priced[0].max()) + margin(trial, float(priced[0].max())))
                radius *= 1.5
            else:
                radius *= 0.5
        return found

    def kind(self, same_sensitive: bool) -> str:
        eps = self.cone.epsilon
        return (
            "polytope-lagrangian: Σλ + a proven bound on the best reduced cost (the section of Γ cut into "
            "pieces, each bounded by a dynamic programme over P̂·z, block enumeration; cg.bound, cg.massdp); "
            "bounds PolyOpt" + (" with the s1 = s2 rows" if same_sensitive else "") + f" at epsilon = {eps:.12g}"
        )


class _Cuts:
    """The cutting-plane model of the grid's bound: Σλ + max_i (c_i − z_i·λ) (see the module docstring)."""

    def __init__(self, size: int):
        self.size = size
        self.c: list[float] = []
        self.z: list[np.ndarray] = []

    def add(self, lam: np.ndarray, rhos: np.ndarray, tuples: np.ndarray) -> None:
        flat = np.asarray(lam, dtype=float).reshape(-1)
        self.c.extend(float(r + flat @ z) for r, z in zip(rhos, tuples, strict=True))
        self.z.extend(tuples)
        del self.c[:-SEARCH_CUTS], self.z[:-SEARCH_CUTS]

    def minimise(self, centre: np.ndarray, radius: float) -> tuple[np.ndarray, float] | None:
        """The model's minimiser over the box |λ − centre|_∞ ≤ radius and its value, or None."""
        n = self.size
        flat = np.asarray(centre, dtype=float).reshape(-1)
        # Variables (λ, v): minimise Σλ + v subject to c_i − z_i·λ ≤ v.
        rows = np.hstack([-np.array(self.z), -np.ones((len(self.c), 1))])
        box = np.column_stack([flat - radius, flat + radius])
        out = linprog(
            np.r_[np.ones(n), 1.0],
            A_ub=rows,
            b_ub=-np.array(self.c),
            bounds=[*map(tuple, box), (None, None)],
            method="highs",
        )
        if out.status != 0:
            return None
        return out.x[:n].reshape(np.shape(centre)), float(out.fun)
