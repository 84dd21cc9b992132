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

__all__ = ["certified_inverse", "triangle_norm_squared"]


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

    (10·γₙ: room to spare, as there). The inverse is then Q⁻¹ = Û⁻¹·L̂⁻¹·Pᵀ: the triangular
    product in place, block by block (:func:`_product_in_place`), and the column interchanges
    of getrf in reverse order, as LAPACK getri applies them. One K × K array: the LU becomes
    the inverse (temporaries of K × 128).
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
    norm_l = np.sqrt(n + triangle_norm_squared(lu, upper=False))  # L̂: unit diagonal
    norm_u = np.sqrt(triangle_norm_squared(lu, upper=True))
    # Both inverses in place, in the LU array: Û⁻¹ over Û (upper triangle), L̂⁻¹ over L̂'s
    # multipliers (strict lower triangle; trtri with a unit diagonal reads and writes only it).
    lu, info_u = lapack.dtrtri(lu, lower=0, unitdiag=0, overwrite_c=1)
    lu, info_l = lapack.dtrtri(lu, lower=1, unitdiag=1, overwrite_c=1)
    if info_u != 0 or info_l != 0:
        return None
    norm_inv_u = np.sqrt(triangle_norm_squared(lu, upper=True))
    norm_inv_l = np.sqrt(n + triangle_norm_squared(lu, upper=False))
    if not (np.isfinite(norm_inv_u) and np.isfinite(norm_inv_l) and norm_inv_u > 0):
        return None
    eps = float(np.finfo(float).eps)
    gamma = n * eps / (1.0 - n * eps)
    bound = 1.0 / (2.0 * norm_inv_l * norm_inv_u) - 10.0 * gamma * norm_l * norm_u
    if not bound > 10.0 * rank_rtol * norm:
        return None
    inverse = _product_in_place(lu)
    for j in range(n - 1, -1, -1):  # ·Pᵀ: getrf's interchanges (0-based), last first
        p = int(piv[j])
        if p != j:
            inverse[:, [j, p]] = inverse[:, [p, j]]
    inverse.setflags(write=False)
    return inverse


def triangle_norm_squared(a: np.ndarray, upper: bool, block: int = 128) -> float:
    """Σ a[r, c]² over the upper triangle (r ≤ c) or the strict lower one (r > c) of the square
    ``a``, column block by column block (temporaries of K × ``block``)."""
    n = a.shape[0]
    total = 0.0
    for j in range(0, n, block):
        if upper:  # rows r ≤ column j + c: the diagonal −j of the block
            part = np.triu(a[: j + block, j : j + block], -j)
        else:  # rows r > column j + c: below the diagonal −j of the block
            part = np.tril(a[j:, j : j + block], -1)
        total += float(np.einsum("ij,ij->", part, part))
    return total


def _product_in_place(lu: np.ndarray, block: int = 128) -> np.ndarray:
    """Û⁻¹·L̂⁻¹ over ``lu`` (Û⁻¹ in its upper triangle, L̂⁻¹ in its strict lower one, unit
    diagonal implied), column block by column block from the left.

    Block J of the product is Û⁻¹·L̂⁻¹[:, J]; L̂⁻¹[:, J] is zero above J, so it only meets
    Û⁻¹'s columns from J on, which the blocks before have not touched. Each block copies
    L̂⁻¹[:, J] out (K × block), multiplies by the upper triangle of ``lu`` (BLAS trmm reads
    only that triangle; the columns before J already hold the product but meet zero rows of
    the copy, so they add exact zeros), and writes the result over J.
    """
    n = lu.shape[0]
    for j in range(0, n, block):
        width = min(block, n - j)
        columns = np.zeros((n, width), dtype=float, order="F")
        columns[j:, :] = np.tril(lu[j:, j : j + width], -1)
        columns[np.arange(j, j + width), np.arange(width)] = 1.0
        lu[:, j : j + width] = blas.dtrmm(1.0, lu, columns, side=0, lower=0, trans_a=0, diag=0, overwrite_b=1)
    return lu
