"""Estimating the distribution of X = (S, U) from privatised reports.

Every user sends one output y of a published mechanism Q (``matrix[y, x] = Q(y|x)``,
columns summing to 1). The aggregator only sees the counts c_y, which are
Multinomial(n, π) with π = Q θ, where θ = P_X (flattened s-major: x = s·|U| + u).

Estimators
----------
``"em"`` (and ``"auto"``): the maximum-likelihood estimate over the probability simplex,
computed by the EM algorithm / iterative Bayesian update (Agrawal & Aggarwal, PODS 2001;
Kairouz, Bonawitz & Ramage, ICML 2016)::

    θ_x ← θ_x · g_x,    g = Qᵀ (c ⊘ Q θ) / n                                    (EM)

Note the transpose: g_x = Σ_y Q(y|x) c_y / (n π_y) is the posterior mass of x given the
reports. Writing Q instead of Qᵀ is only harmless for symmetric Q. The log-likelihood
ℓ(θ) = Σ_y c_y log (Qθ)_y is concave, and since θ·g = 1 always, concavity gives the
certificate

    (ℓ(θ*) − ℓ(θ)) / n  ≤  max_x g_x − 1        (per-report optimality gap, nats)

which is the stopping rule: iterate until the gap is ≤ ``tol`` (a guarantee on the
likelihood, unlike a small change between iterations, which EM also shows when it is
merely slow). The iteration is accelerated with SQUAREM (Varadhan & Roland, Scand. J.
Stat. 2008, scheme S3) with a monotonicity safeguard, which keeps EM's fixed points and its
ascent property. Even so, EM's rate is 1 − the fraction of information the reports keep
(~1 − 5·10⁻⁵ for GRR on 240 symbols at ε = 1), so when Q has full column rank and EM has
not certified convergence after |X| updates (30 to 300), a primal–dual interior-point
Newton method on the same likelihood finishes the job (typically 3-20 steps; see
``_Likelihood.newton``). With full column rank the maximiser is unique, so this changes
the running time, not the answer; the same gap certificate decides.
``Estimate.iterations`` counts EM updates plus Newton steps (``newton_steps``) and
``max_iter`` bounds their sum.

With ``prior_weight = κ > 0`` the update becomes the MAP-EM update of a Dirichlet prior
with κ pseudo-reports distributed as the public P̂ (``prior``):
θ_x ← (θ_x g_x n + κ P̂_x) / (n + κ) (regularisation towards P̂; the gap above is then
computed for the penalised objective ℓ(θ) + κ Σ_x P̂_x log θ_x).

``"inverse"``: the unbiased estimator θ̃ = Q⁺ c / n (least squares; needs Q of full column
rank), followed by the Euclidean projection onto the simplex (Wang & Carreira-Perpiñán,
arXiv:1309.1541, 2013; the sort-based algorithm of Duchi et al., ICML 2008).

Where EM starts, and identifiability
------------------------------------
If Q has full column rank, the likelihood has a unique maximiser (it is strictly concave
in θ as soon as the rows of the observed outputs have full column rank, e.g. for every
mechanism with positive entries), so EM converges to the same MLE whether started from
the uniform distribution or from the public P̂ (``prior``); the start only changes the
number of iterations. If Q is
rank deficient (often the case for PolyOpt, whose outputs are the vertices of a cone and
can be fewer than |X| or linearly dependent) the likelihood is flat along null(Q): every θ
with the same Qθ fits the reports equally well, and EM returns one of them, which depends
on the start (uniform, or ``prior``): this case runs EM only, so that the point is the
one EM reaches from that start. A ``prior_weight`` > 0 with a prior that is positive
everywhere removes the ambiguity: the penalised objective is strictly concave, its
maximiser (the MAP) is unique and gets the interior-point finish. ``Estimate.identifiable``
says which case applies; ``Estimate.fitted`` (= Qθ̂, the implied P_Y) is always well
determined.

95 % intervals
--------------
For a linear functional wᵀθ (a cell, a marginal, any row of ``weights`` in
:meth:`Estimate.linear`):

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
    reported estimate and is at least as wide as the unbiased Wald interval).
  - ``"bootstrap"``: parametric bootstrap, B count vectors ~ Multinomial(n, Qθ̂)
    re-estimated with the same estimator (vectorised over B), 2.5 / 97.5 % percentiles,
    widened if needed to contain the estimate.

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

import math
import numbers
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rldp.shared.records import Alphabet

__all__ = [
    "Estimate",
    "LEVEL",
    "METHODS",
    "INTERVALS",
    "report_counts",
    "estimate_distribution",
    "project_simplex",
]

LEVEL = 0.95
Z95 = 1.959963984540054  # Φ⁻¹(0.975)
METHODS = ("auto", "em", "inverse")
INTERVALS = ("delta", "bootstrap")
# Singular values of Q below RANK_RTOL·σ_max count as zero: a direction whose noise is
# amplified 10⁹ times carries no usable information at any realistic number of reports.
RANK_RTOL = 1e-9
# Columns of Q must sum to 1 within this (documents store floats rounded to ~1e-15).
STOCHASTIC_TOL = 1e-6
DEFAULT_BOOTSTRAP = 500
# EM gets |X| updates (within these bounds) before the interior-point finish: a Newton
# step costs ~|X|²|Y| flops against |X||Y| for an EM update.
EM_BEFORE_NEWTON = (30, 300)
# Bootstrap re-fits run EM vectorised over all replicates, far cheaper per update than
# the per-replicate Newton loop, so they get a larger EM budget first.
EM_BEFORE_NEWTON_BATCH = 2000
NEWTON_MAX_STEPS = 100  # interior-point steps at most (typically 3-20)
SMALL_ALPHABET = 512  # up to this |X|, estimate with one BLAS thread (see _small_linear_algebra)


# --------------------------------------------------------------------------- helpers


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the probability simplex.

    argmin_p ‖p − v‖₂ s.t. p ≥ 0, Σp = 1, solved exactly by p = max(v − τ, 0) with τ
    found from the sorted values (Wang & Carreira-Perpiñán 2013, Algorithm 1; Duchi et
    al. 2008). Vectorised over rows; a 1-D input gives a 1-D output.
    """
    arr = np.asarray(v, dtype=float)
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(f"project_simplex takes a vector or a 2-D array of rows; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("project_simplex: input contains NaN or infinite values")
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


def _validate_matrix(matrix: Any) -> np.ndarray:
    try:
        q = np.array(matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"matrix must be a 2-D array of probabilities Q[y, x]; {exc}") from None
    if q.ndim != 2 or q.shape[0] == 0 or q.shape[1] == 0:
        raise ValueError(f"matrix must be a non-empty 2-D array Q[y, x] (|Y| × |X|); got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError("matrix contains NaN or infinite entries")
    if q.min() < -STOCHASTIC_TOL:
        y, x = np.unravel_index(int(np.argmin(q)), q.shape)
        raise ValueError(f"matrix has a negative entry Q[{y}, {x}] = {float(q[y, x]):.6g}; Q(y|x) must be ≥ 0")
    sums = q.sum(axis=0)
    bad = np.abs(sums - 1.0) > STOCHASTIC_TOL
    if bad.any():
        x = int(np.argmax(bad))
        raise ValueError(
            f"matrix is not column-stochastic: column x = {x} sums to {float(sums[x]):.12g}; "
            "every column Q(·|x) must sum to 1 "
            "(matrix[y, x] = Q(y|x), outputs along the rows)")
    # Round-off within STOCHASTIC_TOL (e.g. −1e-17 from a solver) is cleaned, not refused.
    q = np.maximum(q, 0.0)
    return q / q.sum(axis=0, keepdims=True)


def _validate_counts(counts: Any, n_outputs: int) -> np.ndarray:
    try:
        c = np.asarray(counts)
    except (TypeError, ValueError) as exc:  # pragma: no cover - ragged input
        raise ValueError(f"counts must be a 1-D array of report counts; {exc}") from None
    if c.ndim != 1:
        raise ValueError(f"counts must be a 1-D array with one count per output y; got shape {c.shape}")
    if c.shape[0] != n_outputs:
        raise ValueError(f"counts has {c.shape[0]} entries but the matrix has {n_outputs} outputs (rows)")
    if c.dtype.kind == "b" or c.dtype.kind not in "iuf":
        raise ValueError(f"counts must be integers (numbers of reports per output); got dtype {c.dtype}")
    if c.dtype.kind == "f":
        if not np.all(np.isfinite(c)):
            raise ValueError("counts contains NaN or infinite entries")
        frac = c != np.floor(c)
        if frac.any():
            y = int(np.argmax(frac))
            raise ValueError(
                f"counts must be whole numbers of reports; counts[{y}] = {c[y].item()!r} (did you pass frequencies? "
                "pass the number of reports per output)")
    if c.size and c.min() < 0:
        y = int(np.argmin(c))
        raise ValueError(f"counts must be ≥ 0; counts[{y}] = {c[y].item()!r}")
    c = c.astype(float)
    if c.sum() <= 0:
        raise ValueError("no reports yet: every count is 0, so there is nothing to estimate")
    return c


def _validate_shape(shape: Any, n_inputs: int) -> tuple[int, int]:
    try:
        a1, a2 = shape
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a pair (|S|, |U|); got {shape!r}") from None
    for name, v in (("|S|", a1), ("|U|", a2)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValueError(f"shape must be a pair of positive integers (|S|, |U|); {name} = {v!r}")
    if a1 * a2 != n_inputs:
        raise ValueError(
            f"shape {(int(a1), int(a2))} has {a1 * a2} cells but the matrix has {n_inputs} inputs (columns)")
    return int(a1), int(a2)


def _validate_prior(prior: Any, shape: tuple[int, int]) -> np.ndarray:
    try:
        p = np.array(prior, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"prior must be a distribution over S × U; {exc}") from None
    a = shape[0] * shape[1]
    if p.shape not in (shape, (a,)):
        raise ValueError(f"prior must have shape {shape} (|S|, |U|) or ({a},); got {p.shape}")
    p = p.reshape(-1)
    if not np.all(np.isfinite(p)) or p.min() < 0:
        raise ValueError("prior must contain finite probabilities ≥ 0")
    if abs(p.sum() - 1.0) > STOCHASTIC_TOL:
        raise ValueError(f"prior must sum to 1; it sums to {float(p.sum()):.12g}")
    return p / p.sum()


# --------------------------------------------------------------------------- counting


def report_counts(reports: np.ndarray, n_outputs: int) -> np.ndarray:
    """Number of reports of each output y, shape (n_outputs,), int64 (``np.bincount``).

    ``reports`` is a 1-D integer array of outputs y ∈ [0, n_outputs). Anything else
    (floats, booleans, other shapes, out-of-range values) raises ValueError naming the
    first offending report; no report is silently dropped or clipped. An empty array
    gives all-zero counts.
    """
    if not isinstance(n_outputs, numbers.Integral) or isinstance(n_outputs, bool) or n_outputs < 1:
        raise ValueError(f"n_outputs must be a positive integer (|Y|); got {n_outputs!r}")
    n_outputs = int(n_outputs)
    arr = np.asarray(reports)
    if arr.ndim != 1:
        raise ValueError(f"reports must be a 1-D array of output indices; got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(n_outputs, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"reports must be integers (output indices y); got dtype {arr.dtype}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n_outputs:
        bad = (arr < 0) | (arr >= n_outputs)
        i = int(np.argmax(bad))
        raise ValueError(
            f"report {i} is y = {int(arr[i])}, outside the mechanism's outputs 0..{n_outputs - 1}")
    # In range, so the cast is exact (older numpy refuses uint64 in bincount).
    return np.bincount(arr.astype(np.intp, copy=False), minlength=n_outputs).astype(np.int64, copy=False)


# --------------------------------------------------------------------------- likelihood maximisation


@dataclass
class _Fit:
    theta: np.ndarray  # (B, a)
    em_updates: int  # EM map evaluations (the largest over rows)
    newton_steps: np.ndarray  # (B,) interior-point steps per row
    converged: np.ndarray  # (B,) bool
    gap: np.ndarray  # (B,) per-report optimality gap at theta


class _Likelihood:
    """The (penalised) multinomial log-likelihood of B count vectors, and its maximisers.

    f(θ) = Σ_y c_y log (Qθ)_y + Σ_x k_x log θ_x with k = κ P̂ (k = 0 without a prior).
    """

    def __init__(self, q: np.ndarray, counts: np.ndarray, prior: np.ndarray | None, prior_weight: float):
        used = counts.any(axis=0)  # outputs nobody reported contribute nothing
        self.q = np.ascontiguousarray(q[used])  # (m, a)
        self.qt = np.ascontiguousarray(self.q.T)  # (a, m)
        self.c = counts[:, used]  # (B, m)
        self.n = self.c.sum(axis=1)  # (B,)
        self.kp = float(prior_weight) * prior if (prior is not None and prior_weight > 0) else None  # (a,)
        self.total = self.n + float(prior_weight if self.kp is not None else 0.0)  # (B,)

    def objective(self, theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """f(θ) per row (nats); outputs with c_y = 0 and cells with k_x = 0 contribute 0."""
        pi = theta @ self.qt
        c = self.c[rows]
        logs = np.log(pi, out=np.zeros_like(pi), where=c > 0)
        val = (c * logs).sum(axis=1)
        if self.kp is not None:
            val = val + (self.kp * np.log(theta, out=np.zeros_like(theta), where=self.kp > 0)).sum(axis=1)
        return val

    def step(self, theta: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One (MAP-)EM update θ ← θ ⊙ ∇f / (n + κ) for the given rows.

        Returns (new θ, gap at the input θ) with gap = max_x ∇f_x / (n + κ) − 1.
        """
        pi = theta @ self.qt  # (b, m) = (Qθ)ᵀ
        c = self.c[rows]
        ratio = np.divide(c, pi, out=np.zeros_like(pi), where=c > 0)
        grad = ratio @ self.q  # (b, a): rows of Qᵀ (c ⊘ Qθ) — the transpose that matters
        if self.kp is not None:
            grad += np.divide(self.kp, theta, out=np.zeros_like(theta), where=self.kp > 0)
        total = self.total[rows, None]
        new = theta * grad / total
        gap = grad.max(axis=1) / total[:, 0] - 1.0
        new /= new.sum(axis=1, keepdims=True)  # round-off only: θ·∇f = n + κ exactly
        return new, gap

    def gap(self, theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The per-report optimality gap certificate at θ (see the module docstring)."""
        return self.step(theta, rows)[1]

    def em(self, theta0: np.ndarray, tol: float, max_updates: int,
           rows: np.ndarray | None = None) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """SQUAREM-accelerated EM from θ0 (b, a) until gap ≤ tol or ``max_updates`` updates.

        ``rows`` says which count vectors the rows of θ0 belong to (default: all, in order).
        Returns (θ, updates used, converged (b,), gap (b,)).
        """
        theta = np.array(theta0, dtype=float, copy=True)
        b = theta.shape[0]
        rows = np.arange(b) if rows is None else np.asarray(rows)
        converged = np.zeros(b, dtype=bool)
        gap = np.full(b, np.inf)
        active = np.arange(b)
        evals = 0
        while active.size and evals < max_updates:
            t0 = theta[active]
            t1, g0 = self.step(t0, rows[active])
            evals += 1
            gap[active] = g0
            done = g0 <= tol
            converged[active[done]] = True
            keep = ~done
            active, t0, t1 = active[keep], t0[keep], t1[keep]
            if not active.size:
                break
            if evals >= max_updates:
                theta[active] = t1
                gap[active] = self.gap(t1, rows[active])
                break
            t2, _ = self.step(t1, rows[active])
            evals += 1
            # SQUAREM S3: α = −‖r‖/‖v‖ ≤ −1; α = −1 gives back t2 (two plain EM steps).
            r = t1 - t0
            v = t2 - t1 - r
            nr = np.sqrt((r * r).sum(axis=1))
            nv = np.sqrt((v * v).sum(axis=1))
            with np.errstate(divide="ignore", invalid="ignore"):
                alpha = np.where(nv > 0, -nr / nv, -1.0)
            alpha = np.minimum(alpha, -1.0)[:, None]
            tp = t0 - 2.0 * alpha * r + alpha * alpha * v
            # Infeasible extrapolations (a cell ≤ 0; EM could never revive an exact 0) step
            # back towards α = −1, which is t2 itself (Varadhan & Roland's backtracking).
            for _ in range(30):
                bad = (tp <= 0).any(axis=1)
                if not bad.any():
                    break
                alpha[bad] = (alpha[bad] - 1.0) / 2.0
                tp[bad] = t0[bad] - 2.0 * alpha[bad] * r[bad] + alpha[bad] ** 2 * v[bad]
            else:
                bad = (tp <= 0).any(axis=1)
                tp[bad] = t2[bad]
            tp /= tp.sum(axis=1, keepdims=True)
            if evals >= max_updates:
                theta[active] = t2
                gap[active] = self.gap(t2, rows[active])
                break
            t3, _ = self.step(tp, rows[active])
            evals += 1
            # Monotonicity safeguard: accept the extrapolation only if it beats plain EM.
            better = self.objective(t3, rows[active]) >= self.objective(t2, rows[active])
            theta[active] = np.where(better[:, None], t3, t2)
        return theta, evals, converged, gap

    def newton(self, row: int, theta0: np.ndarray, tol: float, max_steps: int) -> tuple[np.ndarray, int, bool, float]:
        """Primal–dual interior-point Newton method for the same maximiser (one row).

        Poisson form (no equality constraint): minimise φ(λ) = −Σ_y p_y log(Qλ)_y −
        Σ_x k̃_x log λ_x + 1ᵀλ over λ ≥ 0, with p = c/(n+κ), k̃ = k/(n+κ); its minimiser sums
        to 1 and equals the simplex maximiser of f (scale out s = 1ᵀλ: φ is minimised at
        s = 1). Newton on ∇φ − z = 0, λ_x z_x = σμ (Nocedal & Wright, ch. 19), Cholesky of
        the Jacobi-scaled (Qᵀ diag(p/π²) Q + diag(k̃/λ² + z/λ)), fraction to the boundary
        0.99, Armijo backtracking on the barrier function. Stops when the gap certificate
        at θ = λ/1ᵀλ is ≤ tol. Returns (θ, steps, converged, gap).
        """
        total = self.total[row]
        c = self.c[row]
        used = c > 0
        q = self.q[used]
        p = c[used] / total
        kk = np.zeros(q.shape[1]) if self.kp is None else self.kp / total
        a = q.shape[1]
        rows = np.array([row])

        def barrier(lam: np.ndarray, mu: float) -> float:
            with np.errstate(divide="ignore", invalid="ignore"):
                val = -p @ np.log(q @ lam) + lam.sum() - mu * np.log(lam).sum()
                if self.kp is not None:
                    val -= np.sum(np.where(kk > 0, kk * np.log(lam), 0.0))
            return float(val) if np.isfinite(val) else math.inf

        # Start strictly inside: EM leaves cells that head for 0 at tiny values, and 1/λ must
        # stay finite for the barrier terms.
        lam = np.maximum(np.asarray(theta0, dtype=float), 1e-14)
        lam = lam / lam.sum()
        g = float(self.gap(lam[None, :], rows)[0])
        z = max(g, tol) / a / lam  # μ = λ·z/|X| starts at the current gap's scale
        sigma = 0.1  # centring: aim each step at a tenth of the current μ
        steps = 0
        while g > tol and steps < max_steps:
            pi = q @ lam
            mu = float(lam @ z) / a
            qs = q * (np.sqrt(p) / pi)[:, None]
            hess = qs.T @ qs  # Qᵀ diag(p/π²) Q
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                grad = 1.0 - (p / pi) @ q - kk / lam
                hess[np.diag_indices(a)] += kk / lam**2 + z / lam
                rhs = -grad + sigma * mu / lam
            if not (np.all(np.isfinite(hess)) and np.all(np.isfinite(rhs))):
                break  # λ too close to the boundary for float64: leave it to EM
            scale = 1.0 / np.sqrt(np.diag(hess))
            try:
                chol = np.linalg.cholesky(hess * scale[:, None] * scale[None, :])
            except np.linalg.LinAlgError:
                break  # leave it to EM (the caller continues with the remaining budget)
            dl = scale * _cho_solve(chol, scale * rhs)
            dz = -z + sigma * mu / lam - (z / lam) * dl
            neg = dl < 0
            ap = min(1.0, 0.99 * float(np.min(-lam[neg] / dl[neg]))) if neg.any() else 1.0
            neg = dz < 0
            ad = min(1.0, 0.99 * float(np.min(-z[neg] / dz[neg]))) if neg.any() else 1.0
            f0 = barrier(lam, sigma * mu)
            slope = float((grad - sigma * mu / lam) @ dl)
            while barrier(lam + ap * dl, sigma * mu) > f0 + 1e-4 * ap * slope and ap > 1e-12:
                ap *= 0.5
            if ap <= 1e-12:
                break  # no descent left at float precision
            lam = lam + ap * dl
            z = z + ad * dz
            steps += 1
            g = float(self.gap((lam / lam.sum())[None, :], rows)[0])
        return lam / lam.sum(), steps, g <= tol, g

    def maximise(self, theta0: np.ndarray, tol: float, max_iter: int, newton: bool) -> _Fit:
        """EM (SQUAREM) first; if ``newton`` (the maximiser is unique: Q of full column rank,
        or a prior weight), rows EM has not certified after |X| updates (30 to 300; 2000
        for a batch of bootstrap replicates) are finished by the interior-point method, and
        whatever remains uncertified gets the rest of the ``max_iter`` budget as EM.
        Without ``newton`` (a flat likelihood, where EM's start picks the point) EM only."""
        b, a = theta0.shape
        lo, hi = EM_BEFORE_NEWTON
        budget = min(max_iter, EM_BEFORE_NEWTON_BATCH if b > 1 else max(lo, min(hi, a)))
        theta, used, converged, gap = self.em(theta0, tol, budget if newton else max_iter)
        steps = np.zeros(b, dtype=int)
        if newton and used < max_iter:
            for i in np.flatnonzero(~converged):
                theta[i], steps[i], converged[i], gap[i] = self.newton(
                    int(i), theta[i], tol, min(NEWTON_MAX_STEPS, max_iter - used))
            left = ~converged
            remaining = max_iter - used - int(steps.max(initial=0))
            if left.any() and remaining > 0:
                idx = np.flatnonzero(left)
                t, more, conv, gp = self.em(theta[idx], tol, remaining, rows=idx)
                theta[idx], converged[idx], gap[idx] = t, conv, gp
                used += more
        return _Fit(theta, used, steps, converged, gap)


def _cho_solve(chol: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    from scipy.linalg import solve_triangular

    y = solve_triangular(chol, rhs, lower=True, check_finite=False)
    return solve_triangular(chol.T, y, lower=False, check_finite=False)


# --------------------------------------------------------------------------- intervals


class _Uncertainty:
    """Everything needed for 95 % intervals of linear functionals wᵀθ (see module doc)."""

    def __init__(self, *, kind: str, theta: np.ndarray, unconstrained: np.ndarray | None,
                 covariance: np.ndarray | None, replicates: np.ndarray | None,
                 row_basis: np.ndarray | None, q: np.ndarray, box: tuple[np.ndarray, np.ndarray] | None):
        self.kind = kind
        self.theta = theta
        self.unconstrained = unconstrained
        self.covariance = covariance
        self.replicates = replicates
        self.row_basis = row_basis  # None: every functional is identifiable
        self.q = q
        self.box = box

    def identifiable(self, w: np.ndarray) -> np.ndarray:
        """Whether each row w is in the row space of Q (so wᵀθ is determined by Qθ)."""
        if self.row_basis is None:
            return np.ones(w.shape[0], dtype=bool)
        resid = w - (w @ self.row_basis) @ self.row_basis.T
        scale = np.maximum(np.abs(w).max(axis=1), 1e-300)
        return np.abs(resid).max(axis=1) <= 1e-8 * scale

    def intervals(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(estimate, low, high) of wᵀθ for each row w (k, |X|); every interval contains the
        estimate and lies within [min w, max w]."""
        value = w @ self.theta
        low = np.empty_like(value)
        high = np.empty_like(value)
        ok = self.identifiable(w)
        if ok.any():
            wi = w[ok]
            val = value[ok]
            if self.kind == "delta":
                var = np.einsum("ka,ka->k", wi @ self.covariance, wi)
                sd = np.sqrt(np.maximum(var, 0.0))
                centre_lo, centre_hi = val, val
                if self.unconstrained is not None:
                    raw = wi @ self.unconstrained
                    centre_lo, centre_hi = np.minimum(val, raw), np.maximum(val, raw)
                low[ok] = centre_lo - Z95 * sd
                high[ok] = centre_hi + Z95 * sd
            else:
                reps = self.replicates @ wi.T  # (B, k)
                qlo, qhi = np.quantile(reps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
                low[ok] = np.minimum(qlo, val)
                high[ok] = np.maximum(qhi, val)
        if (~ok).any():
            low[~ok], high[~ok] = self._lp_bounds(w[~ok])
        # Solver tolerances (HiGHS: ~1e-9) must not push the estimate outside its interval.
        low, high = np.minimum(low, value), np.maximum(high, value)
        lo_lim, hi_lim = w.min(axis=1), w.max(axis=1)
        return value, np.clip(low, lo_lim, hi_lim), np.clip(high, lo_lim, hi_lim)

    def _lp_bounds(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """min / max of wᵀθ over {θ ∈ simplex : lo ≤ Qθ ≤ hi} (partial identification)."""
        from scipy.optimize import linprog

        lo, hi = self.box
        a = self.q.shape[1]
        upper = hi < 1.0
        lower = lo > 0.0
        a_ub = np.vstack([self.q[upper], -self.q[lower]])
        b_ub = np.concatenate([hi[upper], -lo[lower]])
        if a_ub.shape[0] == 0:
            a_ub, b_ub = None, None
        a_eq, b_eq = np.ones((1, a)), np.ones(1)
        out_lo = w.min(axis=1).astype(float)
        out_hi = w.max(axis=1).astype(float)
        for k, row in enumerate(w):
            for sign, out in ((1.0, out_lo), (-1.0, out_hi)):
                res = linprog(sign * row, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                              method="highs")
                if res.status == 0:  # otherwise keep the trivial bound (never a tighter claim)
                    out[k] = sign * res.fun
        return out_lo, out_hi


def _weights(weights: Any, a: int, shape: tuple[int, int]) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"weights must be a numeric array; {exc}") from None
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contains NaN or infinite entries")
    if w.shape == shape or w.shape == (a,):
        return w.reshape(1, a)
    if w.ndim == 3 and w.shape[1:] == shape:
        return w.reshape(w.shape[0], a)
    if w.ndim == 2 and w.shape[1] == a:
        return w
    raise ValueError(f"weights must have shape (k, {a}), (k, {shape[0]}, {shape[1]}) or one such row; got {w.shape}")


# --------------------------------------------------------------------------- result


def _json(arr: np.ndarray) -> Any:
    arr = np.asarray(arr, dtype=float)
    return np.where(np.isfinite(arr), arr, None).astype(object).tolist() if arr.ndim else (
        float(arr) if np.isfinite(arr) else None)


def _json_field(key: str, value: Any) -> Any:
    if key == "labels":
        return list(value)
    if key == "identified":
        return np.asarray(value, dtype=bool).tolist()
    return _json(value)


@dataclass(frozen=True, eq=False)
class Estimate:
    """An estimate of P_X from n reports, with 95 % intervals (see the module docstring).

    ``joint[s, u]`` is the estimated P(S = s, U = u) (the document's s-major order) and sums
    to 1; ``ci95_low`` / ``ci95_high`` bound each cell. ``method`` is the estimator used
    ("em" or "inverse"), ``interval`` how the intervals were made ("delta" or "bootstrap").
    ``identifiable`` is False when Q is rank deficient: ``joint`` is then one of many
    distributions that fit the reports equally well (``fitted`` = Qθ̂ is what the data
    determine) and intervals of non-identifiable quantities are partial-identification
    bounds. ``iterations`` counts EM updates plus interior-point steps (0 for "inverse");
    ``converged`` is False if ``max_iter`` was reached before the optimality gap ``gap``
    (nats per report) reached ``tol`` — the estimate is then still a distribution, only
    not certified to be the maximum-likelihood one.
    """

    n: int
    joint: np.ndarray
    ci95_low: np.ndarray
    ci95_high: np.ndarray
    method: str
    identifiable: bool
    iterations: int
    converged: bool
    interval: str = "delta"
    rank: int = 0
    fitted: np.ndarray | None = None  # (|Y|,) implied P_Y = Qθ̂
    log_likelihood: float = math.nan  # Σ_y c_y log (Qθ̂)_y, nats
    gap: float = 0.0  # per-report optimality gap certificate at the estimate (EM), nats
    newton_steps: int = 0  # of ``iterations``, how many were interior-point steps
    prior_weight: float = 0.0
    bootstrap_converged: float | None = None  # share of bootstrap re-fits that converged
    _uncertainty: _Uncertainty | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(|S|, |U|)."""
        return tuple(self.joint.shape)  # type: ignore[return-value]

    @property
    def covariance(self) -> np.ndarray | None:
        """Asymptotic covariance of the flattened joint (``interval == "delta"``), (|X|, |X|).

        Meaningful only for identifiable functionals (all of them when ``identifiable``).
        """
        return None if self._uncertainty is None else self._uncertainty.covariance

    @property
    def replicates(self) -> np.ndarray | None:
        """Bootstrap re-estimates of the flattened joint (``interval == "bootstrap"``), (B, |X|)."""
        return None if self._uncertainty is None else self._uncertainty.replicates

    def linear(self, weights: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimate and 95 % interval of the functionals Σ_x w_x θ_x, one per row of ``weights``.

        ``weights`` has shape (k, |X|), (k, |S|, |U|) or is a single such row. Returns
        (estimate, low, high), each of shape (k,). Same interval method as the cells.
        """
        if self._uncertainty is None:
            raise ValueError("this Estimate carries no uncertainty information")
        return self._uncertainty.intervals(_weights(weights, self.joint.size, self.shape))

    def identified(self, weights: Any) -> np.ndarray:
        """Whether each functional Σ_x w_x θ_x is identifiable (w in the row space of Q).

        Its interval is then a delta-method or bootstrap interval; otherwise it is a
        partial-identification bound (see the module docstring). All True when
        ``identifiable``.
        """
        if self._uncertainty is None:
            raise ValueError("this Estimate carries no uncertainty information")
        return self._uncertainty.identifiable(_weights(weights, self.joint.size, self.shape))

    def marginals(self, alphabet: Alphabet | None = None) -> dict[str, dict[str, Any]]:
        """Marginal distributions with 95 % intervals.

        Without an alphabet: ``{"sensitive": {...}, "U": {...}}`` (U = all released
        attributes together). With one: keyed by attribute name — the sensitive attribute
        and each released attribute separately (U is their product, last fastest) — each
        entry also carrying its ``labels``. Each entry holds numpy arrays ``estimate``,
        ``ci95_low``, ``ci95_high`` and ``identified`` (see :meth:`identified`).
        """
        a1, a2 = self.shape
        a = a1 * a2
        s_of_x, u_of_x = np.divmod(np.arange(a), a2)
        groups: list[tuple[str, np.ndarray, int, list[str] | None]]
        if alphabet is None:
            groups = [("sensitive", s_of_x, a1, None), ("U", u_of_x, a2, None)]
        else:
            self._check_alphabet(alphabet)
            groups = [(alphabet.sensitive.name, s_of_x, a1, list(alphabet.sensitive.values))]
            sizes = [attr.size for attr in alphabet.released]
            if sizes:
                codes = np.unravel_index(u_of_x, sizes)  # C order: last attribute fastest
                for attr, code in zip(alphabet.released, codes, strict=True):
                    groups.append((attr.name, code, attr.size, list(attr.values)))
        out: dict[str, dict[str, Any]] = {}
        for name, code, size, labels in groups:
            w = (code[None, :] == np.arange(size)[:, None]).astype(float)
            est, low, high = self.linear(w)
            entry: dict[str, Any] = {"estimate": est, "ci95_low": low, "ci95_high": high,
                                     "identified": self.identified(w)}
            if labels is not None:
                entry["labels"] = labels
            out[name] = entry
        return out

    def _check_alphabet(self, alphabet: Alphabet) -> None:
        if not isinstance(alphabet, Alphabet):
            raise ValueError(f"alphabet must be an rldp Alphabet; got {type(alphabet).__name__}")
        if alphabet.shape != self.shape:
            raise ValueError(f"alphabet has shape {alphabet.shape} (|S|, |U|) but the estimate has {self.shape}")

    def to_dict(self, alphabet: Alphabet | None = None) -> dict[str, Any]:
        """JSON-ready form (plain lists and floats; non-finite numbers become None).

        ``{"n", "joint", "marginals", "ci95": {"low", "high", "level", "method", "identified"},
        "method", "identifiable", "rank", "iterations", "converged", "gap", "log_likelihood",
        "prior_weight", "fitted"}`` (bootstrap adds ``ci95.replicates`` and
        ``ci95.replicates_converged``); with an alphabet, marginals are
        keyed by attribute name and ``labels`` names the rows (sensitive values) and
        columns (U values, released attributes joined by "|") of ``joint``.
        """
        marg = self.marginals(alphabet)
        out: dict[str, Any] = {
            "n": int(self.n),
            "joint": _json(self.joint),
            "marginals": {name: {k: _json_field(k, v) for k, v in entry.items()} for name, entry in marg.items()},
            "ci95": {"low": _json(self.ci95_low), "high": _json(self.ci95_high), "level": LEVEL,
                     "method": self.interval,
                     "identified": self.identified(np.eye(self.joint.size)).reshape(self.shape).tolist()},
            "method": self.method,
            "identifiable": bool(self.identifiable),
            "rank": int(self.rank),
            "iterations": int(self.iterations),
            "converged": bool(self.converged),
            "gap": _json(np.asarray(self.gap)),
            "log_likelihood": _json(np.asarray(self.log_likelihood)),
            "prior_weight": float(self.prior_weight),
        }
        if self.fitted is not None:
            out["fitted"] = _json(self.fitted)
        if self.replicates is not None:
            out["ci95"]["replicates"] = int(self.replicates.shape[0])
            out["ci95"]["replicates_converged"] = self.bootstrap_converged
        if alphabet is not None:
            u_labels = ["|".join(rec[1:]) for rec in alphabet.decode(np.arange(self.shape[1]))]
            out["labels"] = {
                "sensitive": {"name": alphabet.sensitive.name, "values": list(alphabet.sensitive.values)},
                "released": {"names": [attr.name for attr in alphabet.released], "values": u_labels},
            }
        return out


# --------------------------------------------------------------------------- estimation


def _row_space(q: np.ndarray) -> tuple[int, np.ndarray, np.ndarray | None]:
    """(rank, orthonormal basis of the row space of Q as columns (|X|, rank), Q⁺ or None).

    One SVD serves both: Q⁺ = V Σ⁻¹ Uᵀ is returned when Q has full column rank.
    """
    u, sv, vt = np.linalg.svd(q, full_matrices=False)
    rank = int(np.count_nonzero(sv > RANK_RTOL * sv[0])) if sv.size and sv[0] > 0 else 0
    pinv = (vt.T / sv) @ u.T if rank == q.shape[1] else None
    return rank, vt[:rank].T, pinv


def _clopper_pearson_box(counts: np.ndarray, fitted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous 95 % box for P_Y: Clopper–Pearson at 1 − 0.05/|Y| per output, ∪ fitted."""
    from scipy.stats import beta

    n = counts.sum()
    alpha = (1.0 - LEVEL) / counts.size
    with np.errstate(invalid="ignore"):
        lo = np.where(counts > 0, beta.ppf(alpha / 2, counts, n - counts + 1), 0.0)
        hi = np.where(counts < n, beta.ppf(1 - alpha / 2, counts + 1, n - counts), 1.0)
    return np.minimum(np.nan_to_num(lo, nan=0.0), fitted), np.maximum(np.nan_to_num(hi, nan=1.0), fitted)


def _tangent_basis(row_basis: np.ndarray) -> np.ndarray:
    """Orthonormal basis (|X|, rank − 1) of {v ∈ rowspace(Q) : Σ v = 0}: the identifiable
    directions of motion inside the simplex (all of 1⊥ when Q has full column rank)."""
    centred = row_basis - row_basis.mean(axis=0, keepdims=True)  # (1 − 11ᵀ/|X|) R
    u, sv, _ = np.linalg.svd(centred, full_matrices=False)
    k = int(np.count_nonzero(sv > 1e-9 * sv[0])) if sv.size and sv[0] > 0 else 0
    return u[:, :k]


def _em_covariance(q: np.ndarray, theta: np.ndarray, n: float, row_basis: np.ndarray,
                   identifiable: bool) -> np.ndarray:
    """Inverse Fisher information of the multinomial likelihood on the simplex, / n.

    I = Qᵀ diag(1/π) Q with π = max(Qθ, 1/n). Full column rank: I is positive definite and
    the constraint 1ᵀθ = 1 gives V = (I⁻¹ − I⁻¹11ᵀI⁻¹ / 1ᵀI⁻¹1) / n (one Cholesky; for Q = 1
    this is the multinomial (diag θ − θθᵀ)/n). Otherwise V = B (Bᵀ I B)⁻¹ Bᵀ / n with B an
    orthonormal basis of the identifiable tangent directions (:func:`_tangent_basis`), so
    wᵀVw is the asymptotic variance of wᵀθ̂ for every identifiable w.
    """
    pi = np.maximum(q @ theta, 1.0 / n)
    scaled = q / np.sqrt(pi)[:, None]  # diag(π)^−½ Q
    if identifiable:
        try:
            chol = np.linalg.cholesky(scaled.T @ scaled)
        except np.linalg.LinAlgError:  # numerically singular: the basis route below is exact
            pass
        else:
            inv = _cho_solve(chol, np.eye(theta.size))
            v1 = inv.sum(axis=1)
            return (inv - np.outer(v1, v1) / v1.sum()) / n
    basis = _tangent_basis(row_basis)
    if basis.shape[1] == 0:
        return np.zeros((theta.size, theta.size))
    qb = scaled @ basis
    return basis @ np.linalg.solve(qb.T @ qb, basis.T) / n


def estimate_distribution(matrix: np.ndarray, counts: np.ndarray, shape: tuple[int, int], *,
                          method: str = "auto", prior: np.ndarray | None = None,
                          interval: str = "delta", tol: float = 1e-10, max_iter: int = 10_000,
                          rng: np.random.Generator | None = None, prior_weight: float = 0.0,
                          n_bootstrap: int = DEFAULT_BOOTSTRAP) -> Estimate:
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
    bounds the number of EM updates (then ``converged`` is False).

    Raises ValueError naming the bad parameter; "no reports yet" when every count is 0.
    """
    q = _validate_matrix(matrix)
    n_out, a = q.shape
    shape = _validate_shape(shape, a)
    c = _validate_counts(counts, n_out)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}")
    if not isinstance(tol, numbers.Real) or not math.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a finite number > 0 (nats per report); got {tol!r}")
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    if not isinstance(prior_weight, numbers.Real) or not math.isfinite(prior_weight) or prior_weight < 0:
        raise ValueError(f"prior_weight must be a finite number ≥ 0 (pseudo-reports); got {prior_weight!r}")
    if prior_weight > 0 and prior is None:
        raise ValueError("prior_weight > 0 needs a prior (the public distribution P̂)")
    if interval == "bootstrap" and (not isinstance(n_bootstrap, numbers.Integral) or isinstance(n_bootstrap, bool)
                                    or n_bootstrap < 2):
        raise ValueError(f"n_bootstrap must be an integer ≥ 2; got {n_bootstrap!r}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)); got {type(rng).__name__}")
    p0 = _validate_prior(prior, shape) if prior is not None else None
    impossible = (c > 0) & (q.sum(axis=1) == 0)
    if impossible.any():
        y = int(np.argmax(impossible))
        raise ValueError(f"counts[{y}] = {int(c[y])} but Q(y={y}|x) = 0 for every x: these reports cannot come "
                         "from this mechanism")
    with _small_linear_algebra(a):
        return _estimate(q, c, shape, method, p0, interval, float(tol), int(max_iter), rng, float(prior_weight),
                         int(n_bootstrap) if interval == "bootstrap" else 0)


_BLAS_LOCK = threading.Lock()
_BLAS_STATE: dict[str, Any] = {"users": 0, "limiter": None}


@contextmanager
def _small_linear_algebra(a: int) -> Iterator[None]:
    """One BLAS thread while estimating over a small alphabet.

    The dense algebra here is |X| × |X| (SVD, Cholesky, Newton systems): at |X| ≲ 500 a
    second BLAS thread saves nothing, and on a host whose cores are shared (several
    service workers, other jobs) OpenBLAS's spinning threads make each call 5-50× slower
    (measured with bench/bench_estimate.py: 0.65 s → 0.16 s for 10⁷ reports at |X| = 240
    on 2 busy cores). threadpoolctl (the limiter scikit-learn uses) sets the limit; it is
    process-wide, so concurrent estimates share one limit, set by the first to enter and
    restored by the last to leave. Without threadpoolctl this is a no-op.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only a speed-up
        threadpool_limits = None
    if a > SMALL_ALPHABET or threadpool_limits is None:
        yield
        return
    import scipy.linalg  # noqa: F401  (load scipy's BLAS so that the limit covers it too)

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


def _estimate(q: np.ndarray, c: np.ndarray, shape: tuple[int, int], method: str, p0: np.ndarray | None,
              interval: str, tol: float, max_iter: int, rng: np.random.Generator | None, prior_weight: float,
              n_bootstrap: int) -> Estimate:
    """The work of :func:`estimate_distribution` on validated inputs."""
    a = q.shape[1]
    n = float(c.sum())
    rank, basis, pinv = _row_space(q)
    identifiable = rank == a
    used = "em" if method in ("auto", "em") else "inverse"
    # One maximiser (so the interior-point finish cannot change the answer) when Q has full
    # column rank or the prior's log-term makes the objective strictly concave on the cells
    # it covers.
    unique = identifiable or (prior_weight > 0 and p0 is not None and bool(np.all(p0 > 0)))

    raw = None
    em_updates = newton_steps = 0
    converged, gap = True, 0.0
    if used == "inverse":
        if not identifiable:
            raise ValueError(
                f"the inverse estimator needs Q of full column rank; this mechanism has rank {rank} < |X| = {a} "
                "(P_X is not identifiable from the reports); use method='em'")
        raw = pinv @ (c / n)
        theta = project_simplex(raw)
    else:
        uniform = np.full(a, 1.0 / a)
        # 1 % uniform keeps every cell positive: EM can never move mass into an exact 0.
        start = uniform if p0 is None else 0.99 * p0 + 0.01 * uniform
        fit = _Likelihood(q, c[None, :], p0, prior_weight).maximise(start[None, :], tol, max_iter, unique)
        theta = fit.theta[0]
        em_updates, newton_steps = fit.em_updates, int(fit.newton_steps[0])
        converged, gap = bool(fit.converged[0]), float(fit.gap[0])

    fitted = q @ theta
    with np.errstate(divide="ignore"):
        loglik = float(np.sum(np.where(c > 0, c * np.log(np.where(c > 0, fitted, 1.0)), 0.0)))

    covariance = replicates = None
    boot_converged = None
    if interval == "delta":
        if used == "inverse":
            pi = fitted / fitted.sum()
            covariance = pinv @ ((np.diag(pi) - np.outer(pi, pi)) / n) @ pinv.T
        else:
            covariance = _em_covariance(q, theta, n, basis, identifiable)
    else:
        rng = rng if rng is not None else np.random.default_rng()
        pi = np.maximum(fitted, 0.0)
        boot = rng.multinomial(int(round(n)), pi / pi.sum(), size=int(n_bootstrap)).astype(float)
        if used == "inverse":
            replicates = project_simplex((boot / n) @ pinv.T)
        else:
            if identifiable:
                # Linearised replicate θ̂ + Q⁺(c*/n − Qθ̂): exact for an interior MLE of square Q,
                # a close start otherwise; mixed with θ̂ and uniform so that no cell is 0.
                lin = project_simplex(theta + (boot / n - fitted) @ pinv.T)
                starts = 0.9 * lin + 0.09 * theta + 0.01 / a
            else:
                # Same start as the main fit: the replicates must land on the same branch of the
                # flat likelihood (only identifiable functionals use them anyway).
                starts = np.tile(start, (boot.shape[0], 1))
            bfit = _Likelihood(q, boot, p0, prior_weight).maximise(starts, tol, max_iter, unique)
            replicates = bfit.theta
            boot_converged = float(bfit.converged.mean())

    box = None if identifiable else _clopper_pearson_box(c, fitted)
    unc = _Uncertainty(kind=interval, theta=theta, unconstrained=raw, covariance=covariance, replicates=replicates,
                       row_basis=None if identifiable else basis, q=q, box=box)
    _, low, high = unc.intervals(np.eye(a))
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
