"""Coarse-to-fine: a ladder of aggregated problems whose rows expand into Γ.

Large alphabets (more than COARSEN_MIN_SYMBOLS symbols) are solved coarse-to-fine: first
the problem with released values (beyond 6 of them) and sensitive values (beyond 20) merged
by mass into about half as many groups (:class:`Aggregation`: a coarse row in the coarse
cone expands to a row of Γ with the same information), itself solved coarse-to-fine while it
is still large, then the finer problem seeded with the expanded rows. So occupation×education
(15×16) is solved as 15×4, then 15×8 (seeded with the 15×4 rows), then 15×16; native-country ×
relationship (42×6) as 11×6, 21×6, 42×6. The finest coarse problem's duals, lifted to the fine
cells, give the fine problem a Lagrangian bound.

Measured on Adult occupation×education (60 s) with a single 15×4 stage: NMI 0.031 / 0.130 /
0.214 at ε = 0.5 / 1 / 1.5, against 0.015 / 0.102 / 0.092 from the seeds alone; the fine stage
itself added < 1 % there, and a 15×8 stage ~2.5 %: the intermediate stages are where the fine
problem's time goes. The fine master, seeded so, is massively primal-degenerate (columns
enter at step 0); perturbing its right-hand side moved the LP but gained nothing after
restoring it, so it is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

__all__ = ["COARSEN_MIN_SYMBOLS", "COARSE_SHARE", "RUNG_SHARE", "Aggregation", "mass_groups", "coarse_aggregation"]

# Alphabets above this many symbols first solve an aggregated problem (see Aggregation).
COARSEN_MIN_SYMBOLS = 64
# Share of the time budget the aggregated problem may use (it usually converges sooner), and of
# a rung's budget its own coarser rung may use: most of it, since the coarsest rung is the one
# that converges and whose duals bound the fine problem (with 0.5 at every rung it got T/4 and,
# under load, ended short of convergence at T = 30 s); a rung that converges early leaves the
# rest to the next.
COARSE_SHARE = 0.5
RUNG_SHARE = 0.85


def mass_groups(mass: np.ndarray, groups: int) -> np.ndarray:
    """Group index per value: values in decreasing mass, each into the lightest group so far
    (balanced bins: frequent values stay alone, rare ones are pooled). Deterministic."""
    mass = np.asarray(mass, dtype=float)
    if groups >= mass.size:
        return np.arange(mass.size)
    out = np.zeros(mass.size, dtype=int)
    total = np.zeros(groups)
    for i in np.argsort(-mass, kind="stable"):
        j = int(np.argmin(total))
        out[i] = j
        total[j] += mass[i]
    return out


@dataclass(frozen=True)
class Aggregation:
    """Merging sensitive values into groups g and released values into groups G.

    A coarse row v' over (g, G) expands to the fine row v_{s,u} = v'_{g(s),G(u)}. The coarse
    problem (:meth:`problem`) is built so that every coarse row in *its* Γ expands into the
    fine Γ ([LZG24, Def 3, eq. 41]), so its mechanisms are certified fine mechanisms:

    * merged released values: L'_{G|s} = Σ_{u∈G} L_{u|s} and the slack ℓ_s is unchanged, so
      max_{R∈D_s} R·v = Σ_G L'_{G|s} v'_G + ℓ_s max v' exactly (likewise the min);
    * merged sensitive values: L'_g = min_{s∈g} L'_s componentwise, so D'_g ⊇ D_s for every
      s ∈ g: A_s(v) ≤ A'_g(v') and B_s(v) ≥ B'_g(v'); the pair (s₁, s₂) of two values in one
      group then needs A'_g ≤ e^ε B'_g, the s₁ = s₂ row of that block (``self_pairs``).

    Y depends on X only through its group, so I_P̂(X;Y) of the expanded mechanism equals the
    coarse I_P̂'(X';Y) with P̂' the grouped sums: the coarse optimum is a certified lower bound
    and its rows are good seed columns for the fine problem.
    """

    sensitive: np.ndarray
    released: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.sensitive.max()) + 1, int(self.released.max()) + 1

    def problem(
        self,
        distribution: np.ndarray,
        lower_bounds: np.ndarray,
        same_sensitive: bool = False,
        self_pairs: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P̂', L', self_pairs) of the aggregated problem. ``self_pairs`` are the fine
        problem's own s₁ = s₂ rows (when it is itself aggregated): a group containing such a
        block keeps the row (A_s ≤ A'_g ≤ e^ε B'_g ≤ e^ε B_s for s ∈ g)."""
        k1, k2 = self.shape
        onehot = np.eye(k2)[self.released]  # (|U|, k2)
        p_u, low_u = np.asarray(distribution) @ onehot, np.asarray(lower_bounds) @ onehot
        pc, lc = np.zeros((k1, k2)), np.zeros((k1, k2))
        sizes = np.bincount(self.sensitive, minlength=k1)
        for g in range(k1):
            pc[g] = p_u[self.sensitive == g].sum(axis=0)
            lc[g] = low_u[self.sensitive == g].min(axis=0)
        merged = (sizes > 1) | bool(same_sensitive)
        if self_pairs is not None:
            merged |= np.bincount(self.sensitive, weights=np.asarray(self_pairs, dtype=float), minlength=k1) > 0
        return pc, lc, merged

    def lift_duals(self, duals: np.ndarray, distribution: np.ndarray) -> np.ndarray:
        """Coarse prices λ' spread over each group's cells in proportion to P̂ (evenly where
        the group has no mass): λ·Ev' = λ'·v' for every coarse row v'. A starting point
        for the fine problem's Lagrangian bound (any λ gives a valid bound)."""
        p = np.asarray(distribution, dtype=float)
        cell = (self.sensitive[:, None] * self.shape[1] + self.released[None, :]).reshape(-1)
        pf = p.reshape(-1)
        mass = np.bincount(cell, weights=pf, minlength=self.shape[0] * self.shape[1])
        count = np.bincount(cell, minlength=mass.size)
        share = np.where(mass[cell] > 0, pf / np.where(mass[cell] > 0, mass[cell], 1.0), 1.0 / count[cell])
        return cast("np.ndarray", np.asarray(duals, dtype=float).reshape(-1)[cell] * share)

    def expand(self, rows: np.ndarray) -> np.ndarray:
        k1, k2 = self.shape
        r = np.atleast_2d(rows).reshape(-1, k1, k2)
        return r[:, self.sensitive][:, :, self.released].reshape(len(r), -1)


def coarse_aggregation(distribution: np.ndarray, min_symbols: int | None = None) -> Aggregation | None:
    """The next rung of the ladder before a large problem: ⌈|U|/2⌉ (at least 4) released groups
    when |U| > 6, ⌈|S|/2⌉ (at least 8) sensitive groups when |S| > 20 (by mass,
    :func:`mass_groups`); None if small. Solving the result coarse-to-fine again gives the ladder.

    Measured on Adult (60 s budgets): occupation×education solved first as 15×4 (converges in
    ~7-25 s) gave 1.3-2.3× the NMI of the fine problem solved from its seeds alone."""
    p = np.asarray(distribution, dtype=float)
    a1, a2 = p.shape
    if p.size <= (COARSEN_MIN_SYMBOLS if min_symbols is None else min_symbols):
        return None
    k1 = max(8, -(-a1 // 2)) if a1 > 20 else a1
    k2 = max(4, -(-a2 // 2)) if a2 > 6 else a2
    if (k1, k2) == (a1, a2):
        return None
    return Aggregation(mass_groups(p.sum(axis=1), k1), mass_groups(p.sum(axis=0), k2))
