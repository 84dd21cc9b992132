"""The coupling mechanism [KM19, Defs 16, 18; Prop 2] and the optimal transport under it.

Checked: the paper's worked example (Example 2 / Fig 2), optimal transport against independent
formulas (the transport LP solved by SciPy; W1 on a line = Σ|F − G|; Hamming EMD = total variation),
exact privacy at P̂ with a common target (P(y|θ) = λ_T for every θ), Prop 2 (expected loss = Σ P̂_θ EMD),
the barycenter and the default target against the marginal (information kept about U), the default cost
(hamming), the robust mixing (least t, monotone),
and bad targets and costs refused with errors naming the field.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from rldp.aggregator.design import DesignError, barycenter, cost_matrix, emd, expected_loss, optimal_coupling
from rldp.aggregator.design.solvers.coupling import (
    common_target,
    coupling_matrix,
    design_coupling,
    mix_with_target,
    released_information,
    target_loss,
)
from rldp.shared.audit import robust_distp_delta
from rldp.shared.information import entropy
from rldp.shared.uncertainty import UncertaintySet

LAMBDA0 = np.array([0.2, 0.5, 0.3])  # [KM19, Fig 2 / Example 2]
LAMBDA1 = np.array([0.3, 0.2, 0.5])
FIG2_COUPLING = np.array([[0.2, 0.0, 0.0], [0.1, 0.2, 0.2], [0.0, 0.0, 0.3]])  # rows x (λ₀), columns y (λ₁)
EXAMPLE_P_HAT = np.vstack([LAMBDA0, LAMBDA1]) / 2  # θ ∈ {0, 1} with P̂_θ = ½ (the lead's convention)


def _random_p_hat(rng: np.random.Generator, n_theta: int, k: int, zeros: bool = False) -> np.ndarray:
    p = rng.dirichlet(np.full(n_theta * k, 0.7)).reshape(n_theta, k)
    if zeros:  # some empty cells, as in real public data
        p[rng.random(p.shape) < 0.2] = 0.0
        p[:, 0] += 1e-3  # keep every θ with mass
        p /= p.sum()
    return p


def _transport_lp(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """min Σ γ c over couplings of a and b, by SciPy's LP (independent of POT)."""
    k = a.size
    a_eq = np.vstack([np.kron(np.eye(k), np.ones(k)), np.kron(np.ones(k), np.eye(k))])
    res = scipy.optimize.linprog(c.reshape(-1), A_eq=a_eq, b_eq=np.concatenate([a, b]), method="highs")
    assert res.status == 0
    return float(res.fun)


# ----------------------------------------------------------------------------- the worked example


def test_example_2_coupling_emd_and_the_mechanism():
    gamma, cost = optimal_coupling(LAMBDA0, LAMBDA1, cost_matrix("absolute", 3))
    assert cost == pytest.approx(0.3, abs=1e-12)
    np.testing.assert_allclose(gamma, FIG2_COUPLING, atol=1e-12)  # the unique optimum is Fig 2(b)
    q, params = design_coupling(UncertaintySet(EXAMPLE_P_HAT, 0.0), target=LAMBDA1, cost="absolute")  # ordered
    np.testing.assert_allclose(q[:, 1], [0.2, 0.4, 0.4], atol=1e-12)  # input 2 of λ₀ ↦ (0.2, 0.4, 0.4)
    np.testing.assert_allclose(q[:, 0], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(q[:, 3:], np.eye(3), atol=1e-12)  # λ₁ is the target: the identity
    np.testing.assert_allclose(q[:, :3] @ LAMBDA0, LAMBDA1, atol=1e-12)  # Aλ₀ = λ₁
    assert params["emd"] == pytest.approx([0.3, 0.0], abs=1e-12)
    assert params["expected_loss"] == pytest.approx(0.15, abs=1e-12)  # ½·0.3 + ½·0 (Prop 2)
    assert params["target_rule"] == "given" and params["cost"] == "absolute" and params["mix"] == 0.0


# ----------------------------------------------------------------------------- optimal transport


@pytest.mark.parametrize("seed", range(6))
def test_emd_is_the_transport_optimum(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 8))
    a, b = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    line = emd(a, b, cost_matrix("absolute", k))
    assert line == pytest.approx(np.abs(np.cumsum(a - b))[:-1].sum(), abs=1e-12)  # W1 on a line: Σ|F − G|
    assert emd(a, b, cost_matrix("hamming", k)) == pytest.approx(0.5 * np.abs(a - b).sum(), abs=1e-12)  # TV
    c = rng.random((k, k)) * 3
    gamma, value = optimal_coupling(a, b, c)
    assert value == pytest.approx(_transport_lp(a, b, c), abs=1e-9)
    np.testing.assert_allclose(gamma.sum(axis=1), a, atol=1e-12)  # a coupling of a and b [KM19, Def 7]
    np.testing.assert_allclose(gamma.sum(axis=0), b, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_the_barycenter_beats_the_marginal_and_random_targets(seed):
    rng = np.random.default_rng(100 + seed)
    p = _random_p_hat(rng, 3, 5)
    weights, lams = p.sum(axis=1), p / p.sum(axis=1, keepdims=True)
    c = cost_matrix("absolute", 5)
    centre = barycenter(list(lams), list(weights), c)
    best = target_loss(lams, weights, centre, c)
    assert best <= target_loss(lams, weights, weights @ lams, c) + 1e-12
    for _ in range(200):
        assert best <= target_loss(lams, weights, rng.dirichlet(np.ones(5)), c) + 1e-12
    mu, rule = common_target("barycenter", lams, weights, c)
    assert rule in ("barycenter", "marginal") and target_loss(lams, weights, mu, c) == pytest.approx(best, abs=1e-9)


# ----------------------------------------------------------------------------- the mechanism


@pytest.mark.parametrize("target", [None, "barycenter", "marginal", "uniform", "given"])
@pytest.mark.parametrize("cost", ["absolute", "hamming", "matrix"])
def test_exactly_private_at_p_hat_with_a_common_target(target, cost):
    rng = np.random.default_rng(7)
    p = _random_p_hat(rng, 3, 4, zeros=True)
    c = rng.random((4, 4)) * 2 if cost == "matrix" else cost
    given = rng.dirichlet(np.ones(4)) if target == "given" else target
    q, params = design_coupling(UncertaintySet(p, 0.0), target=given, cost=c)
    np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-12)
    assert np.all(q >= 0)
    lam_t = np.asarray(params["target"])[params["outputs"]]
    lams = p / p.sum(axis=1, keepdims=True)
    for theta in range(3):  # P(y|θ) = Σ_x A(y|θ, x) λ̂_θ(x) = λ_T(y) for every θ
        np.testing.assert_allclose(q[:, theta * 4 : (theta + 1) * 4] @ lams[theta], lam_t, atol=1e-12)
    weights = p.sum(axis=1)
    assert params["expected_loss"] == pytest.approx(float(weights @ params["emd"]), abs=1e-12)  # Prop 2
    assert expected_loss(q, p, c, params["outputs"]) == pytest.approx(params["expected_loss"], abs=1e-12)
    if target is None:  # the default keeps no less information about U than coupling to the public marginal
        _, marginal = design_coupling(UncertaintySet(p, 0.0), target="marginal", cost=c)
        assert params["released_information"] >= marginal["released_information"] - 1e-12


def test_columns_without_public_mass_are_the_target():
    p = np.array([[0.2, 0.0, 0.3, 0.0], [0.1, 0.2, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0]])
    design = coupling_matrix(
        p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300),
        p.sum(axis=1),
        np.full(4, 0.25),
        cost_matrix("absolute", 4),
    )
    target = np.full(4, 0.25)
    for col in (1, 3, 8, 9, 10, 11):  # λ̂_0(x) = 0 for x ∈ {1, 3}; θ = 2 has no public data at all
        np.testing.assert_allclose(design.matrix[:, col], target, atol=1e-15)
    assert design.emd[2] == 0.0 and design.expected_loss == pytest.approx(0.5 * design.emd[0] + 0.5 * design.emd[1])


def test_a_target_with_zeros_drops_outputs_and_says_which_remain():
    q, params = design_coupling(UncertaintySet(EXAMPLE_P_HAT, 0.0), target=[0.5, 0.0, 0.5])
    assert q.shape == (2, 6) and params["outputs"] == [0, 2]
    np.testing.assert_allclose(q[:, :3] @ LAMBDA0, [0.5, 0.5], atol=1e-12)


def test_hamming_and_matrix_costs_change_the_coupling_not_the_privacy():
    lams = np.vstack([LAMBDA0, LAMBDA1])
    ham = coupling_matrix(lams, np.full(2, 0.5), LAMBDA1, cost_matrix("hamming", 3))
    assert ham.emd[0] == pytest.approx(0.3, abs=1e-12)  # TV(λ₀, λ₁) = 0.3 too
    far = np.array([[0, 1, 10], [1, 0, 1], [10, 1, 0]], dtype=float)  # moving 1 → 3 costs 10
    design = coupling_matrix(lams, np.full(2, 0.5), LAMBDA1, far)
    assert design.emd[0] == pytest.approx(0.3, abs=1e-12) and design.matrix[2, 0] == 0.0
    np.testing.assert_allclose(design.matrix[:, :3] @ LAMBDA0, LAMBDA1, atol=1e-12)


# ----------------------------------------------------------------------------- over an uncertainty set


@pytest.mark.slow
def test_mixing_is_the_least_that_passes_and_delta_decreases_in_t():
    rng = np.random.default_rng(3)
    p = _random_p_hat(rng, 2, 4)
    uset = UncertaintySet.from_confidence(p, 300, 0.05)
    epsilon, delta = 0.5, 0.0

    def leaks(q):
        return robust_distp_delta(q, uset, epsilon)[0] > delta

    q, params = design_coupling(uset, target="marginal", cost="absolute", leaks=leaks)
    t = params["mix"]
    assert 0 < t < 1 and not leaks(q)
    base = coupling_matrix(uset.conditionals, uset.marginal, np.asarray(params["target"]), cost_matrix("absolute", 4))
    assert leaks(mix_with_target(base, t * (1 - 1e-6)).matrix)  # a little less mixing leaks: t is the least
    deltas = [robust_distp_delta(mix_with_target(base, s).matrix, uset, epsilon)[0] for s in np.linspace(0, 1, 11)]
    assert all(a >= b - 1e-12 for a, b in zip(deltas, deltas[1:], strict=False)) and deltas[-1] <= 1e-9
    assert params["expected_loss"] == pytest.approx(
        (1 - t) * (uset.marginal @ base.emd) + t * (uset.marginal @ base.independent_loss)
    )


@pytest.mark.slow
def test_the_default_target_keeps_no_less_than_the_marginal_after_mixing():
    rng = np.random.default_rng(11)
    for _ in range(3):
        p = _random_p_hat(rng, 2, 5, zeros=True)
        uset = UncertaintySet.from_confidence(p, 2000, 0.05)

        def leaks(q, uset=uset):
            return robust_distp_delta(q, uset, 1.0)[0] > 0.0

        _, best = design_coupling(uset, leaks=leaks)
        _, marginal = design_coupling(uset, target="marginal", leaks=leaks)
        assert best["released_information"] >= marginal["released_information"] - 1e-12
        assert best["target_rule"] == "best" and 0 <= best["target_barycenter_weight"] <= 1


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ([0.5, 0.5], "support must be the released alphabet U, which has 3 values"),
        ([0.5, 0.4, 0.2], "target must sum to 1"),
        ([1.2, -0.2, 0.0], "target must be finite and non-negative"),
        ([0.5, float("nan"), 0.5], "target must be finite and non-negative"),
        ("median", "target must be one of best, barycenter, marginal, uniform"),
        (["a", "b", "c"], "target must be 3 probabilities"),
    ],
)
def test_bad_targets_are_refused_naming_the_field(target, needle):
    with pytest.raises(DesignError, match=needle):
        design_coupling(UncertaintySet(EXAMPLE_P_HAT, 0.0), target=target)


@pytest.mark.parametrize(
    ("cost", "needle"),
    [
        ("euclid", "cost must be one of absolute, hamming"),
        (np.ones((2, 2)), r"cost matrix has shape \(2, 2\); the released alphabet U needs 3×3"),
        (np.array([[0, 1, 2], [1, 0, -1], [2, 1, 0]]), r"cost matrix entries must be ≥ 0; cost\[1\]\[2\] = -1"),
        (np.array([[0, 1, np.inf], [1, 0, 1], [2, 1, 0]]), "cost matrix entries must be finite"),
        ([["x"] * 3] * 3, "cost must be one of absolute, hamming or a 3×3 matrix"),
    ],
)
def test_bad_costs_are_refused_naming_the_field(cost, needle):
    with pytest.raises(DesignError, match=needle):
        design_coupling(UncertaintySet(EXAMPLE_P_HAT, 0.0), cost=cost)


# ----------------------------------------------------------------------------- defaults (issue 27 rough edge)


def test_the_default_cost_is_hamming_for_unordered_categories():
    p = _random_p_hat(np.random.default_rng(3), 2, 4, zeros=False)
    _, params = design_coupling(UncertaintySet(p, 0.0))
    assert params["cost"] == "hamming"
    _, ordered = design_coupling(UncertaintySet(p, 0.0), cost="absolute")  # only when the caller says so
    assert ordered["cost"] == "absolute"


@pytest.mark.slow
def test_the_default_target_keeps_the_most_information_about_u():
    # The "best" target was the least expected loss; the figure reported (NMI of U) is the information kept.
    rng = np.random.default_rng(5)
    for _ in range(4):
        p = _random_p_hat(rng, 2, 5, zeros=False)
        uset = UncertaintySet.from_confidence(p, 500, 0.05)

        def leaks(q, uset=uset):
            return robust_distp_delta(q, uset, 1.0)[0] > 0.0

        q, best = design_coupling(uset, leaks=leaks)
        kept = released_information(_full(q, best["outputs"], 5), p)
        assert best["released_information"] == pytest.approx(kept, abs=1e-12)
        assert best["released_nmi"] == pytest.approx(kept / entropy(p.sum(axis=0)), abs=1e-12)
        assert best["target_chosen_by"] == "released_information"
        for s in np.linspace(0.0, 1.0, 5):  # every target the default tries, given explicitly
            marginal = p.sum(axis=0) / p.sum()
            centre, _ = common_target("barycenter", uset.conditionals, uset.marginal, cost_matrix("hamming", 5))
            q_s, other = design_coupling(uset, target=(1 - s) * marginal + s * centre, leaks=leaks)
            assert kept >= released_information(_full(q_s, other["outputs"], 5), p) - 1e-12


def _full(q, outputs, k):
    """Q over every released value (the rows of values the target never outputs are zero)."""
    full = np.zeros((k, q.shape[1]))
    full[np.asarray(outputs)] = q
    return full
