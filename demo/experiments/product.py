"""The product's funnel/lift designers and audits, called the way the ``funnel-*``/``lift-*`` figures need.

rldp's lines come from :mod:`rldp.aggregator.design.solvers.funnel` (designers: optimal LIP/ALIP, optimal
ε-LDP w.r.t. a latent S, GRR/OUE/CR calibrated on the exact audit, the watchdog family with and
without enforcement) and :mod:`rldp.shared.audit` (exact audits: ``secret_ldp_epsilon``,
``lip_epsilons``, their robust versions). A budget that the product has no notion for (ℓ1-/χ²-lift
privacy, [ZDS23, Sec 6.2]) and the paper's unenforced subset RR fall back to the experiment's own
rebuild (:mod:`.watchdog`), and the figures say so.
"""

from __future__ import annotations

import math

import numpy as np

from rldp.aggregator.design.solvers.funnel.claim import Claim
from rldp.aggregator.design.solvers.funnel.families import calibrate, cr_alpha, grr_alpha, oue_alpha
from rldp.aggregator.design.solvers.funnel.ldp import latent_polyopt
from rldp.aggregator.design.solvers.funnel.lip import optimal_lip
from rldp.aggregator.design.solvers.funnel.watchdog import subset_merging, subset_rr, watchdog
from rldp.shared.audit import AUDIT_TOLERANCE, lip_epsilons, robust_lip_epsilons, secret_ldp_epsilon
from rldp.shared.uncertainty import UncertaintySet

from .config import ORDER
from .watchdog import Budget

__all__ = ["claim", "design", "audited", "passes", "calibrated", "PRODUCT_NOTIONS"]

PRODUCT_NOTIONS = ("ldp", "alip")


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


def passes(q: np.ndarray, joint: np.ndarray, budget: Budget, uncertainty: UncertaintySet | None = None) -> bool:
    """The product's exact audit of the claim (over ``uncertainty`` when given, else at P̂)."""
    if budget.notion == "ldp":
        if uncertainty is not None:
            from rldp.shared.audit import robust_secret_ldp_epsilon

            return float(robust_secret_ldp_epsilon(q, uncertainty)[0]) <= budget.eps_upper + AUDIT_TOLERANCE
        return float(secret_ldp_epsilon(q, joint)[0]) <= budget.eps_upper + AUDIT_TOLERANCE
    lo, up = robust_lip_epsilons(q, uncertainty) if uncertainty is not None else lip_epsilons(q, joint)
    return bool(lo <= budget.eps_lower + AUDIT_TOLERANCE and up <= budget.eps_upper + AUDIT_TOLERANCE)


def calibrated(family: str, joint: np.ndarray, epsilon: float) -> tuple[float, np.ndarray]:
    """(α, Q) of GRR/OUE (Q[y, x]) or CR (Q[y, s, x]) at the largest α meeting ε-LIP at P̂ (product)."""
    c = claim(joint, Budget("alip", epsilon, epsilon))
    n_s, a = joint.shape
    if family == "cr":
        reads_s = Claim("alip", epsilon, epsilon, UncertaintySet(joint, 0.0, ORDER), False)
        q, params = calibrate(lambda t: cr_alpha(joint, t), reads_s.passes, "cr")
        q = q.reshape(q.shape[0], n_s, a)
    else:
        family_fn = grr_alpha if family == "grr" else oue_alpha
        q, params = calibrate(lambda t: family_fn(a, t), c.passes, family)
    alpha = params["alpha"]
    return (math.inf if alpha is None else float(alpha)), q
