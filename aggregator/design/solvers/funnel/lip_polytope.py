"""The pieces of :mod:`.lip_cg` and :mod:`.lip`: the polytope Δ of [LTS20, eq 15], its vertices by
support, Δ on the distinct columns of P(s|x), its LP model, the admission check of a column, and
the master LP [LTS20, eq 17]."""

from __future__ import annotations

import itertools
import math
from typing import cast

import highspy
import numpy as np

from ...primitives.errors import CGError
from ..cg.highs import OPTIMAL, quiet_highs

#: HiGHS' feasibility tolerances in the master (solver settings, not privacy tolerances).
_MASTER_FEASIBILITY = 1e-10
_BASIC = 1e-13
#: How far outside Δ (a negative entry, a lift past its slab) a vertex candidate may be and stay one.
VERTEX_TOL = 1e-10

__all__ = [
    "VERTEX_TOL",
    "row_entropies",
    "Groups",
    "support_systems",
    "support_vertices",
    "DeltaLP",
    "grouped_vertices",
    "Admission",
    "Master",
]


def row_entropies(rows: np.ndarray) -> np.ndarray:
    """H(v) per row, nats (0 log 0 = 0) [LTS20, eq 16]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return cast("np.ndarray", -np.sum(np.where(rows > 0, rows * np.log(rows), 0.0), axis=1))


class Groups:
    """Δ written on the distinct columns of P(s|x): ``cond`` (|S|, G), ``label`` (|X|,) → group."""

    def __init__(self, cond: np.ndarray) -> None:
        distinct, label = np.unique(cond.T, axis=0, return_inverse=True)
        self.cond = np.ascontiguousarray(distinct.T)
        self.label = np.asarray(label).reshape(-1)
        self.size = self.cond.shape[1]

    def best(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Λ_g = max_{x∈g} λ_x, the argmax symbol of each group)."""
        members = self.ranked(lam, 1)[0]
        return lam[members], members

    def ranked(self, lam: np.ndarray, ranks: int) -> np.ndarray:
        """(ranks, G): row r holds each group's symbol with the r-th largest λ (its last one when the
        group is smaller)."""
        order = np.lexsort((-lam, self.label))  # by group, largest λ first
        sizes = np.bincount(self.label, minlength=self.size)
        first = np.r_[0, np.cumsum(sizes)[:-1]]
        r = np.arange(ranks)[:, None]
        return cast("np.ndarray", order[first + np.minimum(r, sizes - 1)])

    def expand(self, m: np.ndarray, members: np.ndarray, n: int) -> np.ndarray:
        """Columns over X: each group's mass on its chosen member."""
        v = np.zeros((len(m), n))
        v[:, members] = m
        return v

    def mass(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros((len(v), self.size))
        np.add.at(out.T, self.label, v.T)
        return out


def support_systems(a: int, c: int, max_k: int) -> int:
    return sum(math.comb(a, k) * math.comb(c, k - 1) * 2 ** (k - 1) for k in range(1, min(a, c, max_k) + 1))


class DeltaLP:
    """HiGHS model of min cost·m over Δ_G (only the cost changes between solves)."""

    def __init__(self, cond: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        n_s, g = cond.shape
        h = quiet_highs()
        h.setOptionValue("presolve", "off")  # only the objective changes: keep the basis
        h.addVars(g, np.zeros(g), np.full(g, highspy.kHighsInf))
        mat = np.vstack([cond, np.ones((1, g))])
        idx = np.tile(np.arange(g, dtype=np.int32), n_s + 1)
        starts = (np.arange(n_s + 1) * g).astype(np.int32)
        h.addRows(n_s + 1, np.r_[low, 1.0], np.r_[high, 1.0], idx.size, starts, idx, mat.reshape(-1))
        self.h, self.g = h, g
        self._all = np.arange(g, dtype=np.int32)

    def minimise(self, cost: np.ndarray, normalise: bool = True) -> np.ndarray | None:
        self.h.changeColsCost(self.g, self._all, np.asarray(cost, dtype=float))
        self.h.run()
        if self.h.getModelStatus() != OPTIMAL:
            return None
        m = np.maximum(np.asarray(self.h.getSolution().col_value), 0.0)
        return cast("np.ndarray | None", m / m.sum() if normalise else m)

    def value(self) -> float:
        return float(self.h.getInfo().objective_function_value)


def support_vertices(c: np.ndarray, low: np.ndarray, high: np.ndarray, max_support: int | None = None) -> np.ndarray:
    """Every vertex of Δ by its support (vectorised): a vertex with support T solves
    [1; c_{s,T} for k − 1 active sides] v_T = [1; bounds] (the slab rows sum to the all-ones row, so
    k ≤ |S|); each candidate is kept if it is ≥ 0 and inside every slab. ``max_support`` keeps only the
    vertices with at most that many non-zero entries."""
    n_s, a = c.shape
    bound = np.stack([low, high])  # (2, |S|)
    found = []
    for k in range(1, min(a, n_s, max_support or n_s) + 1):
        supports = np.array(list(itertools.combinations(range(a), k)), dtype=int)  # (m, k)
        c_t = c[:, supports]  # (|S|, m, k)
        sides = np.array(list(itertools.product((0, 1), repeat=k - 1)), dtype=int).reshape(2 ** (k - 1), k - 1)
        for sec in itertools.combinations(range(n_s), k - 1):
            mat = np.ones((len(supports), k, k))
            mat[:, 1:, :] = c_t[list(sec)].transpose(1, 0, 2)
            ok = np.ones(len(supports), dtype=bool)
            try:  # exactly singular systems are rare (equal columns); filter them only then
                inv = np.linalg.inv(mat)
            except np.linalg.LinAlgError:
                ok = np.abs(np.linalg.det(mat)) > 1e-12
                inv = np.linalg.inv(mat[ok])
            # One factorisation per (support, secrets), every choice of sides at once: v = M⁻¹ b.
            rhs = np.ones((len(sides), k))
            rhs[:, 1:] = bound[sides, list(sec)]
            sol = np.einsum("mij,pj->mpi", inv, rhs).reshape(-1, k)
            sup = np.repeat(supports[ok], len(sides), axis=0)
            sel = np.all(sol >= -VERTEX_TOL, axis=1)
            sol, sup = sol[sel], sup[sel]
            lift = np.einsum("smk,mk->ms", c[:, sup], sol)
            inside = np.all(lift >= low - VERTEX_TOL, axis=1) & np.all(lift <= high + VERTEX_TOL, axis=1)
            v = np.zeros((int(inside.sum()), a))
            np.put_along_axis(v, sup[inside], sol[inside], axis=1)
            found.append(v)
    if not found:
        return np.zeros((0, a))
    verts = np.concatenate(found)
    _, keep = np.unique(np.round(verts, 11), axis=0, return_index=True)
    return verts[np.sort(keep)]


def grouped_vertices(cond: np.ndarray, p_s: np.ndarray, eps_l: float, eps_u: float, max_k: int) -> np.ndarray:
    """Vertices of Δ_G with at most ``max_k`` non-zero entries (all of them when max_k ≥ |S|)."""
    low, high = math.exp(-eps_l) * p_s, math.exp(eps_u) * p_s
    verts = support_vertices(cond, low, high, max_support=max_k)
    if len(verts) == 0:
        return verts
    verts = np.maximum(verts, 0.0)
    return cast("np.ndarray", verts / verts.sum(axis=1, keepdims=True))


class Admission:
    """Checks columns inside Δ at the design budgets (no tolerance); mixes one that is outside with p_X."""

    def __init__(self, cond: np.ndarray, p_s: np.ndarray, p_x: np.ndarray, eps_l: float, eps_u: float) -> None:
        self.cond, self.p_x = cond, p_x
        self.low, self.high = math.exp(-eps_l) * p_s, math.exp(eps_u) * p_s
        self.centre = cond @ p_x  # = p_s: strictly inside every slab

    def inside(self, v: np.ndarray) -> np.ndarray:
        lift = v @ self.cond.T
        return cast(
            "np.ndarray", np.all(v >= 0, axis=1) & np.all(lift >= self.low, axis=1) & np.all(lift <= self.high, axis=1)
        )

    def __call__(self, v: np.ndarray) -> np.ndarray:
        v = np.maximum(np.atleast_2d(v), 0.0)
        v = v / v.sum(axis=1, keepdims=True)
        ok = self.inside(v)
        if np.all(ok):
            return v
        bad = v[~ok]
        lift = bad @ self.cond.T
        with np.errstate(divide="ignore", invalid="ignore"):  # mixing weight t: (1−t)·lift + t·p_s inside
            up = np.where(lift > self.high, (lift - self.high) / (lift - self.centre), 0.0)
            down = np.where(lift < self.low, (self.low - lift) / (self.centre - lift), 0.0)
        t = np.minimum(np.maximum(up, down).max(axis=1) * (1 + 1e-6) + 1e-12, 1.0)
        mixed = (1 - t[:, None]) * bad + t[:, None] * self.p_x
        fixed = np.vstack([v[ok], mixed])
        return cast("np.ndarray", fixed[self.inside(fixed)])


class Master:
    """The restricted LP [LTS20, eq 17] over the admitted columns: one HiGHS instance, columns added
    between solves (the previous basis is the warm start)."""

    def __init__(self, p_x: np.ndarray) -> None:
        self.p_x = p_x
        n = len(p_x)
        h = quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", _MASTER_FEASIBILITY)
        h.setOptionValue("dual_feasibility_tolerance", _MASTER_FEASIBILITY)
        h.setOptionValue("presolve", "off")  # presolve would discard the warm-start basis
        h.addRows(n, p_x, p_x, 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.h = h
        self.cols = np.zeros((0, n))
        self.ent = np.zeros(0)
        self._seen: set[bytes] = set()
        self.alpha = np.zeros(0)
        self.duals = np.zeros(n)
        self.value = math.inf

    def add(self, v: np.ndarray) -> int:
        """Add columns (each already admitted into Δ), skipping duplicates; returns how many."""
        fresh = []
        for row in v:
            key = np.round(row, 12).tobytes()
            if key not in self._seen:
                self._seen.add(key)
                fresh.append(row)
        if not fresh:
            return 0
        new = np.array(fresh)
        ent = row_entropies(new)
        k, n = new.shape
        nz = new != 0
        starts = np.r_[0, np.cumsum(nz.sum(axis=1))[:-1]].astype(np.int32)
        idx = np.nonzero(nz)[1].astype(np.int32)
        self.h.addCols(k, ent, np.zeros(k), np.full(k, highspy.kHighsInf), idx.size, starts, idx, new[nz])
        self.cols = np.vstack([self.cols, new])
        self.ent = np.r_[self.ent, ent]
        return int(k)

    def solve(self) -> bool:
        """Solve over the current columns. On a numerical failure, once more from scratch at HiGHS'
        default tolerances; if that fails too, False (the previous solution stays: new columns get
        weight 0), or CGError when there is none."""
        self.h.run()
        if self.h.getModelStatus() != OPTIMAL:
            self.h.clearSolver()
            self.h.setOptionValue("primal_feasibility_tolerance", 1e-7)
            self.h.setOptionValue("dual_feasibility_tolerance", 1e-7)
            self.h.run()
            self.h.setOptionValue("primal_feasibility_tolerance", _MASTER_FEASIBILITY)
            self.h.setOptionValue("dual_feasibility_tolerance", _MASTER_FEASIBILITY)
        if self.h.getModelStatus() != OPTIMAL:  # v = p_X is a column: only a numerical failure gets here
            if len(self.alpha):
                self.alpha = np.r_[self.alpha, np.zeros(len(self.cols) - len(self.alpha))]
                return False
            status = self.h.modelStatusToString(self.h.getModelStatus())
            raise CGError(f"the LIP master linear program failed: {status}")
        sol = self.h.getSolution()
        self.alpha = np.maximum(np.asarray(sol.col_value), 0.0)
        # A minimisation: HiGHS' row duals are λ of max λ·p_X s.t. λ·v ≤ H(v) (scipy's "marginals").
        self.duals = np.asarray(sol.row_dual, dtype=float)
        self.value = float(self.ent @ self.alpha)
        return True

    def basis(self) -> np.ndarray:
        return self.cols[self.alpha > _BASIC]

    def solution(self) -> tuple[np.ndarray, np.ndarray]:
        used = self.alpha > _BASIC
        return self.cols[used], self.alpha[used]
