"""HiGHS models of column generation: a silent solver instance and the pricing LP over Γ.

The pricing LP writes Γ compactly with epigraph variables M_s ≥ v_{s,u} ≥ m_s: the |U|²
rows of [LZG24, Def 3] for a pair (s₁, s₂) are the single inequality

    Σ_u L_{u|s₁} v_{s₁,u} + ℓ_{s₁} M_{s₁} ≤ e^ε (Σ_u L_{u|s₂} v_{s₂,u} + ℓ_{s₂} m_{s₂}),

i.e. max_{R ∈ D_s₁} R·v_s₁ ≤ e^ε min_{R ∈ D_s₂} R·v_s₂ ([LZG24, eq. 41]), so the LP has
|X| + 2|S| variables and 2|X| + |S|(|S| − 1) + 1 rows.
"""

from __future__ import annotations

import functools
import math
from typing import Any, cast

import highspy
import numpy as np

from ...primitives.cone import GammaCone

__all__ = ["quiet_highs", "PricingLP", "OPTIMAL"]

OPTIMAL = highspy.HighsModelStatus.kOptimal
# HiGHS' own feasibility tolerances for the pricing LP (solver settings, not privacy tolerances).
_PRICING_FEASIBILITY = 1e-9


def quiet_highs() -> Any:
    """A HiGHS instance that prints nothing, not even its banner.

    highspy ≥ 1.16 prints "Running HiGHS …" to the process's stdout from inside
    ``Highs.__init__`` (its ``enableCallbacks`` call), before any option can be set; that
    line corrupted ``rldp design --json``. Setting output_flag in that hook silences it; on
    versions that do not call the hook, setting it right after construction (below) suffices.
    """
    h = _quiet_highs_class()()
    h.setOptionValue("output_flag", False)
    return h


@functools.cache
def _quiet_highs_class() -> type:
    class QuietHighs(highspy.Highs):
        def enableCallbacks(self) -> Any:
            self.setOptionValue("output_flag", False)
            return super().enableCallbacks()  # type: ignore[no-untyped-call]

    return QuietHighs


class PricingLP:
    """HiGHS model of max c·z over Γ ∩ {w·z = 1}; only the objective changes between solves.

    Variables [z (|X|), M (|S|), m (|S|)]; rows z − M_s ≤ 0, m_s − z ≤ 0 (per cell), one row
    per pair (s₁, s₂) (see the module docstring) and w·z = 1 (w = P̂ for the Lagrangian
    normalisation).
    """

    def __init__(self, cone: GammaCone, weights: np.ndarray):
        a, a1, a2 = cone.size, cone.a1, cone.a2
        self.cone = cone
        self.n = a
        e = math.exp(cone.epsilon)
        h = quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", _PRICING_FEASIBILITY)
        h.setOptionValue("dual_feasibility_tolerance", _PRICING_FEASIBILITY)
        h.setOptionValue("presolve", "off")  # only the objective changes: keep the basis
        inf = highspy.kHighsInf
        n_var = a + 2 * a1
        h.addVars(n_var, np.zeros(n_var), np.full(n_var, inf))
        s_of = np.repeat(np.arange(a1), a2)
        rows_idx, rows_val, lower, upper = [], [], [], []
        for x in range(a):  # z_x − M_s ≤ 0 and m_s − z_x ≤ 0
            rows_idx.append([x, a + s_of[x]])
            rows_val.append([1.0, -1.0])
            rows_idx.append([x, a + a1 + s_of[x]])
            rows_val.append([-1.0, 1.0])
            lower += [-inf, -inf]
            upper += [0.0, 0.0]
        low, slack = cone.lower, cone.slack
        for s1, s2 in cone.pairs:
            coef = np.zeros(n_var)
            coef[s1 * a2 : (s1 + 1) * a2] += low[s1]
            coef[a + s1] += slack[s1]
            coef[s2 * a2 : (s2 + 1) * a2] -= e * low[s2]
            coef[a + a1 + s2] -= e * slack[s2]
            nz = np.flatnonzero(coef)
            rows_idx.append(list(nz))
            rows_val.append(list(coef[nz]))
            lower.append(-inf)
            upper.append(0.0)
        w = np.asarray(weights, dtype=float).reshape(-1)
        nz = np.flatnonzero(w)
        rows_idx.append(list(nz))
        rows_val.append(list(w[nz]))
        lower.append(1.0)
        upper.append(1.0)
        starts = np.cumsum([0] + [len(r) for r in rows_idx[:-1]])
        idx = np.concatenate([np.asarray(r, dtype=np.int32) for r in rows_idx])
        val = np.concatenate([np.asarray(r, dtype=float) for r in rows_val])
        h.addRows(len(rows_idx), np.asarray(lower), np.asarray(upper), len(idx), starts.astype(np.int32), idx, val)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self._all = np.arange(a, dtype=np.int32)

    def maximise(self, c: np.ndarray, time_limit: float | None = None) -> np.ndarray | None:
        """The maximiser z (a vertex) of c·z, or None if HiGHS did not reach optimality."""
        self.h.changeColsCost(self.n, self._all, np.asarray(c, dtype=float))
        if time_limit is not None:  # HiGHS' time limit counts the instance's total run time
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        if self.h.getModelStatus() != OPTIMAL:
            return None
        return cast("np.ndarray | None", np.maximum(np.asarray(self.h.getSolution().col_value[: self.n]), 0.0))
