"""Anytime-valid evidence that the reporting population left F, robust to forged reports.

The drift watch looks after every batch, for as long as a collection lives, at reports anyone can
upload. A fixed-level test re-run at every look has a false-alarm rate that grows with the number of
looks, and a likelihood-ratio test reads a few forged reports on a rare output as a drift. This module
gives the statistic the watch decides on instead (docs/design.md, "The drift watch under attack").

**The null hypothesis.** Up to a fraction γ (the collection's *contamination budget*) of the reports
may be forged, by anyone who knows the published Q; the others are drawn i.i.d. from Q·P with P in
F = {P : D_α(P̂ ‖ P) ≤ B}. The output law of the reports then lies in

    C_γ = {(1 − γ)·Q·P + γ·r : P ∈ F, r ∈ Δ(Y)}.

**The statistic.** With c the counts of n reports (K = |Y| outputs) and q̂ = c/n,

    log E = n · min_{m ∈ C_γ} KL(q̂ ‖ m) − ρ_K(n),   ρ_K(n) = ln Γ(n + K/2) − ln Γ(n + ½) + ln Γ(½) − ln Γ(K/2),

and the watch rejects once log E ≥ ln(1/a) at level a.

**Why its false-alarm rate is ≤ a over every look at once.** Let h be the counts of the n_h honest
reports among the n (n_h ≥ (1 − γ)n) and P ∈ F their population. (i) Writing
q̂ = (1 − γ)·q̂_h + γ·b with b = ((γ − γ')q̂_h + γ'q̂_f)/γ a distribution (γ' ≤ γ the forged share,
q̂_f the forged reports' frequencies), joint convexity of KL gives
n·min_{C_γ} KL(q̂ ‖ m) ≤ n(1 − γ)·KL(q̂_h ‖ QP) ≤ n_h·KL(q̂_h ‖ QP). (ii) The Krichevsky–Trofimov
mixture (Dirichlet(½, …, ½)) KT(h) = Γ(K/2)/Γ(n_h + K/2)·Π_y Γ(h_y + ½)/Γ(½) satisfies
ln KT(h) = −n_h·H(q̂_h) − regret(h) with regret(h) ≤ ρ_K(n_h) ≤ ρ_K(n): the regret is largest when
every report is on one output (each output's term c ln c − ln Γ(c + ½) + ln Γ(½) − c lies in
[−½ ln 2, ln 2 − 1] for c ≥ 1 and is 0 for c = 0, so one non-empty output beats two), and that value is
ρ_K (checked by enumeration in the tests). Together, log E ≤ ln KT(h) − ln Π_y (QP)_y^{h_y} = ln M,
where M, the KT mixture's likelihood ratio against the true QP, is a nonnegative martingale with
mean 1 over the honest reports in their order, whatever the forger does (it is a function of the
honest reports only). Ville's inequality gives P(∃ look: log E ≥ ln(1/a)) ≤ P(sup M ≥ 1/a) ≤ a —
for any number of looks, taken whenever, after batches of any size ("universal inference" with a
mixture alternative [WRB20], [KT81]).

**The minimum, computed from below.** Validity needs the computed statistic never to exceed the
true one, so min_{C_γ} KL is replaced by a certified lower bound: for any point (P₀, r₀), convexity
gives f(P₀, r₀) + min_{P ∈ F} ∇_P f·(P − P₀) + min_{r ∈ Δ} ∇_r f·(r − r₀) ≤ min f, the first inner
minimum being the Rényi ball's support function rounded downwards (the exact audit's search). The
point only decides how tight the bound is (the test's power): the fit of :mod:`.ball_fit` on the
share of the reports the model attributes to honest users, alternated with the exact best r for that
P (water-filling), a few times.

numpy and the standard library (scipy through :mod:`.ball_fit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rldp.shared.uncertainty import UncertaintySet

from .ball_fit import ball_fit, certified_lower_bound

__all__ = [
    "Evidence",
    "contaminated_divergence",
    "evidence",
    "kt_regret",
    "spent_significance",
]

#: Rounds of the alternating fit (P by the ball fit, r exactly): the bound is valid after any number.
_ROUNDS = 4


def kt_regret(outputs: int, n: int) -> float:
    """ρ_K(n): the largest regret of the Krichevsky–Trofimov mixture over K outputs after n reports
    (module docstring); nondecreasing in n."""
    if n <= 0:
        return 0.0
    k = float(outputs)
    return math.lgamma(n + k / 2) - math.lgamma(n + 0.5) + math.lgamma(0.5) - math.lgamma(k / 2)


def spent_significance(alpha: float, sequence: int) -> float:
    """The level a_w = a / (w (w + 1)) of the w-th sequence of looks (w ≥ 1): a collection's windows
    are tested one after another, and Σ_w a_w = a keeps the false-alarm rate over its whole life ≤ a."""
    if sequence < 1:
        raise ValueError(f"sequence must be ≥ 1; got {sequence}")
    return alpha / (sequence * (sequence + 1))


def _water_fill(qhat: np.ndarray, base: np.ndarray, gamma: float) -> np.ndarray:
    """argmin_{r ∈ Δ} KL(q̂ ‖ base + γ r): base_y + γ r_y = q̂_y / λ where r_y > 0, r_y = 0 where
    base_y ≥ q̂_y / λ, with λ such that Σ r = 1 (bisection on 1/λ)."""
    lo, hi = 0.0, float(np.max(np.where(qhat > 0, (base + gamma) / np.maximum(qhat, 1e-300), 0.0))) + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        mass = float(np.maximum(qhat * mid - base, 0.0).sum())
        lo, hi = (mid, hi) if mass < gamma else (lo, mid)
    r = np.maximum(qhat * hi - base, 0.0)
    total = float(r.sum())
    return r / total if total > 0 else np.full(qhat.size, 1.0 / qhat.size)


def _contaminated_bound(
    qhat: np.ndarray,
    q: np.ndarray,
    ball: UncertaintySet,
    gamma: float,
    p: np.ndarray,
    r: np.ndarray,
    qp: np.ndarray,
) -> float:
    """The certified lower bound of min_{C_γ} KL(q̂ ‖ ·) at the point (P, r) (module docstring); ``qp`` = Q·P."""
    m = (1 - gamma) * qp + gamma * r
    seen = qhat > 0
    if np.any(m[seen] <= 0):
        return 0.0
    value = float(np.sum(qhat[seen] * (np.log(qhat[seen]) - np.log(m[seen]))))
    g = np.zeros_like(m)
    g[seen] = -qhat[seen] / m[seen]  # ∂f/∂m
    grad_p = (1 - gamma) * (q.T @ g)
    _, low = ball.extremes(grad_p.reshape(1, 1, -1))
    linear = float(low[0, 0]) - float(grad_p @ p) + gamma * (float(g.min()) - float(g @ r))
    return max(0.0, value + linear)


def contaminated_divergence(
    report_matrix: np.ndarray, counts: np.ndarray, ball: UncertaintySet, gamma: float, start: np.ndarray
) -> float:
    """A certified lower bound of min_{m ∈ C_γ} KL(q̂ ‖ m) (module docstring); ``start`` a point of the
    simplex near the estimate, where the fit begins."""
    q = np.asarray(report_matrix, dtype=float)
    c = np.asarray(counts, dtype=float)
    n = float(c.sum())
    qhat = c / n
    p = ball_fit(qhat, q, ball, start, n)
    if gamma <= 0:
        return certified_lower_bound(qhat, q, p, ball)
    qp = q @ p  # once per P: a product with Q is the costly step at large K
    r = _water_fill(qhat, (1 - gamma) * qp, gamma)
    best = 0.0  # every bound below is of min over C_γ (a bound over C_0 is not: C_γ ⊇ C_0)
    for _ in range(_ROUNDS):
        best = max(best, _contaminated_bound(qhat, q, ball, gamma, p, r, qp))
        m = (1 - gamma) * qp + gamma * r
        honest = qhat * np.where(m > 0, (1 - gamma) * qp / np.maximum(m, 1e-300), 0.0)
        if honest.sum() <= 0:
            break
        p = ball_fit(honest / honest.sum(), q, ball, p, n)  # EM's step for the honest share
        qp = q @ p
        r = _water_fill(qhat, (1 - gamma) * qp, gamma)
    return max(best, _contaminated_bound(qhat, q, ball, gamma, p, r, qp))


@dataclass(frozen=True)
class Evidence:
    """log E and what it is compared with (module docstring)."""

    log_evalue: float  # n·min_{C_γ} KL − ρ_K(n) (certified from below)
    threshold: float  # ln(1/a_w)
    divergence: float  # the certified lower bound of min_{C_γ} KL(q̂ ‖ m)
    regret: float  # ρ_K(n)

    @property
    def rejected(self) -> bool:
        return self.log_evalue >= self.threshold

    @property
    def p_value(self) -> float:
        """min(1, 1/E): ≤ a_w exactly when rejected, and P(p ≤ a_w at some look) ≤ a_w (Ville)."""
        return math.exp(-max(0.0, self.log_evalue))


def evidence(
    report_matrix: np.ndarray,
    counts: np.ndarray,
    ball: UncertaintySet,
    *,
    gamma: float,
    level: float,
    start: np.ndarray,
) -> Evidence:
    """The evidence against "the honest reports come from F" at level ``level`` (= a_w), with up to
    ``gamma`` of the reports forged."""
    c = np.asarray(counts, dtype=float)
    n = int(round(float(c.sum())))
    divergence = contaminated_divergence(report_matrix, c, ball, gamma, start)
    regret = kt_regret(int(c.size), n)
    return Evidence(n * divergence - regret, math.log(1.0 / level), divergence, regret)
