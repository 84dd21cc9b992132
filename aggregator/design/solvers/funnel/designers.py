"""The designers of the notions ``ldp`` (w.r.t. S), ``lip`` and ``alip``, one object per method.

Same protocol as :mod:`..registry`: ``designer(uncertainty, options) -> (Q, parameters)``. The claim
is (:class:`.claim.Claim`) ε-LDP w.r.t. S, ε-LIP or (ε_l, ε_u)-ALIP, at P̂ (radius 0) or over F.

* ``optimal`` — ldp: PolyOpt ([LZG24, Thm 3] = [LTS20, Thm 2] over F; S an input) or its latent
  cone (:mod:`.ldp`); lip/alip at radius 0: [LTS20, Thm 3] / AORR [ZDS23, eq 12] (:mod:`.lip`; column
  generation beyond 24 input symbols or with solver "cg", :mod:`.lip_cg`); over
  a positive radius the better (in I(X;Y) at P̂) of two sound designs: the robust ldp optimum at
  min(ε_l, ε_u) (ε-LDP w.r.t. S for every P ∈ F implies ε-LIP for every P ∈ F; ``parameters.via =
  "ldp"``) and the P̂-optimum at budgets shrunk by the largest factor whose robust audit passes
  (``via = "shrunk-lip"``). Neither is proved optimal over F.
* ``grr``, ``oue``, ``cr`` — [LTS20, eqs 28-33, Alg 1] calibrated on the exact audit (:mod:`.families`).
* ``watchdog``, ``subset-merging`` — [ZDS23, eqs 6-8, Alg 1] enforced by the audit; ``watchdog-paper``
  as printed (its document is refused when it leaks); ``subset-rr`` — [ZDS23, Alg 2] (lip/alip),
  rldp's subset merging when its result fails the audit (``parameters.fallback``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from rldp.shared.information import mutual_information
from rldp.shared.notions import NOTIONS
from rldp.shared.tolerances import DESIGN_MARGIN
from rldp.shared.uncertainty import UncertaintySet

from ...primitives.errors import DesignError
from ...primitives.options import DesignOptions
from .. import polyopt
from .claim import FUNNEL_NOTIONS, Claim
from .families import calibrate, cr_alpha, grr_alpha, oue_alpha
from .ldp import latent_polyopt
from .lip import optimal_lip
from .watchdog import subset_merging, subset_rr, watchdog

__all__ = ["FUNNEL_DESIGNERS", "claim_for"]


def claim_for(uncertainty: UncertaintySet, options: DesignOptions) -> Claim:
    """The claim a request makes: ε for ldp and lip, (ε_l, ε_u) for alip."""
    if NOTIONS[options.notion].two_sided:
        low, up = float(options.epsilon_lower or 0.0), float(options.epsilon_upper or 0.0)
    else:
        low = up = options.level
    return Claim(options.notion, low, up, uncertainty, bool(options.latent))


def _inputs(uncertainty: UncertaintySet, options: DesignOptions) -> int:
    return uncertainty.n_released if options.latent else uncertainty.public_distribution.size


class _Base:
    takes_solver = False
    robust = True
    supports_latent = True
    notions = frozenset(FUNNEL_NOTIONS)
    name = ""
    summary = ""


class OptimalDesigner(_Base):
    name = "optimal"
    summary = (
        "the utility-optimal mechanism [LTS20, Thm 2-3; ZDS23, eq 12] (vertex enumeration + LP, or column generation)"
    )
    takes_solver = True

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        claim = claim_for(uncertainty, options)
        margin = 1 - DESIGN_MARGIN
        if claim.kind == "ratio":
            return self._ldp(uncertainty, options, claim.ldp_budget)
        if not claim.robust:
            result = optimal_lip(
                claim.joint,
                claim.epsilon_lower * margin,
                claim.epsilon_upper * margin,
                solver=options.solver,
                time_budget=options.time_budget,
                progress=options.progress,
                claimed=(claim.epsilon_lower, claim.epsilon_upper),
            )
            return result.matrix, result.parameters()
        # Over F: the better of two sound designs (both pass the robust audit; neither is proved optimal),
        # each given half the time budget so that the design as a whole honours it.
        options = replace(options, time_budget=options.time_budget / 2)
        candidates: list[tuple[np.ndarray, dict[str, Any]]] = []
        errors = []
        try:
            q, params = self._ldp(uncertainty, options, claim.ldp_budget)
            candidates.append((q, {**params, "via": "ldp", "ldp_epsilon": claim.ldp_budget}))
        except DesignError as exc:
            errors.append(str(exc))
        try:
            candidates.append(_shrunk_lip(claim, options))
        except DesignError as exc:
            errors.append(str(exc))
        if not candidates:
            raise DesignError("; ".join(errors))
        p_x = claim.joint.sum(axis=0)
        return max(candidates, key=lambda c: mutual_information(c[0], p_x))

    @staticmethod
    def _ldp(uncertainty: UncertaintySet, options: DesignOptions, eps: float) -> tuple[np.ndarray, dict[str, Any]]:
        if options.latent:
            return latent_polyopt(uncertainty, eps, options.solver, options.time_budget)
        return polyopt.polyopt(uncertainty, False, replace(options, epsilon=eps))


#: Bisection steps on the shrink factor t of :func:`_shrunk_lip` (t to 2^-12).
_SHRINK_STEPS = 12


def _shrunk_lip(claim: Claim, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
    """The optimal (tε_l, tε_u)-ALIP mechanism at P̂ for the largest t ∈ (0, 1] (bisection) whose robust
    audit over F passes (the robust leakage of the P̂-optimum grows with t; t → 0 is the constant
    mechanism, which never leaks). Column generation (beyond the exact size) gets an equal share of
    the time budget per step."""
    lo, hi, best, solver = 0.0, 1.0, None, "exact"
    for _ in range(_SHRINK_STEPS):
        mid = 0.5 * (lo + hi)
        budget = options.time_budget / _SHRINK_STEPS
        found = optimal_lip(
            claim.joint, mid * claim.epsilon_lower, mid * claim.epsilon_upper, solver=options.solver, time_budget=budget
        )
        if claim.passes(found.matrix):
            lo, best, solver = mid, found.matrix, found.solver
        else:
            hi = mid
    if best is None:
        raise DesignError("optimal: no shrunk LIP optimum passes the robust audit")
    return best, {"solver": solver, "via": "shrunk-lip", "shrink": lo}


class FamilyDesigner(_Base):
    """GRR, OUE (X only) and CR (reads S) at the largest α whose exact audit passes."""

    def __init__(self, name: str, summary: str, latent: bool) -> None:
        self.name, self.summary, self.supports_latent = name, summary, latent

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        claim = claim_for(uncertainty, options)
        a = _inputs(uncertainty, options)
        if self.name == "grr":
            return calibrate(lambda t: grr_alpha(a, t), claim.passes, self.name)
        if self.name == "oue":
            oue_alpha(a, 0.0)  # the size check first: a clear error before any search
            return calibrate(lambda t: oue_alpha(a, t), claim.passes, self.name)
        p_hat = uncertainty.public_distribution
        return calibrate(lambda t: cr_alpha(p_hat, t), claim.passes, self.name)


class WatchdogDesigner(_Base):
    def __init__(self, name: str, summary: str) -> None:
        self.name, self.summary = name, summary
        # Subset random response merges by lift: the lift claims only (not the LDP ratio).
        lifts = (n for n in FUNNEL_NOTIONS if NOTIONS[n].funnel_claim != "ratio")
        self.notions = frozenset(lifts if name == "subset-rr" else FUNNEL_NOTIONS)

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        claim = claim_for(uncertainty, options)
        if self.name == "watchdog-paper":
            return watchdog(claim, enforce=False)
        if self.name == "watchdog":
            return watchdog(claim)
        if self.name == "subset-merging":
            return subset_merging(claim)
        found = subset_rr(claim)
        if found is not None:
            return found
        q, params = subset_merging(claim)
        return q, {**params, "fallback": "subset-merging (subset random response failed the audit)"}


FUNNEL_DESIGNERS: tuple[Any, ...] = (
    OptimalDesigner(),
    FamilyDesigner("grr", "GRR^α on X calibrated to the exact audit [LTS20, eqs 28-29]", latent=True),
    FamilyDesigner("oue", "OUE^α (2^|X| outputs) calibrated to the exact audit [LTS20, eqs 30-32]", latent=True),
    FamilyDesigner("cr", "conditional reporting CR^α calibrated to the exact audit [LTS20, Alg 1, Prop 1]", False),
    WatchdogDesigner("watchdog", "complete merging of the high-risk symbols, enlarged until the audit passes"),
    WatchdogDesigner("watchdog-paper", "complete merging as printed [ZDS23, eqs 6-8] (refused when it leaks)"),
    WatchdogDesigner("subset-merging", "subset merging [ZDS23, Alg 1], enforced by the audit"),
    WatchdogDesigner("subset-rr", "subset random response [ZDS23, Alg 2] (AORR per part)"),
)
