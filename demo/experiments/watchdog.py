"""The watchdog family of [ZDS23] for the ``lift-*`` experiments: complete merging, subset merging, subset RR.

* ``watchdog_groups`` — complete merging [ZDS23, eqs 6–8]: the high-risk symbols X_H (those whose own
  lifts break the budget) are all published as one super symbol, the rest as themselves.
* ``subset_merging_groups`` — [ZDS23, Alg 1] (the algorithm is an image in the text; rebuilt from Sec 4.1):
  start a subset at the riskiest unassigned high-risk symbol, add the unassigned symbol that minimises
  the subset's risk while the subset breaks the budget, and repeat *while unassigned high-risk symbols
  remain* (erratum: the loop condition); a last subset that still breaks the budget absorbs the other
  subsets (least risky union first). Risk ω = Λ + 1/Ψ (erratum of the printed Λ + Ψ), Λ/Ψ for LDP,
  the sum of the lift-based and lift-inverse measures for ℓ1 / χ² / α-lift [ZDS23, Sec 6.2].
* ``subset_rr`` — [ZDS23, Alg 2]: each subset of Alg 1 that meets the budget as a merged symbol is
  randomised instead by the optimal ALIP response on that subset ([ZDS23, eqs 25–30]).

The papers' versions (``enforce=False``) are not guaranteed: the merged symbol can itself break the
budget. ``enforce=True`` (rldp's rule) keeps adding the low-risk symbol that least raises the merged
symbol's risk until the exact audit of the whole mechanism passes (all merged is always private).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .lift_mechanisms import RowCone, lifts, optimal_matrix, partition_matrix

__all__ = [
    "NOTIONS",
    "Budget",
    "watchdog_groups",
    "subset_merging_groups",
    "subset_rr",
    "merged_information",
    "high_risk",
    "lambda_grid",
    "epsilon_grid",
]

_REL = 1e-9  # relative slack of the budget checks (floating point)


# notion -> what it bounds per output: (upper measure, lower measure) of the lift column l(·, y)
NOTIONS = ("ldp", "alip", "l1", "chi2", "alpha")


@dataclass(frozen=True)
class Budget:
    """A privacy budget on every output y: ε-LDP w.r.t. S (Λ/Ψ ≤ e^ε, ``eps_upper`` = ε),
    (ε_l, ε_u)-ALIP (Ψ ≥ e^{−ε_l}, Λ ≤ e^{ε_u}), or the lift-based and lift-inverse measures
    [ZDS23, Defs 5–6, Sec 6.2]: ℓ1 (Λ₁ ≤ e^{ε_u} − 1, Ψ₁ ≤ e^{ε_l} − 1) and χ² (Λ_χ² ≤ (e^{ε_u} − 1)²,
    Ψ_χ² ≤ (e^{ε_l} − 1)²) and α-lift privacy (Λ_α ≤ e^{ε_u}, Ψ_α ≤ e^{ε_l}, order ``alpha``)."""

    notion: str
    eps_lower: float
    eps_upper: float
    alpha: float = math.inf  # the order of the α-lift (notion "alpha" only)

    @classmethod
    def split(cls, epsilon: float, lam: float, notion: str = "alip", alpha: float = math.inf) -> Budget:
        """(λε, (1 − λ)ε), the papers' parametrisation [ZDS23, Sec 3]."""
        return cls(notion, lam * epsilon, (1.0 - lam) * epsilon, alpha)

    def measures(self, lift: np.ndarray, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(upper, lower) measure of each column of ``lift`` [s, y], each compared with its bound."""
        with np.errstate(divide="ignore"):
            if self.notion == "ldp":
                ratio = lift.max(axis=0) / lift.min(axis=0)
                return ratio, np.zeros_like(ratio)
            if self.notion == "alip":
                return lift.max(axis=0), 1.0 / lift.min(axis=0)
            if self.notion == "alpha":
                return _power_mean(lift, ps, self.alpha), _power_mean(1.0 / lift, ps, self.alpha)
            power = 1 if self.notion == "l1" else 2
            up = ps @ np.abs(lift - 1.0) ** power
            low = ps @ np.abs(1.0 / lift - 1.0) ** power
            return up, low

    def bounds(self) -> tuple[float, float]:
        if self.notion == "ldp":
            return math.exp(self.eps_upper), math.inf
        if self.notion in ("alip", "alpha"):
            return math.exp(self.eps_upper), math.exp(self.eps_lower)
        power = 1 if self.notion == "l1" else 2
        return math.expm1(self.eps_upper) ** power, math.expm1(self.eps_lower) ** power

    def check(self, lift: np.ndarray, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(meets the budget, risk ω) per column; ω = upper + lower measure (Λ + 1/Ψ for ALIP)."""
        up, low = self.measures(lift, ps)
        b_up, b_low = self.bounds()
        ok = (up <= b_up * (1 + _REL) + 1e-12) & (low <= b_low * (1 + _REL) + 1e-12)
        return ok, up + low

    def audit(self, q: np.ndarray, joint: np.ndarray) -> bool:
        """The exact audit of the whole mechanism at P: every observed output meets the budget."""
        lift, _ = lifts(q, joint)
        return bool(np.all(self.check(lift, joint.sum(axis=1))[0]))


def _power_mean(values: np.ndarray, ps: np.ndarray, alpha: float) -> np.ndarray:
    """(Σ_s P(s) v(s, y)^α)^{1/α} per column [ZDS23, eq 33, Def 6], scaled by the column maximum
    so that α = 100 on lifts of e^{±12} neither overflows nor underflows."""
    top = values.max(axis=0)
    if math.isinf(alpha):
        return top
    with np.errstate(invalid="ignore"):  # a zero lift: Ψ_α = ∞ (its column's top is ∞)
        scaled = top * (ps @ (values / top[None, :]) ** alpha) ** (1.0 / alpha)
    out: np.ndarray = np.where(np.isinf(top), np.inf, scaled)
    return out


def _group_lift(joint: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    ps, px = joint.sum(axis=1), joint.sum(axis=0)
    member = np.zeros((len(groups), joint.shape[1]))
    for i, g in enumerate(groups):
        member[i, g] = 1.0
    out: np.ndarray = (joint / ps[:, None]) @ member.T / (member @ px)[None, :]
    return out


def _ok(joint: np.ndarray, group: list[int], budget: Budget) -> bool:
    return bool(budget.check(_group_lift(joint, [group]), joint.sum(axis=1))[0][0])


def _omega(joint: np.ndarray, groups: list[list[int]], budget: Budget) -> np.ndarray:
    return budget.check(_group_lift(joint, groups), joint.sum(axis=1))[1]


def high_risk(joint: np.ndarray, budget: Budget) -> list[int]:
    """X_H: the symbols whose own lifts break the budget [ZDS23, eqs 6–7]."""
    ok, _ = budget.check(_group_lift(joint, [[x] for x in range(joint.shape[1])]), joint.sum(axis=1))
    return [int(x) for x in np.flatnonzero(~ok)]


def _enforce(joint: np.ndarray, groups: list[list[int]], budget: Budget) -> list[list[int]]:
    """rldp's rule: grow the one breaching merged group with low-risk symbols until the audit passes."""
    size = joint.shape[1]
    while groups and not budget.audit(partition_matrix(groups, size), joint):
        bad = next(i for i, g in enumerate(groups) if not _ok(joint, g, budget))
        used = {x for g in groups for x in g}
        free = [x for x in range(size) if x not in used]
        if not free:  # every symbol merged into groups; merge the groups themselves
            groups = [sorted(x for g in groups for x in g)]
            continue
        scores = _omega(joint, [groups[bad] + [x] for x in free], budget)
        groups[bad] = groups[bad] + [free[int(np.argmin(scores))]]
    return groups


def watchdog_groups(joint: np.ndarray, budget: Budget, *, enforce: bool) -> list[list[int]]:
    """Complete merging: [X_H] (or [] if no symbol is at risk); grown by rldp's rule if ``enforce``."""
    hr = high_risk(joint, budget)
    groups = [hr] if hr else []
    return _enforce(joint, groups, budget) if enforce else groups


def subset_merging_groups(joint: np.ndarray, budget: Budget, *, enforce: bool) -> list[list[int]]:
    """[ZDS23, Alg 1] (see the module docstring); grown by rldp's rule if ``enforce``."""
    unassigned = high_risk(joint, budget)
    groups: list[list[int]] = []
    while unassigned:
        own = _omega(joint, [[x] for x in unassigned], budget)
        group = [unassigned.pop(int(np.argmax(own)))]
        while unassigned and not _ok(joint, group, budget):
            scores = _omega(joint, [group + [x] for x in unassigned], budget)
            group.append(unassigned.pop(int(np.argmin(scores))))
        groups.append(group)
    while len(groups) > 1 and not _ok(joint, groups[-1], budget):
        last = groups.pop()
        scores = _omega(joint, [last + g for g in groups], budget)
        last = last + groups.pop(int(np.argmin(scores)))
        groups.append(last)
    return _enforce(joint, groups, budget) if enforce else groups


def merged_information(joint: np.ndarray, groups: list[list[int]]) -> float:
    """I(X;Y) = H(X) − Σ_i Σ_{x ∈ X_i} P(x) ln(P(X_i)/P(x)) [ZDS23, eq 13] (eq 11 for one group)."""
    px = joint.sum(axis=0)
    h = -float(np.sum(px * np.log(px, where=px > 0, out=np.zeros_like(px))))
    loss = sum(float(np.sum(px[g] * np.log(px[g].sum() / px[g]))) for g in groups if len(g))
    return h - loss


def subset_rr(joint: np.ndarray, budget: Budget, *, enforce: bool) -> np.ndarray:
    """[ZDS23, Alg 2]: Alg 1's subsets, each randomised by its optimal ALIP response when one
    exists (the merged symbol meets the budget); a breaching subset stays merged. Returns Q[y, x]."""
    if budget.notion != "alip":
        raise ValueError("subset random response is defined for ALIP budgets only")
    size = joint.shape[1]
    groups = subset_merging_groups(joint, budget, enforce=enforce)
    grouped = {x for g in groups for x in g}
    blocks: list[np.ndarray] = []
    singles = [x for x in range(size) if x not in grouped]
    for x in singles:
        row = np.zeros(size)
        row[x] = 1.0
        blocks.append(row[None, :])
    for g in groups:
        sub = np.zeros((1, size))
        sub[0, g] = 1.0
        if len(g) > 1 and _ok(joint, g, budget):
            cone = RowCone.alip(joint, budget.eps_lower, budget.eps_upper, columns=g)
            q_g = optimal_matrix(cone, joint.sum(axis=0)[g])
            sub = np.zeros((len(q_g), size))
            sub[:, g] = q_g
        blocks.append(sub)
    return np.vstack(blocks)


def lambda_grid(quick: bool) -> tuple[float, ...]:
    """The λ of [ZDS23, Figs 2–7] (ε_l = λε, ε_u = (1 − λ)ε)."""
    return (0.5, 0.65) if quick else (0.35, 0.5, 0.65)


def epsilon_grid(quick: bool) -> tuple[float, ...]:
    """ε_LDP ∈ {0.25, 0.5, …, 8} [ZDS23, Figs 2–12] (quick: a few of them)."""
    if quick:
        return (1.0, 2.0, 4.0)
    return tuple(round(0.25 * k, 2) for k in range(1, 33))
