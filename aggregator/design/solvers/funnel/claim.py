"""What a funnel/lift design claims, and how much each output of a candidate mechanism leaks.

The designers of :mod:`rldp.aggregator.design.solvers.funnel` work on the joint P(s, x) of the secret S
and the mechanism's input X: X = U when S is latent (the privacy funnel [LTS20, Sec III]), and
X = (S, U) otherwise (then P(s, (s′, u)) = P̂(s, u)·1{s = s′}, columns s major as everywhere in rldp).

With P(y, s) = Σ_x Q(y|x) P(s, x), the lift is l(s, y) = P(y|s)/P(y) [ZDS23, eq 1], Λ(y) = max_s l,
Ψ(y) = min_s l. The notions ([LTS20, Defs 1-2], [ZDS23, Def 3]) bound, per output y:

* ``ldp`` — ε-LDP w.r.t. S: log Λ(y) − log Ψ(y) ≤ ε (sup_{s,s′} P(y|s)/P(y|s′));
* ``lip`` — ε-LIP: log Λ(y) ≤ ε and −log Ψ(y) ≤ ε;
* ``alip`` — (ε_l, ε_u)-ALIP: log Λ(y) ≤ ε_u and −log Ψ(y) ≤ ε_l.

:class:`Claim` returns, per output, the *excess* = the worst audited-over-claimed ratio (≤ 1 passes),
which the watchdog family uses to know which output to repair; pass or fail (:meth:`Claim.passes`)
is the notion's exact audit itself (at P̂, or over F: (ε, F)-RLDP for ``ldp`` [LZG24, Thm 1], the
lift over F″ ⊇ F for ``lip``/``alip``). Per output over F, ``lip``/``alip`` use the sound bound
ε-LDP w.r.t. S ⇒ ε-LIP (the lift P(y|s)/P(y) is a P_S-mixture of ratios P(y|s)/P(y|s′)): it only
chooses which output to repair. The document's registered audit decides in the end
(:func:`rldp.aggregator.design.design`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from rldp.shared.audit.base import joint_matrix, log_ratios
from rldp.shared.audit.rldp import rldp_epsilon
from rldp.shared.audit.secret import robust_lip_epsilons
from rldp.shared.notions import FUNNEL_NOTIONS as _FUNNEL_NOTIONS
from rldp.shared.notions import NOTIONS
from rldp.shared.uncertainty import UncertaintySet

__all__ = ["FUNNEL_NOTIONS", "Claim", "input_joint", "lift_table", "symbol_lifts", "subset_lifts"]

#: The notions the funnel/lift designers claim (those with a ``funnel_claim``, rldp.shared.notions).
FUNNEL_NOTIONS = _FUNNEL_NOTIONS


def input_joint(p_hat: np.ndarray, latent: bool) -> np.ndarray:
    """P(s, x) for the mechanism's input X, shape (|S|, |X|): P̂ itself when S is latent,
    else the block-diagonal joint of S with X = (S, U) (s major)."""
    p = np.asarray(p_hat, dtype=float)
    if latent:
        return p
    a1, a2 = p.shape
    return cast("np.ndarray", (np.eye(a1)[:, :, None] * p[None, :, :]).reshape(a1, a1 * a2))


def lift_table(q: np.ndarray, joint: np.ndarray) -> np.ndarray:
    """log l(s, y) = log P(y|s)/P(y), shape (|Y|, |S|); outputs with P(y) = 0 get 0 (never seen),
    secrets with P(s) = 0 are left out (nobody to protect)."""
    p_ys = np.asarray(q, dtype=float) @ joint.T  # P(y, s)
    p_s = joint.sum(axis=1)
    keep = p_s > 0
    p_y = p_ys.sum(axis=1, keepdims=True)
    out = log_ratios(p_ys[:, keep], p_y * p_s[keep])
    return np.where(p_y > 0, out, 0.0)


def symbol_lifts(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Λ(x), Ψ(x)) of every input symbol released as itself [ZDS23, eq 6]; a symbol with
    P(x) = 0 gets (inf, 0): no data, so it is always high-risk (merging it costs nothing)."""
    p_s = joint.sum(axis=1)
    p_x = joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = joint / (p_s[:, None] * p_x[None, :])
    lift = lift[p_s > 0]
    big = np.where(p_x > 0, lift.max(axis=0), np.inf)
    small = np.where(p_x > 0, lift.min(axis=0), 0.0)
    return big, small


def subset_lifts(joint: np.ndarray, members: np.ndarray) -> tuple[float, float]:
    """(Λ(A), Ψ(A)) of the subset A (boolean mask over X) merged into one output [ZDS23, eq 14]:
    P(A|s)/P(A) = Σ_{x∈A} P(x|s) / Σ_{x∈A} P(x)."""
    p_s = joint.sum(axis=1)
    keep = p_s > 0
    p_a = float(joint[:, members].sum())
    if p_a <= 0:
        return 1.0, 1.0
    lift = joint[keep][:, members].sum(axis=1) / (p_s[keep] * p_a)
    return float(lift.max()), float(lift.min())


@dataclass(frozen=True)
class Claim:
    """The guarantee a design must meet: notion, budgets (nats) and the set F it holds over."""

    notion: str
    epsilon_lower: float  # ε_l (ε for ldp and lip)
    epsilon_upper: float  # ε_u (ε for ldp and lip)
    uncertainty: UncertaintySet
    latent: bool

    @property
    def kind(self) -> str:
        """The funnel claim its notion maps to (:attr:`rldp.shared.notions.Notion.funnel_claim`): "ratio"
        (ε-LDP w.r.t. S), "lift" (ε-LIP) or "asymmetric-lift" ((ε_l, ε_u)-ALIP)."""
        kind = NOTIONS[self.notion].funnel_claim
        if kind is None:
            raise ValueError(f"notion {self.notion!r} is not a privacy-funnel notion ({', '.join(FUNNEL_NOTIONS)})")
        return kind

    @property
    def joint(self) -> np.ndarray:
        return input_joint(self.uncertainty.public_distribution, self.latent)

    @property
    def robust(self) -> bool:
        return float(self.uncertainty.radius) > 0

    @property
    def ldp_budget(self) -> float:
        """The LDP-w.r.t.-S level that implies this claim (ε for ldp and lip, min(ε_l, ε_u) for alip)."""
        return min(self.epsilon_lower, self.epsilon_upper)

    def _robust_ldp(self, q: np.ndarray) -> np.ndarray:
        """Per output: max over s₁ ≠ s₂ of log max_F P(y|s₁) / min_F P(y|s₂) ([LZG24, Thm 1])."""
        u = self.uncertainty
        cols = joint_matrix(q, u.n_sensitive, u.n_released)
        hi, lo = u.extremes(cols.reshape(-1, u.n_sensitive, u.n_released))
        ratios = log_ratios(hi[:, :, None], np.maximum(lo, 0.0)[:, None, :])
        k = hi.shape[1]
        ratios[:, np.arange(k), np.arange(k)] = -np.inf
        return cast("np.ndarray", np.maximum(ratios.reshape(len(q), -1).max(axis=1), 0.0))

    def leakage(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per output (ε_l(y), ε_u(y)): −log Ψ(y) and log Λ(y) for lip/alip; for ldp both are
        the LDP ε of y. Over F with a positive radius, the robust (bound) value."""
        q = np.asarray(q, dtype=float)
        if self.kind == "ratio" or self.robust:
            eps = self._robust_ldp(q)
            return eps, eps
        lifts = lift_table(q, self.joint)
        return np.maximum(-lifts.min(axis=1), 0.0), np.maximum(lifts.max(axis=1), 0.0)

    def excess(self, q: np.ndarray) -> np.ndarray:
        """Per output: max(ε_l(y)/ε_l, ε_u(y)/ε_u), or the LDP ratio for ldp (over F for lip/alip: the
        sound LDP bound); the watchdog family merges the worst output while :meth:`passes` fails."""
        low, up = self.leakage(q)
        with np.errstate(invalid="ignore"):
            if self.kind == "ratio":
                return low / self.epsilon_lower
            if self.robust:  # the LDP bound implies the claim when ≤ min(ε_l, ε_u)
                return low / self.ldp_budget
            return np.maximum(low / self.epsilon_lower, up / self.epsilon_upper)

    def audited(self, q: np.ndarray) -> tuple[float, float]:
        """(ε_l, ε_u) of the whole mechanism by the notion's exact audit (:mod:`rldp.shared.audit.secret`):
        for ldp both are the LDP ε w.r.t. S over F; for lip/alip the lift sides at P̂ or over F″ ⊇ F."""
        if self.kind == "ratio":
            eps = rldp_epsilon(q, self.uncertainty)[0]
            return eps, eps
        return robust_lip_epsilons(q, self.uncertainty)

    def passes(self, q: np.ndarray) -> bool:
        """The exact audit within the budgets, with no tolerance: designers aim strictly inside, so
        the registered audit (which allows ``AUDIT_TOLERANCE``) never fails on round-off."""
        low, up = self.audited(q)
        return low <= self.epsilon_lower and up <= self.epsilon_upper
