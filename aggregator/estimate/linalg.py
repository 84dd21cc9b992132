"""Dense linear algebra the estimators share: the row space of Q (cached per mechanism),
Cholesky solves and inverses, and the number of BLAS threads."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from scipy.linalg import blas, lapack, solve_triangular

from .square_inverse import certified_inverse, triangle_norm_squared

try:  # optional: only a speed-up (see blas_threads)
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - threadpoolctl is an aggregator dependency
    ThreadpoolController = None

__all__ = [
    "RANK_RTOL",
    "SMALL_ALPHABET",
    "RowSpace",
    "row_space",
    "mechanism_row_space",
    "tangent_basis",
    "cho_solve",
    "cho_inverse",
    "weighted_gram",
    "scaled_cholesky",
    "blas_threads",
    "small_linear_algebra",
]

# Singular values of Q below RANK_RTOL·σ_max count as zero: a direction whose noise is
# amplified 10⁹ times carries no usable information at any realistic number of reports.
RANK_RTOL = 1e-9
SMALL_ALPHABET = 512  # up to this |X|, estimate with one BLAS thread (see blas_threads)
# The row-space cache keeps at most this many mechanisms and this many bytes of arrays.
CACHE_ENTRIES = 8
CACHE_BYTES = 512 << 20


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


def full_rank_certified(q: np.ndarray) -> bool:
    """True if Q (m × K) certainly has σ_min > RANK_RTOL·σ_max, so that :func:`row_space`
    finds full column rank; False means "not certified" (ask the SVD).

    Householder QR (LAPACK geqrf, ~2 solves' worth of time against ~15 for the singular
    values alone) is backward stable: the computed R is exact for some Q + ΔQ with
    ‖ΔQ‖_F ≤ γ·‖Q‖_F, γ = 10·m·K·u (Higham, Accuracy and Stability of Numerical Algorithms,
    2nd ed. 2002, Thm 19.4, with room to spare), and σ_min(R) ≥ 1/‖R⁻¹‖_F. So
    σ_min(Q) ≥ 1/(2‖R⁻¹‖_F) − γ‖Q‖_F (the factor 2 absorbs the error of the computed R⁻¹),
    and σ_max(Q) ≤ ‖Q‖_F: the test below is conservative. GRR on 4,000 symbols at ε = 1
    passes with a margin of ~75 (σ_min ≈ 4.3·10⁻⁴: the bound ≈ 3.4·10⁻⁶ against
    γ‖Q‖_F + 10·RANK_RTOL·‖Q‖_F ≈ 4.5·10⁻⁸); at ε ≲ 0.02 it is not certified and the
    singular values decide.
    """
    m, k = q.shape
    if m < k:
        return False
    norm = float(np.linalg.norm(q))
    if not norm > 0:
        return False
    # The blocked algorithm needs its workspace: scipy's default is the unblocked minimum (5× slower).
    lwork, _ = lapack.dgeqrf_lwork(m, k)
    qr, _, _, info = lapack.dgeqrf(q, lwork=int(lwork))  # on a Fortran-ordered copy of Q (the only K × K array)
    if info != 0:  # pragma: no cover - LAPACK argument errors only
        return False
    top = qr if m == k else np.asfortranarray(qr[:k])
    del qr
    diag = np.abs(np.diagonal(top))
    if not np.all(diag > 0):
        return False
    inv, info = lapack.dtrtri(top, lower=0, unitdiag=0, overwrite_c=1)
    if info != 0:
        return False
    sq = triangle_norm_squared(inv, upper=True)  # ‖R⁻¹‖_F², with no K × K temporary
    if not np.isfinite(sq) or sq <= 0:
        return False
    gamma = 10.0 * m * k * np.finfo(float).eps
    lower = 1.0 / (2.0 * np.sqrt(sq)) - gamma * norm
    return lower > 10.0 * RANK_RTOL * norm


class RowSpace:
    """What the estimators need from the SVD of one (immutable) Q, computed on first use.

    The rank of a square Q comes with its inverse from one LU when that certifies full rank
    (:func:`~rldp.aggregator.estimate.square_inverse.certified_inverse`); else from
    :func:`full_rank_certified` when it certifies full column rank, else from the singular
    values alone (LAPACK without vectors); the full SVD runs only
    when the basis of the row space (Q rank deficient) or Q⁺ (the inverse estimator,
    bootstrap starts) is asked for, and then gives exactly what :func:`row_space` gives.
    The cache keeps no copy of Q: each method takes the caller's Q (the same content,
    since the cache is keyed by its digest).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rank: int | None = None
        self._full: tuple[int, np.ndarray, np.ndarray | None] | None = None
        self._inverse: np.ndarray | None = None

    def rank(self, q: np.ndarray) -> int:
        """rank(Q) at RANK_RTOL."""
        with self._lock:
            if self._rank is None:
                square = q.shape[0] == q.shape[1]
                inverse = certified_inverse(q, RANK_RTOL) if square and self._full is None else None
                if self._full is not None:
                    self._rank = self._full[0]
                elif inverse is not None:  # the LU gave the certificate and the inverse
                    self._rank = q.shape[1]
                    self._inverse = inverse
                elif full_rank_certified(q):
                    self._rank = q.shape[1]
                else:
                    # Within round-off of the full SVD's values; a value at the threshold
                    # itself would be a mechanism whose rank no float64 computation decides.
                    self._rank = _rank(np.linalg.svd(q, compute_uv=False))
            return self._rank

    def _svd(self, q: np.ndarray) -> tuple[int, np.ndarray, np.ndarray | None]:
        with self._lock:
            if self._full is None:
                full = row_space(q)
                for arr in full[1:]:  # shared by every estimate over this Q: read-only
                    if arr is not None:
                        arr.setflags(write=False)
                self._full = full
            return self._full

    def inverse(self, q: np.ndarray) -> np.ndarray | None:
        """Q⁻¹ when Q is square of full rank (else None), computed once: LAPACK getrf + getri on
        one Fortran copy of Q, which becomes the inverse (no second K × K array)."""
        if q.shape[0] != q.shape[1] or self.rank(q) != q.shape[1]:
            return None
        with self._lock:
            if self._inverse is None:
                lu, piv, info = lapack.dgetrf(np.array(q, dtype=float, order="F"), overwrite_a=1)
                if info != 0:  # pragma: no cover - full rank was certified
                    return None
                lwork, info = lapack.dgetri_lwork(q.shape[0])
                inv, info = lapack.dgetri(lu, piv, lwork=int(lwork), overwrite_lu=1)
                if info != 0:  # pragma: no cover - a singular U after a full-rank certificate
                    return None
                inv.setflags(write=False)  # shared by every estimate over this Q
                self._inverse = inv
            return self._inverse

    def basis(self, q: np.ndarray) -> np.ndarray:
        """Orthonormal basis (|X|, rank) of the row space of Q."""
        return self._svd(q)[1]

    def pinv(self, q: np.ndarray) -> np.ndarray | None:
        """Q⁺ when Q has full column rank, else None."""
        return self._svd(q)[2] if self.rank(q) == q.shape[1] else None

    @property
    def nbytes(self) -> int:
        full = 0 if self._full is None else sum(a.nbytes for a in self._full[1:] if a is not None)
        return full + (0 if self._inverse is None else self._inverse.nbytes)


_CACHE: OrderedDict[tuple[Any, ...], RowSpace] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def mechanism_row_space(q: np.ndarray, key: str | None = None) -> RowSpace:
    """The :class:`RowSpace` of Q, shared by every estimate over the same matrix.

    A mechanism is immutable (its id is the hash of its content), so what depends only on
    Q is computed once: the cache is keyed by a BLAKE2 digest of Q's bytes (~0.1 s per
    128 MB, against ~1 min for the SVD of a 4,000 × 4,000 Q) and holds at most
    ``CACHE_ENTRIES`` mechanisms and ``CACHE_BYTES`` of arrays, least recently used first out.
    ``key``: a caller's name for exactly this content (the service passes the mechanism id, itself a
    hash of the document's exact content), which spares the digest.
    """
    if key is not None:
        entry_key: tuple[Any, ...] = ("id", key, q.shape)
    else:
        arr = np.ascontiguousarray(q, dtype=np.float64)
        entry_key = (arr.shape, hashlib.blake2b(arr.data.cast("B"), digest_size=20).digest())
    with _CACHE_LOCK:
        hit = _CACHE.get(entry_key)
        if hit is not None:
            _CACHE.move_to_end(entry_key)
            return hit
        entry = RowSpace()
        _CACHE[entry_key] = entry
        _trim()
        return entry


def _trim() -> None:
    """Drop least recently used entries beyond the count or byte bound (caller holds the lock)."""
    while len(_CACHE) > CACHE_ENTRIES or (len(_CACHE) > 1 and sum(e.nbytes for e in _CACHE.values()) > CACHE_BYTES):
        _CACHE.popitem(last=False)


def clear_cache() -> None:
    """Forget every cached row space (tests; memory pressure)."""
    with _CACHE_LOCK:
        _CACHE.clear()


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


def weighted_gram(q: np.ndarray, w: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    """(diag(w) Q)ᵀ (diag(w) Q) = Qᵀ diag(w²) Q, or that of the columns ``cols`` of Q only.

    Up to SMALL_ALPHABET columns numpy's product (the full symmetric matrix, the numbers
    the small-alphabet tests pin). Above, BLAS syrk accumulated over blocks of 256 rows of
    diag(w) Q: only the result is K × K (lower triangle filled, Fortran order; the readers
    here read no other), never the scaled copy of Q (nor of its columns ``cols``).
    """
    k = q.shape[1] if cols is None else len(cols)
    if k <= SMALL_ALPHABET:
        qs = (q if cols is None else q[:, cols]) * w[:, None]
        return qs.T @ qs
    out = np.zeros((k, k), order="F")
    for start in range(0, q.shape[0], 256):
        rows = q[start : start + 256]
        block = (rows if cols is None else rows[:, cols]) * w[start : start + 256, None]  # C order: .T is Fortran
        out = blas.dsyrk(1.0, block.T, beta=1.0, c=out, trans=0, lower=1, overwrite_c=1)
    return out


def scaled_cholesky(hess: np.ndarray, scale: np.ndarray) -> np.ndarray | None:
    """Lower Cholesky factor of diag(scale)·hess·diag(scale), None if not positive definite.

    Above SMALL_ALPHABET in place (scipy's LAPACK on hess's memory: no second and third
    K × K array; only the lower triangle is read, as :func:`weighted_gram` fills it); below,
    numpy's routine, whose results the small-alphabet tests pin.
    """
    if hess.shape[0] <= SMALL_ALPHABET:
        try:
            return np.linalg.cholesky(hess * scale[:, None] * scale[None, :])
        except np.linalg.LinAlgError:
            return None
    hess *= scale[:, None]
    hess *= scale[None, :]
    # Symmetric: a C-ordered hess is read as its transpose, the same matrix in Fortran order.
    chol, info = lapack.dpotrf(hess if hess.flags.f_contiguous else hess.T, lower=1, overwrite_a=1, clean=0)
    return chol if info == 0 else None


def cho_inverse(matrix: np.ndarray) -> np.ndarray | None:
    """The inverse of a symmetric positive definite matrix, in place (LAPACK potrf + potri:
    K³ flops and no second K × K array); None if it is not numerically positive definite.

    ``matrix`` is overwritten (only its lower triangle is read; a C-ordered one is read as
    its transpose, the same matrix, so that LAPACK works on it without a copy).
    """
    work = matrix if matrix.flags.f_contiguous else matrix.T
    if not work.flags.f_contiguous:
        work = np.asfortranarray(work)
    chol, info = lapack.dpotrf(work, lower=1, overwrite_a=1, clean=0)
    if info != 0:
        return None
    inv, info = lapack.dpotri(chol, lower=1, overwrite_c=1)
    if info != 0:  # pragma: no cover - potrf succeeded, so the factor is non-singular
        return None
    # potri fills the lower triangle; mirror it block by block (no K × K temporary).
    k = inv.shape[0]
    step = 128
    for i in range(0, k, step):
        inv[i : i + step, i + step :] = inv[i + step :, i : i + step].T
        block = inv[i : i + step, i : i + step]
        block[...] = np.tril(block) + np.tril(block, -1).T
    return inv


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def blas_threads(a: int) -> int:
    """BLAS threads for estimating over |X| = ``a``: set deliberately at every size.

    Up to ``SMALL_ALPHABET`` one thread: the K × K algebra is too small to share, and on a
    host whose cores are shared (several service workers, other jobs) OpenBLAS's spinning
    threads make each call 5-50× slower (measured with bench/bench_estimate.py: 0.65 s →
    0.16 s for 10⁷ reports at |X| = 240 on 2 busy cores). Above it, one thread per
    ``SMALL_ALPHABET`` symbols, at most the cores this process may run on: the O(K³) SVD and
    Cholesky factorisations then have enough work per thread to gain from a second core
    (bench/bench_scale.py prints the ratio), while EM's matrix–vector products, bound by
    memory bandwidth, lose little. And never more than the cores the other processes leave
    idle (by the 1-minute load average): a second thread on a core another job is using
    spins and waits (measured 2-10× slower at |X| = 1,000 on 2 busy cores).
    """
    cores = _usable_cores()
    # Cores other processes leave idle (the 1-minute load counts this process once).
    try:
        idle = int(cores - os.getloadavg()[0] + 1.0)
    except OSError:  # pragma: no cover - no load average on this platform
        idle = cores
    return max(1, min(cores, idle, a // SMALL_ALPHABET))


_BLAS_LOCK = threading.Lock()
# The controller is made once: making one scans the loaded libraries (~2 ms, more than a small
# estimate's EM); scipy's BLAS is loaded by the imports above, before the first estimate.
_BLAS_STATE: dict[str, Any] = {"users": 0, "limiter": None, "controller": None}


@contextmanager
def small_linear_algebra(a: int) -> Iterator[None]:
    """Run the estimate over |X| = ``a`` with :func:`blas_threads` (``a``) BLAS threads.

    threadpoolctl (the limiter scikit-learn uses) sets the limit; it is process-wide, so
    concurrent estimates share one limit, set by the first to enter and restored by the
    last to leave. scipy's BLAS is loaded (imported above) before the limit is set, so the
    limit covers it too. Without threadpoolctl this is a no-op.
    """
    if ThreadpoolController is None:  # pragma: no cover - threadpoolctl is an aggregator dependency
        yield
        return
    with _BLAS_LOCK:
        if _BLAS_STATE["users"] == 0:
            if _BLAS_STATE["controller"] is None:
                _BLAS_STATE["controller"] = ThreadpoolController()
            _BLAS_STATE["limiter"] = _BLAS_STATE["controller"].limit(limits=blas_threads(a), user_api="blas")
        _BLAS_STATE["users"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_STATE["users"] -= 1
            if _BLAS_STATE["users"] == 0:
                _BLAS_STATE["limiter"].restore_original_limits()
                _BLAS_STATE["limiter"] = None
