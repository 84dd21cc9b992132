"""The coupling mechanism [KM19, Defs 16, 18; Prop 2]: hide which distribution θ a record comes from.

For each value θ of the sensitive attribute S (the auxiliary input, read by the mechanism) the
protected distribution is λ̂_θ = P̂_U|θ, the row θ of P̂ normalised. Given a target λ_T over U and an
optimal coupling γ_θ ∈ Π(λ̂_θ, λ_T) for the cost c (:mod:`.optimal_transport`), the mechanism is

    A(y | θ, x) = γ_θ(x, y) / λ̂_θ(x)                                       [KM19, Def 16]

so that Σ_x A(y|θ, x) λ̂_θ(x) = λ_T(y) for every θ: with one *common* target the output distribution
does not depend on θ at P̂ — (ε, δ)-DistP [KM19, Def 3] with ε = δ = 0 between every pair (λ̂_θ, λ̂_θ′),
and (0, D)-DistP for every divergence D [KM19, Def 11]. With an optimal coupling (Def 18) the expected
loss E c(X, Y) given θ is EMD(λ̂_θ, λ_T) (Prop 2), so the mechanism's expected loss is
Σ_θ P̂_θ EMD(λ̂_θ, λ_T).

Rebuilt from [KM19]'s prose (its formulas were lost in extraction): Def 16 as above; Def 18 = Def 16
with γ_θ ∈ argmin_γ Σ γ·c; Prop 2 as stated. Choices made here, each documented where it is made:

* Columns (θ, x) with λ̂_θ(x) = 0 (and every column of a θ never seen in the public data) may be any
  distribution; they are the target λ_T itself. Why: whatever weight a real distribution puts there,
  it then contributes exactly the common output distribution, so it adds no distinguishability.
* The default cost is ``hamming`` (c(x, x′) = [x ≠ x′]): released values are categories, whose order
  in the alphabet (sorted text) means nothing; ``absolute`` (|x − x′| over that order) only when the
  caller says the values are ordered. Under hamming the optimal coupling keeps as many records at their
  own value as the target allows.
* The default target (``"best"``) is chosen for the information the mechanism keeps about the released
  values, I(U;Y) at P̂ (:func:`released_information`; reported as NMI_U = I(U;Y)/H(U), the figure the
  README and ``rldp experiment distp-adult`` quote), ties broken by expected loss. Not I(S×U;Y): what Y
  tells about θ beyond U is what DistP hides, not utility. The weighted Wasserstein
  barycenter argmin_μ Σ_θ P̂_θ EMD(λ̂_θ, μ) (:func:`~.optimal_transport.barycenter`) is the common target of least
  expected loss at P̂, but neither it nor least loss is what a user of the estimates keeps; after the
  mixing below (needed over a larger uncertainty set) smoother targets can win too. So the points between
  the public marginal P̂_U and the barycenter are tried and the most information after mixing wins —
  never less than coupling to P̂_U.
* The claim is checked by the distp audit over the document's uncertainty set F (the RLDP balls): the
  mechanism is exact only at P̂. When F is larger than {P̂} and the audit's worst-case δ at ε exceeds
  the claimed δ, the coupling is mixed with the independent one, γ_t = (1 − t) γ_θ + t λ̂_θ ⊗ λ_T —
  still a coupling of λ̂_θ and λ_T, so still a coupling mechanism [KM19, Def 16] — at the smallest
  t ∈ [0, 1] that passes. The audit's δ bound is convex in t and 0 at t = 1 (every column is λ_T), so it
  is non-increasing and a bisection finds that t.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.information import entropy
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.errors import DesignError
from .optimal_transport import (
    DEFAULT_COST,
    barycenter,
    check_distribution,
    cost_matrix,
    describe_cost,
    optimal_coupling,
)

__all__ = [
    "TARGET_RULES",
    "DEFAULT_COST",
    "CouplingDesign",
    "common_target",
    "coupling_matrix",
    "design_coupling",
    "expected_loss",
    "target_loss",
    "mix_with_target",
    "released_information",
]

#: Named targets: the best point between P̂_U and the barycenter (the default, :func:`design_coupling`),
#: the barycenter, the public marginal P̂_U, the uniform distribution.
TARGET_RULES = ("best", "barycenter", "marginal", "uniform")
_TIE = 1e-12  # informations (nats) or losses closer than this are equal (LP and network-simplex round-off)
_MIX_STEPS = 48  # bisection steps on t: 2^-48 ≈ 4e-15, below any utility difference
_BEST_STEPS = 5  # targets tried by "best" on the segment from P̂_U to the barycenter


@dataclass(frozen=True)
class CouplingDesign:
    """A coupling mechanism and what it was built from.

    ``matrix[y, θ·|U| + x] = A(y | θ, x)`` over every released value y (rows where λ_T(y) = 0 included);
    ``emd[θ]`` = EMD(λ̂_θ, λ_T); ``mix`` = t of the mixture with the independent coupling (0: optimal).
    """

    matrix: np.ndarray
    target: np.ndarray
    rule: str
    cost: np.ndarray
    emd: np.ndarray
    independent_loss: np.ndarray  # Σ_x,y λ̂_θ(x) λ_T(y) c(x, y): the loss of the independent coupling
    weights: np.ndarray  # P̂_θ
    mix: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """The expected loss given θ: (1 − t)·EMD(λ̂_θ, λ_T) + t·(loss of the independent coupling)."""
        return (1.0 - self.mix) * self.emd + self.mix * self.independent_loss

    @property
    def expected_loss(self) -> float:
        """Σ_θ P̂_θ E[c(X, Y) | θ] [KM19, Prop 2]: Σ_θ P̂_θ EMD(λ̂_θ, λ_T) when t = 0."""
        return float(self.weights @ self.losses)


def common_target(
    target: Any, conditionals: np.ndarray, weights: np.ndarray, cost: np.ndarray
) -> tuple[np.ndarray, str]:
    """(λ_T, rule) for a named ``target`` (``"barycenter"``, ``"marginal"``, ``"uniform"``) or k
    probabilities over U (rule ``"given"``); DesignError naming ``target`` otherwise. (The default,
    ``"best"``, searches several targets: :func:`design_coupling`.)

    ``"barycenter"`` falls back to the marginal P̂_U = Σ_θ P̂_θ λ̂_θ unless it is strictly better (the LP
    optimum is never worse; a tie means many barycenters, of which the marginal is the natural one).
    """
    k = conditionals.shape[1]
    marginal = weights @ conditionals
    marginal = marginal / marginal.sum()
    if not isinstance(target, str):
        return check_distribution(target, k, "target"), "given"
    if target == "marginal":
        return marginal, "marginal"
    if target == "uniform":
        return np.full(k, 1.0 / k), "uniform"
    if target != "barycenter":
        raise DesignError(
            f"target must be one of {', '.join(TARGET_RULES)} or {k} probabilities (one per released value); "
            f"got {target!r}"
        )
    centre = barycenter(list(conditionals), list(weights), cost)
    if target_loss(conditionals, weights, centre, cost) < target_loss(conditionals, weights, marginal, cost) - _TIE:
        return centre, "barycenter"
    return marginal, "marginal"


def target_loss(conditionals: np.ndarray, weights: np.ndarray, target: np.ndarray, cost: np.ndarray) -> float:
    """Σ_θ P̂_θ EMD(λ̂_θ, λ_T): the expected loss of the optimal couplings to ``target`` [KM19, Prop 2]."""
    return float(
        sum(w * optimal_coupling(lam, target, cost)[1] for lam, w in zip(conditionals, weights, strict=True) if w > 0)
    )


def coupling_matrix(
    conditionals: np.ndarray, weights: np.ndarray, target: np.ndarray, cost: np.ndarray, rule: str = "given"
) -> CouplingDesign:
    """The utility-optimal coupling mechanism [KM19, Def 18] for every θ (rows of ``conditionals``),
    one common ``target``: A(y|θ, x) = γ_θ(x, y)/λ̂_θ(x), columns (θ, x) with λ̂_θ(x) = 0 or P̂_θ = 0
    set to λ_T (see the module docstring)."""
    n_theta, k = conditionals.shape
    q = np.empty((k, n_theta * k))
    emds = np.zeros(n_theta)
    independent = np.zeros(n_theta)
    for theta in range(n_theta):
        block = np.tile(target[:, None], (1, k))  # default column: the target itself
        lam = conditionals[theta]
        if weights[theta] > 0:
            gamma, emds[theta] = optimal_coupling(lam, target, cost)
            mass = gamma.sum(axis=1)  # = λ̂_θ(x) up to round-off; dividing by it keeps columns stochastic
            seen = (lam > 0) & (mass > 0)
            block[:, seen] = (gamma[seen] / mass[seen, None]).T
            independent[theta] = float(lam @ cost @ target)
        q[:, theta * k : (theta + 1) * k] = block
    return CouplingDesign(q, target, rule, cost, emds, independent, np.asarray(weights, dtype=float))


def mix_with_target(design: CouplingDesign, t: float) -> CouplingDesign:
    """The mechanism of γ_t = (1 − t) γ_θ + t λ̂_θ ⊗ λ_T: A_t = (1 − t) A + t λ_T 1ᵀ."""
    q = (1.0 - t) * design.matrix + t * design.target[:, None]
    return CouplingDesign(
        q, design.target, design.rule, design.cost, design.emd, design.independent_loss, design.weights, float(t)
    )


def _calibrate(design: CouplingDesign, leaks: Callable[[np.ndarray], bool]) -> CouplingDesign:
    """The least mixture t ∈ [0, 1] whose matrix does not leak (bisection; ``leaks`` is monotone in t)."""
    if not leaks(design.matrix):
        return design
    lo, hi = 0.0, 1.0
    for _ in range(_MIX_STEPS):
        mid = 0.5 * (lo + hi)
        if leaks(mix_with_target(design, mid).matrix):
            lo = mid
        else:
            hi = mid
    return mix_with_target(design, hi)


def _candidates(
    target: Any, conditionals: np.ndarray, weights: np.ndarray, cost: np.ndarray
) -> list[tuple[np.ndarray, str, float | None]]:
    """The targets to try, as (λ_T, rule, weight of the barycenter): one for a named or given target;
    for ``"best"`` the segment from the public marginal to the barycenter (:data:`_BEST_STEPS` points,
    both ends included)."""
    if target is not None and not (isinstance(target, str) and target == "best"):
        mu, rule = common_target(target, conditionals, weights, cost)
        return [(mu, rule, None)]
    marginal, _ = common_target("marginal", conditionals, weights, cost)
    centre, rule = common_target("barycenter", conditionals, weights, cost)
    if rule == "marginal":  # the marginal is a barycenter itself
        return [(marginal, "best", 0.0)]
    return [((1 - s) * marginal + s * centre, "best", float(s)) for s in np.linspace(0.0, 1.0, _BEST_STEPS)]


def design_coupling(
    uncertainty: UncertaintySet,
    *,
    target: Any = None,
    cost: Any = DEFAULT_COST,
    leaks: Callable[[np.ndarray], bool] | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """(Q, parameters) of the coupling mechanism for P̂ = ``uncertainty.public_distribution``.

    ``leaks(Q)`` says whether Q fails the claim over the uncertainty set (the distp audit's worst-case
    δ at the claimed ε above the claimed δ); when it does, Q is mixed with the independent coupling
    (module docstring). ``target`` None (= ``"best"``): the common target keeping the most information
    about U, I(U;Y) at P̂, *after* that mixing (ties: the least expected loss) among the points
    (1 − s)·P̂_U + s·barycenter, s ∈ {0, ¼, ½, ¾, 1} — so never less than coupling every λ̂_θ to the public
    marginal P̂_U (s = 0). Why not the barycenter alone: it minimises the transport cost, not the
    information kept, and often puts tiny mass on some outputs, whose probability the uncertainty set can
    move by a large factor, and then needs far more mixing than P̂_U.

    Outputs y with λ_T(y) = 0 never occur and are left out; ``parameters.outputs`` lists the released
    value (index into U) of each remaining output.
    """
    k = uncertainty.n_released
    c = cost_matrix(DEFAULT_COST if cost is None else cost, k)
    weights = uncertainty.marginal
    conditionals = uncertainty.conditionals
    p_hat = uncertainty.public_distribution
    best: CouplingDesign | None = None
    best_weight: float | None = None
    best_info = -np.inf
    for mu, rule, weight in _candidates(target, conditionals, weights, c):
        design = coupling_matrix(conditionals, weights, mu, c, rule)
        if leaks is not None:
            design = _calibrate(design, leaks)
        info = released_information(design.matrix, p_hat)
        more = info > best_info + _TIE
        tie = abs(info - best_info) <= _TIE and best is not None and design.expected_loss < best.expected_loss - _TIE
        if best is None or more or tie:
            best, best_weight, best_info = design, weight, info
    assert best is not None  # at least one candidate
    params: dict[str, Any] = {
        "target": best.target.tolist(),
        "target_rule": best.rule,
        "cost": describe_cost(DEFAULT_COST if cost is None else cost),
        "expected_loss": best.expected_loss,
        "emd": best.emd.tolist(),
        "mix": best.mix,
    }
    if best_weight is not None:  # "best": where on the segment from P̂_U (0) to the barycenter (1), and why
        params["target_barycenter_weight"] = best_weight
        params["target_chosen_by"] = "released_information"
    h_u = entropy(p_hat.sum(axis=0))
    params["released_information"] = best_info  # I(U;Y) at P̂, nats: the information kept about U
    params["released_nmi"] = best_info / h_u if h_u > 0 else 0.0
    outputs = np.flatnonzero(best.matrix.sum(axis=1) > 0)
    params["outputs"] = outputs.tolist()
    return best.matrix[outputs], params


def released_information(matrix: Any, distribution: Any) -> float:
    """I(U;Y) in nats for the released attribute U alone, whatever the mechanism reads: the joint
    P(u, y) = Σ_θ P(θ, u) Q(y|θ, u) (Q(y|u) when θ is latent); ``distribution`` is P over S × U."""
    p = np.asarray(distribution, dtype=float)
    n_theta, k = p.shape
    q = np.asarray(matrix, dtype=float)
    q = np.tile(q, (1, n_theta)) if q.shape[1] == k else q
    joint = np.einsum("ysu,su->uy", q.reshape(q.shape[0], n_theta, k), p)
    pu, py = joint.sum(axis=1), joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * (np.log(joint) - np.log(np.outer(pu, py))), 0.0)
    return float(terms.sum())


def expected_loss(matrix: Any, distribution: Any, cost: Any, outputs: Any = None) -> float:
    """E c(X, Y) = Σ_{θ,x} P(θ, x) Σ_y Q(y|θ, x) c(x, u(y)) for a mechanism whose outputs are released
    values (output y is value ``outputs[y]`` of U; all of U in order by default) [KM19, Def 17].

    ``matrix`` has |S|·|U| columns (S an input) or |U| (S latent); ``distribution`` is P over S × U.
    """
    p = np.asarray(distribution, dtype=float)
    n_theta, k = p.shape
    q = np.asarray(matrix, dtype=float)
    if q.shape[1] == k:  # latent S: Q(y|θ, x) = Q(y|x)
        q = np.tile(q, (1, n_theta))
    out = np.arange(q.shape[0]) if outputs is None else np.asarray(outputs, dtype=int)
    if q.shape[1] != n_theta * k or out.size != q.shape[0] or np.any(out < 0) or np.any(out >= k):
        raise DesignError(f"matrix of shape {q.shape} and outputs do not fit P over S × U of shape {p.shape}")
    c = cost_matrix(cost, k)
    loss_of_output = c[:, out]  # [x, y] = c(x, u(y))
    per_column = np.einsum("yj,jy->j", q, np.tile(loss_of_output, (n_theta, 1)))
    return float(p.reshape(-1) @ per_column)
