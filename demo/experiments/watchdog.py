"""Experiment-only pieces of the ``lift-*`` figures: the budgets the product has no notion for, the paper's
unenforced subset RR, and the ε grid.

Everything the product computes comes from the product (:mod:`.product`): its watchdog designers
(``rldp.aggregator.design.solvers.funnel.watchdog``: complete merging, subset merging and subset RR
under ε-LDP w.r.t. S and ALIP, with and without enforcement), its exact audits (``rldp.shared.audit``),
its lift measures (:func:`rldp.shared.lift.output_lift_measures`) and mutual information
(:mod:`rldp.shared.information`). What stays here, and why the product does not have it:

* :class:`Budget` for **ℓ1-, χ²- and α-lift privacy** [ZDS23, Sec 6.2] (``EXPERIMENT_NOTIONS``): a bound on
  the lift-based and lift-inverse measures of every output. rldp has no such notion (they bound averages,
  not the worst case: [ZDS23, Props 4, 6]), so no designer or audit of the product claims them; the
  measures themselves are the product's. For ε-LDP w.r.t. S and ALIP a :class:`Budget` only carries the
  notion and ε to the product (:func:`.product.claim`).
* :func:`subset_merging_groups` — [ZDS23, Alg 1] under such a budget (lift-fig11 to 13): the product's
  subset merging (``funnel.watchdog.subset_merging``) judges a part by its (Λ, Ψ) only, and these
  budgets judge a whole lift column. Risk ω = upper + lower measure ([ZDS23, Sec 6.2]); the rebuilt
  loop as in the product (erratum: while unassigned high-risk symbols remain). ``enforce=True`` grows
  the breaching part with the low-risk symbol that least raises its risk until the budget holds for the
  whole mechanism (all merged always does).
* :func:`paper_subset_rr` — [ZDS23, Alg 2] as printed (lift-fig8 to 10, ``subset-rr-paper``): the product's
  Alg 1 partition (``subset_merging(claim, enforce=False)``), each part randomised by the product's
  optimal ALIP rows on that part (``optimal_lip_rows``, [ZDS23, eqs 25–30]) at the budget less the
  product's ``DESIGN_MARGIN`` (10⁻⁷ relative, as the product's subset RR: rows exactly on the boundary
  overshot it by 1e-8 nats of round-off on a 15 × 200 draw), and a part whose polytope is empty kept
  merged. Not guaranteed: a merged part can leak. The product's subset RR (``subset-rr``) never
  publishes that (it unites and enlarges parts, then audits), so the paper's version exists only here,
  to show the leak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rldp.aggregator.design.solvers.funnel.claim import Claim
from rldp.aggregator.design.solvers.funnel.lip import optimal_lip_rows
from rldp.aggregator.design.solvers.funnel.watchdog import partition_matrix, subset_merging
from rldp.shared.lift import lift_table, output_lift_measures
from rldp.shared.tolerances import DESIGN_MARGIN

__all__ = [
    "EXPERIMENT_NOTIONS",
    "Budget",
    "groups_matrix",
    "subset_merging_groups",
    "paper_subset_rr",
    "epsilon_grid",
]

_REL = 1e-9  # relative slack of the budget checks (floating point)

#: Budgets with no product notion: the experiment checks them with the product's lift measures
#: ("ldp" and "alip" budgets are the product's notions, designed and audited by it).
EXPERIMENT_NOTIONS = ("l1", "chi2", "alpha")

# notion -> (upper measure, lower measure) of rldp.shared.lift.output_lift_measures
_MEASURES = {
    "l1": ("l1_lift", "l1_lift_inverse"),
    "chi2": ("chi2_lift", "chi2_lift_inverse"),
    "alpha": ("alpha_lift", "alpha_lift_inverse"),
}


@dataclass(frozen=True)
class Budget:
    """A privacy budget on every output y: ε-LDP w.r.t. S (``eps_upper`` = ε) or (ε_l, ε_u)-ALIP, which the
    product designs and audits, or [ZDS23, Defs 5–6, Sec 6.2] ℓ1 (Λ₁ ≤ e^{ε_u} − 1, Ψ₁ ≤ e^{ε_l} − 1),
    χ² (Λ_χ² ≤ (e^{ε_u} − 1)², Ψ_χ² ≤ (e^{ε_l} − 1)²) or α-lift privacy (Λ_α ≤ e^{ε_u}, Ψ_α ≤ e^{ε_l},
    order ``alpha``), which only the experiment checks (:meth:`check`, :meth:`audit`)."""

    notion: str
    eps_lower: float
    eps_upper: float
    alpha: float = math.inf  # the order of the α-lift (notion "alpha" only)

    @classmethod
    def split(cls, epsilon: float, lam: float, notion: str = "alip", alpha: float = math.inf) -> Budget:
        """(λε, (1 − λ)ε), the papers' parametrisation [ZDS23, Sec 3]."""
        return cls(notion, lam * epsilon, (1.0 - lam) * epsilon, alpha)

    def _own(self) -> None:
        if self.notion not in EXPERIMENT_NOTIONS:
            raise ValueError(
                f"budget {self.notion!r} is the product's: design and audit it with .product "
                f"(the experiment checks only {', '.join(EXPERIMENT_NOTIONS)})"
            )

    def measures(self, lift: np.ndarray, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(upper, lower) measure of each column of ``lift`` [s, y] (the product's lift measures)."""
        self._own()
        up, low = _MEASURES[self.notion]
        per = output_lift_measures(lift, ps, self.alpha if self.notion == "alpha" else 2.0)
        return per[up], per[low]

    def bounds(self) -> tuple[float, float]:
        self._own()
        if self.notion == "alpha":
            return math.exp(self.eps_upper), math.exp(self.eps_lower)
        power = 1 if self.notion == "l1" else 2
        return math.expm1(self.eps_upper) ** power, math.expm1(self.eps_lower) ** power

    def check(self, lift: np.ndarray, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(meets the budget, risk ω) per column; ω = upper + lower measure [ZDS23, Sec 6.2]."""
        up, low = self.measures(lift, ps)
        b_up, b_low = self.bounds()
        ok = (up <= b_up * (1 + _REL) + 1e-12) & (low <= b_low * (1 + _REL) + 1e-12)
        return ok, up + low

    def audit(self, q: np.ndarray, joint: np.ndarray) -> bool:
        """Every output of the whole mechanism meets the budget at P (the lift of the product's ``lift_table``)."""
        lift, ps, _ = lift_table(q, joint)
        return bool(np.all(self.check(lift, ps)[0]))


def groups_matrix(groups: list[list[int]], size: int) -> np.ndarray:
    """Q publishing each group as one output and every other symbol as itself (the product's ``partition_matrix``)."""
    grouped = {x for g in groups for x in g}
    return partition_matrix([[x] for x in range(size) if x not in grouped] + [list(g) for g in groups], size)


def _check(joint: np.ndarray, groups: list[list[int]], budget: Budget) -> tuple[np.ndarray, np.ndarray]:
    """(meets the budget, ω) of each group merged into one output: its column of the lift table."""
    member = np.zeros((len(groups), joint.shape[1]))
    for i, g in enumerate(groups):
        member[i, g] = 1.0
    lift, ps, _ = lift_table(member, joint)
    return budget.check(lift, ps)


def _ok(joint: np.ndarray, group: list[int], budget: Budget) -> bool:
    return bool(_check(joint, [group], budget)[0][0])


def _omega(joint: np.ndarray, groups: list[list[int]], budget: Budget) -> np.ndarray:
    return _check(joint, groups, budget)[1]


def _high_risk(joint: np.ndarray, budget: Budget) -> list[int]:
    """X_H: the symbols whose own lifts break the budget [ZDS23, eqs 6–7]."""
    ok, _ = _check(joint, [[x] for x in range(joint.shape[1])], budget)
    return [int(x) for x in np.flatnonzero(~ok)]


def _enforce(joint: np.ndarray, groups: list[list[int]], budget: Budget) -> list[list[int]]:
    """Grow the breaching merged group with low-risk symbols until the budget holds for the whole mechanism."""
    size = joint.shape[1]
    while groups and not budget.audit(groups_matrix(groups, size), joint):
        bad = next(i for i, g in enumerate(groups) if not _ok(joint, g, budget))
        used = {x for g in groups for x in g}
        free = [x for x in range(size) if x not in used]
        if not free:  # every symbol merged into groups; merge the groups themselves
            groups = [sorted(x for g in groups for x in g)]
            continue
        scores = _omega(joint, [groups[bad] + [x] for x in free], budget)
        groups[bad] = groups[bad] + [free[int(np.argmin(scores))]]
    return groups


def subset_merging_groups(joint: np.ndarray, budget: Budget, *, enforce: bool) -> list[list[int]]:
    """[ZDS23, Alg 1] under an ℓ1/χ²/α-lift budget (see the module docstring); grown if ``enforce``."""
    budget._own()
    unassigned = _high_risk(joint, budget)
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


def paper_subset_rr(claim: Claim) -> np.ndarray:
    """[ZDS23, Alg 2] as printed, for an ALIP ``claim`` at P̂: Q[y, x] (see the module docstring)."""
    joint = claim.joint
    size = joint.shape[1]
    p_x, p_s = joint.sum(axis=0), joint.sum(axis=1)
    merged, _ = subset_merging(claim, enforce=False)
    eps_l, eps_u = claim.epsilon_lower * (1 - DESIGN_MARGIN), claim.epsilon_upper * (1 - DESIGN_MARGIN)
    blocks: list[np.ndarray] = []
    for row in merged:
        part = [int(x) for x in np.flatnonzero(row)]
        found = None
        if len(part) > 1:
            cond = joint[:, part] / p_x[part]
            found = optimal_lip_rows(cond, p_s, p_x[part], eps_l, eps_u)
        if found is None:  # a single symbol, or a part no response on it can make private: merged
            blocks.append(row[None, :])
            continue
        rows, weights, _ = found
        block = np.zeros((len(rows), size))
        block[:, part] = weights[:, None] * rows / p_x[part]
        block[:, part] /= block[:, part].sum(axis=0, keepdims=True)  # LP round-off
        blocks.append(block)
    return np.vstack(blocks)


def epsilon_grid(quick: bool) -> tuple[float, ...]:
    """ε_LDP ∈ {0.25, 0.5, …, 8} [ZDS23, Figs 2–12] (quick: a few of them)."""
    if quick:
        return (1.0, 2.0, 4.0)
    return tuple(round(0.25 * k, 2) for k in range(1, 33))
