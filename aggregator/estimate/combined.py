"""One estimate of P_X from the reports of several mechanisms: :func:`estimate_combined`.

A collection's users report through a sequence of mechanisms Q_1, …, Q_M over the same X
(one after each rotation); mechanism m received the counts n_{m,y}, n_m in all. Every report
is an independent draw from its own mechanism, so the log-likelihood of P = θ is

    ℓ(θ) = Σ_m Σ_y n_{m,y} log (Q_m θ)_y ,

one likelihood that every mechanism's reports inform. It is maximised by EM over the
*stacked* mechanism Q̃ = [w_1 Q_1; …; w_M Q_M] with w_m = n_m / n and the stacked counts:
the weights change ℓ only by the constant Σ_m n_m log w_m (same maximiser), they make Q̃
column-stochastic (Σ_m w_m = 1), and the EM update of Q̃ is exactly EM over the M mechanisms,
θ_x ← θ_x · (1/n) Σ_m Σ_y n_{m,y} Q_m(y|x) / (Q_m θ)_y — the posterior mass of x summed over
every report, whatever mechanism it came through.

Intervals: with these weights the expected count of row (m, y) is n (Q̃θ)_{m,y} = n_m (Q_mθ)_y,
so the Fisher information n Q̃ᵀ diag(1/Q̃θ) Q̃ of the stacked counts equals
Σ_m n_m Q_mᵀ diag(1/Q_mθ) Q_m, the sum of the mechanisms' own: the delta-method intervals of
:mod:`.intervals` are those of the M-mechanism model. The unbiased-estimator part of those
intervals (and the bootstrap) treat the stacked counts as one multinomial, whose covariance
exceeds that of M independent multinomials of fixed sizes n_m by a covariance matrix (of
which mechanism a report came through), so that part is conservative, never optimistic.
Summing a mechanism's windows is exact: the windows of one mechanism share its Q.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError

from .estimator import estimate_distribution
from .inputs import validate_counts, validate_matrix
from .result import Estimate

__all__ = ["estimate_combined", "stack"]


def stack(matrices: Sequence[Any], counts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(Q̃, stacked counts, n_m per mechanism) of the mechanisms that have reports (see the module docstring).

    Every matrix must be over the same X (same number of columns); ValidationError otherwise,
    and when no mechanism has a report."""
    if len(matrices) != len(counts) or not matrices:
        raise ValidationError(f"give one count vector per mechanism ({len(matrices)} mechanisms, {len(counts)} counts)")
    qs = [validate_matrix(m) for m in matrices]
    width = {q.shape[1] for q in qs}
    if len(width) != 1:
        raise ValidationError(f"every mechanism must be over the same X; got {sorted(width)} inputs")
    cs = []
    for i, (q, c) in enumerate(zip(qs, counts, strict=True)):
        c = np.asarray(c)
        if c.shape != (q.shape[0],):
            raise ValidationError(f"counts of mechanism {i} must have {q.shape[0]} entries; got shape {c.shape}")
        cs.append(c.astype(float))
    totals = [int(round(float(c.sum()))) for c in cs]
    n = sum(totals)
    if n == 0:
        raise ValidationError("no reports yet: every mechanism's counts are 0")
    keep = [i for i, t in enumerate(totals) if t > 0]
    q_stacked = np.vstack([qs[i] * (totals[i] / n) for i in keep])
    c_stacked = validate_counts(np.concatenate([cs[i] for i in keep]), q_stacked.shape[0])
    return q_stacked, c_stacked, totals


def estimate_combined(
    matrices: Sequence[Any], counts: Sequence[Any], shape: tuple[int, int], **options: Any
) -> tuple[Estimate, list[int]]:
    """Maximum likelihood of P_X (|S| × |U|) from the reports of every mechanism in ``matrices``
    (``counts[m][y]``: the reports y of mechanism m), with 95 % intervals; and n_m per mechanism.

    ``options`` are :func:`~.estimator.estimate_distribution`'s (method, interval, prior,
    prior_weight, rng, …; ``cache_key`` is not taken: Q̃ depends on the counts). One mechanism
    alone gives the same estimate as :func:`~.estimator.estimate_distribution`.
    """
    if "cache_key" in options:
        raise ValidationError("cache_key does not apply to a combined estimate (the stacked Q depends on the counts)")
    q_stacked, c_stacked, totals = stack(matrices, counts)
    return estimate_distribution(q_stacked, c_stacked, shape, **options), totals
