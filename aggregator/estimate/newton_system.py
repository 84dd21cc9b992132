"""The interior-point Newton system over a large alphabet, without the |X| × |X| Hessian.

Each step of :meth:`.likelihood.Likelihood.newton` solves (Qᵀ W Q + D) d = r with W = diag(p/π²)
over the outputs and D = diag(k̃/λ² + z/λ) > 0 over the cells. Near the maximiser of a large
noisy alphabet most cells head for 0 (GRR on 1,000 symbols at ε = 1, 10⁷ reports: 60 % of them
from the first step on), and for those the barrier term D_x dominates their row of the matrix
by orders of magnitude. Splitting the cells into those "bound" ones B (D_x > ``BOUND_RATIO`` ·
(QᵀWQ)_xx) and the rest F, the block-diagonal matrix

    M = [[Q_Fᵀ W Q_F + D_F, 0], [0, diag(Qᵀ W Q + D)_B]]

is close to the full one (the coupling the blocks leave out is ≲ BOUND_RATIO^−½ of each
diagonal), so conjugate gradients on the full system preconditioned by M (Cholesky of its F
block: |F|²|Y| + |F|³/3 flops, against |X|²|Y| + |X|³/3 for the full factor) converge in a few
iterations of two products with Q each. The system is solved to a relative residual of
``CG_RTOL``, below the round-off of the direct Cholesky solve it replaces at these condition
numbers, so the interior-point iterates — and the answer — are those of the direct solve.
When the split does not pay (F more than ``MAX_FREE_SHARE`` of the cells) or CG does not reach
its tolerance within ``CG_MAX_ITER`` iterations, :func:`reduced_newton_direction` returns None
and the caller factors the full matrix.
"""

from __future__ import annotations

import numpy as np

from .linalg import cho_solve, scaled_cholesky, weighted_gram

__all__ = ["reduced_newton_direction", "BOUND_RATIO", "MAX_FREE_SHARE", "CG_RTOL", "CG_MAX_ITER"]

BOUND_RATIO = 100.0
MAX_FREE_SHARE = 0.75  # above, the F block's factor costs ≳ 0.6 of the full one: not worth the CG
CG_RTOL = 1e-13
CG_MAX_ITER = 60


def _weighted_column_squares(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """diag(Qᵀ diag(w) Q) = Σ_y w_y Q_yx², over blocks of 256 rows (no |Y| × |X| temporary)."""
    out = np.zeros(q.shape[1])
    for start in range(0, q.shape[0], 256):
        block = q[start : start + 256]
        out += w[start : start + 256] @ (block * block)
    return out


def reduced_newton_direction(q: np.ndarray, w: np.ndarray, dvec: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """Solve (Qᵀ diag(w) Q + diag(dvec)) d = rhs by CG preconditioned with the block matrix M of the
    module docstring; None when the split would not pay or CG misses its tolerance."""
    a = q.shape[1]
    hdiag = _weighted_column_squares(q, w) + dvec
    bound = dvec > BOUND_RATIO * (hdiag - dvec)
    free = np.flatnonzero(~bound)
    if free.size > MAX_FREE_SHARE * a or not np.all(hdiag > 0):
        return None
    chol = scale = None
    if free.size:
        block = weighted_gram(q, np.sqrt(w), free)
        block[np.diag_indices(free.size)] += dvec[free]
        scale = 1.0 / np.sqrt(hdiag[free])
        chol = scaled_cholesky(block, scale)
        if chol is None:
            return None
    inv_bound = 1.0 / hdiag[bound]

    def precondition(r: np.ndarray) -> np.ndarray:
        out = np.empty(a)
        out[bound] = r[bound] * inv_bound
        if chol is not None and scale is not None:
            out[free] = scale * cho_solve(chol, scale * r[free])
        return out

    def apply(v: np.ndarray) -> np.ndarray:
        result: np.ndarray = ((q @ v) * w) @ q + dvec * v
        return result

    x = precondition(rhs)
    r = rhs - apply(x)
    target = CG_RTOL * float(np.linalg.norm(rhs))
    zr = precondition(r)
    d = zr.copy()
    rz = float(r @ zr)
    for _ in range(CG_MAX_ITER):
        if float(np.linalg.norm(r)) <= target:
            return x
        hd = apply(d)
        curv = float(d @ hd)
        if not curv > 0:
            return None
        step = rz / curv
        x += step * d
        r -= step * hd
        zr = precondition(r)
        rz_new = float(r @ zr)
        d = zr + (rz_new / rz) * d
        rz = rz_new
    return x if float(np.linalg.norm(r)) <= target else None
