"""Maximum likelihood over the probability simplex: EM with the Qᵀ update, SQUAREM, Newton polish.

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
not certified convergence after |X| updates (30 to 300; 100 above 512 symbols), a primal–dual interior-point
Newton method on the same likelihood finishes the job (typically 3-20 steps; see
:meth:`Likelihood.newton`). With full column rank the maximiser is unique, so this changes
the running time, not the answer; the same gap certificate decides.

With ``prior_weight = κ > 0`` the update becomes the MAP-EM update of a Dirichlet prior
with κ pseudo-reports distributed as the public P̂ (``prior``):
θ_x ← (θ_x g_x n + κ P̂_x) / (n + κ) (regularisation towards P̂; the gap above is then
computed for the penalised objective ℓ(θ) + κ Σ_x P̂_x log θ_x).

Where EM starts, and identifiability
------------------------------------
If Q has full column rank, the likelihood has a unique maximiser (it is strictly concave
in θ as soon as the rows of the observed outputs have full column rank, e.g. for every
mechanism with positive entries), so EM converges to the same MLE whether started from
the uniform distribution or from the public P̂ (``prior``); the start only changes the
number of iterations. If Q is rank deficient (often the case for PolyOpt, whose outputs
are the vertices of a cone and can be fewer than |X| or linearly dependent) the
likelihood is flat along null(Q): every θ with the same Qθ fits the reports equally well,
and EM returns one of them, which depends on the start (uniform, or ``prior``): this case
runs EM only, so that the point is the one EM reaches from that start. A
``prior_weight`` > 0 with a prior that is positive everywhere removes the ambiguity: the
penalised objective is strictly concave, its maximiser (the MAP) is unique and gets the
interior-point finish.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .linalg import SMALL_ALPHABET, cho_solve, scaled_cholesky, weighted_gram
from .newton_system import reduced_newton_direction

__all__ = [
    "Fit",
    "Likelihood",
    "EM_BEFORE_NEWTON",
    "EM_BEFORE_NEWTON_LARGE",
    "EM_BEFORE_NEWTON_BATCH",
    "NEWTON_MAX_STEPS",
]

# EM gets |X| updates (within these bounds) before the interior-point finish: a Newton
# step costs ~|X|²|Y| flops against |X||Y| for an EM update.
EM_BEFORE_NEWTON = (30, 300)
# Above SMALL_ALPHABET at most this many: there each EM update reads all of Q from memory
# (tens of ms at 4,000 symbols) and starting the Newton finish after 100 rather than 300
# updates cost no extra Newton step (GRR at ε = 1, 10⁷ reports, 1,000 and 2,000 symbols:
# 3 and 5 steps either way, 30-40 % less time; the same maximiser to 3·10⁻⁹).
EM_BEFORE_NEWTON_LARGE = 100
# Bootstrap re-fits run EM vectorised over all replicates, far cheaper per update than
# the per-replicate Newton loop, so they get a larger EM budget first.
EM_BEFORE_NEWTON_BATCH = 2000
NEWTON_MAX_STEPS = 100  # interior-point steps at most (typically 3-20)


@dataclass
class Fit:
    """The maximisers of a :class:`Likelihood`, one row per count vector."""

    theta: np.ndarray  # (B, a)
    em_updates: int  # EM map evaluations (the largest over rows)
    newton_steps: np.ndarray  # (B,) interior-point steps per row
    converged: np.ndarray  # (B,) bool
    gap: np.ndarray  # (B,) per-report optimality gap at theta


class Likelihood:
    """The (penalised) multinomial log-likelihood of B count vectors, and its maximisers.

    f(θ) = Σ_y c_y log (Qθ)_y + Σ_x k_x log θ_x with k = κ P̂ (k = 0 without a prior).
    """

    def __init__(self, q: np.ndarray, counts: np.ndarray, prior: np.ndarray | None, prior_weight: float) -> None:
        used = counts.any(axis=0)  # outputs nobody reported contribute nothing
        self.q = q if used.all() else np.ascontiguousarray(q[used])  # (m, a): no copy when every y was seen
        # Qᵀ laid out for the row-vector products; above SMALL_ALPHABET a view (a K × K copy
        # would cost more memory than the layout saves time).
        self.qt = np.ascontiguousarray(self.q.T) if q.shape[1] <= SMALL_ALPHABET else self.q.T  # (a, m)
        self.c = counts[:, used]  # (B, m)
        self.n = self.c.sum(axis=1)  # (B,)
        self.kp = float(prior_weight) * prior if (prior is not None and prior_weight > 0) else None  # (a,)
        self.total = self.n + float(prior_weight if self.kp is not None else 0.0)  # (B,)

    def objective(self, theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """f(θ) per row (nats); outputs with c_y = 0 and cells with k_x = 0 contribute 0."""
        return self._objective_at(theta @ self.qt, theta, rows)

    def _objective_at(self, pi: np.ndarray, theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`objective` given ``pi`` = (Qθ)ᵀ (b, m)."""
        c = self.c[rows]
        logs = np.log(pi, out=np.zeros_like(pi), where=c > 0)
        val = (c * logs).sum(axis=1)
        if self.kp is not None:
            val = val + (self.kp * np.log(theta, out=np.zeros_like(theta), where=self.kp > 0)).sum(axis=1)
        return val

    def step(self, theta: np.ndarray, rows: np.ndarray, pi: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One (MAP-)EM update θ ← θ ⊙ ∇f / (n + κ) for the given rows.

        ``pi``: (Qθ)ᵀ if the caller has it already (the very product ``theta @ self.qt``), else computed.
        Returns (new θ, gap at the input θ) with gap = max_x ∇f_x / (n + κ) − 1.
        """
        pi = theta @ self.qt if pi is None else pi  # (b, m) = (Qθ)ᵀ
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

    def em(
        self, theta0: np.ndarray, tol: float, max_updates: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
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
        # (Qθ)ᵀ of the active rows of θ when the safeguard below computed it (the same product, so the
        # same bits): one product with Q fewer per extrapolation, the costly step at large |X|.
        known: np.ndarray | None = None
        while active.size and evals < max_updates:
            t0 = theta[active]
            t1, g0 = self.step(t0, rows[active], known)
            known = None
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
            tp = _squarem_point(t0, t1, t2)
            if evals >= max_updates:
                theta[active] = t2
                gap[active] = self.gap(t2, rows[active])
                break
            t3, _ = self.step(tp, rows[active])
            evals += 1
            # Monotonicity safeguard: accept the extrapolation only if it beats plain EM.
            pi3, pi2 = t3 @ self.qt, t2 @ self.qt
            better = self._objective_at(pi3, t3, rows[active]) >= self._objective_at(pi2, t2, rows[active])
            theta[active] = np.where(better[:, None], t3, t2)
            known = np.where(better[:, None], pi3, pi2)
        return theta, evals, converged, gap

    def newton(self, row: int, theta0: np.ndarray, tol: float, max_steps: int) -> tuple[np.ndarray, int, bool, float]:
        """Primal–dual interior-point Newton method for the same maximiser (one row).

        Poisson form (no equality constraint): minimise φ(λ) = −Σ_y p_y log(Qλ)_y −
        Σ_x k̃_x log λ_x + 1ᵀλ over λ ≥ 0, with p = c/(n+κ), k̃ = k/(n+κ); its minimiser sums
        to 1 and equals the simplex maximiser of f (scale out s = 1ᵀλ: φ is minimised at
        s = 1). Newton on ∇φ − z = 0, λ_x z_x = σμ (Nocedal & Wright, ch. 19), Cholesky of
        the Jacobi-scaled (Qᵀ diag(p/π²) Q + diag(k̃/λ² + z/λ)), fraction to the boundary
        0.99, Armijo backtracking on the barrier function. Stops when the gap certificate
        at θ = λ/1ᵀλ is ≤ tol. Returns (θ, steps, converged, gap). Above SMALL_ALPHABET the
        same system is first solved by conjugate gradients preconditioned with the factor of
        the cells not bound for 0 (:mod:`.newton_system`: the same iterates, without the
        |X| × |X| matrix), and factored in full only when that does not pay.
        """
        total = self.total[row]
        c = self.c[row]
        used = c > 0
        q = self.q if used.all() else self.q[used]
        p = c[used] / total
        kk = np.zeros(q.shape[1]) if self.kp is None else self.kp / total
        a = q.shape[1]
        rows = np.array([row])
        barrier = _Barrier(q, p, kk, self.kp is not None)
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
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                grad = 1.0 - (p / pi) @ q - kk / lam
                dvec = kk / lam**2 + z / lam
                rhs = -grad + sigma * mu / lam
            dl = _newton_direction(q, p, pi, dvec, rhs)
            if dl is None:
                break  # λ too close to the boundary for float64, or not positive definite: leave it to EM
            dz = -z + sigma * mu / lam - (z / lam) * dl
            ap, ad = _to_boundary(lam, dl), _to_boundary(z, dz)
            ap = _backtrack(barrier, lam, dl, grad, sigma * mu, ap, pi)
            if ap <= 1e-12:
                break  # no descent left at float precision
            lam = lam + ap * dl
            z = z + ad * dz
            steps += 1
            g = float(self.gap((lam / lam.sum())[None, :], rows)[0])
        return lam / lam.sum(), steps, g <= tol, g

    def maximise(self, theta0: np.ndarray, tol: float, max_iter: int, newton: bool) -> Fit:
        """EM (SQUAREM) first; if ``newton`` (the maximiser is unique: Q of full column rank,
        or a prior weight), rows EM has not certified after |X| updates (30 to 300, 100 above SMALL_ALPHABET; 2000
        for a batch of bootstrap replicates) are finished by the interior-point method, and
        whatever remains uncertified gets the rest of the ``max_iter`` budget as EM.
        Without ``newton`` (a flat likelihood, where EM's start picks the point) EM only."""
        b, a = theta0.shape
        lo, hi = EM_BEFORE_NEWTON
        hi = hi if a <= SMALL_ALPHABET else min(hi, EM_BEFORE_NEWTON_LARGE)
        budget = min(max_iter, EM_BEFORE_NEWTON_BATCH if b > 1 else max(lo, min(hi, a)))
        theta, used, converged, gap = self.em(theta0, tol, budget if newton else max_iter)
        steps = np.zeros(b, dtype=int)
        if newton and used < max_iter:
            for i in np.flatnonzero(~converged):
                theta[i], steps[i], converged[i], gap[i] = self.newton(
                    int(i), theta[i], tol, min(NEWTON_MAX_STEPS, max_iter - used)
                )
            left = ~converged
            remaining = max_iter - used - int(steps.max(initial=0))
            if left.any() and remaining > 0:
                idx = np.flatnonzero(left)
                t, more, conv, gp = self.em(theta[idx], tol, remaining, rows=idx)
                theta[idx], converged[idx], gap[idx] = t, conv, gp
                used += more
        return Fit(theta, used, steps, converged, gap)


def _squarem_point(t0: np.ndarray, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """The SQUAREM S3 extrapolation from two EM steps t0 → t1 → t2, backtracked until feasible, normalised."""
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
    return tp


class _Barrier:
    """The barrier function of :meth:`Likelihood.newton`: φ(λ) − μ Σ_x log λ_x (∞ where not finite)."""

    def __init__(self, q: np.ndarray, p: np.ndarray, kk: np.ndarray, prior: bool) -> None:
        self.q, self.p, self.kk, self.prior = q, p, kk, prior

    def __call__(self, lam: np.ndarray, mu: float, pi: np.ndarray | None = None) -> float:
        """Its value at λ for the barrier weight μ (``pi``: Qλ if the caller has that product already)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            val = -self.p @ np.log(self.q @ lam if pi is None else pi) + lam.sum() - mu * np.log(lam).sum()
            if self.prior:
                val -= np.sum(np.where(self.kk > 0, self.kk * np.log(lam), 0.0))
        return float(val) if np.isfinite(val) else math.inf


def _newton_direction(
    q: np.ndarray, p: np.ndarray, pi: np.ndarray, dvec: np.ndarray, rhs: np.ndarray
) -> np.ndarray | None:
    """The Newton step dλ of (Qᵀ diag(p/π²) Q + diag(dvec)) dλ = rhs, or None when float64 cannot give it."""
    a = q.shape[1]
    dl = None
    if a > SMALL_ALPHABET and np.all(np.isfinite(dvec)) and np.all(np.isfinite(rhs)):
        # Most cells bound for 0: CG preconditioned by the factor of the other cells' block.
        dl = reduced_newton_direction(q, p / pi**2, dvec, rhs)
    if dl is None:
        hess = weighted_gram(q, np.sqrt(p) / pi)  # Qᵀ diag(p/π²) Q (lower triangle above SMALL_ALPHABET)
        hess[np.diag_indices(a)] += dvec
        if not (np.all(np.isfinite(hess)) and np.all(np.isfinite(rhs))):
            return None  # λ too close to the boundary for float64
        scale = 1.0 / np.sqrt(np.diag(hess))
        chol = scaled_cholesky(hess, scale)
        if chol is None:
            return None  # not positive definite
        dl = scale * cho_solve(chol, scale * rhs)
        del chol, hess  # before the next step's K × K arrays exist
    return dl


def _to_boundary(x: np.ndarray, dx: np.ndarray) -> float:
    """The step along dx that keeps x > 0: fraction to the boundary 0.99, at most 1."""
    neg = dx < 0
    return min(1.0, 0.99 * float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0


def _backtrack(
    barrier: _Barrier, lam: np.ndarray, dl: np.ndarray, grad: np.ndarray, mu: float, ap: float, pi: np.ndarray
) -> float:
    """The step along dλ after Armijo backtracking on the barrier function (weight ``mu``) from ``ap``
    (``pi`` = Qλ, computed by the caller)."""
    f0 = barrier(lam, mu, pi)
    slope = float((grad - mu / lam) @ dl)
    while barrier(lam + ap * dl, mu) > f0 + 1e-4 * ap * slope and ap > 1e-12:
        ap *= 0.5
    return ap
