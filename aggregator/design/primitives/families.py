"""Closed-form mechanism families as matrices Q[y, x] = Q(y|x) over X = S × U (s major).

GRR (the LDP baseline, [LZG24, eq. 56]), SRR ([LZG24, Def 4]), IR ([LZG24, Def 5]:
GRR ⊗ GRR) and CR ([LZG21, Protocol 2] with GRR inside). Parameters are privacy levels
in nats; ``math.inf`` means "no randomisation" (the identity).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .errors import DesignError

__all__ = ["grr_matrix", "srr_matrix", "ir_matrix", "cr_matrix"]


def _check_level(name: str, value: float) -> float:
    value = float(value)
    if math.isnan(value) or value < 0:
        raise DesignError(f"{name} must be ≥ 0 (nats, inf for no noise); got {value!r}")
    return value


def grr_matrix(k: int, epsilon: float) -> np.ndarray:
    """Generalised randomised response on k symbols ([LZG24, eq. 56]):
    Q(y|x) = e^ε/(e^ε + k − 1) if y = x, else 1/(e^ε + k − 1). ε-LDP."""
    epsilon = _check_level("epsilon", epsilon)
    if k < 1:
        raise DesignError(f"k must be ≥ 1; got {k}")
    if math.isinf(epsilon) or k == 1:
        return np.eye(k)
    # Divide by e^ε first so that large ε does not overflow.
    off = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon)) * math.exp(-epsilon)
    diag = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    q = np.full((k, k), off)
    np.fill_diagonal(q, diag)
    return q


def srr_matrix(n_sensitive: int, n_released: int, epsilon: float) -> np.ndarray:
    """Secret randomised response ([LZG24, Def 4], weights as in docs/design.md, errata):
    weight e^ε on the true (s, u), e^−ε on (s, u') with u' ≠ u, 1 on every (s', ·) with
    s' ≠ s, normalised per column. (ε, P_X)-RLDP, hence (ε, F)-RLDP for every F
    ([LZG24, Lemma 2])."""
    epsilon = _check_level("epsilon", epsilon)
    a1, a2 = n_sensitive, n_released
    same_s = np.kron(np.eye(a1), np.ones((a2, a2)))
    w = np.where(same_s > 0, math.exp(-epsilon), 1.0)
    np.fill_diagonal(w, math.exp(epsilon))
    # Every column holds the same weights in another order, so one normaliser serves all: the
    # entries are then exactly equal where the formula says so (per-column sums differ in the last
    # bits), which keeps the blocks constant-but-one-entry for the audit's closed form.
    return cast("np.ndarray", w / w[:, 0].sum())


def ir_matrix(n_sensitive: int, n_released: int, epsilon_s: float, delta_u: float) -> np.ndarray:
    """Independent reporting IR(GRR_ε₁(S), GRR_δ(U)) ([LZG24, Def 5]): the Kronecker
    product, so y = (y_S, y_U) is indexed y_S·|U| + y_U like X."""
    return np.kron(grr_matrix(n_sensitive, epsilon_s), grr_matrix(n_released, delta_u))


def cr_matrix(conditionals: np.ndarray, epsilon_s: float, deltas: np.ndarray) -> np.ndarray:
    """Conditional reporting ([LZG21, Protocol 2]) with R^s = GRR_{δ_s} on U.

    S̃ = GRR_ε₁(s); if S̃ = s output (s, R^s(u)), else draw Ũ ~ P̂_U|S̃ and output
    (S̃, R^{S̃}(Ũ)). As a matrix over Y = S × U:
    Q[(t, z) | (s, u)] = p₁·[t = s]·R^t(z|u) + p₀·[t ≠ s]·Σ_u' R^t(z|u') P̂_u'|t,
    with p₁ = e^ε₁/(e^ε₁ + |S| − 1), p₀ = 1/(e^ε₁ + |S| − 1).
    """
    cond = np.asarray(conditionals, dtype=float)
    a1, a2 = cond.shape
    deltas = np.broadcast_to(np.asarray(deltas, dtype=float), (a1,))
    g_s = grr_matrix(a1, epsilon_s)
    p1, p0 = g_s[0, 0], (g_s[1, 0] if a1 > 1 else 0.0)
    q = np.empty((a1 * a2, a1 * a2))
    for t in range(a1):  # one block row per reported s̃ (|S| is small)
        r_t = grr_matrix(a2, deltas[t])
        decoy = r_t @ cond[t]  # distribution of R^t(Ũ), Ũ ~ P̂_U|t
        block = np.tile(p0 * decoy[:, None], (1, a1 * a2))
        block[:, t * a2 : (t + 1) * a2] = p1 * r_t
        q[t * a2 : (t + 1) * a2, :] = block
    return q
