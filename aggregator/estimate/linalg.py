"""Dense linear algebra the estimators share: the row space of Q, Cholesky solves, BLAS threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

try:  # optional: only a speed-up (see small_linear_algebra)
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - threadpoolctl is an aggregator dependency
    threadpool_limits = None

__all__ = ["RANK_RTOL", "SMALL_ALPHABET", "row_space", "tangent_basis", "cho_solve", "small_linear_algebra"]

# Singular values of Q below RANK_RTOL·σ_max count as zero: a direction whose noise is
# amplified 10⁹ times carries no usable information at any realistic number of reports.
RANK_RTOL = 1e-9
SMALL_ALPHABET = 512  # up to this |X|, estimate with one BLAS thread (see small_linear_algebra)


def _rank(sv: np.ndarray) -> int:
    """Number of singular values (descending) above RANK_RTOL·σ_max."""
    return int(np.count_nonzero(sv > RANK_RTOL * sv[0])) if sv.size and sv[0] > 0 else 0


def row_space(q: np.ndarray) -> tuple[int, np.ndarray, np.ndarray | None]:
    """(rank, orthonormal basis of the row space of Q as columns (|X|, rank), Q⁺ or None).

    One SVD serves both: Q⁺ = V Σ⁻¹ Uᵀ is returned when Q has full column rank.
    """
    u, sv, vt = np.linalg.svd(q, full_matrices=False)
    rank = _rank(sv)
    pinv = (vt.T / sv) @ u.T if rank == q.shape[1] else None
    return rank, vt[:rank].T, pinv


def tangent_basis(row_basis: np.ndarray) -> np.ndarray:
    """Orthonormal basis (|X|, rank − 1) of {v ∈ rowspace(Q) : Σ v = 0}: the identifiable
    directions of motion inside the simplex (all of 1⊥ when Q has full column rank)."""
    centred = row_basis - row_basis.mean(axis=0, keepdims=True)  # (1 − 11ᵀ/|X|) R
    u, sv, _ = np.linalg.svd(centred, full_matrices=False)
    return u[:, : _rank(sv)]


def cho_solve(chol: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve (L Lᵀ) x = rhs given the lower Cholesky factor L."""
    y = solve_triangular(chol, rhs, lower=True, check_finite=False)
    return solve_triangular(chol.T, y, lower=False, check_finite=False)


_BLAS_LOCK = threading.Lock()
_BLAS_STATE: dict[str, Any] = {"users": 0, "limiter": None}


@contextmanager
def small_linear_algebra(a: int) -> Iterator[None]:
    """One BLAS thread while estimating over a small alphabet.

    The dense algebra here is |X| × |X| (SVD, Cholesky, Newton systems): at |X| ≲ 500 a
    second BLAS thread saves nothing, and on a host whose cores are shared (several
    service workers, other jobs) OpenBLAS's spinning threads make each call 5-50× slower
    (measured with bench/bench_estimate.py: 0.65 s → 0.16 s for 10⁷ reports at |X| = 240
    on 2 busy cores). threadpoolctl (the limiter scikit-learn uses) sets the limit; it is
    process-wide, so concurrent estimates share one limit, set by the first to enter and
    restored by the last to leave. scipy's BLAS is loaded (imported above) before the
    limit is set, so the limit covers it too. Without threadpoolctl this is a no-op.
    """
    if a > SMALL_ALPHABET or threadpool_limits is None:
        yield
        return
    with _BLAS_LOCK:
        if _BLAS_STATE["users"] == 0:
            _BLAS_STATE["limiter"] = threadpool_limits(limits=1, user_api="blas")
        _BLAS_STATE["users"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_STATE["users"] -= 1
            if _BLAS_STATE["users"] == 0:
                _BLAS_STATE["limiter"].restore_original_limits()
                _BLAS_STATE["limiter"] = None
