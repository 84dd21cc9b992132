"""The least detectable drift for ``rldp experiment field``: the population closest to P̂ whose realised ε* is
twice the claim (its power rows: :func:`rldp.demo.experiments.field.run_field`).

The power rows of :mod:`.field` follow one direction (towards a skewed population). A drift that breaks the
claim can be far closer to F in another direction, and the watch needs more reports to see it. Here:

* **The closest population.** ε*(P) ≥ c [LZG24, Sec 8.3] holds when some (y, s₁, s₂) has
  log Σ_u Q(y|s₁,u) P(u|s₁) − log Σ_u Q(y|s₂,u) P(u|s₂) ≥ c. For each such triple, SLSQP minimises
  D_α(P̂‖P) (α the ball's order) over the simplex (a softmax parametrisation) under that one constraint,
  started at P̂ and at the point where the segment towards the skewed population reaches ε* = c; the
  closest feasible result over all triples and starts is kept, and its ε* is re-audited exactly. A local
  search: what it finds is an upper bound on the distance of the closest such population, so the reports
  it takes to flag it are a lower bound on what the least detectable drift needs — the honest direction
  of error for a claim of weakness.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from rldp.shared.audit import realised_epsilon
from rldp.shared.divergence import renyi_divergence
from rldp.shared.uncertainty import UncertaintySet

__all__ = ["LOOKS", "closest_population"]

# Looks (report counts) for the least detectable drift: it needs ~10⁵ reports, so looks reach 10⁶.
LOOKS = [*range(500, 5_001, 500), *range(10_000, 100_001, 10_000), *range(150_000, 1_000_001, 50_000)]


def _softmax(z: np.ndarray) -> np.ndarray:
    w = np.maximum(np.exp(z - z.max()), 1e-300)  # floored: a row of S never sums to 0 (its conditional exists)
    return w / w.sum()


def closest_population(
    q: np.ndarray, p: np.ndarray, ball: UncertaintySet, target: float, starts: list[np.ndarray]
) -> tuple[np.ndarray, float]:
    """(P, D_α(P̂‖P)): the closest population to ``p`` (|S| × |U|) found with realised ε* ≥ ``target`` under
    the mechanism ``q`` (|Y| × |S||U|); ``starts``: extra starting points (joint distributions)."""
    n_s, n_u = p.shape
    rows = q.reshape(q.shape[0], n_s, n_u)
    p0 = p.ravel()
    found: tuple[np.ndarray, float] | None = None

    def divergence(z: np.ndarray) -> float:
        return float(renyi_divergence(p0, _softmax(z), ball.order))

    for y in range(rows.shape[0]):
        for s1 in range(n_s):
            for s2 in range(n_s):
                if s1 == s2:
                    continue

                def gap(z: np.ndarray, y: int = y, s1: int = s1, s2: int = s2) -> float:
                    joint = _softmax(z).reshape(n_s, n_u)
                    c1, c2 = joint[s1] / joint[s1].sum(), joint[s2] / joint[s2].sum()
                    # floored: a finite-difference step may empty an output's probability
                    return math.log(max(rows[y, s1] @ c1, 1e-300)) - math.log(max(rows[y, s2] @ c2, 1e-300)) - target

                for start in [p0, *(s.ravel() for s in starts)]:
                    z0 = np.log(np.clip(start, 1e-12, None))
                    res = minimize(
                        divergence,
                        z0,
                        method="SLSQP",
                        constraints=[{"type": "ineq", "fun": gap}],
                        options={"maxiter": 500, "ftol": 1e-12},
                    )
                    joint = _softmax(res.x)
                    if realised_epsilon(q, joint.reshape(n_s, n_u)) < target - 1e-9:
                        continue  # not a population with ε* ≥ target: the search did not converge there
                    d = divergence(res.x)
                    if found is None or d < found[1]:
                        found = (joint.reshape(n_s, n_u), d)
    if found is None:
        raise RuntimeError(f"no population with realised ε* ≥ {target} was found")
    return found
