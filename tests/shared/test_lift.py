"""Lift measures [ZDS23, eq 1, Defs 5–6]: brute force, the average leakages they average to, and Props 3 and 5."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.shared.audit import lip_epsilons, secret_ldp_epsilon
from rldp.shared.errors import ValidationError
from rldp.shared.lift import lift_measures, lift_table, output_lift_measures


def case(seed: int, latent: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c, a = 3, 4
    joint = rng.dirichlet(np.full(c * a, 2.0)).reshape(c, a)
    q = rng.dirichlet(np.full(5, 1.5), size=a if latent else c * a).T
    return q, joint


@pytest.mark.parametrize("latent", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lift_measures_equal_brute_force_and_the_average_leakages(latent: bool, seed: int) -> None:
    q, joint = case(seed, latent)
    c, a = joint.shape
    pys = np.zeros((q.shape[0], c))  # P(y, s) by explicit sums
    for y in range(q.shape[0]):
        for s in range(c):
            for u in range(a):
                pys[y, s] += q[y, u if latent else s * a + u] * joint[s, u]
    ps, py = joint.sum(axis=1), pys.sum(axis=1)
    lift = pys / (py[:, None] * ps[None, :])
    m = lift_measures(q, joint, alpha=3.0)
    assert m["max_lift"] == pytest.approx(lift.max()) and m["min_lift"] == pytest.approx(lift.min())
    assert m["l1_lift"] == pytest.approx(max(sum(ps[s] * abs(lift[y, s] - 1) for s in range(c)) for y in range(5)))
    assert m["chi2_lift_inverse"] == pytest.approx(
        max(sum(ps[s] * (1 / lift[y, s] - 1) ** 2 for s in range(c)) for y in range(5))
    )
    assert m["alpha_lift_inverse"] == pytest.approx(
        max(sum(ps[s] * lift[y, s] ** -3 for s in range(c)) ** (1 / 3) for y in range(5))
    )
    # T(S;Y), χ²(S;Y) and Sibson's I_α computed from their own definitions.
    indep = ps[None, :] * py[:, None]
    assert m["total_variation"] == pytest.approx(0.5 * np.abs(pys - indep).sum())
    assert m["chi2"] == pytest.approx((((pys - indep) ** 2) / indep).sum())
    cond = pys / ps[None, :]
    sibson = 3 / 2 * math.log(sum((ps @ cond[y] ** 3) ** (1 / 3) for y in range(5)))
    assert m["sibson"] == pytest.approx(sibson)
    # log max-lift and log min-lift are the two sides of the LIP audit.
    lower, upper = lip_epsilons(q, joint)
    assert m["log_max_lift"] == pytest.approx(upper) and -m["log_min_lift"] == pytest.approx(lower)
    assert lift_table(q, joint)[0].shape == (c, 5)


@pytest.mark.parametrize("seed", [4, 5])
def test_props_3_and_5_the_measures_are_bounded_by_the_alip_budgets(seed: int) -> None:
    q, joint = case(seed, True)
    lower, upper = lip_epsilons(q, joint)
    for alpha in (2.0, 10.0, math.inf):
        m = lift_measures(q, joint, alpha)
        assert m["l1_lift"] <= math.exp(upper) - 1 + 1e-12  # [ZDS23, Prop 3]
        assert m["chi2_lift"] <= (math.exp(upper) - 1) ** 2 + 1e-12
        assert m["alpha_lift"] <= math.exp(upper) + 1e-12
        assert m["l1_lift_inverse"] <= math.exp(lower) - 1 + 1e-12  # [ZDS23, Prop 5]
        assert m["chi2_lift_inverse"] <= (math.exp(lower) - 1) ** 2 + 1e-12
        assert m["alpha_lift_inverse"] <= math.exp(lower) + 1e-12
    # α = ∞ is ALIP itself [ZDS23, Sec 6.2]: Λ_∞ = Λ and Ψ_∞ = 1/Ψ.
    m = lift_measures(q, joint, math.inf)
    assert m["alpha_lift"] == pytest.approx(math.exp(upper)) and m["alpha_lift_inverse"] == pytest.approx(
        math.exp(lower)
    )


def test_an_independent_output_has_lift_one_everywhere() -> None:
    joint = np.array([[0.2, 0.3], [0.1, 0.4]])
    q = np.array([[0.3, 0.3], [0.7, 0.7]])
    m = lift_measures(q, joint)
    assert m["max_lift"] == pytest.approx(1) and m["min_lift"] == pytest.approx(1)
    assert m["l1_lift"] == pytest.approx(0, abs=1e-15) and m["sibson"] == pytest.approx(0, abs=1e-12)


def test_bad_arguments_are_refused() -> None:
    q, joint = case(1, True)
    with pytest.raises(ValidationError, match="alpha must be a number > 1"):
        lift_measures(q, joint, alpha=1.0)
    with pytest.raises(ValidationError, match="joint must be"):
        lift_measures(q, -joint)


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_prop_1_alip_bounds_the_average_leakages_and_ldp(seed: int) -> None:
    """[ZDS23, Prop 1]: (ε_l, ε_u)-ALIP ⇒ I(S;Y) ≤ ε_u, T ≤ ½(e^{ε_u} − 1), χ² ≤ (e^{ε_u} − 1)²,
    Sibson I_α ≤ α/(α−1) ε_u, and (ε_l + ε_u)-LDP w.r.t. S; [LTS20, Lemma 1]: ε-LIP ⇒ I(S;Y) ≤ ε."""
    q, joint = case(seed, False)
    lower, upper = lip_epsilons(q, joint)
    m = lift_measures(q, joint, alpha=4.0)
    pys = (q.reshape(5, 3, 4) * joint[None]).sum(axis=2)  # P(y, s)
    ps, py = joint.sum(axis=1), pys.sum(axis=1)
    info = float((pys * np.log(pys / (py[:, None] * ps[None, :]))).sum())
    assert info <= upper + 1e-12
    assert m["total_variation"] <= 0.5 * (math.exp(upper) - 1) + 1e-12
    assert m["chi2"] <= (math.exp(upper) - 1) ** 2 + 1e-12
    assert m["sibson"] <= 4 / 3 * upper + 1e-12
    assert secret_ldp_epsilon(q, joint)[0] <= lower + upper + 1e-12


def test_alpha_lift_of_high_order_does_not_overflow() -> None:
    """An inverse lift of e^{10.8} at α = 100 [ZDS23, Sec 6.2, Fig 13]: Ψ_α is finite (a scaled power mean),
    not inf from (e^{10.8})^100 overflowing, and below the largest inverse lift 1/Ψ."""
    p_u_given_s = np.array([[1 - 1e-8, 1e-8], [1 - 1e-3, 1e-3], [0.5, 0.5]])
    joint = np.array([0.5, 0.5 - 1e-6, 1e-6])[:, None] * p_u_given_s  # P(s, u); y = u, latent S
    lift, ps, _ = lift_table(np.eye(2), joint)
    inverse = 1 / lift[:, 1]
    assert 100 * math.log(inverse.max()) > math.log(np.finfo(float).max)  # the plain power sum overflows
    expected = inverse.max() * float(ps @ (inverse / inverse.max()) ** 100) ** 0.01
    per = output_lift_measures(lift, ps, 100.0)
    assert per["alpha_lift_inverse"][1] == pytest.approx(expected, rel=1e-9) and expected < inverse.max()
    m = lift_measures(np.eye(2), joint, 100.0)
    assert math.isfinite(m["alpha_lift_inverse"]) and m["alpha_lift_inverse"] == pytest.approx(expected, rel=1e-9)


def test_output_lift_measures_are_the_per_output_columns_of_lift_measures() -> None:
    q, joint = case(3, True)
    lift, ps, _ = lift_table(q, joint)
    per = output_lift_measures(lift, ps, 3.0)
    worst = lift_measures(q, joint, 3.0)
    for key, column in per.items():
        assert column.shape == (q.shape[0],)
        assert worst[key] == pytest.approx(column.min() if key == "min_lift" else column.max(), rel=1e-12)
