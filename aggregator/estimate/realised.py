"""The realised ε* the drift watch shows (its (a)): a calibrated point and a 95 % interval.

* The interval [L, U] is over the box of the estimate's cell intervals made simultaneous by
  Bonferroni (:func:`simultaneous_box`, a 95 % confidence region for θ): U = the maximum of ε*
  over the box, exact (:func:`realised_upper_bound`); L ≤ the minimum of ε* over the box
  (:func:`realised_lower_bound`). Whenever θ is in the box, L ≤ ε*(θ) ≤ U: the interval covers
  with the box's probability (≥ 95 %, asymptotically). Why: :mod:`.drift`'s docstring.
* The point (:func:`shrunk_point`): ε* at the maximum a-posteriori θ under a Dirichlet prior of
  κ = :data:`PSEUDO_REPORTS` pseudo-reports distributed as P̂, moved into [L, U]. The plug-in ε*
  at the maximum-likelihood θ̂ is biased far upwards at small n (ε* is a maximum of log-ratios,
  and θ̂ puts unresolved rare cells at 0: median 18.9 for a true 1.46 at 1,000 reports); the
  κ pseudo-reports keep every cell off 0 by the resolution the reports lack and weigh ≤ 10 %
  from 1,000 reports on (docs/design.md, "Drift watch", gives its measured bias).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.audit import joint_matrix, realised_epsilon

from .intervals import LEVEL, Z95
from .likelihood import Likelihood
from .linalg import SMALL_ALPHABET
from .result import Estimate

__all__ = [
    "PSEUDO_REPORTS",
    "Realised",
    "box_ratio_extremes",
    "box_ratio_max",
    "realised",
    "realised_lower_bound",
    "realised_text",
    "realised_upper_bound",
    "shrunk_point",
    "simultaneous_box",
]

#: κ: the point estimate's prior weight, in reports distributed as P̂ (module docstring).
PSEUDO_REPORTS = 100.0
#: MAP-EM updates of the point above SMALL_ALPHABET cells (:func:`shrunk_point`).
_LARGE_STEPS = 10

# Rows of Q per call of box_ratio_max are capped at this many entries (2 MB of float64 per temporary).
_CHUNK_ENTRIES = 1 << 18
#: Dinkelbach steps per row before :func:`box_ratio_max` decides it (:func:`box_ratio_extremes`).
_STEPS = 50


def box_ratio_max(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """max over l ≤ x ≤ h of Σ a_u x_u / Σ x_u, along the last axis (a: (..., k); l, h: (k,)).

    A linear-fractional maximum over a box sits at a threshold vertex: x_u = h_u for the j largest
    a_u and l_u for the others; the |U| + 1 candidates are all evaluated (exact). A box that allows
    x = 0 allows any single cell alone, so the largest a_u with h_u > 0 is among the candidates.
    """
    order = np.argsort(-a, axis=-1, kind="stable")
    a_s = np.take_along_axis(a, order, axis=-1)
    lo = np.broadcast_to(low, a.shape)
    hi = np.broadcast_to(high, a.shape)
    lo_s, hi_s = np.take_along_axis(lo, order, axis=-1), np.take_along_axis(hi, order, axis=-1)
    zero = np.zeros((*a.shape[:-1], 1))
    # numerator/denominator with the first j at h and the rest at l, j = 0 … k
    num = np.concatenate([zero, np.cumsum(a_s * hi_s, axis=-1)], axis=-1)
    num += np.concatenate([np.cumsum((a_s * lo_s)[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)
    den = np.concatenate([zero, np.cumsum(hi_s, axis=-1)], axis=-1)
    den += np.concatenate([np.cumsum(lo_s[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / den, -np.inf)
    single = np.where(hi > 0, a, -np.inf).max(axis=-1)  # x = h_u e_u, reachable when l can be 0
    can_vanish = lo.sum(axis=-1) <= 0
    return np.maximum(ratio.max(axis=-1), np.where(can_vanish, single, -np.inf))


def box_ratio_extremes(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(max, min) over l ≤ x ≤ h of Σ a_u x_u / Σ x_u for each row of ``a`` (|Y| × k; l, h: (k,)): the
    values of :func:`box_ratio_max` (of ``a`` and, negated, of ``−a``) without sorting any row.

    Dinkelbach's iteration [Din67]: from a ratio r reached in the box, the threshold vertex x_u = h_u where
    a_u > r (< r for the minimum), l_u elsewhere, maximises Σ (a_u − r) x_u over the box, and its ratio r′
    satisfies r′ − r = Σ (a_u − r) x_u / Σ x_u there: > 0 exactly when some x in the box has Σ (a_u − r) x_u
    > 0, i.e. beats r. So each step moves to a better threshold vertex, of which there are finitely many,
    and a row stops once a step no longer improves it: no x beats its r, which is reached, so r is the
    maximum over the box,
    the same threshold vertex :func:`box_ratio_max` finds by sorting (equal up to round-off; ties in a give
    equal values whichever side they go). Started from the box's midpoint, rows converge in a few steps;
    one still moving after :data:`_STEPS` steps (a round-off cycle) is decided by :func:`box_ratio_max`. A
    box whose low corner is 0 holds each x = h_u e_u, and the extremes are then the largest and smallest
    a_u with h_u > 0 (the ratio is an average of those a_u). Rows are taken a few hundred kB at a time, so
    each step's temporaries stay in the cache."""
    a = np.asarray(a, dtype=float)
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    if low.sum() <= 0:
        reach = high > 0  # the reductions below copy nothing (a may be a strided view of Q)
        top = np.max(a, axis=1, where=reach, initial=-np.inf)
        return top, np.min(a, axis=1, where=reach, initial=np.inf)
    if a.shape[0] == 0:
        return np.zeros(0), np.zeros(0)
    step = max(1, _CHUNK_ENTRIES // max(a.shape[1], 1))
    tops, bottoms = [], []
    for i in range(0, a.shape[0], step):
        top, bottom = _dinkelbach(np.ascontiguousarray(a[i : i + step]), low, high)
        tops.append(top)
        bottoms.append(bottom)
    return np.concatenate(tops), np.concatenate(bottoms)


def _dinkelbach(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`box_ratio_extremes` of a few rows, for a box with Σ l > 0 (every denominator is positive)."""
    width = high - low
    weighted = a * width
    # einsum, not BLAS: each row's sums are then the same whatever rows share its chunk
    base_num, base_den = np.einsum("ij,j->i", a, low), float(low.sum())
    middle = np.einsum("ij,j->i", a, low + high) / float((low + high).sum())
    out = []
    for better in (np.greater, np.less):  # the maximum, then the minimum
        r = middle.copy()
        rows = np.arange(a.shape[0])
        for _ in range(_STEPS):
            at_high = better(a[rows], r[rows, None]).astype(float)
            moved = (base_num[rows] + np.einsum("ij,ij->i", weighted[rows], at_high)) / (
                base_den + np.einsum("ij,j->i", at_high, width)
            )
            improved = better(moved, r[rows])
            r[rows[improved]] = moved[improved]
            rows = rows[improved]
            if rows.size == 0:
                break
        if rows.size:  # a round-off cycle: the sorting method decides these rows
            sign = 1.0 if better is np.greater else -1.0
            r[rows] = sign * box_ratio_max(sign * a[rows], low, high)
        out.append(r)
    return out[0], out[1]


def _worst_pair(top: np.ndarray, bottom: np.ndarray) -> float:
    """max over y and s₁ ≠ s₂ of log top[y, s₁] − log bottom[y, s₂] (0/0 → no leakage, x/0 → inf),
    from the two largest tops and two smallest bottoms of each row (no |Y|·|S|² array)."""
    with np.errstate(divide="ignore"):
        lt = np.where(top > 0, np.log(np.maximum(top, 1e-300)), -np.inf)
        lb = np.where(bottom > 0, np.log(np.maximum(bottom, 1e-300)), -np.inf)
    rows = np.arange(top.shape[0])
    hi_order = np.argsort(-lt, axis=1, kind="stable")[:, :2]
    lo_order = np.argsort(lb, axis=1, kind="stable")[:, :2]
    best = np.full(top.shape[0], -np.inf)
    for i in range(2):
        for j in range(2):
            s1, s2 = hi_order[:, i], lo_order[:, j]
            num, den = lt[rows, s1], lb[rows, s2]
            with np.errstate(invalid="ignore"):
                value = np.where(num == -np.inf, -np.inf, num - den)
            best = np.maximum(best, np.where(s1 != s2, value, -np.inf))
    return max(float(best.max()), 0.0) if best.size else 0.0


def _extremes(matrix: Any, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(max, min) over the box of P(y|s) = Σ_u Q(y|s,u) θ_u / Σ_u θ_u, each |Y| × |S| (blocks independent)."""
    k = lo.shape[0]
    q = joint_matrix(matrix, k, lo.shape[1]).reshape(-1, k, lo.shape[1])
    both = [box_ratio_extremes(q[:, s, :], lo[s], hi[s]) for s in range(k)]
    top = np.stack([t for t, _ in both], axis=1)
    bottom = np.stack([b for _, b in both], axis=1)
    return top, np.maximum(bottom, 0.0)


def realised_upper_bound(matrix: Any, low: Any, high: Any) -> float:
    """max of ε*(θ) over the box low ≤ θ ≤ high (|S| × |U|), exact over the box (module docstring)."""
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    if lo.shape[0] < 2:
        return 0.0
    # an s whose block may be all zero may have no users; still counted (conservative)
    return _worst_pair(*_extremes(matrix, lo, hi))


def realised_lower_bound(matrix: Any, low: Any, high: Any) -> float:
    """A lower bound of min over the box low ≤ θ ≤ high of ε*(θ) (|S| × |U|).

    min_θ max_{y,s₁≠s₂} r ≥ max_{y,s₁≠s₂} min_θ r, and over a box (independent blocks) the inner
    minimum of P(y|s₁)/P(y|s₂) is min_box P(y|s₁) / max_box P(y|s₂) exactly. Pairs with an s whose
    block may be all zero are left out (the box holds a θ without such users, whose ε* skips it),
    so is a 0 numerator; the bound is ≥ 0 (ε* is: both P(·|s) sum to 1).
    """
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    if lo.shape[0] < 2:
        return 0.0
    return _lower_from(*_extremes(matrix, lo, hi), lo)


def _lower_from(top: np.ndarray, bottom: np.ndarray, lo: np.ndarray) -> float:
    """:func:`realised_lower_bound` from the box's extremes of P(y|s) (|Y| × |S|) and its low corner."""
    present = lo.sum(axis=1) > 0
    top, bottom = top[:, present], bottom[:, present]
    if top.shape[1] < 2:
        return 0.0
    with np.errstate(divide="ignore"):
        lt = np.where(top > 0, np.log(np.maximum(top, 1e-300)), -np.inf)
        lb = np.where(bottom > 0, np.log(np.maximum(bottom, 1e-300)), -np.inf)
    best = 0.0
    for s1 in range(top.shape[1]):
        for s2 in range(top.shape[1]):
            if s1 != s2:
                live = lb[:, s1] > -np.inf  # a 0 numerator gives ratio 0 somewhere in the box
                if live.any():
                    best = max(best, float((lb[live, s1] - lt[live, s2]).max()))
    return best


def simultaneous_box(est: Estimate) -> tuple[np.ndarray, np.ndarray]:
    """The estimate's cell intervals made simultaneous (Bonferroni over the |X| cells)."""
    from scipy.stats import norm

    theta = est.joint
    cells = theta.size
    widen = float(norm.ppf(1.0 - (1.0 - LEVEL) / (2.0 * cells))) / Z95 if est.identifiable else 1.0
    low = np.clip(theta - (theta - est.ci95_low) * widen, 0.0, 1.0)
    high = np.clip(theta + (est.ci95_high - theta) * widen, 0.0, 1.0)
    return low, high


def shrunk_point(reports: Any, counts: Any, prior: Any, start: Any, weight: float = PSEUDO_REPORTS) -> np.ndarray:
    """The maximum a-posteriori P_X (flat) under a Dirichlet prior of ``weight`` pseudo-reports as ``prior``
    (P̂, mixed with 1 % uniform so that no cell's prior is 0), by the estimator's (MAP-)EM from ``start``
    (the maximum-likelihood θ̂; mixed likewise so that no cell starts at 0). The penalised likelihood is
    strictly concave, so the point is unique. Above SMALL_ALPHABET cells, :data:`_LARGE_STEPS` plain
    MAP-EM updates from θ̂ instead (two products with Q each: the estimate's own cost is many more), which
    already lift every cell θ̂ put at 0 to about κP̂_x/(n + κ) — what moves ε* — while θ̂ is otherwise the
    MLE; a point estimate: its tolerance moves the shown figure, never the interval."""
    q = np.asarray(reports, dtype=float)
    c = np.asarray(counts, dtype=float).ravel()
    a = q.shape[1]
    flat = np.clip(np.asarray(prior, dtype=float).ravel(), 0.0, None)
    flat = 0.99 * flat / flat.sum() + 0.01 / a
    theta = np.clip(np.asarray(start, dtype=float).ravel(), 0.0, None)
    theta = 0.99 * theta / max(theta.sum(), 1e-300) + 0.01 * flat
    if a <= SMALL_ALPHABET:
        fit = Likelihood(q, c.reshape(1, -1), flat, float(weight)).maximise(theta[None, :], 1e-10, 10_000, True)
        return np.asarray(fit.theta[0])
    kp, total = float(weight) * flat, c.sum() + float(weight)
    for _ in range(_LARGE_STEPS):
        pi = q @ theta
        theta = theta * (q.T @ np.divide(c, pi, out=np.zeros_like(pi), where=c > 0)) + kp
        theta /= total
        theta /= theta.sum()  # round-off only
    return theta


@dataclass(frozen=True)
class Realised:
    """The realised ε* shown: ``point`` within the 95 % interval [``lower``, ``upper``] (module docstring)."""

    point: float | None  # None: Q's rank < |X|, so the reports do not identify θ (nor, in general, ε*)
    lower: float
    upper: float


def realised(matrix: Any, reports: Any, counts: Any, estimate: Estimate, prior: Any) -> Realised:
    """ε* of ``matrix`` (the claim's mechanism): the shrunk point and the interval over the estimate's
    simultaneous 95 % box (module docstring). ``reports``/``counts``: the report matrix and counts the
    estimate came from; ``prior``: P̂ (|S| × |U|). A report matrix of rank < |X| identifies only Qθ:
    the prior would fill the rest of θ with P̂'s, so no point is given, only the interval (the partial-
    identification box's)."""
    low, high = simultaneous_box(estimate)
    if low.shape[0] < 2:
        lower = upper = 0.0
    else:  # the box's extremes once for both ends (the costly part at large |X|)
        top, bottom = _extremes(matrix, low, high)
        upper = _worst_pair(top, bottom)
        lower = min(_lower_from(top, bottom, low), upper)
    if not estimate.identifiable:
        return Realised(point=None, lower=lower, upper=upper)
    shape = np.shape(estimate.joint)
    point = realised_epsilon(matrix, shrunk_point(reports, counts, prior, estimate.joint).reshape(shape))
    return Realised(point=min(max(point, lower), upper), lower=lower, upper=upper)


def realised_text(point: float | None, lower: float | None, upper: float | None) -> str:
    """The figure in words, e.g. 'realised ε* ≈ 1.51 (95 % interval [1.27, 26.9])'; all None: S latent;
    a point of None with bounds: Q's rank < |X| (the interval only)."""
    if point is None and lower is None and upper is None:
        return "realised ε* not identified (S is latent)"
    if point is None:
        low, high = "0" if lower is None else _num(lower), "∞" if upper is None else _num(upper)
        return f"realised ε* not identified by these reports (rank < |X|), 95 % interval [{low}, {high}]"
    text = f"realised ε* ≈ {_num(point)}"
    if lower is None and upper is None:
        return text
    low = "0" if lower is None else _num(lower)
    return f"{text} (95 % interval [{low}, {'∞' if upper is None else _num(upper)}])"


def _num(value: float) -> str:
    return "∞" if not math.isfinite(value) else f"{value:.3g}"
