"""The product's funnel/lift designers, audits and utility, called the way the ``funnel-*``/``lift-*`` figures need.

Every number of those figures that the product computes comes from here: the designers of
:mod:`rldp.aggregator.design.solvers.funnel` (optimal LIP/ALIP, optimal ε-LDP w.r.t. a latent S,
GRR/OUE/CR calibrated on the exact audit, the watchdog family with and without enforcement), the exact
audits of :mod:`rldp.shared.audit` (``secret_ldp_epsilon``, ``lip_leakage``/``lip_epsilons`` and their
robust versions) and I(X;Y), H(X) of :mod:`rldp.shared.information`. Budgets the product has no notion
for (ℓ1-, χ²- and α-lift privacy, [ZDS23, Sec 6.2]) and the paper's unenforced subset RR are the
experiment's own (:mod:`.watchdog`, built on the product's pieces), and the figures say so.
"""

from __future__ import annotations

import math

import numpy as np

from rldp.aggregator.design.solvers.funnel.claim import Claim
from rldp.aggregator.design.solvers.funnel.families import calibrate, cr_alpha, grr_alpha, oue_alpha
from rldp.aggregator.design.solvers.funnel.ldp import latent_polyopt
from rldp.aggregator.design.solvers.funnel.lip import optimal_lip
from rldp.aggregator.design.solvers.funnel.watchdog import subset_merging, subset_rr, watchdog
from rldp.shared.audit import (
    AUDIT_TOLERANCE,
    lip_epsilons,
    lip_leakage,
    robust_lip_epsilons,
    robust_secret_ldp_epsilon,
    secret_ldp_epsilon,
)
from rldp.shared.information import entropy, mutual_information
from rldp.shared.uncertainty import UncertaintySet

from .config import ORDER
from .watchdog import Budget

__all__ = [
    "claim",
    "design",
    "audited",
    "lip_epsilon",
    "passes",
    "calibrated",
    "released_information",
    "released_nmi",
]


def claim(joint: np.ndarray, budget: Budget, uncertainty: UncertaintySet | None = None) -> Claim:
    """The product's claim for a budget on a latent S (at P̂ unless ``uncertainty`` is given)."""
    uset = uncertainty or UncertaintySet(joint, 0.0, ORDER)
    return Claim(budget.notion, budget.eps_lower, budget.eps_upper, uset, True)


def design(
    method: str,
    joint: np.ndarray,
    budget: Budget,
    uncertainty: UncertaintySet | None = None,
    time_budget: float = 60.0,
) -> np.ndarray:
    """Q[y, x] of the product's ``method`` (watchdog[-paper], subset-merging[-paper], subset-rr, aorr);
    ``time_budget``: seconds for a column-generation design (the latent LDP optimum beyond exact sizes)."""
    c = claim(joint, budget, uncertainty)
    if method == "aorr":
        if budget.notion == "ldp" or c.robust:  # over F the product certifies ALIP through LDP w.r.t. S
            return latent_polyopt(c.uncertainty, c.ldp_budget, time_budget=time_budget)[0]
        return optimal_lip(joint, budget.eps_lower, budget.eps_upper).matrix
    if method in ("watchdog", "watchdog-paper"):
        return watchdog(c, enforce=method == "watchdog")[0]
    if method in ("subset-merging", "subset-merging-paper"):
        return subset_merging(c, enforce=method == "subset-merging")[0]
    if method == "subset-rr":
        found = subset_rr(c)
        return found[0] if found is not None else subset_merging(c, enforce=True)[0]
    raise ValueError(f"no product designer for {method!r}")


def audited(q: np.ndarray, joint: np.ndarray) -> tuple[float, float]:
    """(ε_l, ε_u) of the lift at P̂ by the product's exact audit."""
    lo, up = lip_epsilons(q, joint)
    return float(lo), float(up)


def lip_epsilon(q: np.ndarray, joint: np.ndarray) -> float:
    """The LIP ε of the lift at P̂, max(ε_l, ε_u), by the product's exact audit [LTS20, Def 2]."""
    return float(lip_leakage(q, joint).epsilon)


def passes(q: np.ndarray, joint: np.ndarray, budget: Budget, uncertainty: UncertaintySet | None = None) -> bool:
    """The product's exact audit of the claim (over ``uncertainty`` when given, else at P̂)."""
    if budget.notion == "ldp":
        if uncertainty is not None:
            return float(robust_secret_ldp_epsilon(q, uncertainty)[0]) <= budget.eps_upper + AUDIT_TOLERANCE
        return float(secret_ldp_epsilon(q, joint)[0]) <= budget.eps_upper + AUDIT_TOLERANCE
    lo, up = robust_lip_epsilons(q, uncertainty) if uncertainty is not None else lip_epsilons(q, joint)
    return bool(lo <= budget.eps_lower + AUDIT_TOLERANCE and up <= budget.eps_upper + AUDIT_TOLERANCE)


def calibrated(family: str, joint: np.ndarray, epsilon: float) -> tuple[float, np.ndarray]:
    """(α, Q) of GRR/OUE (Q[y, x]) or CR (Q[y, (s, x)], s major: it reads S too) at the largest α meeting
    ε-LIP at P̂ (product)."""
    c = claim(joint, Budget("alip", epsilon, epsilon))
    a = joint.shape[1]
    if family == "cr":
        reads_s = Claim("alip", epsilon, epsilon, UncertaintySet(joint, 0.0, ORDER), False)
        q, params = calibrate(lambda t: cr_alpha(joint, t), reads_s.passes, "cr")
    else:
        family_fn = grr_alpha if family == "grr" else oue_alpha
        q, params = calibrate(lambda t: family_fn(a, t), c.passes, family)
    alpha = params["alpha"]
    return (math.inf if alpha is None else float(alpha)), q


def released_information(q: np.ndarray, joint: np.ndarray) -> float:
    """I(X;Y) in nats (the product's ``mutual_information``) for Q[y, x] over the released X, or for a
    mechanism that reads S too (Q[y, (s, x)], s major, as CR): then through its channel on X,
    Q(y|x) = Σ_s Q(y|s, x) P(s|x) — the utility [LTS20, Sec VIII] measures, I(X;Y), not I((S, X);Y)."""
    q = np.asarray(q, dtype=float)
    p_x = joint.sum(axis=0)
    if q.shape[1] == joint.size:
        cond = np.divide(joint, p_x, out=np.zeros_like(joint), where=p_x > 0)  # P(s|x)
        q = np.einsum("ysx,sx->yx", q.reshape(len(q), *joint.shape), cond)
    return mutual_information(q, p_x)


def released_nmi(q: np.ndarray, joint: np.ndarray) -> float:
    """NMI = I(X;Y)/H(X) (the product's ``entropy``) [ZDS23, Sec 3.1.3]."""
    return released_information(q, joint) / entropy(joint.sum(axis=0))
