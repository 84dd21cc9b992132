"""One-dimensional searches shared by the designers: a maximiser and a monotone bisection.

Why one module: the calibrated families ([LZG24, Thm 5-6], [LZG21, Thm 5-6]) and the
seed columns of column generation both look for "the largest noise level that still
passes" and for "the best split of ε"; one implementation keeps their behaviour alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rldp.shared.line_search import golden_section_maximum

__all__ = ["maximise_1d", "largest_feasible", "DELTA_CAP"]

DELTA_CAP = 40.0  # nats; GRR at δ = 40 is the identity to double precision


def maximise_1d(
    f: Callable[[float], float], lo: float, hi: float, grid: int = 33, refine: int = 40
) -> tuple[float, float]:
    """Maximise f on [lo, hi]: a grid (endpoints included, optima are often there),
    then golden-section refinement between the neighbours of the best grid point."""
    if hi <= lo:
        return lo, f(lo)
    xs = np.linspace(lo, hi, grid)
    vals = np.array([f(float(x)) for x in xs])
    i = int(np.argmax(vals))
    best_x, best_v = float(xs[i]), float(vals[i])
    a, b = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, grid - 1)])
    for x, v in golden_section_maximum(f, a, b, refine):
        if v > best_v:
            best_x, best_v = x, v
    return best_x, best_v


def largest_feasible(
    feasible: Callable[[np.ndarray], np.ndarray], size: int, cap: float = DELTA_CAP, steps: int = 60
) -> np.ndarray:
    """Largest t ∈ [0, cap] with feasible(t), elementwise for ``size`` independent
    monotone conditions evaluated together (vectorised bisection). -1 where t = 0 is not
    feasible; inf where even t = cap is (no noise needed)."""
    top = feasible(np.full(size, cap))
    bottom = feasible(np.zeros(size))
    lo, hi = np.zeros(size), np.full(size, cap)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        ok = feasible(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return np.where(bottom, np.where(top, math.inf, lo), -1.0)
