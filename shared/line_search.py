"""Golden-section search with a fixed number of steps: the one one-dimensional refinement rldp uses, where a
result must be repeatable exactly (the pilot's dual ball, which ``rldp audit`` recomputes) and where it only needs
to be good (the designers' :func:`~rldp.aggregator.design.solvers.search.maximise_1d`).

Standard library only: the client imports it (through :mod:`rldp.shared.pilot_dual`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["golden_section_maximum"]

_RATIO = (math.sqrt(5.0) - 1.0) / 2.0


def golden_section_maximum(
    f: Callable[[float], float], a: float, b: float, steps: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """``steps`` golden-section steps towards a maximum of f on [a, b] (a tie keeps the left point): the last
    two points and their values, ((c, f(c)), (d, f(d))), c ≤ d. Every evaluation goes through ``f``, so a
    caller that records them can take the best of all (a minimiser passes −f)."""
    c, d = b - _RATIO * (b - a), a + _RATIO * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _RATIO * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _RATIO * (b - a)
            fd = f(d)
    return (c, fc), (d, fd)
