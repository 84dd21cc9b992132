"""Q⁻¹ of a square mechanism together with a certificate of its full rank, from one LU.

The first estimate over a square Q needs both: its rank (to choose the estimator) and its
inverse (the covariance of the EM estimate). :func:`rldp.aggregator.estimate.linalg.full_rank_certified`
certifies the rank by a Householder QR (~2.9 solves' worth of time at K = 2,000) and the
inverse then costs an LU and its inversion (~2.5 more); here the LU's own factors give the
certificate, and the inverse is built from them, for ~0.5 solve more than the inverse alone.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack

__all__ = ["certified_inverse"]


def certified_inverse(q: np.ndarray, rank_rtol: float) -> np.ndarray | None:
    """Q⁻¹ (read-only, Fortran order) when the square Q certainly has σ_min > ``rank_rtol``·σ_max;
    None when that is not certified (the caller then asks the singular values).

    LU with partial pivoting, Q = P·L̂·Û (LAPACK getrf). The computed factors are exact for a
    nearby matrix, L̂Û = Pᵀ(Q + ΔQ) with |ΔQ| ≤ γₙ·Pᵀ|L̂||Û| componentwise, γₙ = n·u/(1 − n·u)
    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. 2002, Thm 9.3), so
    ‖ΔQ‖₂ ≤ γₙ·‖L̂‖_F·‖Û‖_F, a bound computed from the factors (it holds whatever the growth
    of the elimination). σ_min(L̂Û) ≥ σ_min(L̂)·σ_min(Û) ≥ 1/(‖L̂⁻¹‖_F·‖Û⁻¹‖_F), the
    triangular inverses computed by LAPACK trtri (backward stable; the factor 2 below absorbs
    their error, as in ``full_rank_certified``), and σ_max(Q) ≤ ‖Q‖_F. Q is certified when

        1/(2·‖L̂⁻¹‖_F·‖Û⁻¹‖_F) − 10·γₙ·‖L̂‖_F·‖Û‖_F > 10·rank_rtol·‖Q‖_F

    (10·γₙ: room to spare, as there). The inverse is then Q⁻¹ = Û⁻¹·L̂⁻¹·Pᵀ: a triangular
    product (BLAS trmm) and the column interchanges of getrf in reverse order, as LAPACK getri
    applies them. Two K × K arrays at most: the LU (Û⁻¹ in place) and L̂⁻¹ (becomes Q⁻¹).
    """
    n, m = q.shape
    if n != m or n == 0:
        return None
    norm = float(np.linalg.norm(q))
    if not np.isfinite(norm) or norm <= 0:
        return None
    lu, piv, info = lapack.dgetrf(np.array(q, dtype=float, order="F"), overwrite_a=1)
    if info != 0:  # an exactly zero pivot: singular as computed
        return None
    lower = lu.copy(order="F")  # L̂: unit diagonal, zeros above (column by column: no index arrays)
    for j in range(n):
        lower[:j, j] = 0.0
        lower[j, j] = 1.0
    norm_l = float(np.linalg.norm(lower))
    norm_u = _upper_norm(lu)
    inv_u, info_u = lapack.dtrtri(lu, lower=0, unitdiag=0, overwrite_c=1)  # Û⁻¹ in the upper triangle
    inv_l, info_l = lapack.dtrtri(lower, lower=1, unitdiag=1, overwrite_c=1)
    if info_u != 0 or info_l != 0:
        return None
    norm_inv_u = _upper_norm(inv_u)
    norm_inv_l = float(np.linalg.norm(inv_l))  # its upper triangle is zero (trtri leaves the input's)
    if not (np.isfinite(norm_inv_u) and np.isfinite(norm_inv_l) and norm_inv_u > 0 and norm_inv_l > 0):
        return None
    gamma = n * np.finfo(float).eps / (1.0 - n * np.finfo(float).eps)
    bound = 1.0 / (2.0 * norm_inv_l * norm_inv_u) - 10.0 * gamma * norm_l * norm_u
    if not bound > 10.0 * rank_rtol * norm:
        return None
    # Û⁻¹·L̂⁻¹, into L̂⁻¹'s array (trmm reads only the upper triangle of the LU array).
    inverse = blas.dtrmm(1.0, inv_u, inv_l, side=0, lower=0, trans_a=0, diag=0, overwrite_b=1)
    del lu, inv_u
    for j in range(n - 1, -1, -1):  # ·Pᵀ: getrf's interchanges (0-based), last first
        p = int(piv[j])
        if p != j:
            inverse[:, [j, p]] = inverse[:, [p, j]]
    inverse.setflags(write=False)
    return inverse


def _upper_norm(a: np.ndarray, block: int = 256) -> float:
    """Frobenius norm of the upper triangle of the square ``a``, column block by column block
    (no K × K temporary)."""
    n = a.shape[0]
    total = 0.0
    for j in range(0, n, block):
        part = a[: j + block, j : j + block]  # rows r ≤ column j + c: the diagonal −j of the block
        total += float(np.sum(np.triu(part, -j) ** 2))
    return float(np.sqrt(total))
