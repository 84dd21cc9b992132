"""Uncertainty sets: Rényi-divergence balls around the public estimate P̂.

This module is the single home of the uncertainty set F [LZG24, Sec 3–4]:

    F = {P in the simplex over X : D_α(P̂ ‖ P) ≤ B}                     (eq. 10)

and of everything derived from it that the rest of rldp needs:

* the projected radii B_s of Theorem 1, so that F_U|s = {R : D_α(P̂_U|s ‖ R) ≤ B_s};
* the support function of each projected ball, max/min of q·R over R ∈ F_U|s (the
  building block of the exact audit), by a one-dimensional Lagrange search;
* L_u|s = min R_u over F_U|s and its counterpart max R_u (Prop. 1, eq. 29; closed form
  of Prop. 2 at α = 2);
* rad_s = max ‖R − P̂_U|s‖₁ over F_U|s (Prop. 1, eq. 30; exact by subset enumeration
  when |U| ≤ 16, a valid upper bound otherwise);
* the confidence radius B for a significance level β (eq. 9 at α = 2 and its
  generalisation to any order through the Hellinger divergence).

Errata handled here (docs/design.md, "Errata"): the square roots lost in the extraction of
Lemma 1 / Prop. 2; Prop. 2.2 as printed also lacks the "− 2P̂_u_min|s" term (we compute
rad_s from Prop. 1 directly). [LZG24, Example 2] prints B_s1 = 0.3782, which is
log((e^B − 1 + P̂_s)/P̂_s), i.e. the projection with the marginal of S held fixed;
Theorem 1 itself (implemented here, and re-derived in the tests) gives 0.4065, and the
paper's own Example 5 (d = 1.4591) uses the Theorem 1 value.

numpy only: the client imports this module to check a mechanism on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .ball_search import SEARCH_STEPS as _SEARCH_STEPS
from .ball_search import ball_maximum as _ball_maximum
from .box_bounds import check_box, conditional_bounds, knapsack_l1_radii, knapsack_maximum
from .divergence import confidence_radius, renyi_divergence, validate_order
from .errors import ValidationError
from .probability import as_distribution
from .tolerances import STOCHASTIC_TOLERANCE, STOCHASTIC_TOLERANCE_TEXT

__all__ = [
    "UncertaintySet",
    "projected_radii",
]

# Subset enumeration for rad_s is exact up to this many released symbols.
EXACT_RADIUS_MAX_SYMBOLS = 16


def projected_radii(p_s: np.ndarray, radius: float, order: float) -> np.ndarray:
    """Radii B_s of the conditional projections F_U|s [LZG24, Thm 1, eq 24].

    B_s = α/(α−1) · log((e^{(α−1)B/α} − (1 − P̂_s)) / P̂_s) for α ≠ 1 and B/P̂_s for α = 1.
    Returns +inf where P̂_s = 0 (no public data on s: every conditional is plausible),
    where B = inf, and, for α < 1, where the argument of the log is not positive (the
    ball then projects onto the whole simplex).
    """
    alpha = validate_order(order)
    p_s = np.asarray(p_s, dtype=float)
    out = np.full(p_s.shape, np.inf)
    if math.isinf(radius):
        return out
    pos = p_s > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if alpha == 1.0:
            out[pos] = radius / p_s[pos]
            return out
        # e^{c} − 1 + P̂_s with c = (α−1)B/α, written with expm1 for small B.
        excess = np.expm1((alpha - 1.0) * radius / alpha) + p_s
        ok = pos & (excess > 0)
        out[ok] = alpha / (alpha - 1.0) * np.log(excess[ok] / p_s[ok])
    radii: np.ndarray = np.maximum(out, 0.0)
    return radii


def _two_point_range(rho: np.ndarray, radius: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval {r : D_α((ρ, 1−ρ) ‖ (r, 1−r)) ≤ radius}, elementwise.

    This is Prop. 1's ρ·ξ∓(ρ) (eqs. 27-28): by data processing, the extremes of the mass
    R(U₁) of a set U₁ over a Rényi ball only depend on ρ = P̂(U₁). Closed form at α = 2
    (Lemma 1 with its square root restored); otherwise bisection on each side of ρ.
    """
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, 1.0)
    radius = np.broadcast_to(np.asarray(radius, dtype=float), rho.shape)
    lower = np.zeros(rho.shape)
    upper = np.ones(rho.shape)
    finite = np.isfinite(radius)
    if alpha == 2.0:
        with np.errstate(invalid="ignore", over="ignore"):
            e = np.exp(radius)
            root = np.sqrt(np.maximum((e - 1.0) * (e - (2.0 * rho - 1.0) ** 2), 0.0))
            lo = (e + 2.0 * rho - 1.0 - root) / (2.0 * e)
            hi = (e + 2.0 * rho - 1.0 + root) / (2.0 * e)
        lower = np.where(finite, np.clip(lo, 0.0, rho), 0.0)
        upper = np.where(finite, np.clip(hi, rho, 1.0), 1.0)
        return lower, upper

    def div(r: np.ndarray) -> np.ndarray:
        p = np.stack([rho, 1.0 - rho], axis=-1)
        q = np.stack([r, 1.0 - r], axis=-1)
        return renyi_divergence(p, q, alpha)

    for side in ("lower", "upper"):
        a = np.where(side == "lower", 0.0, 1.0) * np.ones(rho.shape)  # outer end
        b = rho.copy()  # inner end, always feasible
        outer_ok = div(a) <= radius
        for _ in range(_SEARCH_STEPS + 40):
            mid = 0.5 * (a + b)
            ok = div(mid) <= radius
            b = np.where(ok, mid, b)
            a = np.where(ok, a, mid)
        # The outer end of the bracket is conservative (slightly outside the ball).
        result = np.where(outer_ok | ~finite, np.where(side == "lower", 0.0, 1.0), a)
        if side == "lower":
            lower = result
        else:
            upper = result
    return lower, upper


# ---------------------------------------------------------------------------
# The uncertainty set
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class UncertaintySet:
    """F = {P : D_α(P̂ ‖ P) ≤ B} over X = S × U, with P̂ given as an (|S|, |U|) array, intersected with a
    box ℓ ≤ P ≤ u when ``box`` = (ℓ, u) is given (a pilot's F, :mod:`rldp.shared.box_bounds`).

    ``radius`` is B in nats (``math.inf`` for no knowledge, 0 for P* = P̂ assumed known);
    ``order`` is α ∈ (0, ∞). All statistics refer to the conditional projections
    F_U|s of Theorem 1, whose product set F' ⊇ F is what the audit certifies against; with a box, to
    F'_U|s ∩ K_s (K_s: the conditionals within the bounds the box implies), whose support function is
    bounded by the smaller of the two sets' (both exact).
    """

    public_distribution: np.ndarray
    radius: float
    order: float = 2.0
    box: tuple[np.ndarray, np.ndarray] | None = None
    #: The distribution a utility-maximising designer optimises for, when not P̂ (a pilot's estimate kept in its
    #: box: the ball's centre concentrates mass and is a poor guess of P). The claim never depends on it.
    objective: np.ndarray | None = None

    def __post_init__(self) -> None:
        p = np.array(self.public_distribution, dtype=float)
        if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 1:
            raise ValidationError(f"public_distribution must be a 2-D array of shape (|S|, |U|); got shape {p.shape}")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValidationError("public_distribution must be finite and non-negative")
        total = p.sum()
        if abs(total - 1.0) > STOCHASTIC_TOLERANCE:
            raise ValidationError(
                f"public_distribution must sum to 1 ({STOCHASTIC_TOLERANCE_TEXT}); it sums to {total!r}"
            )
        radius = float(self.radius)
        if math.isnan(radius) or radius < 0:
            raise ValidationError(f"radius must be ≥ 0 (nats; inf for an unbounded set); got {self.radius!r}")
        p.setflags(write=False)
        object.__setattr__(self, "public_distribution", p)
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "order", validate_order(self.order))
        if self.objective is not None:
            if np.shape(self.objective) != p.shape:
                raise ValidationError(f"objective must have P̂'s shape {p.shape}; got {np.shape(self.objective)}")
            target = as_distribution(np.array(self.objective, dtype=float), "objective").reshape(p.shape)
            target.setflags(write=False)
            object.__setattr__(self, "objective", target)
        if self.box is not None:
            lower, upper = check_box(self.box[0], self.box[1], p.shape)
            lower.setflags(write=False)
            upper.setflags(write=False)
            object.__setattr__(self, "box", (lower, upper))

    @classmethod
    def from_confidence(cls, public_distribution: Any, n: int, beta: float, order: float = 2.0) -> UncertaintySet:
        """The (1 − β)-confidence set of eq. (9) for P̂ estimated from n public samples."""
        p = np.asarray(public_distribution, dtype=float)
        return cls(p, confidence_radius(n, beta, p.size, order), order)

    # -- shapes and conditionals ------------------------------------------------
    @property
    def n_sensitive(self) -> int:
        return int(self.public_distribution.shape[0])

    @property
    def n_released(self) -> int:
        return int(self.public_distribution.shape[1])

    @cached_property
    def marginal(self) -> np.ndarray:
        """P̂_s, shape (|S|,)."""
        marginal: np.ndarray = self.public_distribution.sum(axis=1)
        return marginal

    @cached_property
    def conditionals(self) -> np.ndarray:
        """P̂_U|s, shape (|S|, |U|); uniform for an s never seen in the public data."""
        m = self.marginal[:, None]
        uniform = np.full(self.public_distribution.shape, 1.0 / self.n_released)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(m > 0, self.public_distribution / np.where(m > 0, m, 1.0), uniform)

    @property
    def design_distribution(self) -> np.ndarray:
        """What a utility-maximising designer optimises for: ``objective`` when given, else P̂."""
        return self.public_distribution if self.objective is None else self.objective

    def marginal_set(self) -> UncertaintySet:
        """F_S, the projection of F onto P_S, as a set of one row over S: the ball of P̂_S with the same
        radius (data processing) and, with a box, the box of the row sums (at most 1: a loose box's upper
        row sums can pass it, and P_s ≤ 1 holds anyway)."""
        box = None
        if self.box is not None:
            box = (np.minimum(self.box[0].sum(axis=1), 1.0)[None, :], np.minimum(self.box[1].sum(axis=1), 1.0)[None, :])
        return UncertaintySet(self.marginal[None, :], self.radius, self.order, box)

    @cached_property
    def projected_radii(self) -> np.ndarray:
        """B_s of Theorem 1, shape (|S|,)."""
        return projected_radii(self.marginal, self.radius, self.order)

    # -- support function ---------------------------------------------------------
    def extremes(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max, min) of q_s · R over R ∈ F_U|s for every q in ``vectors``.

        ``vectors`` has shape (..., |S|, |U|): vectors[..., s, :] is paired with the
        ball of s. Returns two arrays of shape (..., |S|). Accurate to ~1e-12; the max is
        rounded up and the min down, so ratios built from them are conservative.
        """
        v = np.asarray(vectors, dtype=float)
        if v.shape[-2:] != self.public_distribution.shape:
            raise ValidationError(f"vectors must end in shape {self.public_distribution.shape}; got {v.shape}")
        lead = v.shape[:-2]
        flat = v.reshape(-1, self.n_sensitive, self.n_released)
        k = flat.shape[0]
        q = flat.reshape(-1, self.n_released)
        p = np.broadcast_to(self.conditionals, flat.shape).reshape(-1, self.n_released)
        radius = np.broadcast_to(self.projected_radii, (k, self.n_sensitive)).reshape(-1)
        hi = _ball_maximum(q, p, radius, self.order)
        lo = -_ball_maximum(-q, p, radius, self.order)
        if self._box_bounds is not None:
            rows = np.broadcast_to(np.arange(self.n_sensitive), (k, self.n_sensitive)).reshape(-1)
            hi, lo = self._with_box(q, rows, hi, lo)
        return hi.reshape(*lead, self.n_sensitive), lo.reshape(*lead, self.n_sensitive)

    def extremes_for(self, vectors: np.ndarray, sensitive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max, min) of q · R over R ∈ F_U|s for each row q of ``vectors`` (N, |U|) and its s in ``sensitive`` (N,).

        The same search as :meth:`extremes`, for chosen (row, s) pairs only: an audit skips the pairs
        whose answer needs no search (a constant row q has q · R = q_u for every R).
        """
        q = np.asarray(vectors, dtype=float).reshape(-1, self.n_released)
        s = np.asarray(sensitive, dtype=np.intp).reshape(-1)
        if s.shape[0] != q.shape[0]:
            raise ValidationError(
                f"sensitive must have one entry per row of vectors; got {s.shape[0]} for {q.shape[0]}"
            )
        p = self.conditionals[s]
        radius = self.projected_radii[s]
        hi, lo = _ball_maximum(q, p, radius, self.order), -_ball_maximum(-q, p, radius, self.order)
        if self._box_bounds is not None:
            hi, lo = self._with_box(q, s, hi, lo)
        return hi, lo

    def _with_box(
        self, q: np.ndarray, rows: np.ndarray, hi: np.ndarray, lo: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(max, min) of q·R over the ball's projection, narrowed by the box's K_s (rows: each q's s)."""
        assert self._box_bounds is not None
        low, high = self._box_bounds
        box_hi = knapsack_maximum(q, low[rows], high[rows])
        box_lo = -knapsack_maximum(-q, low[rows], high[rows])
        return np.minimum(hi, box_hi), np.maximum(lo, box_lo)

    # -- Proposition 1 statistics ---------------------------------------------------
    @cached_property
    def _ball_range(self) -> tuple[np.ndarray, np.ndarray]:
        radius = np.broadcast_to(self.projected_radii[:, None], self.public_distribution.shape)
        return _two_point_range(self.conditionals, radius, self.order)

    @cached_property
    def _box_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """K_s's bounds: the box's conditional bounds narrowed by the ball's per-cell range (both hold for
        every conditional of F, so K_s still holds F'_U|s ∩ box); a row where they contradict each other
        (F meets no P there: possible only off the confidence event) keeps the ball's range."""
        if self.box is None:
            return None
        ball_low, ball_high = self._ball_range
        box_low, box_high = conditional_bounds(*self.box)
        low, high = np.maximum(ball_low, box_low), np.minimum(ball_high, box_high)
        consistent = np.all(low <= high, axis=1) & (low.sum(axis=1) <= 1.0) & (high.sum(axis=1) >= 1.0)
        keep = consistent[:, None]
        return np.where(keep, low, ball_low), np.where(keep, high, ball_high)

    @property
    def _cell_range(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ball_range if self._box_bounds is None else self._box_bounds

    def lower_bounds(self) -> np.ndarray:
        """L_u|s = min_{R ∈ F_U|s} R_u (Prop. 1, eq. 29), shape (|S|, |U|)."""
        return self._cell_range[0].copy()

    def upper_bounds(self) -> np.ndarray:
        """max_{R ∈ F_U|s} R_u (the "ρ·ξ⁺(ρ)" of Prop. 1 for a single u), shape (|S|, |U|)."""
        return self._cell_range[1].copy()

    def l1_radii(self) -> np.ndarray:
        """rad_s = max_{R ∈ F_U|s} ‖R − P̂_U|s‖₁ (Prop. 1, eq. 30), shape (|S|,).

        rad_s = 2·max_{U₁ ⊆ U} (max_{R} R(U₁) − P̂(U₁)), and max R(U₁) only depends on
        ρ = P̂(U₁). Exact over all subsets when |U| ≤ 16. Otherwise a valid upper bound:
        min(2, b) with the Cauchy–Schwarz bound b = sqrt(e^{B_s} − 1) for α ≥ 2 (docs/design.md
        errata), Pinsker's sqrt(2 B_s) for 1 ≤ α < 2 and Gilardoni's sqrt(2 B_s / α) for α < 1.
        """
        k = self.n_released
        radii = self.projected_radii
        if k <= EXACT_RADIUS_MAX_SYMBOLS:
            # Every non-empty subset (the empty one has R(∅) = 0 for every R, however
            # much mass the ball may move onto cells where P̂ is zero).
            bits = ((np.arange(1, 2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(float)
            sums = self.conditionals @ bits.T  # (|S|, 2^k) subset masses
            _, upper = _two_point_range(sums, radii[:, None], self.order)
            rad = 2.0 * np.max(upper - sums, axis=1)
        else:
            with np.errstate(over="ignore"):
                if self.order >= 2.0:
                    rad = np.sqrt(np.expm1(radii))
                elif self.order >= 1.0:
                    rad = np.sqrt(2.0 * radii)
                else:
                    rad = np.sqrt(2.0 * radii / self.order)
        ball: np.ndarray = np.minimum(np.where(np.isfinite(radii), rad, 2.0), 2.0)
        if self._box_bounds is None:
            return ball
        narrowed: np.ndarray = np.minimum(ball, knapsack_l1_radii(self.conditionals, *self._box_bounds))
        return narrowed

    def describe(self) -> dict[str, Any]:
        """The document's ``privacy.uncertainty`` fields for this set."""
        out: dict[str, Any] = {
            "divergence": "renyi",
            "order": self.order,
            "radius": None if math.isinf(self.radius) else self.radius,
        }
        if self.box is not None:
            out["box"] = {"lower": (self.box[0] + 0.0).tolist(), "upper": (self.box[1] + 0.0).tolist()}
        return out
