"""Score-type (Wilson) intervals of the unbiased estimate of a set's probability, and when to withhold one.

Why: the Wald interval θ̃ ± z·sd evaluates the spread at the estimate. For a rare cell the
unbiased θ̃_x = aᵀc/n (a = row x of Q⁺) is driven by a few reports of the outputs that carry
it, so its distribution is skewed like a small Poisson count: when the count comes out low,
θ̃ and the spread computed there are both low, and the interval ends below the truth
(PolyOpt at ε = 1 on Adult sex × race, n = 1,000: Male|Other, p = 0.0055, whose only output
is shared with 1.8 % of Female|White; 6 % of intervals ended below p, 0.8 % above;
coverage 0.925). Wilson's remedy for a binomial proportion (evaluate the variance at the
hypothesised value, not at the estimate; Brown, Cai & DasGupta 2001 [BCD01, Sec 4.1.1])
carries over exactly:

For an event A (w = 1_A; a cell or a marginal), move mass between A and its complement
keeping the estimated proportions inside each (θ̂, the estimate on the simplex):
θ(t) = t·r_A + (1 − t)·r_Ā, r_A = θ̂·1_A / θ̂(A) (uniform on A if θ̂(A) = 0). Then
π(t) = Qθ(t) is a distribution of the outputs, linear in t, and aᵀπ(t) = wᵀQ⁺Qθ(t) = t
(Q of full column rank), so under π(t) the statistic wᵀθ̃ = aᵀc/n has mean t and variance
V(t) = (Σ_y a_y² π_y(t) − t²)/n = (s₀ + (s₁ − s₀)t − t²)/n. The interval is
{t ∈ [0, 1] : (wᵀθ̃ − t)² ≤ z²V(t)}, the roots of a quadratic. For GRR
(Q⁻¹ = (I − q11ᵀ)/(p − q)) V(t) = π_x(t)(1 − π_x(t))/((p − q)²n) with π_x(t) = q + (p − q)t:
the interval is exactly Wilson's for the proportion of reports of x, mapped back to θ_x.

It is used with, not instead of, the Wald intervals (``intervals.py`` takes the union), so
it can only widen them; the median width over cells grows little (docs/experiments/coverage.md).

Withholding. A Wald interval rests on a normal approximation of aᵀc/n, a mean of n draws of
a_Y, Y ~ π. What breaks it at small n is skewness: the mean's skewness is γ = μ₃/(σ³√n) (σ²,
μ₃ the central moments of a_Y), and a Poisson count of mean m has γ = 1/√m, so m = nσ⁶/μ₃² is
the Poisson count as skewed as the statistic (m = nπ(1−π)/(1−2π)² ≈ nπ for the share of one
output; ∞ when a_Y is symmetric). Where an interval is a Wald interval alone (above
SMALL_ALPHABET cells the delta method forms no Q⁺, so no score interval) and m < MIN_COUNT at
the fitted π̂ (floored at 1/n), it is withheld: the estimate reports the cell with ``withheld``
set and a reason rather than a number it cannot stand behind. MIN_COUNT = 5 is the usual rule
for normal approximations of counts (expected count ≥ 5, Cochran's rule for χ² tests). The
score-joined intervals are not withheld: on Adult sex × race they covered every cell ≥ 0.956
for GRR, PolyOpt and GRR^α down to n = 10 (all cells, 1,000 collections each, where the
intervals are wide, as they should be). The rule is judged where Q⁻¹ is at hand (square Q);
a non-square Q above SMALL_ALPHABET, and the identified functionals of a rank-deficient Q, get
their Wald intervals unjudged.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_COUNT", "event_rows", "score_bounds", "score_cells", "signal_counts"]

#: Expected reports carrying a functional's signal below which its interval is withheld (see above).
MIN_COUNT = 5.0


def event_rows(w: np.ndarray) -> np.ndarray:
    """Which rows of ``w`` (k, |X|) are events: 0/1 weights, neither all 0 nor all 1."""
    binary = np.all((w == 0) | (w == 1), axis=1)
    some = w.sum(axis=1)
    return binary & (some > 0) & (some < w.shape[1])


def score_bounds(
    w: np.ndarray, a: np.ndarray, raw: np.ndarray, theta: np.ndarray, q: np.ndarray, n: float, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the score interval above for event rows ``w`` (k, |X|), with ``a`` = wQ⁺ (k, |Y|),
    ``raw`` = wᵀθ̃ (k,), the estimate ``theta`` on the simplex and Q. NaN where the set is empty."""
    inside = w * theta
    mass = inside.sum(axis=1, keepdims=True)
    uniform = w / w.sum(axis=1, keepdims=True)
    r_in = np.where(mass > 0, inside / np.where(mass > 0, mass, 1.0), uniform)
    outside = (1.0 - w) * theta
    rest = outside.sum(axis=1, keepdims=True)
    uniform_out = (1.0 - w) / (1.0 - w).sum(axis=1, keepdims=True)
    r_out = np.where(rest > 0, outside / np.where(rest > 0, rest, 1.0), uniform_out)
    a2 = a * a
    s1 = np.einsum("ky,ky->k", a2, r_in @ q.T)  # Σ a² π at t = 1
    s0 = np.einsum("ky,ky->k", a2, r_out @ q.T)  # Σ a² π at t = 0
    return _roots(raw, s0, s1, n, z)


def score_cells(
    pinv: np.ndarray, raw: np.ndarray, theta: np.ndarray, q: np.ndarray, n: float, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`score_bounds` of every cell (A = {x}) without the |X| × |X| weights: r_A = e_x, so
    π(1) = Q e_x and π(0) = (Qθ̂ − θ̂_x Q e_x)/(1 − θ̂_x)."""
    a2 = pinv * pinv  # (|X|, |Y|)
    s1 = np.einsum("xy,yx->x", a2, q)
    s_fit = a2 @ (q @ theta)
    rest = 1.0 - theta
    s_uniform = (a2 @ q.sum(axis=1) - s1) / max(theta.size - 1, 1)  # θ̂ = e_x: the rest uniform
    s0 = np.where(rest > 0, (s_fit - theta * s1) / np.where(rest > 0, rest, 1.0), s_uniform)
    return _roots(raw, s0, s1, n, z)


def _roots(raw: np.ndarray, s0: np.ndarray, s1: np.ndarray, n: float, z: float) -> tuple[np.ndarray, np.ndarray]:
    """The set {t : (raw − t)² ≤ z²(s0 + (s1 − s0)t − t²)/n} as (low, high) clipped to [0, 1] (NaN if empty)."""
    k = z * z / n
    # (raw − t)² ≤ k (s0 + (s1 − s0) t − t²)  ⇔  A t² + B t + C ≤ 0
    qa = 1.0 + k
    qb = -(2.0 * raw + k * (s1 - s0))
    qc = raw * raw - k * s0
    disc = qb * qb - 4.0 * qa * qc
    root = np.sqrt(np.where(disc >= 0, disc, np.nan))
    low = (-qb - root) / (2.0 * qa)
    high = (-qb + root) / (2.0 * qa)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def signal_counts(a: np.ndarray, fitted: np.ndarray, n: float) -> np.ndarray:
    """m = n σ⁶ / μ₃² per row of ``a`` (k, |Y|) at the fitted output distribution (see above): the
    Poisson count as skewed as aᵀc/n; inf where the statistic is not skewed."""
    pi = np.maximum(fitted, 1.0 / n)
    pi = pi / pi.sum()
    dev = a - (a @ pi)[:, None]
    var = (dev * dev) @ pi
    third = (dev * dev * dev) @ pi
    with np.errstate(divide="ignore", invalid="ignore"):
        m = n * var**3 / (third * third)
    return np.where(third != 0, m, np.inf)
