"""Design for the question asked: the task's error of a mechanism, and the released-only randomised response.

A design request names its task (``DesignRequest.task``): ``joint`` (P(S, U); the designers' own objective,
I(X; Y) — today's behaviour), ``distribution`` (U's distribution, error W1 in U's units) or ``mean`` (U's
mean, error in U's units). For the last two the error of a mechanism Q at P̂ is that of the linear
estimator of P(U) from the reports' frequencies f: p̂_U = A f, A = M Q⁺ (M sums X onto U), unbiased exactly
when P(U) is identifiable (A Q = M); per report (n = 1; a design's error scales as 1/√n):

* distribution: E W1 ≈ √(2/π) Σ_j sd(F̂_j) (w_j + w_{j+1})/2 over the inner edges j (values spread
  uniformly within a bin: the CDFs are linear between edges);
* mean: E |m̂ − m| = √(2/π) sd(Σ_u c_u p̂_u), c the bins' midpoints.

:func:`released_rr` is the mechanism that spends the whole budget on U: randomised response on U's values
alone (GRR_δ, the report independent of S given U), δ the largest the exact RLDP audit passes — ε(δ) is
the worst log-ratio max_{y, s₁≠s₂} max_{F_s₁} P(y|s₁) / min_{F_s₂} P(y|s₂), the U-part of the IR audit
(:mod:`.calibrate`). When U says little about S (age about sex), δ is large and U is released almost in
the clear; the audit proves that this is all it reveals about S.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.families import grr_matrix
from .calibrate import released_leak
from .search import DELTA_CAP, largest_feasible

__all__ = ["TASKS", "TASK_UNITS", "check_task", "released_rr", "task_error"]

#: The statistics a design can be asked to serve (DesignRequest.task).
TASKS = ("joint", "distribution", "mean")
TASK_UNITS = {"distribution": "W1", "mean": "absolute error of the mean"}
_IDENTIFIABLE = 1e-7
_SPREAD = math.sqrt(2.0 / math.pi)  # E|Z| for Z ~ N(0, 1)


def check_task(value: Any, name: str, error: Any) -> str:
    """``value`` if it names a task; else ``error`` naming the tasks."""
    if not isinstance(value, str) or value not in TASKS:
        raise error(f"{name} must be one of {', '.join(TASKS)}; got {value!r}", parameter=name)
    return value


def released_rr(uset: UncertaintySet, epsilon: float, latent: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """GRR_δ on U alone (columns over X = S × U, or over U when S is latent), δ the largest with the exact
    audit's ε(δ) ≤ ε·(1 − DESIGN_MARGIN) (bisection: ε(δ) grows with δ)."""
    eps = epsilon * (1 - DESIGN_MARGIN)
    delta = float(largest_feasible(lambda d: np.array([released_leak(uset, float(x)) <= eps for x in d]), 1)[0])
    if delta < 0:  # cannot happen: δ = 0 makes the report independent of X
        delta = 0.0
    delta = min(delta, DELTA_CAP)
    rows = grr_matrix(uset.n_released, delta)
    q = rows if latent else np.tile(rows, (1, uset.n_sensitive))
    return q, {"delta_u": delta, "epsilon_u_audit": released_leak(uset, delta)}


def _marginal(a1: int, a2: int, latent: bool) -> np.ndarray:
    """M with M[u, x] = 1 when input x has U = u (x = s·|U| + u, or x = u when S is latent)."""
    if latent:
        return np.eye(a2)
    return np.tile(np.eye(a2), (1, a1))


def marginal_covariance(q: np.ndarray, p_input: np.ndarray, a1: int, a2: int, latent: bool) -> np.ndarray | None:
    """Covariance of one report's contribution to the linear estimate of P(U) at P̂ (None when P(U) is
    not identifiable from Q's reports)."""
    m = _marginal(a1, a2, latent)
    a = m @ np.linalg.pinv(q)
    if np.abs(a @ q - m).max() > _IDENTIFIABLE * max(1.0, np.abs(a).max()):
        return None
    f = q @ p_input
    sigma = np.diag(f) - np.outer(f, f)
    cov: np.ndarray = a @ sigma @ a.T
    return cov


def task_error(task: str, q: np.ndarray, p_hat: np.ndarray, latent: bool, edges: np.ndarray | None) -> float | None:
    """The task's expected error per report (× 1/√n for n reports) of Q at P̂, in U's units; None for the
    joint task (its objective is I(X;Y)); inf when the task's statistic is not identifiable. ``edges``:
    U's bin edges (None: U's values at unit spacing, 0, 1, …)."""
    if task == "joint":
        return None
    a1, a2 = p_hat.shape
    cov = marginal_covariance(q, p_hat.sum(axis=0) if latent else p_hat.reshape(-1), a1, a2, latent)
    if cov is None:
        return math.inf
    e = np.arange(a2 + 1, dtype=float) if edges is None else np.asarray(edges, dtype=float)
    if task == "mean":
        mid = (e[:-1] + e[1:]) / 2
        return float(_SPREAD * math.sqrt(max(float(mid @ cov @ mid), 0.0)))
    lower = np.tril(np.ones((a2 - 1, a2)))  # F at the inner edges: cumulative sums
    sd = np.sqrt(np.maximum(np.diag(lower @ cov @ lower.T), 0.0))
    w = np.diff(e)
    return float(_SPREAD * np.sum(sd * (w[:-1] + w[1:]) / 2))
