"""Optimal LDP w.r.t. a latent S by column generation, for alphabets beyond vertex enumeration.

The same problem as :mod:`.ldp` ([LZG24, Thm 3] over the latent cone Γ): maximise Σ_j θ_j μ(w_j)
subject to Σ_j θ_j w_j = 1_U, θ ≥ 0, every w_j in Γ (μ the row information [LZG24, eq 45]). The
master LP over the columns found so far gives duals λ; pricing looks for w ∈ Γ, P̂_U·w = 1, with
μ(w) − λ·w > 0 — a convex maximisation over a polytope, done by successive linearisation (each step
one LP: maximise ∇μ(w_k)·w − λ·w over Γ ∩ {P̂_U·w = 1}; a vertex repeats within a few steps) from the
basis columns, the unit-coordinate maximisers and random vertices. It stops when no start finds a
positive reduced cost (a local certificate, not a proof of optimality) or at ``time_budget``.
Every column is a member of Γ (checked and repaired), so the result is certified whatever happens.
"""

from __future__ import annotations

import time
from typing import Any, cast

import numpy as np

from rldp.shared.information import row_information

from .latent_cone import LatentGammaCone

__all__ = ["latent_cg"]

_REDUCED_COST_TOL = 1e-9
_STARTS_PER_ROUND = 6
_LINEARISATION_STEPS = 12


def _gradient(z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """∂μ/∂z_x = P_x log(z_x / P·z) (z clipped away from 0: the log's limit is −∞, any large cost works)."""
    zc = np.maximum(z, 1e-12)
    return cast("np.ndarray", p * np.log(zc / float(p @ zc)))


def latent_cg(
    cone: LatentGammaCone, p_u: np.ndarray, time_budget: float, seed_rows: list[np.ndarray], seed: int = 0
) -> tuple[np.ndarray, dict[str, Any]]:
    """(rows θ_j w_j of the best mechanism found, parameters) — see the module docstring."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    ineq = cone.inequalities()
    cols = [np.full(len(p_u), 1.0)]  # the constant row: always in Γ, makes the master feasible
    for rows in seed_rows:
        cols.extend(cone.repair(np.atleast_2d(rows)))
    rounds = 0
    theta, lam, value = _master(cols, p_u)
    converged = False
    while time.perf_counter() - start < time_budget:
        rounds += 1
        found = _price(cone, ineq, p_u, cols, theta, lam, rng, start, time_budget)
        if not found:
            converged = True
            break
        cols.extend(found)
        theta, lam, value = _master(cols, p_u)
    used = theta > 1e-12
    q = theta[used, None] * np.array(cols)[used]
    params = {
        "solver": "cg",
        "iterations": rounds,
        "columns": len(cols),
        "converged": converged,
        "lp_value": value,
        "seconds": time.perf_counter() - start,
    }
    return q, params


def _master(cols: list[np.ndarray], p_u: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The master LP over ``cols``: (weights θ, duals λ, value)."""
    from scipy.optimize import linprog  # lazy: scipy.optimize takes ~0.3 s to import

    w = np.array(cols)
    mu = row_information(w, p_u)
    res = linprog(-mu, A_eq=w.T, b_eq=np.ones(len(p_u)), bounds=(0, None), method="highs")
    return np.maximum(res.x, 0.0), -np.asarray(res.eqlin.marginals), float(-res.fun)


def _best_vertex(ineq: np.ndarray, p_u: np.ndarray, direction: np.ndarray) -> np.ndarray | None:
    """The vertex of Γ ∩ {P̂_U·w = 1} that maximises ``direction``·w, or None if the LP fails."""
    from scipy.optimize import linprog  # lazy: scipy.optimize takes ~0.3 s to import

    res = linprog(
        -direction,
        A_ub=ineq,
        b_ub=np.zeros(len(ineq)),
        A_eq=p_u[None, :],
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    return None if res.status != 0 else np.maximum(res.x, 0.0)


def _price(
    cone: LatentGammaCone,
    ineq: np.ndarray,
    p_u: np.ndarray,
    cols: list[np.ndarray],
    theta: np.ndarray,
    lam: np.ndarray,
    rng: np.random.Generator,
    start: float,
    time_budget: float,
) -> list[np.ndarray]:
    """One pricing round: successive linearisation from basis columns and random unit coordinates; the columns
    (repaired into Γ) with a positive reduced cost μ(w) − λ·w. Stops starting climbs ``time_budget`` s after ``start``."""
    a = len(p_u)
    basis = [cols[j] for j in np.flatnonzero(theta > 1e-12)]
    starts = [b / float(p_u @ b) for b in basis[:_STARTS_PER_ROUND]]
    starts += [np.eye(a)[i] + 1e-3 for i in rng.choice(a, size=min(a, 3), replace=False)]
    found = []
    for z in starts:
        for _ in range(_LINEARISATION_STEPS):
            nxt = _best_vertex(ineq, p_u, _gradient(z, p_u) - lam)
            if nxt is None or np.allclose(nxt, z, atol=1e-10):
                break
            z = nxt
        z = cone.repair(z)[0]  # the LP's vertex can sit 1e-12 outside Γ: mix it in
        gain = float(row_information(z[None, :], p_u)[0] - z @ lam)
        if gain > _REDUCED_COST_TOL:
            found.append(z)
        if time.perf_counter() - start > time_budget:
            break
    return found
