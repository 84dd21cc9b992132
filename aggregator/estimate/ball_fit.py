"""min over the Rényi ball F of f(P) = KL(q̂ ‖ QP) (and within F's box when it has one, a pilot's): the drift
test's constrained fit, and its certificate.

:func:`ball_fit` returns a point of F near the minimiser; :func:`certified_lower_bound` turns *any*
point into a lower bound of min_F f (so the drift statistic is never overstated, whatever the solver
did). The solver is a log-barrier interior-point method (Boyd & Vandenberghe, Convex Optimization,
§11.3) on the convex form of the constraint, c(P) ≤ 0 with

    c = Σ P̂^α P^{1−α} − e^{(α−1)B}   (α > 1),   Σ P̂ log(P̂/P) − B   (α = 1),   e^{(α−1)B} − Σ P̂^α P^{1−α}   (α < 1),

each convex in P (D_α's sublevel sets are convex [vEH14, Thm 12]); Newton steps on
t·f − log(−c) − Σ log(P_x − ℓ_x) − Σ log(u_x − P_x) with Σ P = 1 (ℓ = 0 and no upper side without a
box), t growing until the barrier's duality gap m/t (m: the number of inequalities) is
far below 1/n. Each step forms Qᵀ diag(q̂/π²) Q (|Y|·|X|² work): beyond :data:`NEWTON_MAX_WORK` the
fit is the last point of F on the segment from P̂ towards a given target (the estimate) instead —
still a valid point, only a looser bound, i.e. less power.
"""

from __future__ import annotations

import math

import numpy as np

from rldp.shared.uncertainty import UncertaintySet

from .linalg import small_linear_algebra

__all__ = ["NEWTON_MAX_WORK", "kl_terms", "kl_value", "certified_lower_bound", "ball_fit"]

#: |Y|·|X|² above which the interior-point fit is replaced by the segment P̂ → target.
NEWTON_MAX_WORK = 1 << 27


def kl_terms(qhat: np.ndarray, q: np.ndarray, p: np.ndarray) -> tuple[float, np.ndarray]:
    """f(P) = KL(q̂ ‖ QP) over the outputs seen, and its gradient −Qᵀ(q̂/QP) (f = inf off its domain)."""
    pi = q @ p
    seen = qhat > 0
    if np.any(pi[seen] <= 0):
        return math.inf, np.zeros_like(p)
    value = float(np.sum(qhat[seen] * (np.log(qhat[seen]) - np.log(pi[seen]))))
    ratio = np.zeros_like(pi)
    ratio[seen] = qhat[seen] / pi[seen]
    return value, -(q.T @ ratio)


def kl_value(qhat: np.ndarray, q: np.ndarray, p: np.ndarray) -> float:
    """f(P) of :func:`kl_terms` alone (the same arithmetic), without the gradient's product with Qᵀ."""
    pi = q @ p
    seen = qhat > 0
    if np.any(pi[seen] <= 0):
        return math.inf
    return float(np.sum(qhat[seen] * (np.log(qhat[seen]) - np.log(pi[seen]))))


def certified_lower_bound(qhat: np.ndarray, q: np.ndarray, p: np.ndarray, ball: UncertaintySet) -> float:
    """f(P) + min_{R ∈ F} ∇f(P)·(R − P) ≤ min_F f for any P (convexity); the inner min is the ball's
    support function (the audit's Lagrange search), rounded down; never below 0 (f ≥ 0)."""
    value, grad = kl_terms(qhat, q, p)
    if not math.isfinite(value):
        return 0.0
    _, low = ball.extremes(grad.reshape(1, 1, -1))
    return max(0.0, value + float(low[0, 0]) - float(grad @ p))


class _Constraint:
    """c(P) ≤ 0, the convex form of D_α(P̂ ‖ P) ≤ B (module docstring), with its derivatives."""

    def __init__(self, p_hat: np.ndarray, radius: float, order: float) -> None:
        self.p, self.alpha = p_hat, order
        self.supp = p_hat > 0
        self.sign = 0.0 if order == 1.0 else math.copysign(1.0, order - 1.0)
        self.level = radius if order == 1.0 else math.exp((order - 1.0) * radius)

    def value(self, x: np.ndarray) -> float:
        p, s, a = self.p[self.supp], self.supp, self.alpha
        if a == 1.0:
            return float(np.sum(p * (np.log(p) - np.log(x[s])))) - self.level
        return self.sign * (float(np.sum(p**a * x[s] ** (1.0 - a))) - self.level)

    def derivatives(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(gradient, diagonal of the Hessian)."""
        grad, hess = np.zeros_like(x), np.zeros_like(x)
        p, s, a = self.p[self.supp], self.supp, self.alpha
        if a == 1.0:
            grad[s], hess[s] = -p / x[s], p / x[s] ** 2
        else:
            term = p**a * x[s] ** (-a)
            grad[s] = self.sign * (1.0 - a) * term
            hess[s] = abs(a * (1.0 - a)) * term / x[s]
        return grad, hess


def _segment(p_hat: np.ndarray, target: np.ndarray, inside: _Constraint) -> np.ndarray:
    """The last point of F on the segment P̂ → target (bisection; the constraint is convex along it)."""
    if inside.value(np.maximum(target, 1e-300)) <= 0:
        return target
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if inside.value(np.maximum((1 - mid) * p_hat + mid * target, 1e-300)) <= 0 else (lo, mid)
    return (1 - lo) * p_hat + lo * target


def ball_fit(qhat: np.ndarray, q: np.ndarray, ball: UncertaintySet, target: np.ndarray, n: float) -> np.ndarray:
    """A point of F = ``ball`` (one row over X) near argmin_F KL(q̂ ‖ QP) for n reports (module docstring)."""
    with small_linear_algebra(ball.public_distribution.size):  # BLAS threads for this size (as the estimator)
        return _fit(qhat, q, ball, target, n)


def _fit(qhat: np.ndarray, q: np.ndarray, ball: UncertaintySet, target: np.ndarray, n: float) -> np.ndarray:
    from scipy.linalg import cho_factor, cho_solve  # aggregator-only dependency, loaded on first use

    p_hat = ball.public_distribution.ravel()
    con = _Constraint(p_hat, ball.radius, ball.order)
    if ball.radius == 0:
        return p_hat.copy()
    a = p_hat.size
    if q.shape[0] * a * a > NEWTON_MAX_WORK:
        return _segment(p_hat, target, con)
    low, high = _box_sides(ball, a)
    x = _interior_start(p_hat, con, low, high)
    if x is None:
        return _segment(p_hat, target, con)
    seen = qhat > 0
    qs, hs = q[seen], qhat[seen]
    capped = np.isfinite(high)

    def barrier(z: np.ndarray, t: float) -> float:
        if np.any(z <= low) or np.any(z[capped] >= high[capped]):  # outside the domain (c needs z > 0)
            return math.inf
        c = con.value(z)
        pi = qs @ z
        if c >= 0 or np.any(pi <= 0):
            return math.inf
        sides = np.sum(np.log(z - low)) + np.sum(np.log(high[capped] - z[capped]))
        return float(-t * np.sum(hs * np.log(pi)) - math.log(-c) - sides)

    t = 1.0
    constraints = a + 1 + int(capped.sum())
    while constraints / t > 1e-4 / n:  # the barrier's gap, in T = 2n·f units: < 2e-4
        t *= 10.0
        for _ in range(60):
            pi = qs @ x
            c = con.value(x)
            cg, ch = con.derivatives(x)
            above = x - low
            below = np.where(capped, high - x, np.inf)
            grad = -t * (qs.T @ (hs / pi)) + cg / (-c) - 1.0 / above + 1.0 / below
            hess = t * (qs.T * (hs / pi**2)) @ qs + np.outer(cg, cg) / c**2
            hess[np.diag_indices(a)] += ch / (-c) + 1.0 / above**2 + 1.0 / below**2
            try:
                factor = cho_factor(hess)
            except np.linalg.LinAlgError:
                break
            solve_g, solve_1 = cho_solve(factor, np.stack([grad, np.ones(a)], axis=1)).T
            step = -(solve_g - solve_1 * solve_g.sum() / solve_1.sum())  # Newton step with Σ step = 0
            decrement = float(-grad @ step)
            if decrement / 2 < 1e-12:
                break
            size, now = 1.0, barrier(x, t)
            while size > 1e-12 and barrier(x + size * step, t) > now - 0.25 * size * decrement:
                size *= 0.5
            if size <= 1e-12:
                break
            x = x + size * step
    x = np.maximum(x, 0.0)
    return x / x.sum()


def _box_sides(ball: UncertaintySet, a: int) -> tuple[np.ndarray, np.ndarray]:
    """The barrier's sides per cell: 0 and +∞, or F's box (ℓ, u) when it has one."""
    if ball.box is None:
        return np.zeros(a), np.full(a, np.inf)
    return ball.box[0].ravel().astype(float), ball.box[1].ravel().astype(float)


def _interior_start(p_hat: np.ndarray, con: _Constraint, low: np.ndarray, high: np.ndarray) -> np.ndarray | None:
    """A strictly feasible start on the segment from P̂ to a point m strictly inside the box ∩ simplex (the
    uniform one without a box): P̂ is inside the ball but may be outside the box (a pilot's centre is the
    ball's, not the box's), so the first points tried are just past where the segment enters the box.
    None when none of them is inside F (the caller falls back)."""
    if not np.any(np.isfinite(high)):  # no box: P̂ towards the uniform point, 1e-3 of the way or less
        for eta in 10.0 ** -np.arange(3, 13):
            x = (1 - eta) * p_hat + eta / p_hat.size
            if con.value(x) < 0:
                return x
        return None
    room = high - low
    theta = (1.0 - low.sum()) / room.sum() if room.sum() > 0 else 0.0
    middle = low + theta * room
    move = middle - p_hat
    with np.errstate(divide="ignore", invalid="ignore"):  # η ≥ these keeps x_i above ℓ_i and below u_i
        need = np.concatenate(
            [np.where(p_hat <= low, (low - p_hat) / move, 0.0), np.where(p_hat >= high, (high - p_hat) / move, 0.0)]
        )
    enter = float(np.nanmax(need)) if need.size else 0.0
    for share in (1e-9, 1e-6, 1e-3, 1e-2, 0.05, 0.2, 0.5, 1.0):
        eta = enter + share * (1.0 - enter) if enter > 0 else share
        x = (1 - eta) * p_hat + eta * middle
        if np.all(x > low) and np.all(x < high) and con.value(x) < 0:
            return x
    return None
