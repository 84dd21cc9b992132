"""The v4 pilot set (``empirical-bernstein-box/v4``): a Bernstein box and the tightest χ² ball over it.
:mod:`rldp.shared.pilot` calls it and keeps the smallest ball; the v3 balls are candidates too.

**The box (event E, probability ≥ 1 − β).** Each P̂_x is the mean of n i.i.d. Z_i = A[x, y_i] with
E Z = P_x, Var Z = σ_x²(P) = c_x·P − P_x² (c_x[x′] = Σ_y A[x, y]² Q[y, x′], the second moment given
input x′) and |Z − P_x| ≤ R_x. Bernstein's inequality [BLM13, Thm 2.10 / Cor 2.11] with the *true*
variance, one-sided, at δ = β/(2K) for each of the 2K sides: E is the event that
|P̂_x − P_x| ≤ w_x(P) = √(2 σ_x²(P) t/n) + R_x t/(3n), t = ln(2K/β), for every x. The true σ² is unknown,
but on E it is bounded by any box holding P: start from [0, 1]^K; for a box (ℓ, u) holding P,
σ_x²(P) ≤ max_{ℓ≤P′≤u, ΣP′=1} c_x·P′ − ℓ_x² (a fractional knapsack), which gives a narrower box
[P̂_x − w̄_x, P̂_x + w̄_x] ∩ (ℓ, u) that still holds P on E; three such passes (a fixed count). Against
the empirical-Bernstein box of v3 [MP09, Thm 4] this saves ln(2/δ) → ln(1/δ) and the 7R/(3(n − 1)) term,
and needs no sample variance. Forged reports (a share ≤ γ): the honest n_h ≥ ⌈(1 − γ)n⌉ reports
satisfy the bound at n_h, and the forged ones move P̂_x by at most γR_x: w_x + γR_x.

**The ball.** For a centre P₀ (a distribution, 0 where ℓ_x = 0) and every P in the box *and the
simplex*, 1 + χ²(P₀‖P) = Σ_x P₀_x²/P_x. The v3 balls bound its maximum over the box in two fixed ways;
both are special cases of one bound (weak Lagrangian duality for the constraint ΣP = 1
[BV04, Sec 5.1.3]): for every ν ≥ 0,

    max_{ℓ ≤ P ≤ u, ΣP = 1} Σ P₀²/P ≤ max_{ℓ ≤ P ≤ u} [Σ_x P₀_x²/P_x + ν (Σ_x P_x − 1)]
                                     = −ν + Σ_x max(P₀_x²/ℓ_x + ν ℓ_x, P₀_x²/u_x + ν u_x) =: D(P₀, ν),

each term being convex in P_x, so at an end of [ℓ_x, u_x] (a cell with ℓ_x = 0 has P₀_x = 0 and
contributes ν u_x). ν = 0 with P₀ = ℓ/Σℓ is the box ball (D = 1/Σℓ); ν = 1 is the per-cell χ² ball
(Σ max (P₀ − p)²/p + 1). D is jointly convex in (P₀, ν) (each term a maximum of functions convex in
both); this module minimises it — over P₀ for each ν in closed form up to the multiplier of ΣP₀ = 1
(bisection), over ν by golden-section search — and any (P₀, ν) it stops at is a valid bound, so
D₂(P₀‖P) = log(1 + χ²) ≤ B = log D(P₀, ν) on E, and D_α ≤ D₂ for α ≤ 2 [vEH14, Thm 3]. Every ball is
a function of the one box, so the smallest holds P on E: probability ≥ 1 − β, no further union bound.
numpy and the standard library only; fixed iteration counts, so ``rldp audit`` recomputes the same set.
"""

from __future__ import annotations

import math

import numpy as np

from .line_search import golden_section_maximum

__all__ = ["bernstein_box", "dual_ball", "dual_bound"]

#: Bisection steps for ΣP₀ = 1 and golden-section steps for ν (fixed: the audit repeats them exactly).
_BISECTIONS = 60
_GOLDEN = 40
#: ν is searched in [0, _NU_MAX]: ν = 1 is the per-cell ball; larger ν weighs the upper bounds more.
_NU_MAX = 8.0


#: Passes of the variance bound over the box (fixed: the audit repeats them exactly).
_PASSES = 3


def _max_linear(c: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """max c[x]·P over ℓ ≤ P ≤ u, ΣP = 1 for each row x of c (fill the largest coefficients first); +∞
    where the box holds no distribution."""
    room = 1.0 - float(lower.sum())
    if room < 0 or float(upper.sum()) < 1.0:
        return np.full(c.shape[0], math.inf)
    order = np.argsort(-c, axis=1, kind="stable")
    cap = (upper - lower)[order]
    take = np.clip(room - (np.cumsum(cap, axis=1) - cap), 0.0, cap)
    filled: np.ndarray = c @ lower + (np.take_along_axis(c, order, axis=1) * take).sum(axis=1)
    return filled


def bernstein_box(
    matrix: np.ndarray, a: np.ndarray, freq: np.ndarray, n: int, beta: float, gamma: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P̂, ℓ, u): the two-sided Bernstein box of the module docstring, from the output frequencies
    ``freq`` of n reports through Q = ``matrix`` (A = Q⁺), holding the honest P with probability ≥ 1 − β
    when up to a share ``gamma`` of the reports were forged."""
    k = a.shape[0]
    estimate = a @ freq
    span = a.max(axis=1) - a.min(axis=1)
    second = (a * a) @ matrix
    log_term = math.log(2 * k / beta)
    honest = max(math.ceil((1.0 - gamma) * n), 1)
    lower, upper = np.zeros(k), np.ones(k)
    for _ in range(_PASSES):
        variance = np.maximum(_max_linear(second, lower, upper) - lower**2, 0.0)
        if not np.all(np.isfinite(variance)):
            break  # no distribution in the box: the event failed, and the box so far is kept
        width = np.sqrt(2 * variance * log_term / honest) + span * log_term / (3 * honest) + gamma * span
        lower = np.maximum(lower, np.clip(estimate - width, 0.0, 1.0))
        upper = np.minimum(upper, np.clip(estimate + width, 0.0, 1.0))
    return estimate, lower, upper


def dual_bound(center: np.ndarray, lower: np.ndarray, upper: np.ndarray, nu: float) -> float:
    """D(P₀, ν) of the module docstring (∞ if P₀ has mass where ℓ_x = 0)."""
    if np.any((lower <= 0) & (center > 0)):
        return math.inf
    live = lower > 0
    safe_l, safe_u = np.where(live, lower, 1.0), np.where(upper > 0, upper, 1.0)
    at_lower = np.where(live, center**2 / safe_l + nu * lower, 0.0)
    at_upper = np.where(upper > 0, center**2 / safe_u, 0.0) + nu * upper
    return -nu + float(np.maximum(at_lower, at_upper).sum())


def _center(lower: np.ndarray, upper: np.ndarray, nu: float) -> np.ndarray:
    """argmin over P₀ ∈ Δ (0 where ℓ = 0) of D(P₀, ν): per cell c(λ) = λu/2 below t = √(ν ℓ u),
    λℓ/2 above it, t between (the subgradient of max(c²/ℓ + νℓ, c²/u + νu) is λ), λ set by bisection."""
    live = lower > 0
    kink = np.sqrt(nu * lower * upper)

    def at(lam: float) -> np.ndarray:
        c = np.where(lam * upper / 2 < kink, lam * upper / 2, np.where(lam * lower / 2 > kink, lam * lower / 2, kink))
        return np.where(live, c, 0.0)

    lo, hi = 0.0, 2.0 / float(lower[live].sum())  # at hi every live cell is ≥ λℓ/2, which sums to ≥ 1
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(at(mid).sum()) < 1.0 else (lo, mid)
    c = at(hi)
    return c / float(c.sum())


def dual_ball(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, float]:
    """(P₀, B) minimising D over P₀ and ν (module docstring); radius ∞ when every ℓ_x is 0."""
    if not np.any(lower > 0):
        return np.full(lower.shape, 1.0 / lower.size), math.inf
    seen: list[tuple[float, np.ndarray]] = []

    def value(nu: float) -> float:
        center = _center(lower, upper, nu)
        seen.append((dual_bound(center, lower, upper, nu), center))
        return seen[-1][0]

    value(0.0)
    golden_section_maximum(lambda nu: -value(nu), 0.0, _NU_MAX, _GOLDEN)  # every value is recorded in ``seen``
    bound, center = min(seen, key=lambda item: item[0])
    return center, math.log(bound)
