"""Pricing by successive linearisation: columns of Γ with a positive reduced cost.

The master's duals λ price new columns: a v ∈ Γ with μ(v) − λ·v > 0 improves the master.
Finding the best one is a convex maximisation over a polytope. Two searches feed each
round (:func:`price_round`): block enumeration (:mod:`.blocks`) and successive
linearisation (each step one small LP over Γ, warm-started, :class:`Pricer`) from the best
block rows, sampled basis columns, midpoints of pairs of them and random vertices — and,
before convergence is declared, from every basis column and every per-coordinate maximiser.

Pricing works with the normalisation P̂·z = 1 (z = v / (P̂·v)), in which
μ(z) = Σ_x P̂_x z_x log z_x and every mechanism's rows satisfy Σ_y P̂·Q_y = 1.
"""

from __future__ import annotations

import math
import time
from typing import cast

import numpy as np

from rldp.shared.information import row_information

from ...primitives.cone import GammaCone
from .blocks import BlockPricer
from .highs import PricingLP
from .master import Master

__all__ = ["PRICING_TOLERANCE", "Pricer", "objective", "gradient", "as_pricing", "price_round"]

# Reduced costs below this (nats per unit of output mass) count as zero.
PRICING_TOLERANCE = 1e-9


def objective(z: np.ndarray, p: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """f(z) = μ(z) − λ·z for rows z (any scale; μ is homogeneous)."""
    z = np.atleast_2d(z)
    return cast("np.ndarray", row_information(z, p) - z @ lam)


def gradient(z: np.ndarray, p: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """∇f(z) = P̂_x log(z_x / P̂·z) − λ_x ([LZG24, eq. 45] differentiated); z_x = 0 floored at 1e-12·max."""
    m = float(p @ z)
    floor = 1e-12 * max(float(z.max()), 1e-300)
    return cast("np.ndarray", p * np.log(np.maximum(z, floor) / m) - lam)


class Pricer:
    """Successive linearisation over Γ ∩ {P̂·z = 1}: z ← argmax ∇f(z)·z until f stops rising."""

    def __init__(self, cone: GammaCone, p: np.ndarray, rng: np.random.Generator):
        self.cone = cone
        self.p = p
        self.lp = PricingLP(cone, p)
        self.rng = rng
        self.lp_solves = 0

    def climb(self, z: np.ndarray, lam: np.ndarray, deadline: float, max_steps: int = 40) -> np.ndarray | None:
        best = None
        f_best = -math.inf
        if not float(self.p @ z) > 0:  # an all-zero start has no gradient (P̂·z = 0)
            return None
        for _ in range(max_steps):
            if time.perf_counter() > deadline:
                break
            nxt = self.lp.maximise(gradient(z, self.p, lam), deadline - time.perf_counter())
            self.lp_solves += 1
            if nxt is None or not float(self.p @ nxt) > 0:  # none, or all-zero (LP round-off at large ε)
                break
            f = float(objective(nxt, self.p, lam)[0])
            if f <= f_best + 1e-13 * (1 + abs(f)):
                break
            best, f_best, z = nxt, f, nxt
        return best

    def vertex(self, c: np.ndarray, deadline: float) -> np.ndarray | None:
        self.lp_solves += 1
        return self.lp.maximise(c, deadline - time.perf_counter())


def as_pricing(rows: np.ndarray, p: np.ndarray) -> np.ndarray:
    rows = np.atleast_2d(rows)
    m = rows @ p
    return cast("np.ndarray", rows[m > 0] / m[m > 0, None])


def price_round(
    pricer: Pricer,
    master: Master,
    lam: np.ndarray,
    rng: np.random.Generator,
    deadline: float,
    max_starts: int,
    blocks: BlockPricer | None = None,
    intensive: bool = False,
    price_at: np.ndarray | None = None,
) -> np.ndarray:
    """One pricing round: climb from (a sample of) the basis columns, midpoints of pairs of
    them and random vertices; return the distinct vertices found with positive reduced cost
    (normalised to Σ z = 1). ``intensive`` (used before declaring convergence) climbs from
    every basis column, more pairs, every per-coordinate maximiser and more random vertices."""
    p = pricer.p
    search = lam if price_at is None else price_at  # columns are searched at these prices,
    basis = as_pricing(master.basis(), p)  # and kept if they improve at ``lam``
    if intensive:
        max_starts = max(4 * max_starts, 2 * len(basis))
    starts = _basis_starts(basis, rng, max_starts, intensive)
    found = _Improving(p, lam, master.value)
    if blocks is not None:
        cand = blocks.columns(search)
        rc = objective(cand, p, lam) / (cand @ p)
        order = np.argsort(-rc)
        for i in order:
            if rc[i] > 0:
                found.consider(cand[i])
        # Polish the best of them in the full cone (s₁ ≠ s₂ only: larger than the section's).
        starts = [cand[i] / (cand[i] @ p) for i in order[:4]] + starts
    if intensive:
        for x in rng.permutation(p.size):
            if time.perf_counter() > deadline:
                break
            c = np.zeros(p.size)
            c[x] = 1.0
            starts.append(pricer.vertex(c, deadline))
    for z0 in starts:
        if time.perf_counter() > deadline:
            break
        if z0 is not None:
            found.consider(pricer.climb(z0, search, deadline))
    for _ in range(max(max_starts // 4, 1)):
        if time.perf_counter() > deadline:
            break
        v = pricer.vertex(rng.standard_normal(p.size) * p - search, deadline)
        if v is not None:
            found.consider(pricer.climb(v, search, deadline))
    return np.array(found.columns) if found.columns else np.zeros((0, p.size))


def _basis_starts(
    basis: np.ndarray, rng: np.random.Generator, max_starts: int, intensive: bool
) -> list[np.ndarray | None]:
    """The climbs' starts from the basis: a sample of its columns (all if ``intensive``), midpoints of random pairs."""
    n_basis = len(basis) if intensive else min(len(basis), max(max_starts // 2, 1))
    starts: list[np.ndarray | None] = (
        [basis[i] for i in rng.choice(len(basis), n_basis, replace=False)] if len(basis) else []
    )
    if len(basis) >= 2:
        for _ in range(max(max_starts // 4, 1)):
            i, j = rng.choice(len(basis), 2, replace=False)
            starts.append(0.5 * (basis[i] + basis[j]))
    return starts


class _Improving:
    """The distinct columns found with a positive reduced cost at ``lam`` (normalised to Σ z = 1)."""

    def __init__(self, p: np.ndarray, lam: np.ndarray, master_value: float):
        self.p, self.lam, self.master_value = p, lam, master_value
        self.columns: list[np.ndarray] = []
        self.seen: set[bytes] = set()

    def consider(self, z: np.ndarray | None) -> None:
        """Keep ``z`` (normalised) if it improves the master and is new."""
        if z is None:
            return
        total = float(z.sum())
        if not (math.isfinite(total) and total > 0):  # an all-zero row (LP round-off at large ε): no column
            return
        # Reduced cost per unit of Σ z, the master's own scale: HiGHS judges optimality
        # there, so a column below its tolerance on that scale would enter without a pivot.
        rc = float(objective(z, self.p, self.lam)[0]) / total
        if rc > max(PRICING_TOLERANCE, 1e-9 * abs(self.master_value)):
            key = np.round(z / total, 10).tobytes()
            if key not in self.seen:
                self.seen.add(key)
                self.columns.append(z / total)
