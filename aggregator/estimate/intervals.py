"""95 % intervals of linear functionals wᵀθ of an estimate: delta method, bootstrap, bounds.

For a linear functional wᵀθ (a cell, a marginal, any row of ``weights`` in
:meth:`~rldp.aggregator.estimate.Estimate.linear`):

* identifiable functionals (w in the row space of Q; every functional when Q has full
  column rank):

  - ``"delta"``: estimate ± 1.959964·sd. For EM, sd² = wᵀ V w with the inverse Fisher
    information of the multinomial likelihood at the estimate, restricted to the
    directions that stay in the simplex (1ᵀv = 0) and that Q can see:
    V = B (Bᵀ I B)⁻¹ Bᵀ / n, I = Qᵀ diag(1/π̂) Q, B an orthonormal basis of
    {v ∈ rowspace(Q) : 1ᵀv = 0}, π̂ = max(Qθ̂, 1/n) (the floor can only lower I, i.e.
    widen, and avoids a zero-width Wald interval when an output has π̂ = 0). For the
    inverse estimator, the exact covariance of θ̃: V = Q⁺ (diag π − ππᵀ) Q⁺ᵀ / n with
    π = Qθ̂; the interval spans both the projected estimate and θ̃ (so it contains the
    reported estimate and is at least as wide as the unbiased Wald interval). For EM with
    Q of full column rank the interval is the union of the MLE's Wald interval and that
    unbiased one: near the simplex boundary the MLE moves mass off the clipped cells and its
    information understates the spread of the large ones (Adult sex × race, GRR ε = 1,
    n = 1,000: the largest cell was covered 0.905, the race marginal 0.935; with the union
    ≥ 0.96 everywhere, ≥ 0.948 at n = 10⁴; tests/aggregator/estimate/test_interval_coverage.py).
  - ``"bootstrap"``: for Q of full column rank, the basic bootstrap of the unbiased
    θ̃ = Q⁺c/n: B count vectors c* ~ Multinomial(n, c/n), linear replicates θ̃* = Q⁺c*/n (no
    re-fit), and the interval [min(θ̂, θ̃) − (q₉₇.₅ − θ̃), max(θ̂, θ̃) + (θ̃ − q₂.₅)] of the
    quantiles q of wᵀθ̃*. The percentile interval of EM re-fits it replaces repeated the
    boundary bias and was 10–15 % too narrow (coverage 0.83 / 0.72 at n = 1,000; now ≥ 0.95,
    ≥ 0.94 at n = 10⁴). Rank-deficient Q: B count vectors ~ Multinomial(n, Qθ̂) re-fitted
    by EM, 2.5 / 97.5 % percentiles of the identifiable functionals, widened if needed to
    contain the estimate (not checked at small n).

  Where Q⁺ is at hand (Q of full column rank: up to SMALL_ALPHABET cells for "delta", always for
  "bootstrap" and the inverse estimator), the interval of a cell or of any event (0/1 weights, e.g.
  a marginal) is also joined with the score-type (Wilson) interval of θ̃ (:mod:`.score`): the
  Wald and bootstrap intervals of a rare cell end below the truth when its few reports come out
  low (PolyOpt at ε = 1 on Adult sex × race, n = 1,000: Male|Other covered 0.921 / 0.909;
  joined, ≥ 0.95; docs/experiments/coverage.md). A Wald interval with no score interval joined
  (above SMALL_ALPHABET) whose statistic is as skewed as a count below 5 is withheld: NaN bounds,
  ``Estimate.withheld`` (:mod:`.score`).

  Both are asymptotic (large n). With ``prior_weight`` κ > 0 they are centred on the MAP
  and use the likelihood's information only (the prior's is ignored, which widens); the
  shrinkage towards P̂ is a bias of order κ/(n + κ) they do not account for, so keep
  κ ≪ n when intervals matter. At the boundary of the simplex (true cells at or near 0)
  the MLE is not normal: the intervals are clipped to [min w, max w] (for cells and
  marginals [0, 1]) and a cell estimated at 0 gets [0, 1.96 sd], which is conservative
  for a true 0.

* non-identifiable functionals (only when Q is rank deficient): the data say nothing
  about them beyond what Qθ determines, so no sd is claimed. The interval is the range of
  wᵀθ over {θ in the simplex : Qθ in C}, where C is a simultaneous 95 % box for P_Y
  (Clopper–Pearson per output at level 1 − 0.05/|Y|, Bonferroni, widened to contain the
  fitted Qθ̂); two linear programs (HiGHS) per functional. It covers the true value with
  probability ≥ 95 % (exactly, not asymptotically) and is often wide — by design: a
  partial-identification bound, never NaN and never a tight interval the data cannot
  support. ``Estimate.identified(weights)`` and ``to_dict()["ci95"]["identified"]`` say
  which kind each interval is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError

from .linalg import SMALL_ALPHABET, RowSpace, cho_inverse, tangent_basis, weighted_gram
from .score import MIN_COUNT, event_rows, score_bounds, score_cells, signal_counts

__all__ = [
    "LEVEL",
    "Z95",
    "Uncertainty",
    "clopper_pearson_box",
    "em_covariance",
    "inverse_covariance",
    "as_weights",
    "FactoredCovariance",
]

LEVEL = 0.95
Z95 = 1.959963984540054  # Φ⁻¹(0.975)
# w is in the row space of Q when its residual off that space is below this (relative to
# max |w|): the row basis is orthonormal to ~1e-15, so 1e-8 separates round-off from a
# genuinely unidentifiable direction.
ROW_SPACE_RTOL = 1e-8


class Uncertainty:
    """Everything needed for 95 % intervals of linear functionals wᵀθ (see the module docstring)."""

    def __init__(
        self,
        *,
        kind: str,
        theta: np.ndarray,
        unconstrained: np.ndarray | None,
        covariance: np.ndarray | FactoredCovariance | None,
        replicates: np.ndarray | None,
        row_basis: np.ndarray | None,
        q: np.ndarray,
        box: tuple[np.ndarray, np.ndarray] | None,
        unconstrained_covariance: np.ndarray | None = None,
        linear_replicates: bool = False,
        pinv: np.ndarray | None = None,
        n: float = 0.0,
    ) -> None:
        self.kind = kind
        self.theta = theta
        self.unconstrained = unconstrained  # θ̃ = Q⁺c/n (full column rank), not projected
        self.covariance = covariance
        # Covariance of θ̃ when ``covariance`` is another estimator's (EM): the delta interval is
        # then the union of both Wald intervals (see the module docstring).
        self.unconstrained_covariance = unconstrained_covariance
        self.replicates = replicates
        self.linear_replicates = linear_replicates  # replicates are θ̃* = Q⁺c*/n: basic bootstrap
        self.row_basis = row_basis  # None: every functional is identifiable
        self.q = q
        self.box = box
        # Q⁺ and n, for the score intervals of events (score.py); None where Q⁺ was not formed.
        self.pinv = pinv if unconstrained is not None else None
        self.n = n

    def identifiable(self, w: np.ndarray) -> np.ndarray:
        """Whether each row w is in the row space of Q (so wᵀθ is determined by Qθ)."""
        if self.row_basis is None:
            return np.ones(w.shape[0], dtype=bool)
        resid = w - (w @ self.row_basis) @ self.row_basis.T
        scale = np.maximum(np.abs(w).max(axis=1), 1e-300)
        return np.abs(resid).max(axis=1) <= ROW_SPACE_RTOL * scale

    def withheld(self, w: np.ndarray) -> np.ndarray:
        """Whether the interval of each row w is withheld: a Wald interval alone (no score interval joined:
        |X| > SMALL_ALPHABET under "delta") of a statistic as skewed as a count below :data:`.score.MIN_COUNT`.
        Judged where Q⁻¹ is at hand (square Q); the score-joined intervals are never withheld (score.py)."""
        cov = self.covariance
        if self.pinv is not None or not isinstance(cov, FactoredCovariance):
            return np.zeros(w.shape[0], dtype=bool)
        return signal_counts(w @ cov.inverse, cov.pi, self.n) < MIN_COUNT

    def intervals(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(estimate, low, high) of wᵀθ for each row w (k, |X|); every interval contains the
        estimate and lies within [min w, max w], or is (NaN, NaN) where :meth:`withheld`."""
        value = w @ self.theta
        low = np.empty_like(value)
        high = np.empty_like(value)
        ok = self.identifiable(w)
        if ok.any():
            wi = w[ok]
            val = value[ok]
            if self.kind == "delta":
                raw = None if self.unconstrained is None else wi @ self.unconstrained
                sd_u = None if self.unconstrained_covariance is None else _sd(wi, self.unconstrained_covariance)
                low[ok], high[ok] = _delta_bounds(val, _sd(wi, self.covariance), raw, sd_u)
            else:
                reps = self.replicates @ wi.T  # (B, k)
                qlo, qhi = np.quantile(reps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
                if self.linear_replicates and self.unconstrained is not None:
                    # Basic bootstrap of the unbiased θ̃ (replicates drawn at the counts' proportions,
                    # so E θ̃* = θ̃): θ̃* − θ̃ mimics θ̃ − θ; like the delta interval, the interval
                    # spans both θ̂ and θ̃ before it is widened by those quantiles.
                    raw = wi @ self.unconstrained
                    qlo, qhi = np.minimum(raw, val) - (qhi - raw), np.maximum(raw, val) + (raw - qlo)
                low[ok] = np.minimum(qlo, val)
                high[ok] = np.maximum(qhi, val)
            if self.pinv is not None:
                low[ok], high[ok] = self._with_score(wi, low[ok], high[ok])
        if (~ok).any():
            low[~ok], high[~ok] = self._lp_bounds(w[~ok])
        # Solver tolerances (HiGHS: ~1e-9) must not push the estimate outside its interval.
        low, high = np.minimum(low, value), np.maximum(high, value)
        lo_lim, hi_lim = w.min(axis=1), w.max(axis=1)
        low, high = np.clip(low, lo_lim, hi_lim), np.clip(high, lo_lim, hi_lim)
        held = self.withheld(w)
        low[held], high[held] = np.nan, np.nan
        return value, low, high

    def cell_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of every cell θ_x: :meth:`intervals` of the identity weights, without
        the |X| × |X| identity (for the delta method only the diagonal of V is read)."""
        if self.kind != "delta" or self.row_basis is not None:
            return self.intervals(np.eye(self.theta.size))[1:]
        assert self.covariance is not None
        cov = self.covariance
        sd = np.sqrt(np.maximum(cov.diagonal() if isinstance(cov, FactoredCovariance) else np.diagonal(cov), 0.0))
        theta, raw_cov = self.theta, self.unconstrained_covariance
        sd_u = None if raw_cov is None else np.sqrt(np.maximum(np.diagonal(raw_cov), 0.0))
        low, high = _delta_bounds(theta, sd, self.unconstrained, sd_u)
        if self.pinv is not None:
            assert self.unconstrained is not None  # pinv is kept only with θ̃
            s_lo, s_hi = score_cells(self.pinv, self.unconstrained, theta, self.q, self.n, Z95)
            low, high = np.fmin(low, s_lo), np.fmax(high, s_hi)
        low, high = np.minimum(low, theta), np.maximum(high, theta)
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
        if self.pinv is None and isinstance(cov, FactoredCovariance):  # Wald alone: see :meth:`withheld`
            for start in range(0, theta.size, 256):  # rows of Q⁻¹ are the cells' a; no K × K temporary
                block = slice(start, start + 256)
                held = signal_counts(cov.inverse[block], cov.pi, self.n) < MIN_COUNT
                low[block][held], high[block][held] = np.nan, np.nan
        return low, high

    def _with_score(self, w: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) widened to contain the score interval (score.py) of each event row of ``w``."""
        assert self.pinv is not None and self.unconstrained is not None
        event = event_rows(w)
        if event.any():
            we = w[event]
            s_lo, s_hi = score_bounds(we, we @ self.pinv, we @ self.unconstrained, self.theta, self.q, self.n, Z95)
            low, high = low.copy(), high.copy()
            low[event], high[event] = np.fmin(low[event], s_lo), np.fmax(high[event], s_hi)
        return low, high

    def _lp_bounds(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """min / max of wᵀθ over {θ ∈ simplex : lo ≤ Qθ ≤ hi} (partial identification)."""
        # Imported here: only rank-deficient mechanisms need it, and scipy.optimize adds
        # ~0.4 s to every process that imports the estimators.
        from scipy.optimize import linprog

        if self.box is None:  # set whenever some functional is not identified
            raise ValueError("partial-identification bounds need the box for P_Y")
        lo, hi = self.box
        a = self.q.shape[1]
        upper = hi < 1.0
        lower = lo > 0.0
        a_ub = np.vstack([self.q[upper], -self.q[lower]])
        b_ub = np.concatenate([hi[upper], -lo[lower]])
        # No inequality at all: linprog takes None, not an empty (0, a) matrix.
        ub: tuple[np.ndarray | None, np.ndarray | None] = (a_ub, b_ub) if a_ub.shape[0] else (None, None)
        a_eq, b_eq = np.ones((1, a)), np.ones(1)
        out_lo = w.min(axis=1).astype(float)
        out_hi = w.max(axis=1).astype(float)
        for k, row in enumerate(w):
            for sign, out in ((1.0, out_lo), (-1.0, out_hi)):
                res = linprog(
                    sign * row, A_ub=ub[0], b_ub=ub[1], A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs"
                )
                if res.status == 0:  # otherwise keep the trivial bound (never a tighter claim)
                    out[k] = sign * res.fun
        return out_lo, out_hi


def _sd(w: np.ndarray, covariance: np.ndarray | FactoredCovariance | None) -> np.ndarray:
    """√(wᵀVw) for each row w."""
    assert covariance is not None
    if isinstance(covariance, FactoredCovariance):
        return np.sqrt(np.maximum(covariance.quadratic(w), 0.0))
    return np.sqrt(np.maximum(np.einsum("ka,ka->k", w @ covariance, w), 0.0))


def as_weights(weights: Any, a: int, shape: tuple[int, int]) -> np.ndarray:
    """``weights`` as a (k, |X|) array: one functional per row (see ``Estimate.linear``)."""
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"weights must be a numeric array; {exc}") from None
    if not np.all(np.isfinite(w)):
        raise ValidationError("weights contains NaN or infinite entries")
    if w.shape == shape or w.shape == (a,):
        return w.reshape(1, a)
    if w.ndim == 3 and w.shape[1:] == shape:
        return w.reshape(w.shape[0], a)
    if w.ndim == 2 and w.shape[1] == a:
        return w
    raise ValidationError(
        f"weights must have shape (k, {a}), (k, {shape[0]}, {shape[1]}) or one such row; got {w.shape}"
    )


def clopper_pearson_box(counts: np.ndarray, fitted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous 95 % box for P_Y: Clopper–Pearson at 1 − 0.05/|Y| per output, ∪ fitted."""
    # Imported here: only rank-deficient mechanisms need it, and scipy.stats adds ~0.7 s
    # to every process that imports the estimators.
    from scipy.stats import beta

    n = counts.sum()
    alpha = (1.0 - LEVEL) / counts.size
    with np.errstate(invalid="ignore"):
        lo = np.where(counts > 0, beta.ppf(alpha / 2, counts, n - counts + 1), 0.0)
        hi = np.where(counts < n, beta.ppf(1 - alpha / 2, counts + 1, n - counts), 1.0)
    return np.minimum(np.nan_to_num(lo, nan=0.0), fitted), np.maximum(np.nan_to_num(hi, nan=1.0), fitted)


def em_covariance(
    q: np.ndarray, theta: np.ndarray, n: float, space: RowSpace, identifiable: bool
) -> np.ndarray | FactoredCovariance:
    """Inverse Fisher information of the multinomial likelihood on the simplex, / n.

    I = Qᵀ diag(1/π) Q with π = max(Qθ, 1/n). Full column rank: I is positive definite and
    the constraint 1ᵀθ = 1 gives V = (I⁻¹ − I⁻¹11ᵀI⁻¹ / 1ᵀI⁻¹1) / n (one Cholesky; for Q = 1
    this is the multinomial (diag θ − θθᵀ)/n). Otherwise V = B (Bᵀ I B)⁻¹ Bᵀ / n with B an
    orthonormal basis of the identifiable tangent directions (:func:`tangent_basis`), so
    wᵀVw is the asymptotic variance of wᵀθ̂ for every identifiable w. ``space``: Q's
    (cached) row space, read only in the second case.

    Memory: Q, I (inverted in place, :func:`cho_inverse`) and one temporary.
    """
    pi = np.maximum(q @ theta, 1.0 / n)
    if identifiable and q.shape[1] > SMALL_ALPHABET:
        inverse = space.inverse(q)
        if inverse is not None:  # square Q: I⁻¹ = Q⁻¹ diag(π) Q⁻ᵀ, no Gram matrix and no factorisation
            return FactoredCovariance(inverse, pi, n)
    if identifiable:
        if q.shape[1] <= SMALL_ALPHABET:  # numpy's expression, whose numbers the tests pin
            scaled = q / np.sqrt(pi)[:, None]
            info = scaled.T @ scaled
        else:  # without the scaled copy of Q
            info = weighted_gram(q, 1.0 / np.sqrt(pi))
        inv = cho_inverse(info)
        if inv is not None:  # else numerically singular: the basis route below is exact
            v1 = inv.sum(axis=1)
            _subtract_outer(inv, v1, v1 / v1.sum())
            inv /= n
            return inv
        del info
    scaled = q / np.sqrt(pi)[:, None]  # diag(π)^−½ Q
    basis = tangent_basis(space.basis(q))
    if basis.shape[1] == 0:
        return np.zeros((theta.size, theta.size))
    qb = scaled @ basis
    return basis @ np.linalg.solve(qb.T @ qb, basis.T) / n


class FactoredCovariance:
    """The EM covariance V of :func:`em_covariance` for a square Q of full rank, kept factored.

    I = Qᵀ diag(1/π) Q has the inverse A = Q⁻¹ diag(π) Q⁻ᵀ, so with Q⁻¹ cached per mechanism
    (:meth:`~.linalg.RowSpace.inverse`) V = (A − v vᵀ/s)/n, v = A1, s = 1ᵀv, needs no K × K
    product to give its diagonal (Σ_y (Q⁻¹)²_xy π_y: one pass over Q⁻¹) or wᵀVw
    (Σ_y π_y (wᵀQ⁻¹)²_y − (wᵀv)²/s, over n); :meth:`dense` forms V when it is asked for.
    """

    def __init__(self, inverse: np.ndarray, pi: np.ndarray, n: float) -> None:
        self.inverse, self.pi, self.n = inverse, pi, n
        self.v = inverse @ (pi * inverse.sum(axis=0))  # A1 = Q⁻¹ diag(π) Q⁻ᵀ 1
        self.s = float(self.v.sum())
        self._dense: np.ndarray | None = None

    def diagonal(self) -> np.ndarray:
        out = np.empty(self.inverse.shape[0])
        for start in range(0, out.size, 256):  # no K × K temporary
            block = self.inverse[start : start + 256]
            out[start : start + 256] = (block * block) @ self.pi
        out -= self.v * self.v / self.s
        out /= self.n
        return out

    def quadratic(self, w: np.ndarray) -> np.ndarray:
        """wᵀVw for each row w (k, |X|)."""
        t = w @ self.inverse
        wv = w @ self.v
        return ((t * t) @ self.pi - wv * wv / self.s) / self.n

    def dense(self) -> np.ndarray:
        """V itself (formed on the first request, ~2 solves' time at K = 4,000, then kept)."""
        if self._dense is None:
            out: np.ndarray = self.inverse @ (self.pi[:, None] * self.inverse.T)
            _subtract_outer(out, self.v, self.v / self.s)
            out /= self.n
            self._dense = out
        return self._dense


def _subtract_outer(m: np.ndarray, u: np.ndarray, v: np.ndarray) -> None:
    """m −= u vᵀ in place, one block of rows at a time (no K × K temporary)."""
    for start in range(0, m.shape[0], 256):
        m[start : start + 256] -= np.outer(u[start : start + 256], v)


def inverse_covariance(pinv: np.ndarray, fitted: np.ndarray, n: float) -> np.ndarray:
    """Exact covariance of the unbiased θ̃ = Q⁺c/n at π = Qθ̂: Q⁺ (diag π − ππᵀ) Q⁺ᵀ / n."""
    pi = fitted / fitted.sum()
    return pinv @ ((np.diag(pi) - np.outer(pi, pi)) / n) @ pinv.T


def _delta_bounds(
    value: np.ndarray, sd: np.ndarray, raw: np.ndarray | None, sd_u: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The delta interval of an estimate ``value`` (standard deviation ``sd``), for :meth:`Uncertainty.intervals`
    and its cell fast path alike. ``raw`` is the unbiased θ̃ = Q⁺c/n where known: with its own ``sd_u`` (EM) the
    interval is ∪ θ̃'s Wald interval; without (the inverse estimator, whose ``sd`` is θ̃'s) it spans θ̂ and θ̃."""
    if raw is None:
        return value - Z95 * sd, value + Z95 * sd
    if sd_u is None:
        return np.minimum(value, raw) - Z95 * sd, np.maximum(value, raw) + Z95 * sd
    low = np.minimum(value - Z95 * sd, np.minimum(value, raw) - Z95 * sd_u)
    high = np.maximum(value + Z95 * sd, np.maximum(value, raw) + Z95 * sd_u)
    return low, high
