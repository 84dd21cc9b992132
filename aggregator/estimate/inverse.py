"""The unbiased inverse estimator and the Euclidean projection onto the simplex.

``"inverse"``: the unbiased estimator θ̃ = Q⁺ c / n (least squares; needs Q of full column
rank), followed by the Euclidean projection onto the simplex (Wang & Carreira-Perpiñán,
arXiv:1309.1541, 2013; the sort-based algorithm of Duchi et al., ICML 2008).
"""

from __future__ import annotations

import numpy as np

from rldp.shared.errors import ValidationError

__all__ = ["project_simplex", "unbiased_inverse"]


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the probability simplex.

    argmin_p ‖p − v‖₂ s.t. p ≥ 0, Σp = 1, solved exactly by p = max(v − τ, 0) with τ
    found from the sorted values (Wang & Carreira-Perpiñán 2013, Algorithm 1; Duchi et
    al. 2008). Vectorised over rows; a 1-D input gives a 1-D output.
    """
    arr = np.asarray(v, dtype=float)
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValidationError(f"project_simplex takes a vector or a 2-D array of rows; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValidationError("project_simplex: input contains NaN or infinite values")
    flat = np.atleast_2d(arr)
    k = flat.shape[1]
    srt = -np.sort(-flat, axis=1)  # descending
    css = np.cumsum(srt, axis=1) - 1.0
    idx = np.arange(1, k + 1)
    # ρ = the largest j with srt_j − css_j / j > 0 (always ≥ 1).
    rho = np.count_nonzero(srt - css / idx > 0, axis=1)
    tau = css[np.arange(flat.shape[0]), rho - 1] / rho
    out = np.maximum(flat - tau[:, None], 0.0)
    return out.reshape(arr.shape)


def unbiased_inverse(pinv: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(θ̃ = Q⁺ c / n, its projection onto the simplex), given Q⁺ of a Q of full column rank."""
    raw = pinv @ (counts / counts.sum())
    return raw, project_simplex(raw)
