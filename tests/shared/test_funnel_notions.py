"""ldp w.r.t. S, lip and alip: the exact audits at P̂ and over the uncertainty set [LTS20, Defs 1–2; ZDS23, Def 3].

Checked against brute-force loops over (y, s, s′) on small random cases (fixed seeds), for S latent and
S an input, against points sampled inside the balls (soundness of the robust versions), radius 0 against
the value at P̂, and through documents (schema, registry, audit_document).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from rldp.shared.audit import (
    audit_alip,
    audit_document,
    audit_lip,
    ldp_epsilon,
    lip_epsilons,
    lip_leakage,
    notion_audit,
    rldp_epsilon,
    robust_lip_leakage,
    robust_secret_ldp_epsilon,
    secret_ldp_epsilon,
)
from rldp.shared.divergence import renyi_divergence
from rldp.shared.document import build_document, validate_document
from rldp.shared.errors import DocumentError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
P_HAT = np.array([[0.1, 0.2, 0.15], [0.25, 0.1, 0.2]])


def random_mechanism(outputs: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    q = rng.dirichlet(np.full(outputs, 0.8), size=inputs).T
    q[q < 0.01] = 0.0
    return q / q.sum(axis=0)


def brute_conditionals(q: np.ndarray, joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(y|s) by explicit sums over u (S an input when Q has |S|·|U| columns, else latent), and P_S."""
    c, a = joint.shape
    p = joint / joint.sum()
    ps = p.sum(axis=1)
    cond = np.zeros((q.shape[0], c))
    for y in range(q.shape[0]):
        for s in range(c):
            for u in range(a):
                col = s * a + u if q.shape[1] == c * a else u
                cond[y, s] += q[y, col] * p[s, u] / ps[s]
    return cond, ps


def brute_lip(q: np.ndarray, joint: np.ndarray) -> tuple[float, float]:
    cond, ps = brute_conditionals(q, joint)
    lower = upper = 0.0
    for y in range(q.shape[0]):
        py = sum(ps[s] * cond[y, s] for s in range(len(ps)))
        for s in range(len(ps)):
            upper = max(upper, math.log(cond[y, s] / py))
            lower = max(lower, math.log(py / cond[y, s]))
    return lower, upper


def brute_ldp_s(q: np.ndarray, joint: np.ndarray) -> float:
    cond, ps = brute_conditionals(q, joint)
    return max(
        math.log(cond[y, s] / cond[y, t])
        for y in range(q.shape[0])
        for s in range(len(ps))
        for t in range(len(ps))
        if s != t
    )


def positive_mechanism(outputs: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    return rng.dirichlet(np.full(outputs, 2.0), size=inputs).T


# --------------------------------------------------------------------------- at one distribution: exact


@pytest.mark.parametrize("latent", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_lip_and_ldp_wrt_s_equal_brute_force(latent: bool, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    c, a, b = 2 + seed % 3, 2 + seed, 3 + seed % 2
    joint = rng.dirichlet(np.full(c * a, 1.5)).reshape(c, a)
    q = positive_mechanism(b, a if latent else c * a, rng)
    lower, upper = lip_epsilons(q, joint)
    assert (lower, upper) == pytest.approx(brute_lip(q, joint), rel=1e-12, abs=1e-14)
    assert secret_ldp_epsilon(q, joint)[0] == pytest.approx(brute_ldp_s(q, joint), rel=1e-12)
    # [LTS20, Lemma 1]: ε-LDP ⇒ ε-LIP; ε-LIP ⇒ 2ε-LDP; and [ZDS23, Prop 1.4]: (ε_l, ε_u)-ALIP ⇒ (ε_l+ε_u)-LDP.
    ldp_s = secret_ldp_epsilon(q, joint)[0]
    assert max(lower, upper) <= ldp_s + 1e-12
    assert ldp_s <= lower + upper + 1e-12
    # Counts are normalised: the same audit.
    assert lip_epsilons(q, joint * 1000) == pytest.approx((lower, upper), rel=1e-12)


def test_worst_locations_name_the_output_and_the_secret_value() -> None:
    rng = np.random.default_rng(7)
    joint = rng.dirichlet(np.ones(6)).reshape(2, 3)
    q = positive_mechanism(4, 3, rng)
    leak = lip_leakage(q, joint)
    cond, ps = brute_conditionals(q, joint)
    py = cond @ ps
    y, s = leak.worst_upper["output"], leak.worst_upper["s"]
    assert math.log(cond[y, s] / py[y]) == pytest.approx(leak.upper, rel=1e-12)
    y, s = leak.worst_lower["output"], leak.worst_lower["s"]
    assert math.log(py[y] / cond[y, s]) == pytest.approx(leak.lower, rel=1e-12)


def test_zero_cases_secret_without_mass_and_outputs_never_released() -> None:
    joint = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0], [0.2, 0.3, 0.0]]) / 1.5
    q = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])  # output 2 only from u = 2 (no mass)
    assert lip_epsilons(q, joint) == (0.0, 0.0)  # s = 1 has no users, output 2 never occurs
    assert secret_ldp_epsilon(q, joint)[0] == 0.0
    # P(y|s=0) = (1, 0), P(y|s=1) = (0.25, 0.75), P(y) = (0.625, 0.375): output 1 rules s = 0 out.
    q2 = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
    joint2 = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    lower, upper = lip_epsilons(q2, joint2)
    assert math.isinf(lower) and upper == pytest.approx(math.log(2.0))


def test_latent_s_equals_s_as_an_input_that_ignores_s() -> None:
    rng = np.random.default_rng(3)
    joint = rng.dirichlet(np.ones(8)).reshape(2, 4)
    q = positive_mechanism(3, 4, rng)
    assert lip_epsilons(q, joint) == pytest.approx(lip_epsilons(np.tile(q, (1, 2)), joint), rel=1e-14)


# --------------------------------------------------------------------------- over the uncertainty set


def _inside(centre: np.ndarray, radius: float, order: float, rng: np.random.Generator) -> np.ndarray:
    direction = rng.dirichlet(np.full(centre.size, 0.5))
    w = rng.uniform(0, 1)
    r = centre
    while w > 1e-7:
        r = (1 - w) * centre + w * direction
        if renyi_divergence(centre, r, order) <= radius:
            return r
        w *= 0.7
    return centre


def sample_in_f2(uset: UncertaintySet, rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Joints with P_S in the ball F_S and every P_U|s in F_U|s (F″, what the robust lip audit covers)."""
    out = []
    for _ in range(count):
        ps = _inside(uset.marginal, uset.radius, uset.order, rng)
        rows = [_inside(uset.conditionals[s], uset.projected_radii[s], uset.order, rng) for s in range(len(ps))]
        out.append(np.array(rows) * ps[:, None])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("latent", [True, False])
@pytest.mark.parametrize(("order", "radius"), [(2.0, 0.05), (1.0, 0.02), (0.5, 0.1)])
def test_robust_lip_bounds_every_sampled_point_and_p_hat(latent: bool, order: float, radius: float) -> None:
    rng = np.random.default_rng(int(order * 10) + (1 if latent else 0))
    c, a = 3, 4
    joint = rng.dirichlet(np.full(c * a, 3.0)).reshape(c, a)
    uset = UncertaintySet(joint, radius, order)
    q = positive_mechanism(5, a if latent else c * a, rng)
    robust = robust_lip_leakage(q, uset)
    at_p_hat = lip_leakage(q, joint)
    assert robust.lower >= at_p_hat.lower and robust.upper >= at_p_hat.upper
    sampled = [lip_leakage(q, point) for point in sample_in_f2(uset, rng, 80)]
    lo, up = max(s.lower for s in sampled), max(s.upper for s in sampled)
    assert robust.lower >= lo - 1e-12 and robust.upper >= up - 1e-12
    assert lo > at_p_hat.lower and up > at_p_hat.upper  # the balls do reach further than P̂
    # Tighter than (and never above) the generic bound ε-LDP w.r.t. S over F ⇒ ε-LIP over F.
    rldp, _ = rldp_epsilon(q, uset)
    assert max(robust.lower, robust.upper) <= rldp + 1e-9
    # LDP w.r.t. S over F is the RLDP audit; sampled points stay below it.
    assert max(secret_ldp_epsilon(q, p)[0] for p in sample_in_f2(uset, rng, 20)) <= rldp + 1e-12
    assert robust_secret_ldp_epsilon(q, uset)[0] == rldp


@pytest.mark.parametrize("latent", [True, False])
def test_radius_zero_is_the_value_at_p_hat(latent: bool) -> None:
    rng = np.random.default_rng(11)
    joint = rng.dirichlet(np.full(6, 2.0)).reshape(2, 3)
    q = positive_mechanism(4, 3 if latent else 6, rng)
    uset = UncertaintySet(joint, 0.0)
    robust, point = robust_lip_leakage(q, uset), lip_leakage(q, joint)
    assert robust.lower == pytest.approx(point.lower, rel=1e-9) and robust.upper == pytest.approx(point.upper, rel=1e-9)
    assert robust_secret_ldp_epsilon(q, uset)[0] == pytest.approx(secret_ldp_epsilon(q, joint)[0], rel=1e-9)


def test_an_unbounded_set_gives_ldp_wrt_x_for_a_latent_s() -> None:
    rng = np.random.default_rng(12)
    joint = rng.dirichlet(np.full(6, 2.0)).reshape(2, 3)
    q = positive_mechanism(4, 3, rng)
    robust = robust_lip_leakage(q, UncertaintySet(joint, math.inf))
    # sup over every P of P(y|s)/P(y): P(y|s) → max_u Q, P(y) → min_u Q (P_S puts almost no mass on s).
    assert robust.upper == pytest.approx(ldp_epsilon(q), rel=1e-9)
    assert robust.lower == pytest.approx(ldp_epsilon(q), rel=1e-9)


# --------------------------------------------------------------------------- documents


def grr(k: int, eps: float) -> np.ndarray:
    q = np.full((k, k), 1.0 / (math.exp(eps) + k - 1))
    np.fill_diagonal(q, math.exp(eps) / (math.exp(eps) + k - 1))
    return q


def document(privacy: dict, *, latent: bool = True, eps_mechanism: float = 1.0) -> dict:
    alphabet = Alphabet(SEX, [COLOUR], latent=latent)
    return build_document(
        method="grr",
        matrix=grr(alphabet.size, eps_mechanism),
        alphabet=alphabet,
        public_distribution=P_HAT,
        privacy=privacy,
    )


def unc(radius: float | None = 0.0) -> dict:
    return {"order": 2.0, "radius": radius}


@pytest.mark.parametrize("latent", [True, False])
def test_lip_and_alip_documents_are_audited_through_the_registry(latent: bool) -> None:
    q = grr(3 if latent else 6, 1.0)
    lower, upper = lip_epsilons(q, P_HAT)
    eps = max(lower, upper)
    ok = audit_document(document({"notion": "lip", "epsilon": eps + 1e-6, "uncertainty": unc()}, latent=latent))
    assert ok.passed and ok.notion == "lip" and ok.epsilon == pytest.approx(eps)
    assert ok.extra["scope"] == "at P̂ only"
    assert ok.extra["epsilon_lower"] == pytest.approx(lower) and ok.extra["epsilon_upper"] == pytest.approx(upper)
    assert set(ok.worst) == {"output", "s"}
    bad = audit_document(document({"notion": "lip", "epsilon": eps * 0.9, "uncertainty": unc()}, latent=latent))
    assert not bad.passed and "LIP epsilon" in bad.reasons[0]
    claim = {
        "notion": "alip",
        "epsilon": max(lower, upper) + 1e-6,
        "epsilon_lower": lower + 1e-6,
        "epsilon_upper": upper + 1e-6,
        "uncertainty": unc(),
    }
    assert audit_document(document(claim, latent=latent)).passed
    tight = {**claim, "epsilon_upper": upper * 0.9, "epsilon": max(lower + 1e-6, upper * 0.9)}
    failed = audit_document(document(tight, latent=latent))
    assert not failed.passed and len(failed.reasons) == 1 and "max-lift" in failed.reasons[0]
    robust = audit_document(document({"notion": "lip", "epsilon": eps + 1e-6, "uncertainty": unc(0.05)}, latent=latent))
    assert robust.extra["scope"] == "robust over F" and robust.epsilon > eps and not robust.passed
    assert robust.extra["epsilon_upper_at_p_hat"] == pytest.approx(upper)
    assert audit_lip(q, UncertaintySet(P_HAT, 0.0), eps).to_dict()["extra"]["scope"] == "at P̂ only"
    assert audit_alip(q, UncertaintySet(P_HAT, 0.0), lower, upper).passed


def test_ldp_without_uncertainty_keeps_its_meaning_and_with_one_is_ldp_wrt_s() -> None:
    plain = document({"notion": "ldp", "epsilon": 1.0})
    result = audit_document(plain)
    assert result.passed and result.epsilon == pytest.approx(1.0) and result.extra == {}
    q = grr(3, 1.0)
    eps_s, _ = secret_ldp_epsilon(q, P_HAT)
    assert eps_s < 1.0  # w.r.t. S at P̂ the same mechanism leaks less than w.r.t. X
    at_p_hat = audit_document(document({"notion": "ldp", "epsilon": eps_s + 1e-9, "uncertainty": unc()}))
    assert at_p_hat.passed and at_p_hat.epsilon == pytest.approx(eps_s) and at_p_hat.extra["scope"] == "at P̂ only"
    refused = audit_document(document({"notion": "ldp", "epsilon": eps_s * 0.95, "uncertainty": unc()}))
    assert not refused.passed and "w.r.t. S" in refused.reasons[0]
    over_f = audit_document(document({"notion": "ldp", "epsilon": 1.0, "uncertainty": unc(0.05)}))
    assert over_f.extra["scope"] == "robust over F"
    assert over_f.epsilon == pytest.approx(rldp_epsilon(q, UncertaintySet(P_HAT, 0.05))[0])


def test_confidence_shortfall_fails_a_lip_document() -> None:
    doc = document(
        {"notion": "lip", "epsilon": 5.0, "uncertainty": {"order": 2.0, "radius": 1e-6, "n": 50, "beta": 0.05}}
    )
    result = audit_document(doc)
    assert not result.passed and "confidence radius" in result.reasons[-1]


def test_new_notions_are_registered_without_per_report_layers() -> None:
    for name in ("lip", "alip"):
        assert notion_audit(name).name == name and notion_audit(name).supports_per_report is False


@pytest.mark.parametrize(
    ("privacy", "message"),
    [
        ({"notion": "lip", "epsilon": 0.0, "uncertainty": unc()}, "privacy.epsilon must be a finite number > 0"),
        ({"notion": "lip", "epsilon": -1.0, "uncertainty": unc()}, "privacy.epsilon must be a finite number > 0"),
        ({"notion": "lip", "epsilon": 1.0}, "privacy.uncertainty (an object) is required for notion 'lip'"),
        ({"notion": "srlip", "epsilon": 1.0}, "privacy.uncertainty (an object) is required for notion 'srlip'"),
        (
            {"notion": "alip", "epsilon": 1.0, "epsilon_upper": 1.0, "uncertainty": unc()},
            "missing required field 'epsilon_lower' for notion 'alip'",
        ),
        (
            {"notion": "alip", "epsilon": 1.0, "epsilon_lower": 1.0, "uncertainty": unc()},
            "missing required field 'epsilon_upper' for notion 'alip'",
        ),
        (
            {"notion": "alip", "epsilon": 1.0, "epsilon_lower": 0.0, "epsilon_upper": 1.0, "uncertainty": unc()},
            "privacy.epsilon_lower must be a finite number > 0",
        ),
        (
            {"notion": "alip", "epsilon": 1.0, "epsilon_lower": 0.5, "epsilon_upper": 2.0, "uncertainty": unc()},
            "privacy.epsilon must be max(epsilon_lower, epsilon_upper)",
        ),
        (
            {"notion": "lip", "epsilon": 1.0, "epsilon_lower": 1.0, "uncertainty": unc()},
            "unknown field 'epsilon_lower' for notion 'lip'",
        ),
        ({"notion": "ldp", "epsilon": 1.0, "lambda": 0.5}, "unknown field 'lambda' for notion 'ldp'"),
        (
            {"notion": "ldp", "epsilon": 1.0, "uncertainty": {"divergence": "renyi", "order": 2.0}},
            "missing required field 'radius'",
        ),
        (
            {"notion": "lip", "epsilon": 1.0, "uncertainty": {"divergence": "renyi", "order": 2.0, "radius": -1.0}},
            "privacy.uncertainty.radius must be a finite number ≥ 0 or null",
        ),
    ],
)
def test_privacy_blocks_are_validated_naming_the_field(privacy: dict, message: str) -> None:
    base = document({"notion": "lip", "epsilon": 1.0, "uncertainty": unc()})
    doc = copy.deepcopy(base)
    doc["privacy"] = privacy
    doc["id"] = ""
    with pytest.raises(DocumentError) as info:
        validate_document(doc)
    assert message in str(info.value)


def test_alip_bounds_are_normalised_so_equal_claims_get_equal_ids() -> None:
    a = document({"notion": "alip", "epsilon": 2, "epsilon_lower": 2, "epsilon_upper": 1, "uncertainty": unc(0)})
    b = document(
        {"notion": "alip", "epsilon": 2.0, "epsilon_lower": 2.0, "epsilon_upper": 1.0, "uncertainty": unc(0.0)}
    )
    assert a["id"] == b["id"]
