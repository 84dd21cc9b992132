"""PolyOpt by column generation: Theorem 3's linear program without vertex enumeration.

Exact PolyOpt (:mod:`..exact`) lists every vertex of Γ̂ ([LZG24, Def 3]) and solves the
linear program of [LZG24, Thm 3],

    max Σ_v θ_v μ(v)   s.t.   Σ_v θ_v v = 1_X,  θ ≥ 0,                        (eq. 46)

whose dual is  min Σ_x λ_x  s.t.  λ·v ≥ μ(v) for every v ∈ Γ.  Enumeration explodes beyond
about ten symbols. Column generation solves the same LP over a growing set of columns:

* the *master* (:mod:`.master`) is eq. 46 restricted to the columns found so far; it is
  always feasible because the constant row is in Γ and every column is verified to lie in
  Γ (:mod:`..cone`) before it enters;
* its duals λ price new columns (:mod:`.pricing`): block enumeration on sections of the
  cone where it is a product of block polytopes (:mod:`.blocks`) and successive
  linearisation over Γ. Searches use smoothed prices (a convex combination of the previous
  search point and the new duals, which damps the duals' oscillation); a column enters
  only if it improves at the master's own duals.

For any λ, weak duality gives a *Lagrangian bound* on the optimum: exact for the
non-robust cone of NR (:mod:`.nr`), through the exact section of Γ cut into pieces, each a
product of block polytopes bounded by a dynamic programme over P̂·z (:mod:`.massdp`), for Γ itself
(:mod:`.bound`; 1.001-1.05× the optimum at the optimal duals of converged 2×3…3×4 problems, where
the tangent per piece gave 1.05-1.55× and the one-piece relaxation of
:meth:`.blocks.BlockPricer.bound` 1.41-1.82×); :mod:`.proof` keeps the best over several λ and
searches for better ones. Large alphabets are solved coarse-to-fine on a ladder of nested aggregated problems (:mod:`.coarsen`), whose lifted
duals also give the fine problem's bound.

Anytime: the master's solution is feasible at every iteration, so when the time budget
ends the best mechanism so far is returned, after the same certification as at the end:
columns renormalised, every row checked against Γ ([LZG24, Thm 2]) and, if round-off
pushed one outside, mixed with the uniform output until it is inside
(:meth:`..cone.GammaCone.certify`).

Modules: :mod:`.highs` (HiGHS models), :mod:`.master`, :mod:`.pricing`, :mod:`.blocks`,
:mod:`.bound`, :mod:`.massdp`, :mod:`.proof`, :mod:`.coarsen`, :mod:`.result` (a solve's certified result),
:mod:`.solve` (the PolyOpt solver), :mod:`.nr` (the NR solver),
:mod:`.exact_set` (experimental: rows certified by the exact audit beyond Γ).
"""

from __future__ import annotations

from ...primitives.errors import CGError
from .coarsen import Aggregation, coarse_aggregation, mass_groups
from .exact_set import solve_exact_set_cg
from .master import seed_columns
from .nr import nr_pricing, nr_upper_bound, solve_nr_cg
from .result import CGResult, Progress
from .solve import solve_polyopt_cg

__all__ = [
    "CGError",
    "CGResult",
    "Progress",
    "Aggregation",
    "coarse_aggregation",
    "mass_groups",
    "seed_columns",
    "nr_pricing",
    "nr_upper_bound",
    "solve_nr_cg",
    "solve_polyopt_cg",
    "solve_exact_set_cg",
]
