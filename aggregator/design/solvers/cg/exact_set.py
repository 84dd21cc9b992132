"""Experimental: PolyOpt-style design beyond the polytope, rows certified by the exact audit.

Γ ([LZG24, Def 3]) encloses each projected ball F_U|s in a polytope D_s; the exact audit
([LZG24, Thm 1]) uses the balls themselves, so its cone K ⊇ Γ is larger. This variant is
a heuristic search over K (no optimality claim, no bound); every row it keeps is verified
by the exact audit, and so is the final mechanism.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import cast

import numpy as np

from rldp.shared.audit import audit_rldp, rldp_epsilon
from rldp.shared.information import mutual_information
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError
from ...primitives.exact import enumerate_vertices
from .master import Master
from .result import CGResult, Progress, check_inputs
from .solve import solve_polyopt_cg

__all__ = ["solve_exact_set_cg"]


def _audit_cone_violation(uset: UncertaintySet, rows: np.ndarray, epsilon: float) -> np.ndarray:
    """max_{s₁≠s₂} (max_{R∈F_U|s₁} R·v_s₁ − e^ε min_{R∈F_U|s₂} R·v_s₂) per row: ≤ 0 iff the
    row passes the exact audit (the cone K ⊇ Γ of rows whose every ratio is ≤ e^ε; K is
    convex since the max is convex and the min concave in v). Search only: every row that
    is kept is verified again by :func:`rldp.shared.audit.rldp_epsilon`."""
    a1, a2 = uset.n_sensitive, uset.n_released
    hi, lo = uset.extremes(np.atleast_2d(rows).reshape(-1, a1, a2))
    diff = hi[:, :, None] - math.exp(epsilon) * lo[:, None, :]
    diff[:, np.arange(a1), np.arange(a1)] = -np.inf
    return cast("np.ndarray", diff.reshape(len(diff), -1).max(axis=1))


def _into_audit_cone(uset: UncertaintySet, rows: np.ndarray, epsilon: float, steps: int = 40) -> np.ndarray:
    """Each row mixed with the constant row of its mass, as little as needed to enter K
    (bisection on the mixing weight; K is convex and contains the constant row)."""
    rows = np.atleast_2d(rows)
    const = np.repeat(rows.mean(axis=1, keepdims=True), rows.shape[1], axis=1)

    def mix(t: np.ndarray) -> np.ndarray:
        return cast("np.ndarray", (1 - t)[:, None] * rows + t[:, None] * const)

    ok = _audit_cone_violation(uset, rows, epsilon) <= 0
    lo, hi = np.zeros(len(rows)), np.where(ok, 0.0, 1.0)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        inside = _audit_cone_violation(uset, mix(mid), epsilon) <= 0
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    return mix(hi)


def solve_exact_set_cg(
    uset: UncertaintySet,
    epsilon: float,
    *,
    time_budget: float = 60.0,
    widen: Iterable[float] = (1.25, 1.5, 2.0),
    progress: Progress | None = None,
) -> CGResult:
    """PolyOpt-style design over the exact audit cone K ⊇ Γ (experimental).

    Γ encloses each projected ball F_U|s in the polytope D_s; the exact audit uses the balls,
    so K = {v : max_{F_s₁} R·v_s₁ ≤ e^ε min_{F_s₂} R·v_s₂} is larger. Heuristic search: the
    columns of PolyOpt at ε, and of PolyOpt at widened levels ε' = w·ε (Γ_ε' reaches further
    out), each mixed towards the constant row just enough to enter K, then the master LP of
    Theorem 3 over all of them. Every column is verified row by row with the exact audit,
    and the final mechanism with :func:`rldp.shared.audit.audit_rldp`; if renormalisation
    ever broke it the PolyOpt mechanism is returned instead. The result is never below
    PolyOpt's (its columns are among the candidates).
    """
    start = time.perf_counter()
    p = check_inputs(uset.public_distribution, time_budget)
    design_eps = epsilon * (1 - DESIGN_MARGIN)
    low = uset.lower_bounds()
    widen = list(widen)
    share = float(time_budget) / (len(widen) + 2)
    base = solve_polyopt_cg(p, low, design_eps, time_budget=share, bound_epsilon=epsilon, progress=progress)
    master = Master(p)
    widen_until = time_budget - share  # the widened solves start before this many seconds
    master.add(_certified_candidates(uset, p, low, base.matrix, design_eps, widen, share, start, widen_until))
    if not master.solve():
        raise CGError("the master LP over the exact-set columns failed")
    q, info = _audited_mechanism(master, base, uset, p, epsilon)
    return CGResult(
        q,
        info,
        master.value,
        base.iterations,
        len(master.columns),
        time.perf_counter() - start,
        False,
        "heuristic",
        None,
        None,
        base.history,
    )


def _certified_candidates(
    uset: UncertaintySet,
    p: np.ndarray,
    low: np.ndarray,
    base: np.ndarray,
    design_eps: float,
    widen: list[float],
    share: float,
    start: float,
    widen_until: float,
) -> np.ndarray:
    """The candidate columns that pass the exact audit at ``design_eps``: PolyOpt's (``base``), every vertex of Γ̂ on
    small problems, and the widened levels' mixed into K (each solve started before ``widen_until`` s since ``start``)."""
    cols = [base]
    if p.size <= 9:  # small: every vertex of Γ̂ (exact PolyOpt) is a candidate too
        cols.append(enumerate_vertices(GammaCone(low, design_eps)))
    for w in widen:
        if time.perf_counter() - start > widen_until:
            break
        wide = solve_polyopt_cg(p, low, design_eps * w, time_budget=share)
        cols.append(_into_audit_cone(uset, wide.matrix, design_eps))
    cand = np.vstack(cols)
    cand = cand[cand.sum(axis=1) > 0]
    certified = np.array([rldp_epsilon(r[None], uset)[0] <= design_eps for r in cand])
    result: np.ndarray = cand[certified]
    return result


def _audited_mechanism(
    master: Master, base: CGResult, uset: UncertaintySet, p: np.ndarray, epsilon: float
) -> tuple[np.ndarray, float]:
    """The master's mechanism, renormalised, and its information, unless the exact audit or PolyOpt's (``base``)
    information says to return PolyOpt's."""
    q = np.maximum(master.mechanism(), 0.0)
    q = q / q.sum(axis=0, keepdims=True)
    if not audit_rldp(q, uset, epsilon).passed:  # pragma: no cover - renormalisation round-off
        q = base.matrix
    info = mutual_information(q, p)
    if info < base.information:  # pragma: no cover - the base columns are candidates
        q, info = base.matrix, base.information
    return q, info
