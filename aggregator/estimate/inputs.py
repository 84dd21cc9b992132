"""Validation of the estimator's inputs, and counting reports per output.

Every check raises :class:`~rldp.shared.errors.ValidationError` (a ``ValueError``) naming
the bad parameter; nothing is silently dropped, clipped or renormalised beyond round-off.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError
from rldp.shared.probability import check_columns_sum_to_one
from rldp.shared.tolerances import STOCHASTIC_TOLERANCE

__all__ = ["report_counts", "validate_matrix", "validate_counts", "validate_shape", "validate_prior"]


def report_counts(reports: np.ndarray, n_outputs: int) -> np.ndarray:
    """Number of reports of each output y, shape (n_outputs,), int64 (``np.bincount``).

    ``reports`` is a 1-D integer array of outputs y ∈ [0, n_outputs). Anything else
    (floats, booleans, other shapes, out-of-range values) raises ValueError naming the
    first offending report; no report is silently dropped or clipped. An empty array
    gives all-zero counts.
    """
    if not isinstance(n_outputs, numbers.Integral) or isinstance(n_outputs, bool) or n_outputs < 1:
        raise ValidationError(f"n_outputs must be a positive integer (|Y|); got {n_outputs!r}")
    n_outputs = int(n_outputs)
    arr = np.asarray(reports)
    if arr.ndim != 1:
        raise ValidationError(f"reports must be a 1-D array of output indices; got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(n_outputs, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ValidationError(f"reports must be integers (output indices y); got dtype {arr.dtype}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n_outputs:
        bad = (arr < 0) | (arr >= n_outputs)
        i = int(np.argmax(bad))
        raise ValidationError(f"report {i} is y = {int(arr[i])}, outside the mechanism's outputs 0..{n_outputs - 1}")
    # In range, so the cast is exact (older numpy refuses uint64 in bincount).
    return np.bincount(arr.astype(np.intp, copy=False), minlength=n_outputs).astype(np.int64, copy=False)


def validate_matrix(matrix: Any) -> np.ndarray:
    """Q[y, x] as a float array whose columns sum to 1 (round-off cleaned, not refused)."""
    try:
        q = np.array(matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"matrix must be a 2-D array of probabilities Q[y, x]; {exc}") from None
    if q.ndim != 2 or q.shape[0] == 0 or q.shape[1] == 0:
        raise ValidationError(f"matrix must be a non-empty 2-D array Q[y, x] (|Y| × |X|); got shape {q.shape}")
    # Two reductions, no |Y| × |X| boolean temporary: a NaN makes both NaN, an infinity one of them.
    low, high = q.min(), q.max()
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValidationError("matrix contains NaN or infinite entries")
    if low < -STOCHASTIC_TOLERANCE:
        y, x = np.unravel_index(int(np.argmin(q)), q.shape)
        raise ValidationError(f"matrix has a negative entry Q[{y}, {x}] = {float(q[y, x]):.6g}; Q(y|x) must be ≥ 0")
    check_columns_sum_to_one(q)
    # Round-off within the tolerance (e.g. −1e-17 from a solver) is cleaned, not refused;
    # in place, so that a 4,000 × 4,000 Q costs one copy, not three.
    np.maximum(q, 0.0, out=q)
    q /= q.sum(axis=0, keepdims=True)
    return q


def validate_counts(counts: Any, n_outputs: int) -> np.ndarray:
    """Report counts per output as floats (whole numbers ≥ 0, not all 0)."""
    try:
        c = np.asarray(counts)
    except (TypeError, ValueError) as exc:  # pragma: no cover - ragged input
        raise ValidationError(f"counts must be a 1-D array of report counts; {exc}") from None
    if c.ndim != 1:
        raise ValidationError(f"counts must be a 1-D array with one count per output y; got shape {c.shape}")
    if c.shape[0] != n_outputs:
        raise ValidationError(f"counts has {c.shape[0]} entries but the matrix has {n_outputs} outputs (rows)")
    if c.dtype.kind == "b" or c.dtype.kind not in "iuf":
        raise ValidationError(f"counts must be integers (numbers of reports per output); got dtype {c.dtype}")
    if c.dtype.kind == "f":
        if not np.all(np.isfinite(c)):
            raise ValidationError("counts contains NaN or infinite entries")
        frac = c != np.floor(c)
        if frac.any():
            y = int(np.argmax(frac))
            raise ValidationError(
                f"counts must be whole numbers of reports; counts[{y}] = {c[y].item()!r} (did you pass frequencies? "
                "pass the number of reports per output)"
            )
    if c.size and c.min() < 0:
        y = int(np.argmin(c))
        raise ValidationError(f"counts must be ≥ 0; counts[{y}] = {c[y].item()!r}")
    c = c.astype(float)
    if c.sum() <= 0:
        raise ValidationError("no reports yet: every count is 0, so there is nothing to estimate")
    return c


def validate_shape(shape: Any, n_inputs: int) -> tuple[int, int]:
    """(|S|, |U|) as positive ints whose product is the number of inputs |X|."""
    try:
        a1, a2 = shape
    except (TypeError, ValueError):
        raise ValidationError(f"shape must be a pair (|S|, |U|); got {shape!r}") from None
    for name, v in (("|S|", a1), ("|U|", a2)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValidationError(f"shape must be a pair of positive integers (|S|, |U|); {name} = {v!r}")
    if a1 * a2 != n_inputs:
        raise ValidationError(
            f"shape {(int(a1), int(a2))} has {a1 * a2} cells but the matrix has {n_inputs} inputs (columns)"
        )
    return int(a1), int(a2)


def validate_prior(prior: Any, shape: tuple[int, int]) -> np.ndarray:
    """The public P̂ flattened s-major (|X|,), a distribution."""
    try:
        p = np.array(prior, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"prior must be a distribution over S × U; {exc}") from None
    a = shape[0] * shape[1]
    if p.shape not in (shape, (a,)):
        raise ValidationError(f"prior must have shape {shape} (|S|, |U|) or ({a},); got {p.shape}")
    p = p.reshape(-1)
    if not np.all(np.isfinite(p)) or p.min() < 0:
        raise ValidationError("prior must contain finite probabilities ≥ 0")
    if abs(p.sum() - 1.0) > STOCHASTIC_TOLERANCE:
        raise ValidationError(f"prior must sum to 1; it sums to {float(p.sum()):.12g}")
    return p / p.sum()
