"""The cone Γ of PolyOpt ([LZG24, Def 3]), built once for the exact and the column-generation solvers.

Γ is the robust counterpart of the RLDP constraint when each projected ball F_U|s is
enclosed in the polytope D_s = {R ∈ simplex : R_u ≥ L_u|s}:
max_{R ∈ D_s₁} R·v_s₁ ≤ e^ε min_{R ∈ D_s₂} R·v_s₂ ([LZG24, eq. 41]). With ℓ_s = 1 − Σ_u L_u|s,

    max_{R ∈ D_s} R·v_s = Σ_u L_u|s v_{s,u} + ℓ_s max_u v_{s,u},
    min_{R ∈ D_s} R·v_s = Σ_u L_u|s v_{s,u} + ℓ_s min_u v_{s,u},

so membership needs one comparison per pair (s₁, s₂) (:meth:`GammaCone.violations`), and
the |U|² linear rows per pair of Definition 3 — what vertex enumeration needs — are
those two sides written out for every (u₁, u₂) (:meth:`GammaCone.inequalities`).

Two variants (docs/design.md, errata): ``same_sensitive=True`` also writes the rows for
s₁ = s₂, as [LZG24, Example 3] does (16 inequalities at 2×2, I = 0.4228); RLDP does not
constrain s₁ = s₂, so the default drops them: a larger cone, still certified, more
utility. ``self_pairs`` imposes the s₁ = s₂ row on chosen blocks only (a block standing
for several merged sensitive values, see :mod:`.cg.coarsen`). With L = P̂_U|s (ΣL = 1, a
point set) Γ is the non-robust cone of NR.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from rldp.shared.parameters import check_epsilon
from rldp.shared.tolerances import STOCHASTIC_TOLERANCE

from .errors import SolverError


def _solver_error(message: str, *, parameter: str) -> SolverError:
    return SolverError(message)


__all__ = ["GammaCone", "gamma_inequalities", "MAX_CONE_EPSILON"]

#: The largest ε the cone's designers take: their block search goes up to 2ε and e^(2ε) must be a
#: float (e^709 is the last); 300 nats is far beyond any privacy a report keeps.
MAX_CONE_EPSILON = 300.0


class GammaCone:
    """Γ_ε ([LZG24, Def 3]) for bounds L (|S|, |U|): membership, repair, certification and
    the linear rows of Definition 3."""

    def __init__(
        self,
        lower_bounds: np.ndarray,
        epsilon: float,
        same_sensitive: bool = False,
        self_pairs: np.ndarray | None = None,
    ):
        low = np.asarray(lower_bounds, dtype=float)
        if low.ndim != 2 or low.shape[0] < 2 or low.shape[1] < 1:
            raise SolverError(f"lower bounds must have shape (|S| ≥ 2, |U| ≥ 1); got {low.shape}")
        if np.any(low < 0) or np.any(low.sum(axis=1) > 1 + STOCHASTIC_TOLERANCE) or not np.all(np.isfinite(low)):
            raise SolverError("lower bounds L must be finite, ≥ 0 and sum to at most 1 for every s")
        check_epsilon(epsilon, error=_solver_error)
        if epsilon > MAX_CONE_EPSILON:
            raise SolverError(
                f"epsilon {epsilon:g} is above the {MAX_CONE_EPSILON:g} nats the Γ-cone designers (polyopt and its "
                "column generation) support: e^ε must stay a float with room to spare"
            )
        self.lower = low
        self.slack = np.maximum(1.0 - low.sum(axis=1), 0.0)  # ℓ_s = 1 − Σ_u L_u|s
        self.epsilon = float(epsilon)
        self.same_sensitive = bool(same_sensitive)
        self.a1, self.a2 = low.shape
        self.size = low.size
        s1, s2 = np.meshgrid(np.arange(self.a1), np.arange(self.a1), indexing="ij")
        keep = np.ones_like(s1, dtype=bool) if same_sensitive else (s1 != s2)
        if self_pairs is not None:  # the s₁ = s₂ row only for these blocks (aggregated problems)
            keep |= (s1 == s2) & np.asarray(self_pairs, dtype=bool)[s1]
        self.pairs = np.stack([s1[keep], s2[keep]], axis=1)  # (K, 2), s₁ major
        self._self = np.diag(keep).copy()  # blocks whose s₁ = s₂ row is imposed

    # -- membership ---------------------------------------------------------------
    def sides(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max_{R∈D_s} R·v_s, min_{R∈D_s} R·v_s) for each row v and s; shapes (n, |S|)."""
        v = np.atleast_2d(rows).reshape(-1, self.a1, self.a2)
        lin = np.einsum("nsu,su->ns", v, self.lower)
        return lin + self.slack * v.max(axis=2), lin + self.slack * v.min(axis=2)

    def violations(self, rows: np.ndarray, epsilon: float | None = None) -> np.ndarray:
        """max over pairs of (max_{D_s₁} R·v_s₁ − e^ε min_{D_s₂} R·v_s₂) per row; ≤ 0 iff v ∈ Γ."""
        hi, lo = self.sides(rows)
        e = math.exp(self.epsilon if epsilon is None else epsilon)
        # max over pairs (s₁, s₂) of hi_s₁ − e·lo_s₂ = max_s₁ (hi_s₁ − e·min_{s₂ paired with s₁} lo_s₂),
        # exactly (also in floating point: the difference is monotone in lo); every s₂ ≠ s₁ is
        # paired with s₁, and s₁ itself when its s₁ = s₂ row is imposed. O(|S|) per row, not |S|².
        order = np.argsort(lo, axis=1, kind="stable")
        rows_idx = np.arange(lo.shape[0])
        first, second = lo[rows_idx, order[:, 0]], lo[rows_idx, order[:, 1]]
        other = np.where(np.arange(self.a1)[None, :] == order[:, :1], second[:, None], first[:, None])
        partner = np.where(self._self[None, :], np.minimum(other, lo), other)
        return cast("np.ndarray", np.max(hi - e * partner, axis=1))

    def contains(self, rows: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        return cast("np.ndarray", (self.violations(rows) <= 0.0) & np.all(rows >= 0, axis=1))

    # -- the linear rows of Definition 3 -----------------------------------------------
    def inequalities(self) -> np.ndarray:
        """Rows A with A·v ≤ 0 describing Γ ([LZG24, Def 3]), deduplicated; shape (m, |X|):

            v_{s₁,u₁} + Σ_u L_{u|s₁}(v_{s₁,u} − v_{s₁,u₁}) ≤ e^ε (v_{s₂,u₂} + Σ_u L_{u|s₂}(v_{s₂,u} − v_{s₂,u₂}))

        for every pair of :attr:`pairs` and every (u₁, u₂). Their maximum over (u₁, u₂) at
        a point is :meth:`violations` (the max and min sides of the module docstring).
        """
        a1, a2, a = self.a1, self.a2, self.size
        e = math.exp(self.epsilon)
        # side[s, u₁] = coefficients over X of v_{s,u₁} + Σ_u L_{u|s}(v_{s,u} − v_{s,u₁}).
        side = np.zeros((a1, a2, a))
        for s in range(a1):
            side[s, :, s * a2 : (s + 1) * a2] = np.tile(self.lower[s], (a2, 1)) + np.eye(a2) * self.slack[s]
        out = np.concatenate(
            [(side[s1][:, None, :] - e * side[s2][None, :, :]).reshape(-1, a) for s1, s2 in self.pairs], axis=0
        )
        # With ΣL = 1 (a point set, as for NR) every (u₁, u₂) gives the same row.
        _, keep = np.unique(np.round(out, 14), axis=0, return_index=True)
        return out[np.sort(keep)]

    # -- moving rows inside --------------------------------------------------------------
    def repair(self, rows: np.ndarray) -> np.ndarray:
        """Mix each row with the constant row of the same mass until it lies in Γ.

        Every pair constraint c_k(v) = A_s₁(v) − e^ε B_s₂(v) is convex (A is a max, B a min
        of linear functions) and c_k(1) = 1 − e^ε < 0, so c_k((1 − t)v + t·m1) ≤ 0 for
        t ≥ c_k(v)/(c_k(v) − m c_k(1)). Rows already inside are returned unchanged.
        """
        v = np.maximum(np.atleast_2d(np.asarray(rows, dtype=float)), 0.0)
        mass = v.sum(axis=1, keepdims=True) / self.size
        for _ in range(8):
            viol = self.violations(v)
            bad = viol > 0
            if not np.any(bad):
                return cast("np.ndarray", v)
            inner = mass[bad, 0] * (1.0 - math.exp(self.epsilon))  # c_k of the constant row (< 0)
            t = viol[bad] / (viol[bad] - inner)
            t = np.minimum(t * (1 + 1e-6) + 1e-12, 1.0)
            v[bad] = (1.0 - t)[:, None] * v[bad] + t[:, None] * mass[bad]
        raise SolverError("could not move a column inside Γ (this indicates a bug)")

    def certify(self, q: np.ndarray) -> np.ndarray:
        """The mechanism with columns renormalised to sum 1 and every row inside Γ ([LZG24, Thm 2]).

        Renormalising the columns of θ·v after an LP's round-off (≤ 1e-9) can push a row just
        outside Γ; the fix mixes the whole mechanism with the uniform-output mechanism,
        Q' = (1 − t)Q + t/|Y|, which keeps the columns stochastic and moves every row towards
        the constant row (strictly inside Γ), with t just large enough for the worst row.
        """
        q = np.maximum(q, 0.0)
        q = q[q.sum(axis=1) > 0]
        q = q / q.sum(axis=0, keepdims=True)
        b = q.shape[0]
        viol = self.violations(q)
        if np.any(viol > 0):
            inner = (1.0 - math.exp(self.epsilon)) / b  # c_k of the constant row 1/|Y|
            t = float(np.max(np.maximum(viol, 0.0) / (np.maximum(viol, 0.0) - inner)))
            for _ in range(8):
                t = min(t * (1 + 1e-6) + 1e-12, 1.0)
                cand = (1.0 - t) * q + t / b
                if np.all(self.violations(cand) <= 0):
                    return cast("np.ndarray", cand)
            raise SolverError("could not certify the mechanism against Γ")  # pragma: no cover - convexity
        return q


def gamma_inequalities(lower_bounds: np.ndarray, epsilon: float, same_sensitive: bool = False) -> np.ndarray:
    """The rows of Definition 3 for bounds L (|S|, |U|): :meth:`GammaCone.inequalities`."""
    return GammaCone(lower_bounds, epsilon, same_sensitive).inequalities()
