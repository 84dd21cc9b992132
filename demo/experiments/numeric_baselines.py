"""The LDP baselines for numbers of ``rldp experiment numeric``, and the error measures.

* **Square Wave** [LLW20, Sec 4]: its matrix is the product's (the ``square-wave`` designer's
  :func:`rldp.aggregator.design.square_wave_matrix`, here with the paper's 1,024 output buckets over the
  integer values), estimated by **EMS** (EM with the binomial smoothing [1, 2, 1]/4 after every step),
  stopped when the mean log-likelihood gains less than ``tol`` per iteration.
* **Piecewise** [WXY19, Sec III-B]: t ∈ [−1, 1] reported as t̃ ∈ [−C, C], C = (e^{ε/2} + 1)/(e^{ε/2} − 1), uniform on
  [l(t), l(t) + C − 1] with probability e^{ε/2}/(e^{ε/2} + 1), uniform on the rest otherwise; the mean of the
  reports is unbiased for the mean.
* :func:`em`: the maximum-likelihood P_X of report counts through Q (plain EM; the binned designs).
* :func:`metrics`: W1 (in the value's units), KS, and the errors of the mean and the median of an estimated
  distribution over an integer grid against the truth.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["em", "ems", "metrics", "piecewise_mean", "report_counts", "report_counts_batch"]


def report_counts(q: np.ndarray, input_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Counts of reports when input_counts[i] users with input i each report once through Q."""
    out = np.zeros(q.shape[0], dtype=np.int64)
    for i in np.flatnonzero(input_counts):  # one multinomial per input value (not per user)
        out += rng.multinomial(int(input_counts[i]), q[:, i] / q[:, i].sum())
    return out


def report_counts_batch(q: np.ndarray, input_counts: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, outputs) counts of reports: :func:`report_counts` ``reps`` times at once."""
    cols = q / q.sum(axis=0, keepdims=True)
    draws = rng.multinomial(np.broadcast_to(input_counts.astype(np.int64), (reps, q.shape[1])), cols.T)
    out: np.ndarray = draws.sum(axis=1)
    return out


def _smooth(theta: np.ndarray) -> np.ndarray:
    padded = np.r_[theta[0], theta, theta[-1]]
    s = (padded[:-2] + 2 * padded[1:-1] + padded[2:]) / 4
    out: np.ndarray = s / s.sum()
    return out


def em(
    q: np.ndarray, counts: np.ndarray, *, smooth: bool = False, tol: float = 1e-9, max_iter: int = 20_000
) -> np.ndarray:
    """EM for P_X from report counts (EMS with ``smooth``), from the uniform distribution."""
    n = counts.sum()
    theta = np.full(q.shape[1], 1.0 / q.shape[1])
    last = -np.inf
    for _ in range(max_iter):
        fitted = np.maximum(q @ theta, 1e-300)
        theta = theta * (q.T @ (counts / fitted)) / n
        if smooth:
            theta = _smooth(theta)
        ll = float(counts @ np.log(np.maximum(q @ theta, 1e-300))) / n
        if ll - last < tol:
            break
        last = ll
    return theta


def ems(q: np.ndarray, counts: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """EMS [LLW20, Sec 5]: EM with smoothing, stopped when the mean log-likelihood gains less than ``tol``."""
    return em(q, counts, smooth=True, tol=tol)


def piecewise_mean(values: np.ndarray, epsilon: float, rng: np.random.Generator) -> float:
    """The Piecewise mechanism's unbiased estimate of the mean of ``values`` ∈ [−1, 1], one report each."""
    h = math.exp(epsilon / 2)
    c = (h + 1) / (h - 1)
    left = (c + 1) / 2 * values - (c - 1) / 2
    right = left + c - 1
    centre = rng.random(values.size) < h / (h + 1)
    inside = left + rng.random(values.size) * (c - 1)
    # outside: uniform on [−C, l) ∪ (r, C], total length C + 1
    w = rng.random(values.size) * (c + 1)
    below = left + c
    outside = np.where(w < below, -c + w, right + (w - below))
    return float(np.mean(np.where(centre, inside, outside)))


def metrics(grid: np.ndarray, estimate: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """W1 (in grid units; grid of equally spaced values), KS, |mean error| and |median error| of the
    distribution ``estimate`` over ``grid`` against ``truth`` (the medians: smallest value with F ≥ 1/2)."""
    est = np.clip(estimate, 0.0, None)
    est = est / est.sum()
    f_est, f_true = np.cumsum(est), np.cumsum(truth)
    step = float(grid[1] - grid[0]) if grid.size > 1 else 1.0
    median = float(grid[np.searchsorted(f_est, 0.5)])
    median_true = float(grid[np.searchsorted(f_true, 0.5)])
    return {
        "w1": float(np.abs(f_est - f_true)[:-1].sum() * step),
        "ks": float(np.abs(f_est - f_true).max()),
        "mean_error": abs(float(grid @ est) - float(grid @ truth)),
        "median_error": abs(median - median_true),
    }
