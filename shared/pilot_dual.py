"""The pilot's tightest χ² ball over its box (``empirical-bernstein-box/v4``; :mod:`rldp.shared.pilot`
builds the box and keeps the smallest ball).

For a centre P₀ (a distribution, 0 where ℓ_x = 0) and every P in the box ℓ ≤ P ≤ u *and the simplex*,
1 + χ²(P₀‖P) = Σ_x P₀_x²/P_x. The v3 balls bound its maximum over the box in two fixed ways; both are
special cases of one bound (weak Lagrangian duality for the constraint ΣP = 1 [BV04, Sec 5.1.3]): for
every ν ≥ 0,

    max_{ℓ ≤ P ≤ u, ΣP = 1} Σ P₀²/P ≤ max_{ℓ ≤ P ≤ u} [Σ_x P₀_x²/P_x + ν (Σ_x P_x − 1)]
                                     = −ν + Σ_x max(P₀_x²/ℓ_x + ν ℓ_x, P₀_x²/u_x + ν u_x) =: D(P₀, ν),

each term being convex in P_x, so at an end of [ℓ_x, u_x] (a cell with ℓ_x = 0 has P₀_x = 0 and
contributes ν u_x). ν = 0 with P₀ = ℓ/Σℓ is the box ball (D = 1/Σℓ); ν = 1 is the per-cell χ² ball
(Σ max (P₀ − p)²/p + 1). D is jointly convex in (P₀, ν) (each term a maximum of functions convex in
both); this module minimises it — over P₀ for each ν in closed form up to the multiplier of ΣP₀ = 1
(bisection), over ν by golden-section search — and any (P₀, ν) it stops at is a valid bound, so
D₂(P₀‖P) = log(1 + χ²) ≤ B = log D(P₀, ν) on the box's event, and D_α ≤ D₂ for α ≤ 2 [vEH14, Thm 3].
numpy and the standard library only; fixed iteration counts, so ``rldp audit`` recomputes the same ball.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dual_ball", "dual_bound"]

#: Bisection steps for ΣP₀ = 1 and golden-section steps for ν (fixed: the audit repeats them exactly).
_BISECTIONS = 60
_GOLDEN = 40
#: ν is searched in [0, _NU_MAX]: ν = 1 is the per-cell ball; larger ν weighs the upper bounds more.
_NU_MAX = 8.0


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

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = 0.0, _NU_MAX
    value(0.0)
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = value(x1), value(x2)
    for _ in range(_GOLDEN):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - ratio * (b - a)
            f1 = value(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + ratio * (b - a)
            f2 = value(x2)
    bound, center = min(seen, key=lambda item: item[0])
    return center, math.log(bound)
