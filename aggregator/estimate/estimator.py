"""Estimating the distribution of X = (S, U) from privatised reports: :func:`estimate_distribution`.

Every user sends one output y of a published mechanism Q (``matrix[y, x] = Q(y|x)``,
columns summing to 1). The aggregator only sees the counts c_y, which are
Multinomial(n, π) with π = Q θ, where θ = P_X (flattened s-major: x = s·|U| + u).
The estimators are in :mod:`.likelihood` (maximum likelihood by EM) and :mod:`.inverse`;
the intervals in :mod:`.intervals`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.errors import ValidationError

from .inputs import validate_counts, validate_matrix, validate_prior, validate_shape
from .intervals import FactoredCovariance, Uncertainty, clopper_pearson_box, em_covariance, inverse_covariance
from .inverse import project_simplex, unbiased_inverse
from .likelihood import Fit, Likelihood
from .linalg import SMALL_ALPHABET, mechanism_row_space, small_linear_algebra
from .result import Estimate

__all__ = ["METHODS", "INTERVALS", "DEFAULT_BOOTSTRAP", "estimate_distribution", "estimate_many"]

METHODS = ("auto", "em", "inverse")
INTERVALS = ("delta", "bootstrap")
DEFAULT_BOOTSTRAP = 500


def estimate_distribution(
    matrix: np.ndarray,
    counts: np.ndarray,
    shape: tuple[int, int],
    *,
    method: str = "auto",
    prior: np.ndarray | None = None,
    interval: str = "delta",
    tol: float = 1e-10,
    max_iter: int = 10_000,
    rng: np.random.Generator | None = None,
    prior_weight: float = 0.0,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    cache_key: str | None = None,
) -> Estimate:
    """Estimate P_X (|S| × |U|) from report counts through the mechanism Q.

    ``matrix[y, x] = Q(y|x)`` (columns sum to 1), ``counts[y]`` = number of reports y,
    ``shape = (|S|, |U|)``. ``method``: "auto" or "em" → maximum likelihood by
    SQUAREM-accelerated EM (the update uses Qᵀ); "inverse" → θ̃ = Q⁺c/n projected onto the
    simplex (needs full column rank). ``prior``: the public P̂ (|S| × |U|), EM's starting
    point instead of uniform (a small uniform share is mixed in so that no cell starts at
    0, which EM could never leave); with ``prior_weight`` κ > 0 it also regularises (MAP
    with κ pseudo-reports from P̂). ``interval``: "delta" or "bootstrap" (``n_bootstrap``
    resamples drawn with ``rng``; a fresh OS-seeded generator if None). ``tol``: EM stops
    when its per-report log-likelihood gap certificate is ≤ tol (nats); ``max_iter``
    bounds the number of EM updates (then ``converged`` is False). ``cache_key``: a name for
    exactly this Q (e.g. its mechanism id, a hash of its exact content), under which what
    depends on Q alone is cached instead of under a digest of Q's bytes (~0.1 s at K = 4,000).

    Raises ValueError naming the bad parameter; "no reports yet" when every count is 0.
    """
    q = validate_matrix(matrix)
    n_out, a = q.shape
    shape = validate_shape(shape, a)
    c = validate_counts(counts, n_out)
    _check_options(method, interval, tol, max_iter, prior_weight, prior, n_bootstrap, cache_key, rng)
    p0 = validate_prior(prior, shape) if prior is not None else None
    impossible = (c > 0) & (q.sum(axis=1) == 0)
    if impossible.any():
        y = int(np.argmax(impossible))
        raise ValidationError(
            f"counts[{y}] = {int(c[y])} but Q(y={y}|x) = 0 for every x: these reports cannot come from this mechanism"
        )
    with small_linear_algebra(a):
        return _estimate(
            q,
            c,
            shape,
            method,
            p0,
            interval,
            float(tol),
            int(max_iter),
            rng,
            float(prior_weight),
            int(n_bootstrap) if interval == "bootstrap" else 0,
            cache_key=cache_key,
        )


def estimate_many(
    matrix: np.ndarray,
    counts: np.ndarray,
    shape: tuple[int, int],
    *,
    interval: str = "delta",
    rng: np.random.Generator | None = None,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> list[Estimate]:
    """:func:`estimate_distribution` (EM, no prior) of each row of ``counts`` (R, |Y|), the EM fits
    run as one vectorised batch: R simulated collections at the cost of a few, for coverage
    studies and simulations. Each Estimate is the one ``estimate_distribution`` returns for its row
    (up to EM's tolerance; bootstrap replicates are drawn from ``rng`` row after row)."""
    q = validate_matrix(matrix)
    n_out, a = q.shape
    shape = validate_shape(shape, a)
    batch = np.asarray(counts)
    if batch.ndim != 2 or batch.shape[0] < 1:
        raise ValidationError(f"counts must have shape (R ≥ 1, {n_out}); got {batch.shape}")
    rows = np.array([validate_counts(row, n_out) for row in batch])
    if interval not in INTERVALS:
        raise ValidationError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}")
    rng = rng if rng is not None else np.random.default_rng()
    start = np.full((rows.shape[0], a), 1.0 / a)
    unique = mechanism_row_space(q).rank(q) == a
    with small_linear_algebra(a):
        fit = Likelihood(q, rows, None, 0.0).maximise(start, tol, max_iter, unique)
        return [
            _estimate(q, c, shape, "em", None, interval, tol, max_iter, rng, 0.0, n_bootstrap, prefit=(fit, i))
            for i, c in enumerate(rows)
        ]


@dataclass(frozen=True)
class _Fitting:
    """How EM fits the counts (and each bootstrap replicate): the prior and its weight, the start, the stopping
    rule, and whether the maximiser is unique."""

    p0: np.ndarray | None
    prior_weight: float
    start: np.ndarray
    tol: float
    max_iter: int
    unique: bool

    @classmethod
    def plan(
        cls, a: int, p0: np.ndarray | None, prior_weight: float, tol: float, max_iter: int, identifiable: bool
    ) -> _Fitting:
        # One maximiser (so the interior-point finish cannot change the answer) when Q has full
        # column rank or the prior's log-term makes the objective strictly concave on the cells
        # it covers.
        unique = identifiable or (prior_weight > 0 and p0 is not None and bool(np.all(p0 > 0)))
        uniform = np.full(a, 1.0 / a)
        # 1 % uniform keeps every cell positive: EM can never move mass into an exact 0.
        start = uniform if p0 is None else 0.99 * p0 + 0.01 * uniform
        return cls(p0, prior_weight, start, tol, max_iter, unique)


def _estimate(
    q: np.ndarray,
    c: np.ndarray,
    shape: tuple[int, int],
    method: str,
    p0: np.ndarray | None,
    interval: str,
    tol: float,
    max_iter: int,
    rng: np.random.Generator | None,
    prior_weight: float,
    n_bootstrap: int,
    prefit: tuple[Fit, int] | None = None,
    cache_key: str | None = None,
) -> Estimate:
    """The work of :func:`estimate_distribution` on validated inputs (``prefit``: row ``i`` of a
    batched EM fit of these counts, see :func:`estimate_many`)."""
    a = q.shape[1]
    n = float(c.sum())
    space = mechanism_row_space(q, cache_key)  # cached per mechanism: Q is immutable
    rank = space.rank(q)
    identifiable = rank == a
    used = "em" if method in ("auto", "em") else "inverse"
    # Q⁺ (a full SVD, cached with the row space) only where it is used: the inverse estimator, the
    # bootstrap, and the delta intervals' union with the unbiased estimate's (intervals.py) — that one
    # up to SMALL_ALPHABET cells, where small-n coverage needs it; above, the EM delta intervals alone.
    wants_pinv = used == "inverse" or interval == "bootstrap" or (interval == "delta" and a <= SMALL_ALPHABET)
    pinv = space.pinv(q) if identifiable and wants_pinv else None
    fitting = _Fitting.plan(a, p0, prior_weight, tol, max_iter, identifiable)
    raw, theta, (em_updates, newton_steps, converged, gap) = _point(q, c, used, pinv, rank, prefit, fitting)
    fitted = q @ theta
    with np.errstate(divide="ignore"):
        loglik = float(np.sum(np.where(c > 0, c * np.log(np.where(c > 0, fitted, 1.0)), 0.0)))

    unc, boot_converged = _uncertainty(
        q, c, n, theta, fitted, raw, pinv, space, used, interval, fitting, rng, n_bootstrap
    )
    low, high = unc.cell_intervals()
    return Estimate(
        n=int(round(n)),
        joint=theta.reshape(shape),
        ci95_low=low.reshape(shape),
        ci95_high=high.reshape(shape),
        method=used,
        identifiable=identifiable,
        iterations=int(em_updates + newton_steps),
        converged=converged,
        interval=interval,
        rank=rank,
        fitted=fitted,
        log_likelihood=loglik,
        gap=gap,
        newton_steps=newton_steps,
        prior_weight=float(prior_weight),
        bootstrap_converged=boot_converged,
        _uncertainty=unc,
    )


def _point(
    q: np.ndarray,
    c: np.ndarray,
    used: str,
    pinv: np.ndarray | None,
    rank: int,
    prefit: tuple[Fit, int] | None,
    fitting: _Fitting,
) -> tuple[np.ndarray | None, np.ndarray, tuple[int, int, bool, float]]:
    """The point estimate: (θ̃ of the inverse estimator or None, θ̂, (EM updates, Newton steps, converged, gap))."""
    if used == "inverse":
        raw, theta = _inverse_point(pinv, c, rank, q.shape[1])
        return raw, theta, (0, 0, True, 0.0)
    fit, row = prefit if prefit is not None else (None, 0)
    if fit is None:
        f = fitting
        fit = Likelihood(q, c[None, :], f.p0, f.prior_weight).maximise(f.start[None, :], f.tol, f.max_iter, f.unique)
    progress = (fit.em_updates, int(fit.newton_steps[row]), bool(fit.converged[row]), float(fit.gap[row]))
    return None, fit.theta[row], progress


def _uncertainty(
    q: np.ndarray,
    c: np.ndarray,
    n: float,
    theta: np.ndarray,
    fitted: np.ndarray,
    raw: np.ndarray | None,
    pinv: np.ndarray | None,
    space: Any,
    used: str,
    interval: str,
    fitting: _Fitting,
    rng: np.random.Generator | None,
    n_bootstrap: int,
) -> tuple[Uncertainty, float | None]:
    """What the intervals are computed from: the delta method's covariances, or bootstrap replicates; and the
    share of bootstrap re-fits that converged."""
    identifiable = pinv is not None or space.rank(q) == q.shape[1]
    covariance: np.ndarray | FactoredCovariance | None = None
    replicates = unbiased_cov = None
    boot_converged = None
    linear = False
    if pinv is not None and raw is None:
        # EM with Q of full column rank: θ̃ = Q⁺c/n is unbiased for every cell, and its exact
        # multinomial covariance does not shrink at the simplex boundary the way the MLE's does.
        raw = (c / n) @ pinv.T
    if interval == "delta":
        if used == "inverse":
            assert pinv is not None  # "inverse" is used only when Q has full column rank
            covariance = inverse_covariance(pinv, fitted, n)
        else:
            covariance = em_covariance(q, theta, n, space, identifiable)
            if pinv is not None:
                unbiased_cov = inverse_covariance(pinv, fitted, n)
    else:
        replicates, linear, boot_converged = _bootstrap(q, c, n, theta, fitted, pinv, fitting, rng, n_bootstrap)

    box = None if identifiable else clopper_pearson_box(c, fitted)
    unc = Uncertainty(
        kind=interval,
        theta=theta,
        unconstrained=raw,
        covariance=covariance,
        replicates=replicates,
        row_basis=None if identifiable else space.basis(q),
        q=q,
        box=box,
        unconstrained_covariance=unbiased_cov,
        linear_replicates=linear,
        pinv=pinv,
        n=n,
    )
    return unc, boot_converged


def _check_options(
    method: str,
    interval: str,
    tol: float,
    max_iter: int,
    prior_weight: float,
    prior: np.ndarray | None,
    n_bootstrap: int,
    cache_key: str | None,
    rng: np.random.Generator | None,
) -> None:
    """:func:`estimate_distribution`'s options, each refused with a message naming it and its range."""
    if method not in METHODS:
        raise ValidationError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if interval not in INTERVALS:
        raise ValidationError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}")
    if not isinstance(tol, numbers.Real) or not math.isfinite(tol) or tol <= 0:
        raise ValidationError(f"tol must be a finite number > 0 (nats per report); got {tol!r}")
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise ValidationError(f"max_iter must be a positive integer; got {max_iter!r}")
    if not isinstance(prior_weight, numbers.Real) or not math.isfinite(prior_weight) or prior_weight < 0:
        raise ValidationError(f"prior_weight must be a finite number ≥ 0 (pseudo-reports); got {prior_weight!r}")
    if prior_weight > 0 and prior is None:
        raise ValidationError("prior_weight > 0 needs a prior (the public distribution P̂)")
    if interval == "bootstrap" and (
        not isinstance(n_bootstrap, numbers.Integral) or isinstance(n_bootstrap, bool) or n_bootstrap < 2
    ):
        raise ValidationError(f"n_bootstrap must be an integer ≥ 2; got {n_bootstrap!r}")
    if cache_key is not None and not isinstance(cache_key, str):
        raise ValidationError(
            f"cache_key must be a string (e.g. the mechanism id) or None; got {type(cache_key).__name__}"
        )
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng must be a numpy Generator (np.random.default_rng(seed)); got {type(rng).__name__}")


def _inverse_point(pinv: np.ndarray | None, c: np.ndarray, rank: int, a: int) -> tuple[np.ndarray, np.ndarray]:
    """θ̃ = Q⁺c/n and its projection onto the simplex (the inverse estimator: Q of full column rank only)."""
    if pinv is None:
        raise ValidationError(
            f"the inverse estimator needs Q of full column rank; this mechanism has rank {rank} < |X| = {a} "
            "(P_X is not identifiable from the reports); use method='em'"
        )
    return unbiased_inverse(pinv, c)


def _bootstrap(
    q: np.ndarray,
    c: np.ndarray,
    n: float,
    theta: np.ndarray,
    fitted: np.ndarray,
    pinv: np.ndarray | None,
    fitting: _Fitting,
    rng: np.random.Generator | None,
    n_bootstrap: int,
) -> tuple[np.ndarray, bool, float | None]:
    """Bootstrap replicates of the estimate: (replicates, whether they are linear in the counts, the share of
    re-fits that converged)."""
    rng = rng if rng is not None else np.random.default_rng()
    if pinv is not None:
        # Linear replicates θ̃* = Q⁺c*/n of the unbiased θ̃, c* ~ Multinomial(n, c/n), and the
        # basic interval (intervals.py): no re-fit, and no percentile of a boundary-clipped
        # estimate, which repeats its bias. The counts' own proportions, not Qθ̂: at a
        # boundary Qθ̂ understates the spread of the large cells (0.93 coverage at n = 1,000).
        boot = rng.multinomial(int(round(n)), c / c.sum(), size=int(n_bootstrap)).astype(float)
        return (boot / n) @ pinv.T, True, 1.0
    # EM on a rank-deficient Q: re-fit each replicate ("inverse" needs full column rank)
    pi = np.maximum(fitted, 0.0)
    boot = rng.multinomial(int(round(n)), pi / pi.sum(), size=int(n_bootstrap)).astype(float)
    f = fitting
    replicates, converged = _refit(
        q, boot, n, theta, fitted, pinv, f.start, f.p0, f.prior_weight, f.tol, f.max_iter, f.unique
    )
    return replicates, False, converged


def _refit(
    q: np.ndarray,
    boot: np.ndarray,
    n: float,
    theta: np.ndarray,
    fitted: np.ndarray,
    pinv: np.ndarray | None,
    start: np.ndarray,
    p0: np.ndarray | None,
    prior_weight: float,
    tol: float,
    max_iter: int,
    unique: bool,
) -> tuple[np.ndarray, float]:
    """(EM re-estimates of the bootstrap count vectors ``boot``, share of them that converged)."""
    if pinv is not None:
        # Linearised replicate θ̂ + Q⁺(c*/n − Qθ̂): exact for an interior MLE of square Q,
        # a close start otherwise; mixed with θ̂ and uniform so that no cell is 0.
        lin = project_simplex(theta + (boot / n - fitted) @ pinv.T)
        starts = 0.9 * lin + 0.09 * theta + 0.01 / theta.size
    else:
        # Same start as the main fit: the replicates must land on the same branch of the
        # flat likelihood (only identifiable functionals use them anyway).
        starts = np.tile(start, (boot.shape[0], 1))
    fit = Likelihood(q, boot, p0, prior_weight).maximise(starts, tol, max_iter, unique)
    return fit.theta, float(fit.converged.mean())
