"""The support function of a Rényi ball: max_R q·R over {R : D_α(p ‖ R) ≤ B}, by a one-dimensional
Lagrange search [LZG24, Thm 1] — the building block of the exact RLDP audit
(:meth:`~rldp.shared.uncertainty.UncertaintySet.extremes`).

numpy only: the client imports it (through :mod:`rldp.shared.uncertainty`) to check a mechanism on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ball_maximum", "SEARCH_STEPS"]

# Bisection steps of the reference Lagrange search; each halves an interval in log(τ) of width
# ~750, so 64 steps leave a relative error in τ far below double precision's.
SEARCH_STEPS = 64
# The Illinois search stops when a bracket is this narrow in log(τ): the bisection's 64 steps leave
# ~4e-17 of it; 1e-14 moves the value (a smooth function of log τ) by ~1e-14 relative.
_BRACKET_WIDTH = 1e-14
# ... or when D at the infeasible end is within this relative distance of the radius: the value there (what the
# search returns) is then within ~this relative distance of the maximum (near the root log D falls like −2 log τ
# while the value moves at most like log τ).
_LOG_D_TOLERANCE = 1e-15
# Rows per call of the search are capped at this many entries (2 MB of float64 per temporary).
_CHUNK_ENTRIES = 1 << 18
_ILLINOIS_MAX_STEPS = 400  # a bisection every fourth step: ≤ 4 × 64 steps even if regula falsi never helps


# ---------------------------------------------------------------------------
# The support function of a Rényi ball (one-dimensional Lagrange search)
# ---------------------------------------------------------------------------


def ball_maximum(
    q: np.ndarray, p: np.ndarray, radius: np.ndarray, alpha: float, search: str = "illinois"
) -> np.ndarray:
    """max_R q·R over {R in the simplex : D_α(p ‖ R) ≤ radius}, row by row.

    q, p: shape (N, k); every row of p is a probability vector; radius: shape (N,).

    KKT (for every order α): on the support of p the maximiser is
    R_u ∝ p_u (ν − q_u)^(−1/α) for a multiplier ν > max_{supp} q, so with
    τ = ν − max_{supp} q and δ_u = max_{supp} q − q_u the search is over τ > 0 only:
    D(τ) = D_α(p ‖ R(τ)) decreases from D(0+) to 0, and we bisect log τ until
    D(τ) = radius. Cells with p_u = 0 cost nothing in D_α; they take the remaining
    mass 1 − m (m = e^{D(τ_z) − radius}) exactly when their best q exceeds ν.
    The returned value is the one on the infeasible side of the final bracket, so it
    is an upper bound of the true maximum (conservative for the audit).

    ``search``: "illinois" (default) narrows each row's bracket from a secant start by the
    Illinois variant of regula falsi on log D(t) − log radius, with a bisection every fourth
    step, until it is ``_BRACKET_WIDTH`` wide or D at its infeasible end is within
    ``_LOG_D_TOLERANCE`` of the radius (typically 10-16 evaluations instead of 64; the values
    agree with the bisection's to ~1e-14 relative and stay on its side,
    tests/shared/test_audit_dense.py); "bisection" halves it ``SEARCH_STEPS`` times (the
    reference, the search before).
    """
    n_rows, k = q.shape
    chunk = max(1, _CHUNK_ENTRIES // max(k, 1))
    if n_rows > chunk:  # rows are independent: a few MB at a time stay in cache (same values, 3-4x faster)
        return np.concatenate(
            [
                ball_maximum(q[i : i + chunk], p[i : i + chunk], radius[i : i + chunk], alpha, search)
                for i in range(0, n_rows, chunk)
            ]
        )
    out = np.empty(n_rows)
    supp = p > 0
    q_supp = np.where(supp, q, -np.inf)
    q_top = q_supp.max(axis=1)  # max over the support
    q_zero = np.where(supp, -np.inf, q).max(axis=1)  # max over cells with p = 0
    todo = _closed_form_rows(out, q, p, supp, radius, np.maximum(q_top, q_zero))
    if not np.any(todo):
        return out
    ball = _Ball(q[todo], p[todo], supp[todo], q_top[todo], alpha)
    out[todo] = _search_value(ball, radius[todo], q_zero[todo], search)
    return out


def _closed_form_rows(
    out: np.ndarray, q: np.ndarray, p: np.ndarray, supp: np.ndarray, radius: np.ndarray, q_all: np.ndarray
) -> np.ndarray:
    """Fill ``out`` on the rows whose maximum needs no search (radius ∞: max q; radius 0: q·p); the other rows."""
    unbounded = np.isinf(radius)
    out[unbounded] = q_all[unbounded]
    point = (radius == 0) & ~unbounded
    out[point] = np.sum(np.where(supp[point], q[point] * p[point], 0.0), axis=1)
    todo: np.ndarray = ~(unbounded | point)
    return todo


class _Ball:
    """The KKT family R(τ) ∝ p (τ/(τ+δ))^{1/α} of the rows searched: its divergence and its value."""

    def __init__(self, q: np.ndarray, p: np.ndarray, supp: np.ndarray, q_top: np.ndarray, alpha: float):
        self.q, self.p, self.supp, self.q_top, self.alpha = q, p, supp, q_top, alpha
        self.delta = np.where(supp, q_top[:, None] - q, 0.0)  # ≥ 0 on the support
        spread = self.delta.max(axis=1)
        self.flat = spread <= 0  # q constant on the support: R ∝ p for every τ
        self.scale = np.where(self.flat, 1.0, spread)
        self.inv_alpha = 1.0 / alpha

    def shape_at(self, tau: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(log of R/p, D_α(p‖R)) for R(τ) ∝ p (τ/(τ+δ))^{1/α}, rows with τ given (all, or ``rows``)."""
        alpha = self.alpha
        d, pp, sp = (
            (self.delta, self.p, self.supp) if rows is None else (self.delta[rows], self.p[rows], self.supp[rows])
        )
        tau = np.maximum(tau, 1e-300)  # τ > 0 keeps δ/τ = 0 (not 0/0) on the argmax cells
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_w = -self.inv_alpha * np.log1p(d / tau[:, None])  # ≤ 0, −inf allowed
            w_minus_1 = np.expm1(log_w)
            log_mass = np.log1p(np.sum(np.where(sp, pp * w_minus_1, 0.0), axis=1))
            log_ratio = log_w - log_mass[:, None]  # log(R_u / p_u) on the support
            if alpha == 1.0:
                div = -np.sum(np.where(sp, pp * log_ratio, 0.0), axis=1)
            else:
                powered = np.expm1((1.0 - alpha) * log_ratio)
                inner = np.sum(np.where(sp, pp * powered, 0.0), axis=1)
                div = np.log1p(inner) / (alpha - 1.0)
        div = np.where(np.isnan(div), np.inf, div)
        return log_ratio, np.maximum(div, 0.0)

    def value_at(self, log_ratio: np.ndarray) -> np.ndarray:
        """q·R for the R with these log(R/p) on the support."""
        r = np.where(self.supp, self.p * np.exp(log_ratio), 0.0)
        value: np.ndarray = self.q_top - np.sum(r * self.delta, axis=1)
        return value


def _search_value(ball: _Ball, radius: np.ndarray, q_zero: np.ndarray, search: str) -> np.ndarray:
    """The maximum of the searched rows: the Lagrange search over τ, then the mass the cells with p = 0 absorb."""
    scale, flat, q_top = ball.scale, ball.flat, ball.q_top
    # Bisection on t = log(τ / scale) over [-690, 40]: D(τ) decreases in τ.
    lo = np.full(len(ball.q), -690.0)  # infeasible side (D ≥ radius), or the limit τ → 0
    hi = np.full(len(ball.q), 40.0)  # feasible side (D ≤ radius)
    _, d_lo = ball.shape_at(scale * np.exp(lo))
    reach = d_lo > radius  # otherwise even τ → 0 stays inside the ball (possible for α < 1)
    if search == "bisection":
        for _ in range(SEARCH_STEPS):
            mid = 0.5 * (lo + hi)
            _, d_mid = ball.shape_at(scale * np.exp(mid))
            inside = d_mid <= radius
            hi = np.where(inside, mid, hi)
            lo = np.where(inside, lo, mid)
    else:
        lo, hi = _illinois(ball.shape_at, scale, radius, lo, hi, d_lo, reach & ~flat)
    log_ratio, _ = ball.shape_at(scale * np.exp(lo))
    value = np.where(reach, ball.value_at(log_ratio), q_top)
    value = np.where(flat, q_top, value)
    nu = q_top + np.where(reach & ~flat, scale * np.exp(lo), 0.0)
    return _absorbed(ball, radius, q_zero, nu, value)


def _absorbed(ball: _Ball, radius: np.ndarray, q_zero: np.ndarray, nu: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``value`` raised where cells outside the support absorb mass (their q beats the multiplier ν)."""
    absorb = q_zero > nu
    if not np.any(absorb):
        return value
    flat, q_top = ball.flat, ball.q_top
    tau_z = np.where(absorb, q_zero - q_top, 1.0)
    tau_z = np.where(flat, np.inf, tau_z)
    log_ratio_z, d_z = ball.shape_at(np.where(np.isinf(tau_z), 1e300, tau_z))
    d_z = np.where(flat, 0.0, d_z)
    mass = np.exp(np.minimum(d_z - radius, 0.0))  # m = e^{D(τ_z) − radius} ≤ 1
    inside_value = np.where(flat, q_top, ball.value_at(log_ratio_z))
    mixed = mass * inside_value + (1.0 - mass) * np.where(absorb, q_zero, 0.0)
    return np.where(absorb, np.maximum(mixed, value), value)


def _illinois(
    shape_at: Any,
    scale: np.ndarray,
    radius: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    d_lo: np.ndarray,
    todo: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Narrow the brackets [lo, hi] of t = log(τ/scale) (D(lo) > radius ≥ D(hi)) of the rows ``todo`` (see
    :func:`ball_maximum` for when they stop): a secant start, then Illinois regula falsi on f(t) = log D − log radius (D spans hundreds of orders of
    magnitude over the bracket; its logarithm is nearly linear in t), a bisection every fourth step so that
    no row can stall, the same feasibility test as the bisection (D ≤ radius: the feasible end)."""
    lo, hi = lo.copy(), hi.copy()
    log_r = np.log(np.where(todo, radius, 1.0))
    with np.errstate(divide="ignore"):
        f_lo = np.log(np.maximum(d_lo, 1e-300)) - log_r
    _, d_hi = shape_at(scale * np.exp(hi))
    f_hi = np.log(np.maximum(d_hi, 1e-300)) - log_r
    stuck_hi = todo & ~(d_hi <= radius)  # even t = 40 is outside the ball: the bisection would end there
    lo[stuck_hi] = hi[stuck_hi]
    todo = todo & ~stuck_hi
    brackets = _Brackets(lo, hi, f_lo, f_hi)
    for step in range(_ILLINOIS_MAX_STEPS):
        rows = np.flatnonzero(todo & (brackets.hi - brackets.lo > _BRACKET_WIDTH) & (brackets.f_lo > _LOG_D_TOLERANCE))
        if not rows.size:
            break
        t, both = brackets.trial(rows, step)
        _, d_t = shape_at(scale[rows] * np.exp(t), rows)
        f_t = np.log(np.maximum(d_t, 1e-300)) - log_r[rows]
        brackets.move(rows, t, f_t, d_t <= radius[rows], both)
    return brackets.lo, brackets.hi


class _Brackets:
    """The Illinois search's state per row: the bracket [lo, hi] of t with f at its ends, which ends have
    left their start, the moving end's previous point and the side moved last."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, f_lo: np.ndarray, f_hi: np.ndarray):
        self.lo, self.hi, self.f_lo, self.f_hi = lo, hi, f_lo, f_hi
        self.moved_lo = np.zeros(lo.shape, dtype=bool)  # lo has left its start
        self.moved_hi = np.zeros(lo.shape, dtype=bool)
        self.prev_t, self.prev_f = (
            np.full(lo.shape, np.nan),
            np.full(lo.shape, np.nan),
        )  # the moving end's previous point
        self.last = np.zeros(lo.shape, dtype=np.int8)  # side moved last: +1 hi, −1 lo (Illinois halving)

    def trial(self, rows: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
        """The next point t of each of ``rows``, and which of them have both ends moved (bracketed)."""
        a, b, fa, fb = self.lo[rows], self.hi[rows], self.f_lo[rows], self.f_hi[rows]
        ml, mh = self.moved_lo[rows], self.moved_hi[rows]
        both = ml & mh
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            chord = (a * fb - b * fa) / (fb - fa)  # the zero of the chord (fa > 0 ≥ fb)
            # Until both ends have moved, one end is still a start (lo: D(0+), where log D is flat; hi: t = 40,
            # where D underflows): no use for a chord. Start at t = 0 (τ = the spread of q), then extrapolate
            # from the end that moved, by the secant of its last two points (at first the tail's slope −2:
            # D ∝ τ⁻² for large τ, a divergence being quadratic near p), 1.5 times as far, at least half a
            # unit, so that the root is soon bracketed on both sides.
            side_t, side_f = np.where(ml, a, b), np.where(ml, fa, fb)
            slope = (side_f - self.prev_f[rows]) / (side_t - self.prev_t[rows])
            slope = np.where(np.isfinite(slope) & (slope < 0), slope, -2.0)
            jump = np.maximum(np.abs(1.5 * side_f / slope), 0.5)
            model = np.where(ml, a + jump, b - jump)
        model = np.where(ml | mh, model, 0.0)
        bisect = both & (step % 4 == 3)
        t = np.where(both, chord, model)
        t = np.where(bisect | ~(np.isfinite(t) & (t > a) & (t < b)), 0.5 * (a + b), t)
        return t, both

    def move(self, rows: np.ndarray, t: np.ndarray, f_t: np.ndarray, inside: np.ndarray, both: np.ndarray) -> None:
        """Move to t the end of each row's bracket on its side (``inside``: D(t) ≤ radius, the feasible end)."""
        lo, hi, f_lo, f_hi, prev_t, prev_f = self.lo, self.hi, self.f_lo, self.f_hi, self.prev_t, self.prev_f
        r_in, r_out = rows[inside], rows[~inside]
        # One-sided rows remember the end they leave (unless it is the start), for the next secant.
        keep_in, keep_out = r_in[self.moved_hi[r_in]], r_out[self.moved_lo[r_out]]
        prev_t[keep_in], prev_f[keep_in] = hi[keep_in], f_hi[keep_in]
        prev_t[keep_out], prev_f[keep_out] = lo[keep_out], f_lo[keep_out]
        hi[r_in], f_hi[r_in] = t[inside], f_t[inside]
        lo[r_out], f_lo[r_out] = t[~inside], f_t[~inside]
        # Illinois (once bracketed): the end that stayed twice in a row has its f halved, so the chord moves it next.
        f_lo[r_in[both[inside] & (self.last[r_in] == 1)]] *= 0.5
        f_hi[r_out[both[~inside] & (self.last[r_out] == -1)]] *= 0.5
        self.moved_lo[r_out], self.moved_hi[r_in] = True, True
        self.last[r_in], self.last[r_out] = 1, -1
