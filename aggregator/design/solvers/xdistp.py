"""Extended distribution privacy with the Earth mover's distance (XDistP) [KM19, Def 12; Thm 2].

(ε, D, d)-XDistP asks D(Aλ₀ ‖ Aλ₁) ≤ ε · d(λ₀, λ₁) for every protected pair, with d a metric on the
input distributions; here d = EMD_c over the released alphabet U (:mod:`.optimal_transport`; the cost c that
the coupling mechanism uses, hamming [x ≠ x′] by default: :data:`.optimal_transport.DEFAULT_COST`) and the pairs are P_U|θ, P_U|θ′ as in the
distp audit. The smallest such ε is max over ordered θ ≠ θ′ of D(P(·|θ) ‖ P(·|θ′)) / EMD(λ_θ, λ_θ′)
(rebuilt from the prose of [KM19, Sec II-D, V-B]: the formula was lost in extraction). A pair with
EMD 0 (the same distribution) needs D = 0 (else ε = inf) and is skipped when D = 0.

The numerators come from :func:`rldp.shared.distp_measures.pairwise_divergences` (numpy, shared with
the client); the Earth mover's distance needs optimal transport (POT), hence this aggregator module.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.distp_measures import DIVERGENCES, pairwise_divergences

from .optimal_transport import DEFAULT_COST, cost_matrix, emd

__all__ = ["emd_table", "xdistp_epsilon"]


def emd_table(distribution: Any, cost: Any = DEFAULT_COST) -> np.ndarray:
    """EMD_c(P_U|θ, P_U|θ′) for every pair, shape (|S|, |S|); NaN for θ without mass."""
    p = np.asarray(distribution, dtype=float)
    mass = p.sum(axis=1)
    c = cost_matrix(cost, p.shape[1])
    k = p.shape[0]
    table = np.full((k, k), np.nan)
    for a in range(k):
        for b in range(k):
            if mass[a] > 0 and mass[b] > 0:
                table[a, b] = 0.0 if a == b else emd(p[a] / mass[a], p[b] / mass[b], c)
    return table


def xdistp_epsilon(matrix: Any, distribution: Any, cost: Any = DEFAULT_COST) -> dict[str, float]:
    """For each divergence D of :data:`~rldp.shared.distp_measures.DIVERGENCES`, the smallest ε of
    (ε, D)-XDistP w.r.t. EMD_c between the conditionals of ``distribution`` (shape (|S|, |U|)).

    ``max`` is ordinary XDistP [KM19, Def 4]: P(y|θ) ≤ e^{ε·EMD(λ_θ, λ_θ′)} P(y|θ′) for every y.
    """
    distances = emd_table(distribution, cost)
    tables = pairwise_divergences(matrix, distribution)
    out: dict[str, float] = {}
    for name in DIVERGENCES:
        table = tables[name]
        worst = 0.0
        for a, b in np.argwhere(~np.isnan(table)):
            d, div = distances[a, b], table[a, b]
            if div <= 0:
                continue
            worst = max(worst, math.inf if d <= 0 else float(div / d))
        out[name] = worst
    return out
