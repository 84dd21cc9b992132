"""Optimal LIP / AORR by column generation (:mod:`rldp.aggregator.design.solvers.funnel.lip_cg`): as good as the
exact vertex enumeration where both run, every column inside the polytope, a bound that holds, and on
Adult with S an input (87 symbols, beyond the exact method) a design that passes the exact audit and
beats the family designers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import DesignError, design
from rldp.aggregator.design.solvers.funnel import lip
from rldp.aggregator.design.solvers.funnel.claim import input_joint
from rldp.aggregator.design.solvers.funnel.lip_cg import LIP_CG_MAX_SYMBOLS, lip_cg
from rldp.aggregator.design.solvers.funnel.lip_polytope import Admission
from rldp.shared.audit import audit_document
from rldp.shared.audit.secret import lip_epsilons
from rldp.shared.information import mutual_information
from rldp.shared.tolerances import DESIGN_MARGIN

#: CG must come within this relative gap of the exact optimum (I(X;Y)).
GAP = 0.005
BUDGETS = [(0.25, 0.25), (0.5, 0.5), (1.0, 1.0), (2.0, 2.0), (0.65, 0.35), (1.3, 0.7)]


def _synthetic(seed: int) -> np.ndarray:
    """P_SX with |S| = 5, |X| = 17: normalised uniform draws as in [ZDS23, Sec 3.1.3]."""
    joint = np.random.default_rng(seed).random((5, 17))
    return joint / joint.sum()


def _split(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p_x, p_s = joint.sum(axis=0), joint.sum(axis=1)
    return joint / p_x, p_s, p_x


@pytest.fixture(scope="module")
def adult():
    from rldp.demo.datasets import adult_distribution

    alph, p, _ = adult_distribution("relationship", "occupation")
    return alph, p


@pytest.mark.slow
@pytest.mark.parametrize("pricing", ["auto", "heuristic"])
@pytest.mark.parametrize("budgets", BUDGETS)
def test_cg_matches_exact_on_synthetic_17x5(budgets, pricing):
    for seed in (0, 1) if pricing == "auto" else (0,):  # heuristic: one draw (it searches longer)
        joint = _synthetic(seed)
        exact = lip.optimal_lip(joint, *budgets, solver="exact")
        res = lip_cg(*_split(joint), budgets, time_budget=30.0, pricing=pricing)
        assert res.status == "converged"
        assert res.information >= (1 - GAP) * exact.information
        assert res.information <= exact.information + 1e-9  # nothing beats the optimum
        assert res.upper_bound >= exact.information  # the bound holds
        if res.pricing == "exact":  # exact pricing: the bound is tight at convergence
            assert res.upper_bound <= exact.information + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize(("sensitive", "released"), [("relationship", "occupation"), ("occupation", "relationship")])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_cg_matches_exact_on_adult_latent(sensitive, released, eps):
    from rldp.demo.datasets import adult_distribution

    _, p, _ = adult_distribution(sensitive, released)
    exact = lip.optimal_lip(p, eps, eps, solver="exact")
    inner = eps * (1 - DESIGN_MARGIN)  # as the designer: rows strictly inside, the bound at eps itself
    cg = lip.optimal_lip(p, inner, inner, solver="cg", claimed=(eps, eps))
    assert cg.solver == "cg" and cg.cg is not None and cg.cg["status"] == "converged"
    assert cg.information >= (1 - GAP) * exact.information
    assert cg.cg["upper_bound"] >= exact.information
    low, up = lip_epsilons(cg.matrix, p)
    assert low <= eps and up <= eps


@pytest.mark.slow
@pytest.mark.parametrize("budgets", [(1.0, 1.0), (0.4, 0.8)])
def test_every_column_is_inside_the_polytope_without_tolerance(budgets):
    cond, p_s, p_x = _split(_synthetic(3))
    res = lip_cg(cond, p_s, p_x, budgets, pricing="heuristic")
    assert np.all(Admission(cond, p_s, p_x, *budgets).inside(res.rows))
    np.testing.assert_allclose(res.weights @ res.rows, p_x, atol=1e-9)


def test_admission_mixes_an_outside_column_back_inside():
    cond, p_s, p_x = _split(_synthetic(4))
    admit = Admission(cond, p_s, p_x, 0.5, 0.5)
    outside = np.eye(17)[np.argmax(cond[0] / p_s[0])]  # the symbol most telling of s = 0 alone
    assert not admit.inside(outside[None, :])[0]
    fixed = admit(outside)
    assert fixed.shape == (1, 17) and admit.inside(fixed)[0]
    lift = cond @ fixed[0] / p_s  # mixed just enough: one slab side is (nearly) active
    slack = np.minimum(math.exp(0.5) - lift, lift - math.exp(-0.5))
    assert slack.min() >= 0 and slack.min() < 1e-5


@pytest.mark.slow
def test_heuristic_pricing_beyond_enumeration_beats_grr_and_bounds_hold():
    """|S| = 8, |X| = 60: the polytope's vertices are too many to enumerate, so pricing is heuristic;
    the result still passes the audit, and no mechanism beats its bound (GRR is one)."""
    joint = np.random.default_rng(8).random((8, 60)) ** 2
    joint /= joint.sum()
    inner = 0.5 * (1 - DESIGN_MARGIN)
    # 20 pricing rounds (a time budget it never reaches): the same rounds on any machine, loaded or not.
    res = lip.optimal_lip(joint, inner, inner, solver="cg", time_budget=120.0, claimed=(0.5, 0.5), max_iterations=20)
    assert res.cg["status"] == "iteration_limit" and res.cg["iterations"] == 20
    assert res.cg is not None and res.cg["pricing"] == "heuristic"
    low, up = lip_epsilons(res.matrix, joint)
    assert low <= 0.5 and up <= 0.5
    from rldp.aggregator.design.solvers.funnel.families import calibrate, grr_alpha

    p_x = joint.sum(axis=0)

    def passes(q: np.ndarray) -> bool:
        return max(lip_epsilons(q, joint)) <= 0.5

    grr, _ = calibrate(lambda t: grr_alpha(60, t), passes, "grr")
    assert res.information > mutual_information(grr, p_x)
    assert mutual_information(grr, p_x) <= res.cg["upper_bound"]
    assert res.information <= res.cg["upper_bound"] < math.log(60) + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("notion", ["lip", "alip"])
@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_adult_with_s_an_input_passes_its_audit_and_beats_the_families(adult, notion, eps):
    alph, p = adult  # X = (S, U): 87 symbols with positive probability, beyond the exact method
    budgets = {"epsilon": eps} if notion == "lip" else {"epsilon_lower": eps, "epsilon_upper": eps / 2}
    kwargs = dict(alphabet=alph, public_distribution=p, radius=0.0, notion=notion, **budgets)
    doc = design("optimal", **kwargs)
    assert audit_document(doc).passed and doc["audit"]["passed"]
    params = doc["parameters"]
    assert params["solver"] == "cg" and params["status"] == "converged" and params["pricing"] == "exact"
    info = doc["utility"]["mutual_information"]
    assert params["upper_bound_kind"] == "lagrangian-exact-pricing"
    assert info <= params["upper_bound"] <= info + 1e-6  # proven optimal
    best_family = max(
        design(method, **kwargs)["utility"]["mutual_information"] for method in ("grr", "watchdog", "subset-merging")
    )
    assert info >= best_family


def test_a_tiny_time_budget_still_gives_an_audited_design(adult):
    alph, p = adult
    doc = design(
        "optimal", alphabet=alph, public_distribution=p, radius=0.0, notion="lip", epsilon=1.0, time_budget=1e-3
    )
    assert doc["parameters"]["status"] == "time_budget"
    assert audit_document(doc).passed
    assert doc["utility"]["mutual_information"] <= doc["parameters"]["upper_bound"]


def test_progress_reports_every_round(adult):
    alph, p = adult
    seen: list[dict] = []
    design("optimal", alphabet=alph, public_distribution=p, radius=0.0, notion="lip", epsilon=1.0, progress=seen.append)
    assert seen and [s["iteration"] for s in seen] == list(range(1, len(seen) + 1))
    assert all(s["information"] <= s["upper_bound"] + 1e-9 for s in seen)
    assert {"seconds", "columns"} <= set(seen[-1])


def test_exact_solver_beyond_its_limit_is_one_clear_error(adult):
    alph, p = adult
    with pytest.raises(DesignError, match="limited to 24 input symbols with positive probability; this input has 87"):
        design("optimal", alphabet=alph, public_distribution=p, radius=0.0, notion="lip", epsilon=1.0, solver="exact")


def test_column_generation_beyond_its_limit_is_one_clear_error():
    joint = np.full((2, LIP_CG_MAX_SYMBOLS + 1), 1.0 / (2 * (LIP_CG_MAX_SYMBOLS + 1)))
    with pytest.raises(DesignError, match=f"limited to {LIP_CG_MAX_SYMBOLS} input symbols") as err:
        lip.optimal_lip(joint, 1.0, 1.0)
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_robust_optimal_lip_on_87_symbols_passes_the_robust_audit(adult):
    alph, p = adult
    doc = design(
        "optimal", alphabet=alph, public_distribution=p, radius=0.01, notion="lip", epsilon=2.0, time_budget=4.0
    )
    assert audit_document(doc).passed and doc["audit"]["passed"]
    assert doc["parameters"]["via"] in ("ldp", "shrunk-lip")


def test_input_joint_of_adult_has_87_live_symbols_in_6_groups(adult):
    from rldp.aggregator.design.solvers.funnel.lip_polytope import Groups

    _, p = adult
    joint = input_joint(p, latent=False)
    live = joint.sum(axis=0) > 0
    assert int(live.sum()) == 87
    assert Groups(joint[:, live] / joint.sum(axis=0)[live]).size == 6


@pytest.mark.slow
def test_no_feasible_small_vertex_still_starts_from_a_feasible_mechanism():
    """|X| = 300 with no symbol inside Δ alone (and too many vertices to enumerate): the master starts
    from each symbol mixed with p_X (randomised response towards the prior), not from p_X alone, so
    even a start without any pricing round ends far above GRR (max_iterations=0; it was a 2 s budget, whose
    outcome depended on the machine's speed)."""
    joint = np.random.default_rng(5).random((6, 300)) ** 5
    joint /= joint.sum()
    inner = 1 - DESIGN_MARGIN
    assert not Admission(*_split(joint), inner, inner).inside(np.eye(300)).any()
    res = lip.optimal_lip(joint, inner, inner, solver="cg", time_budget=120.0, claimed=(1.0, 1.0), max_iterations=0)
    assert res.cg["status"] == "iteration_limit"
    assert max(lip_epsilons(res.matrix, joint)) <= 1.0
    from rldp.aggregator.design.solvers.funnel.families import calibrate, grr_alpha

    grr, _ = calibrate(lambda t: grr_alpha(300, t), lambda q: max(lip_epsilons(q, joint)) <= 1.0, "grr")
    assert res.information > 1.2 * mutual_information(grr, joint.sum(axis=0))
