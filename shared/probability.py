"""Probability vectors and stochastic matrices: the checks every part shares.

A distribution must be finite, non-negative and sum to 1; a mechanism Q must have columns
Q(·|x) that are distributions. Each check lives here once, with the tolerance of
:mod:`rldp.shared.tolerances`, so a matrix one part accepts no other part refuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ValidationError
from .tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT

__all__ = ["as_distribution", "check_columns_sum_to_one"]


def as_distribution(p: Any, name: str = "a distribution") -> np.ndarray:
    """``p`` flattened to a float vector, checked to be a probability distribution (ValidationError naming
    ``name``)."""
    arr = np.asarray(p, dtype=float).reshape(-1)
    if np.any(arr < 0) or not np.all(np.isfinite(arr)) or abs(arr.sum() - 1.0) > STOCHASTIC_TOLERANCE:
        raise ValidationError(
            f"{name} must be finite, non-negative and sum to 1 ({STOCHASTIC_TOLERANCE_TEXT}); it sums to {arr.sum()!r}"
        )
    return arr


def check_columns_sum_to_one(q: np.ndarray, error: type[ValidationError] = ValidationError) -> None:
    """Raise ``error`` naming the first column of Q (|Y| × |X|) whose sum is not 1 within the tolerance."""
    sums = q.sum(axis=0)
    off = np.abs(sums - 1.0) > STOCHASTIC_TOLERANCE
    if off.any():
        x = int(np.argmax(off))
        raise error(
            f"matrix column {x} sums to {sums[x]:.12g}; every column must sum to 1 ({STOCHASTIC_TOLERANCE_TEXT}): "
            "matrix[y][x] = Q(y|x), outputs along the rows"
        )
