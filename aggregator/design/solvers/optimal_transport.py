"""Optimal transport over the released alphabet: costs, couplings, the Earth mover's distance, barycenters.

The coupling mechanism [KM19, Defs 7-8, 16, 18; Prop 2] and the XDistP measure [KM19, Def 12] rest on
three computations, all over U (the product of the released attributes, numbered in the document's order):

* a cost c(x, x′) ≥ 0 (:func:`cost_matrix`): ``absolute`` |x − x′| over U's index order (the paper's
  Euclidean distance on a line, [KM19, Fig 2]), ``hamming`` [x ≠ x′], or a given |U|×|U| matrix;
* an optimal coupling γ ∈ Π(λ, μ) and EMD(λ, μ) = min_γ Σ γ(x, y) c(x, y) (:func:`optimal_coupling`,
  POT's ``ot.emd``, the exact network simplex);
* the weighted barycenter argmin_μ Σ_θ w_θ EMD(λ_θ, μ) (:func:`barycenter`), an exact linear program.

Reconstructed from [KM19]'s prose (the formulas were lost in extraction): Def 7 (coupling: a joint
distribution whose marginals are λ and μ), Def 8 (W_c(λ, μ) = min over couplings of the expected cost;
the Earth mover's distance), Fig 2 (λ₀ = (0.2, 0.5, 0.3) → λ₁ = (0.3, 0.2, 0.5) at cost 0.3 under
|x − x′|). POT is imported inside the functions that need it: it takes ~0.8 s to import, and most users
of :mod:`rldp.aggregator.design` (every ``rldp`` command, the service) never transport anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import scipy.optimize
import scipy.sparse

from rldp.shared.tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT

from ..primitives.errors import DesignError, SolverError

__all__ = [
    "COST_RULES",
    "DEFAULT_COST",
    "cost_matrix",
    "describe_cost",
    "check_distribution",
    "optimal_coupling",
    "emd",
    "barycenter",
]

#: Named costs over U; any other cost is a |U|×|U| matrix.
COST_RULES = ("absolute", "hamming")
#: The cost when none is given: hamming, since released values are categories whose alphabet order (sorted
#: text) means nothing; absolute only when the caller says the values are ordered.
DEFAULT_COST = "hamming"


def cost_matrix(cost: Any, k: int) -> np.ndarray:
    """The cost c[x, x′] over k released symbols: ``"absolute"`` (|x − x′|), ``"hamming"``
    ([x ≠ x′]) or a k×k matrix of finite non-negative numbers (DesignError naming ``cost`` otherwise)."""
    if isinstance(cost, str):
        idx = np.arange(k, dtype=float)
        if cost == "absolute":
            return np.abs(idx[:, None] - idx[None, :])
        if cost == "hamming":
            return 1.0 - np.eye(k)
        raise DesignError(f"cost must be one of {', '.join(COST_RULES)} or a {k}×{k} matrix; got {cost!r}")
    try:
        c = np.array(cost, dtype=float)
    except (TypeError, ValueError):
        raise DesignError(f"cost must be one of {', '.join(COST_RULES)} or a {k}×{k} matrix of numbers") from None
    if c.shape != (k, k):
        raise DesignError(f"cost matrix has shape {c.shape}; the released alphabet U needs {k}×{k} (rows x, columns y)")
    if not np.all(np.isfinite(c)):
        raise DesignError("cost matrix entries must be finite numbers")
    if np.any(c < 0):
        x, y = np.argwhere(c < 0)[0]
        raise DesignError(f"cost matrix entries must be ≥ 0; cost[{x}][{y}] = {float(c[x, y]):g}")
    return c


def describe_cost(cost: Any) -> str | list[list[float]]:
    """The cost as a document records it: its rule's name, or the matrix as nested lists."""
    if isinstance(cost, str):
        return cost
    return cast("str | list[list[float]]", np.asarray(cost, dtype=float).tolist())


def check_distribution(values: Any, k: int, name: str) -> np.ndarray:
    """``values`` as a distribution over the k released symbols; DesignError naming ``name`` if it has
    another length (support), a negative or non-finite entry, or does not sum to 1."""
    try:
        v = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DesignError(f"{name} must be {k} probabilities (one per released value); got {values!r}") from None
    if v.size != k:
        raise DesignError(
            f"{name} has {v.size} values; its support must be the released alphabet U, which has {k} values"
        )
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise DesignError(f"{name} must be finite and non-negative; got {v.tolist()}")
    if abs(v.sum() - 1.0) > STOCHASTIC_TOLERANCE:
        raise DesignError(f"{name} must sum to 1 ({STOCHASTIC_TOLERANCE_TEXT}); it sums to {float(v.sum())!r}")
    return cast("np.ndarray", v / v.sum())


def optimal_coupling(source: np.ndarray, target: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, float]:
    """(γ, EMD): an optimal coupling γ[x, y] of ``source`` (rows) and ``target`` (columns) for
    ``cost`` and its cost Σ γ·c [KM19, Defs 7-8], by POT's exact network simplex (``ot.emd``).

    Both arguments must be distributions (they are renormalised to sum to exactly 1, which
    ot.emd requires). A solver that stops before optimality raises SolverError.
    """
    import ot  # heavy (~0.8 s): imported only when a coupling is computed (see the module docstring)

    a = np.asarray(source, dtype=np.float64)
    b = np.asarray(target, dtype=np.float64)
    a, b = a / a.sum(), b / b.sum()
    gamma, log = ot.emd(a, b, np.ascontiguousarray(cost, dtype=np.float64), numItermax=10_000_000, log=True)
    if log.get("result_code") != 1:
        raise SolverError(f"optimal transport did not reach the optimum: {log.get('warning')}")
    gamma = np.maximum(np.asarray(gamma, dtype=float), 0.0)
    return gamma, float(np.sum(gamma * cost))


def emd(source: np.ndarray, target: np.ndarray, cost: np.ndarray) -> float:
    """The Earth mover's distance W_c(source, target) [KM19, Def 8]."""
    return optimal_coupling(source, target, cost)[1]


def barycenter(distributions: Sequence[np.ndarray], weights: Sequence[float], cost: np.ndarray) -> np.ndarray:
    """argmin_μ Σ_θ w_θ EMD(λ_θ, μ) over distributions μ on the same k symbols (a weighted
    Wasserstein-1 barycenter with fixed support), solved exactly as one linear program:

        min Σ_θ w_θ ⟨c, γ_θ⟩  s.t.  γ_θ 1 = λ_θ,  γ_θᵀ 1 = μ,  γ_θ ≥ 0  (every θ with w_θ > 0).

    Why an LP: the common target of the coupling mechanism must be the same for every θ, and
    this is the target of least expected loss [KM19, Prop 2] among all common targets. Distributions
    of zero weight do not enter; HiGHS (SciPy) solves it; a failure raises SolverError.
    """
    lams = [np.asarray(d, dtype=float) for d, w in zip(distributions, weights, strict=True) if w > 0]
    ws = [float(w) for w in weights if w > 0]
    if not lams:
        raise DesignError("the barycenter needs at least one distribution of positive weight")
    k = lams[0].size
    m = len(lams)
    block = k * k
    n_vars = m * block + k
    c_vec = np.concatenate([w * np.asarray(cost, dtype=float).reshape(-1) for w in ws] + [np.zeros(k)])
    rows, cols, vals = [], [], []
    row_sum = scipy.sparse.kron(scipy.sparse.eye(k), np.ones((1, k))).tocoo()  # Σ_y γ[x, y]
    col_sum = scipy.sparse.kron(np.ones((1, k)), scipy.sparse.eye(k)).tocoo()  # Σ_x γ[x, y]
    for t in range(m):
        off = t * block
        r0 = 2 * k * t
        rows += [row_sum.row + r0, col_sum.row + r0 + k, np.arange(k) + r0 + k]
        cols += [row_sum.col + off, col_sum.col + off, m * block + np.arange(k)]
        vals += [row_sum.data, col_sum.data, -np.ones(k)]
    a_eq = scipy.sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(2 * k * m, n_vars)
    )
    b_eq = np.concatenate([np.concatenate([lam / lam.sum(), np.zeros(k)]) for lam in lams])
    res = scipy.optimize.linprog(c_vec, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0 or res.x is None:
        raise SolverError(f"the barycenter linear program failed: {res.message}")
    mu = np.maximum(res.x[m * block :], 0.0)
    return cast("np.ndarray", mu / mu.sum())
