"""Audits that read a mechanism's structure instead of its dense matrix.

* :func:`grr_extremes` — generalised randomised response (Q(y|x) = d if y = x else o,
  [LZG24, eq. 56]). In the block of s, the column of output y is o·1 + (d − o)·e_u when y is
  the input (s, u) (always, for a latent S reading U only), and the constant o otherwise. So the
  extremes of Q_y|s · R over the ball F_U|s [LZG24, Thm 1] are o + (d − o)·(max or min of R_u),
  and by data processing those are Prop. 1's two-point range of P̂_u|s ([LZG24, eqs 27-28];
  :meth:`~rldp.shared.uncertainty.UncertaintySet.upper_bounds`): O(|X|) work, not O(|X|²) searches.
* :func:`split_constant_blocks` — the dense audit's shortcuts: a block Q_y|s that is constant in u
  gives Q_y|s · R = that constant for every R, and a block constant but for one entry (a·1 + c·e_u*:
  every block of GRR, SRR, IR and CR) gives a + c·R_u*, the same closed form as GRR's; only the
  other blocks need the Lagrange search.

Both produce the (max, min) arrays of shape (|Y|, |S|) that :func:`~.rldp.rldp_epsilon` compares
pairwise, so the structured and the dense audit are one formula.
"""

from __future__ import annotations

import numpy as np

from ..uncertainty import UncertaintySet

__all__ = ["GRR_ROUNDING", "grr_extremes", "split_constant_blocks", "grr_values"]

#: Relative outward rounding of the closed-form extremes: the Lagrange search is accurate to
#: ~1e-12 and rounds towards leakage; the closed form is accurate to a few ulps (~1e-16), so this margin
#: keeps the structured audit on the same (conservative) side.
GRR_ROUNDING = 1e-14


def grr_values(q: np.ndarray) -> tuple[float, float] | None:
    """(d, o) when the square matrix ``q`` is GRR-shaped (one value on the diagonal, one elsewhere), else None."""
    k = q.shape[0]
    if q.ndim != 2 or q.shape != (k, k) or k < 2:
        return None
    d, o = float(q[0, 0]), float(q[1, 0])
    if not np.all(q.diagonal() == d):
        return None
    if int(np.count_nonzero(q == o)) != k * k - (0 if d == o else k):
        return None
    return d, o


def grr_extremes(
    diagonal: float, off_diagonal: float, size: int, uncertainty: UncertaintySet
) -> tuple[np.ndarray, np.ndarray]:
    """(max, min) of Q_y|s · R over F_U|s, shape (size, |S|), for GRR with values (d, o) on ``size`` inputs.

    ``size`` is |S|·|U| (S an input) or |U| (S latent: Q(y|s, u) = Q(y|u)).
    """
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    c = diagonal - off_diagonal
    upper, lower = uncertainty.upper_bounds(), uncertainty.lower_bounds()  # (|S|, |U|): range of R_u
    spike_hi = off_diagonal + c * (upper if c >= 0 else lower)
    spike_lo = off_diagonal + c * (lower if c >= 0 else upper)
    spike_hi = spike_hi * (1.0 + GRR_ROUNDING)
    spike_lo = np.maximum(spike_lo * (1.0 - GRR_ROUNDING), 0.0)
    if size == a2 and size != a1 * a2:  # latent S: output u spikes in every block s
        return spike_hi.T.copy(), spike_lo.T.copy()
    hi = np.full((size, a1), off_diagonal)
    lo = np.full((size, a1), off_diagonal)
    y = np.arange(size)
    s0, u0 = np.divmod(y, a2)  # y = (s0, u0): its spike is in the block of s0 only
    hi[y, s0] = spike_hi[s0, u0]
    lo[y, s0] = spike_lo[s0, u0]
    return hi, lo


def split_constant_blocks(blocks: np.ndarray, uncertainty: UncertaintySet) -> tuple[np.ndarray, np.ndarray]:
    """(max, min) of blocks[y, s] · R over F_U|s, shape (|Y|, |S|), searching only blocks without a closed form.

    A block constant in u gives q · R = that constant for every R. A block a·1 + c·e_u* (one entry
    differs: GRR, SRR, IR and CR are made of such blocks) gives a + c·R_u*, whose extremes over the ball
    are a + c·(Prop. 1's range of R_u*), rounded outward by ``GRR_ROUNDING``. The rest go to the
    Lagrange search (:meth:`~rldp.shared.uncertainty.UncertaintySet.extremes_for`).
    """
    top = blocks.max(axis=2)
    bottom = blocks.min(axis=2)
    hi, lo = top.copy(), bottom.copy()  # a constant block: q · R = q_u for every R in the simplex
    varies = top != bottom
    if not np.any(varies):
        return hi, lo
    a2 = blocks.shape[2]
    at_bottom = np.count_nonzero(blocks == bottom[:, :, None], axis=2)
    at_top = np.count_nonzero(blocks == top[:, :, None], axis=2)
    spike_up = varies & (at_bottom == a2 - 1)  # base = bottom, one entry above it
    spike_down = varies & ~spike_up & (at_top == a2 - 1)  # base = top, one entry below it
    upper, lower = uncertainty.upper_bounds(), uncertainty.lower_bounds()  # (|S|, |U|): range of R_u
    for mask, base, spike, position in (
        (spike_up, bottom, top, np.argmax(blocks, axis=2)),
        (spike_down, top, bottom, np.argmin(blocks, axis=2)),
    ):
        if np.any(mask):
            ys, ss = np.nonzero(mask)
            us = position[ys, ss]
            a, c = base[ys, ss], spike[ys, ss] - base[ys, ss]
            big, small = np.where(c >= 0, upper[ss, us], lower[ss, us]), np.where(c >= 0, lower[ss, us], upper[ss, us])
            hi[ys, ss] = (a + c * big) * (1.0 + GRR_ROUNDING)
            lo[ys, ss] = np.maximum((a + c * small) * (1.0 - GRR_ROUNDING), 0.0)
    search = varies & ~spike_up & ~spike_down
    if np.any(search):
        ys, ss = np.nonzero(search)
        hi[ys, ss], lo[ys, ss] = uncertainty.extremes_for(blocks[ys, ss, :], ss)
    return hi, lo
