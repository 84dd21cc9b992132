"""The restricted master LP of column generation ([LZG24, Thm 3, eq. 46]) and its seed columns.

The master is eq. 46 restricted to the columns found so far (HiGHS via ``highspy``,
warm-started as columns arrive); it is always feasible because the constant row is in Γ
and every column is verified to lie in Γ before it enters. Its duals λ price new columns
(:mod:`.pricing`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import cast

import highspy
import numpy as np

from rldp.shared.information import row_information

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError
from ...primitives.families import grr_matrix, srr_matrix
from ..search import DELTA_CAP, largest_feasible
from .highs import OPTIMAL, quiet_highs

__all__ = ["Master", "solve_seeds", "seed_columns", "SEED_SOLVE_MIN_SECONDS"]

# HiGHS' own feasibility tolerances for the master (solver settings, not privacy tolerances).
_MASTER_FEASIBILITY = 1e-10
# θ below this counts as zero (a non-basic column).
_BASIC = 1e-12
# The first master solve (over the seed columns) may overrun a tiny budget by this much:
# without it there is no mechanism to return at all.
SEED_SOLVE_MIN_SECONDS = 10.0


class Master:
    """max Σ_j θ_j μ(v_j) s.t. Σ_j θ_j v_j = 1_X, θ ≥ 0 over the columns added so far."""

    def __init__(self, distribution: np.ndarray):
        self.p = np.asarray(distribution, dtype=float).reshape(-1)
        a = self.p.size
        h = quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", _MASTER_FEASIBILITY)
        h.setOptionValue("dual_feasibility_tolerance", _MASTER_FEASIBILITY)
        h.setOptionValue("presolve", "off")  # presolve would discard the warm-start basis
        h.addRows(a, np.ones(a), np.ones(a), 0, np.zeros(a, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.columns = np.zeros((0, a))
        self.mu = np.zeros(0)
        self.value = -math.inf
        self.theta = np.zeros(0)
        self.duals = np.zeros(a)
        self._keys: set[bytes] = set()

    def add(self, rows: np.ndarray) -> int:
        """Add columns (rows of Q normalised to Σ v = 1), skipping duplicates; returns how many."""
        rows = np.atleast_2d(rows)
        rows = rows / rows.sum(axis=1, keepdims=True)
        fresh = []
        for r in rows:
            key = np.round(r, 11).tobytes()
            if key not in self._keys:
                self._keys.add(key)
                fresh.append(r)
        if not fresh:
            return 0
        new = np.array(fresh)
        mu = row_information(new, self.p)
        k, a = new.shape
        idx = np.tile(np.arange(a, dtype=np.int32), k)
        nzmask = new.reshape(-1) != 0
        starts = np.concatenate([[0], np.cumsum((new != 0).sum(axis=1))[:-1]]).astype(np.int32)
        self.h.addCols(
            k, mu, np.zeros(k), np.full(k, np.inf), int(nzmask.sum()), starts, idx[nzmask], new.reshape(-1)[nzmask]
        )
        self.columns = np.vstack([self.columns, new])
        self.mu = np.concatenate([self.mu, mu])
        return int(k)

    def solve(self, time_limit: float | None = None) -> bool:
        if time_limit is not None:  # HiGHS' time limit counts the instance's total run time
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        if self.h.getModelStatus() != OPTIMAL:
            return False
        sol = self.h.getSolution()
        theta = np.maximum(np.asarray(sol.col_value), 0.0)
        duals = np.asarray(sol.row_dual)
        # HiGHS' sign convention for duals depends on the sense: orient λ so that λ·v = μ(v)
        # on the basic columns and λ·v ≥ μ(v) on the others (dual feasibility of eq. 46).
        basic = theta > _BASIC
        if basic.any() and np.sum((self.columns[basic] @ duals) * theta[basic]) < 0:
            duals = -duals
        self.theta, self.duals = theta, duals
        self.value = float(self.mu @ theta)
        return True

    def purge(self, keep: int) -> None:
        """Drop the non-basic columns with the most negative reduced cost until ``keep`` remain
        (the LP's basis is unaffected; a dropped column can be generated again)."""
        extra = len(self.columns) - keep
        theta = self._weights()
        if extra <= 0 or len(theta) != len(self.columns):
            return
        rc = self.mu - self.columns @ self.duals
        rc[theta > _BASIC] = np.inf
        drop = np.sort(np.argsort(rc)[:extra])
        drop = drop[np.isfinite(rc[drop])]
        if drop.size == 0:
            return
        self.h.deleteCols(int(drop.size), drop.astype(np.int32))
        for r in self.columns[drop]:
            self._keys.discard(np.round(r, 11).tobytes())
        keep_mask = np.ones(len(self.columns), dtype=bool)
        keep_mask[drop] = False
        self.columns, self.mu, self.theta = self.columns[keep_mask], self.mu[keep_mask], self.theta[keep_mask]

    def _weights(self) -> np.ndarray:
        # Columns added after the last successful solve have weight 0 in that solution.
        return np.concatenate([self.theta, np.zeros(len(self.columns) - len(self.theta))])

    def basis(self) -> np.ndarray:
        return self.columns[self._weights() > _BASIC]

    def mechanism(self) -> np.ndarray:
        theta = self._weights()
        used = theta > _BASIC
        return theta[used, None] * self.columns[used]


def solve_seeds(master: Master, deadline: float) -> Master:
    """Solve the master over its seed columns. If HiGHS fails (a time limit on a tiny budget
    on a loaded machine, or numerical trouble with badly scaled columns), retry with the
    well-scaled seeds only (max/min positive entry ≤ 1e6) plus the constant row, which
    alone is always a feasible basis (the one-output mechanism)."""
    if master.solve(max(deadline - time.perf_counter(), SEED_SOLVE_MIN_SECONDS)):
        return master
    cols = master.columns
    a = cols.shape[1]
    smallest = np.where(cols > 0, cols, np.inf).min(axis=1)
    keep = cols.max(axis=1) <= 1e6 * smallest
    for rows in (np.vstack([np.full((1, a), 1.0 / a), cols[keep]]), np.full((1, a), 1.0 / a)):
        fresh = Master(master.p)
        fresh.add(rows)
        if fresh.solve(3 * SEED_SOLVE_MIN_SECONDS):
            return fresh
    raise CGError("the restricted master LP failed on the seed columns")  # pragma: no cover


# ---------------------------------------------------------------------------
# Seed columns
# ---------------------------------------------------------------------------


def _largest_in_cone(cone: GammaCone, family: Callable[[float], np.ndarray]) -> np.ndarray | None:
    """Rows of family(t) for the largest t ∈ [0, DELTA_CAP] with every row in Γ (bisection;
    the families used are monotone: t = 0 is the constant row)."""

    def inside(ts: np.ndarray) -> np.ndarray:
        return np.array([bool(np.all(cone.contains(family(float(t))))) for t in ts])

    t = float(largest_feasible(inside, 1, steps=50)[0])
    if t < 0:
        return None
    return family(DELTA_CAP if math.isinf(t) else t)


def _robust_grr_rows(cone: GammaCone, deadline: float = math.inf) -> np.ndarray:
    """For every x the row 1 + (κ_x − 1)e_x with the largest κ_x keeping it in Γ (found by
    bisection until ``deadline``; every step's lower end is inside Γ)."""
    a = cone.size
    lo, hi = np.ones(a), np.full(a, 1e6)  # beyond 1e6 the master gets ill-conditioned
    eye = np.eye(a)

    def rows(k: np.ndarray) -> np.ndarray:
        return 1.0 + (k[:, None] - 1.0) * eye

    for _ in range(80):  # bisection on log κ
        if time.perf_counter() > deadline:
            break
        mid = np.sqrt(lo * hi)
        ok = cone.contains(rows(mid))
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return rows(lo)


def seed_columns(cone: GammaCone, extra_rows: Iterable[np.ndarray] = (), deadline: float = math.inf) -> np.ndarray:
    """Valid starting columns: the constant row, GRR and SRR rows at the largest level that
    fits Γ, per-output robust GRR rows, and ``extra_rows`` (e.g. the rows of IR / CR) —
    kept when inside Γ, and also mixed towards the constant row until inside. The searches
    for the levels (~1 s each at 1,000 symbols) are skipped once ``deadline`` has passed."""
    a = cone.size
    cols = [np.full((1, a), 1.0 / a)]
    for fam in (lambda t: grr_matrix(a, t), lambda t: srr_matrix(cone.a1, cone.a2, t)):
        if time.perf_counter() > deadline:
            break
        rows = _largest_in_cone(cone, fam)
        if rows is not None:
            cols.append(rows)
    if time.perf_counter() <= deadline:
        cols.append(_robust_grr_rows(cone, deadline))
    for rows in extra_rows:
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        rows = rows[rows.sum(axis=1) > 0]
        if rows.size:
            cols.append(cone.repair(rows))
    out = np.vstack(cols)
    out = out / out.sum(axis=1, keepdims=True)
    return cast("np.ndarray", out[cone.contains(out)])
