"""The distp notion: (ε, δ)-distribution privacy between the distributions P_U|θ [KM19, Def 3, Def 15].

Checked against brute force over every output set R (|Y| ≤ 12), against the RLDP audit (the funnel
case: (ε, 0)-DistP between every P_U|s is ε-LDP w.r.t. S), against points sampled inside the
uncertainty balls (soundness of the robust bound), and on [KM19, Example 2]. Fixed seeds throughout.
"""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest

from rldp.shared.audit import (
    AuditResult,
    LayeredAuditResult,
    audit_distp,
    audit_document,
    distp_delta,
    distp_epsilon,
    notion_audit,
    realised_epsilon,
    rldp_epsilon,
    robust_distp_delta,
    robust_distp_epsilon,
    smallest_delta,
    smallest_epsilon,
)
from rldp.shared.audit.distp import EXACT_SUBSET_MAX_OUTPUTS, conditional_outputs, hockey_stick_threshold
from rldp.shared.divergence import renyi_divergence
from rldp.shared.document import build_document, content_id, validate_document
from rldp.shared.errors import DocumentError, ValidationError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tolerances import AUDIT_TOLERANCE
from rldp.shared.uncertainty import UncertaintySet

LAMBDA0 = np.array([0.2, 0.5, 0.3])  # [KM19, Example 2]
LAMBDA1 = np.array([0.3, 0.2, 0.5])
# [KM19, Fig 2(b)]: the coupling γ of λ₀ (rows) and λ₁ (columns); the mechanism A(y|x) = γ(x, y)/λ₀(x).
GAMMA = np.array([[0.2, 0.0, 0.0], [0.1, 0.2, 0.2], [0.0, 0.0, 0.3]])

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
P_HAT = np.array([[0.1, 0.2, 0.15], [0.25, 0.1, 0.2]])


def grr(k: int, eps: float) -> np.ndarray:
    q = np.full((k, k), 1.0 / (math.exp(eps) + k - 1))
    np.fill_diagonal(q, math.exp(eps) / (math.exp(eps) + k - 1))
    return q


def random_mechanism(outputs: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    """A column-stochastic Q (outputs × inputs), some entries exactly 0 (sparse columns happen)."""
    q = rng.dirichlet(np.full(outputs, 0.7), size=inputs).T
    q[q < 0.02] = 0.0
    return q / q.sum(axis=0)


def brute_force_delta(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """max over every set R of outputs (the empty one included) of p(R) − e^ε q(R) [KM19, Def 3]."""
    best = 0.0
    for size in range(1, len(p) + 1):
        for subset in itertools.combinations(range(len(p)), size):
            idx = list(subset)
            best = max(best, float(p[idx].sum() - math.exp(eps) * q[idx].sum()))
    return best


def privacy(epsilon: float, delta: float | None = None, radius: float | None = 0.01, **unc: object) -> dict:
    out: dict = {"notion": "distp", "epsilon": epsilon, "uncertainty": {"order": 2.0, "radius": radius, **unc}}
    if delta is not None:
        out["delta"] = delta
    return out


def grr_document(eps_mechanism: float, claim: dict, *, latent: bool = False) -> dict:
    alphabet = Alphabet(SEX, [COLOUR], latent=latent)
    return build_document(
        method="grr",
        matrix=grr(alphabet.size, eps_mechanism),
        alphabet=alphabet,
        public_distribution=P_HAT,
        privacy=claim,
    )


# --------------------------------------------------------------------------- the δ audit is exact


@pytest.mark.slow
@pytest.mark.parametrize("outputs", [1, 2, 5, 9, 12])
def test_smallest_delta_equals_brute_force_over_every_output_set_in_both_directions(outputs: int) -> None:
    rng = np.random.default_rng(100 + outputs)
    for _ in range(4):
        a = random_mechanism(outputs, 5, rng)
        lam0, lam1 = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        for eps in (0.0, 0.3, 1.0, 2.5):
            for x0, x1 in ((lam0, lam1), (lam1, lam0)):
                expected = brute_force_delta(a @ x0, a @ x1, eps)
                assert smallest_delta(a, x0, x1, eps) == pytest.approx(expected, abs=1e-12)


def test_distp_delta_is_the_worst_ordered_pair_of_conditionals() -> None:
    rng = np.random.default_rng(7)
    joint = rng.dirichlet(np.ones(12)).reshape(3, 4)
    q = random_mechanism(8, 12, rng)
    out, keep = conditional_outputs(q, joint)
    assert keep.all() and np.allclose(out.sum(axis=1), 1.0)
    for eps in (0.0, 0.5, 1.5):
        pairs = {(s1, s2): brute_force_delta(out[s1], out[s2], eps) for s1 in range(3) for s2 in range(3) if s1 != s2}
        delta, worst = distp_delta(q, joint, eps)
        assert delta == pytest.approx(max(pairs.values()), abs=1e-12)
        assert pairs[worst["s1"], worst["s2"]] == pytest.approx(delta, abs=1e-12)


def test_a_value_of_theta_without_mass_has_no_users_and_is_skipped() -> None:
    rng = np.random.default_rng(8)
    joint = rng.dirichlet(np.ones(12)).reshape(3, 4)
    joint[1] = 0.0
    q = random_mechanism(6, 12, rng)
    out, keep = conditional_outputs(q, joint)
    assert keep.tolist() == [True, False, True] and not out[1].any()
    delta, worst = distp_delta(q, joint, 0.2)
    expected = max(brute_force_delta(out[0], out[2], 0.2), brute_force_delta(out[2], out[0], 0.2))
    assert delta == pytest.approx(expected, abs=1e-12) and 1 not in worst.values()


def test_smallest_epsilon_is_the_threshold_of_smallest_delta() -> None:
    rng = np.random.default_rng(9)
    for _ in range(20):
        a = random_mechanism(7, 4, rng)
        lam0, lam1 = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        for delta in (0.0, 0.01, 0.1):
            eps = smallest_epsilon(a, lam0, lam1, delta)
            if math.isinf(eps):  # some output λ₀ reaches and λ₁ never does carries more than δ
                mass = (a @ lam0)[(a @ lam1) == 0].sum()
                assert mass > delta
                continue
            assert smallest_delta(a, lam0, lam1, eps) <= delta + 1e-12
            if eps > 1e-6:
                assert smallest_delta(a, lam0, lam1, eps - 1e-6) > delta
    # The δ = 0 threshold is the max log-ratio: ε-LDP of the two output distributions.
    assert smallest_epsilon(np.eye(3), LAMBDA0, LAMBDA1) == pytest.approx(math.log(0.5 / 0.2), abs=1e-15)
    assert hockey_stick_threshold([0.5, 0.5], [1.0, 0.0], 0.4) == math.inf  # 0.5 uncovered > δ
    assert hockey_stick_threshold([0.5, 0.5], [0.5, 0.5], 1.0) == 0.0


# --------------------------------------------------------------------------- the funnel case: DistP = LDP w.r.t. S


@pytest.mark.parametrize("latent", [False, True])
def test_epsilon_zero_delta_distp_between_every_p_u_given_s_is_ldp_wrt_s(latent: bool) -> None:
    """(ε, 0)-DistP between every pair P_U|s at P̂ ≡ ε-LDP w.r.t. S at P̂ ≡ the RLDP audit at radius 0."""
    rng = np.random.default_rng(11 + latent)
    joint = rng.dirichlet(np.ones(12)).reshape(3, 4)
    q = random_mechanism(6, 4 if latent else 12, rng)
    at_p_hat = UncertaintySet(joint, 0.0)
    eps_ldp_s, _ = rldp_epsilon(q, at_p_hat)
    assert eps_ldp_s == pytest.approx(realised_epsilon(q, joint), abs=1e-12)
    assert distp_epsilon(q, joint, 0.0)[0] == pytest.approx(eps_ldp_s, abs=1e-12)
    assert robust_distp_epsilon(q, at_p_hat, 0.0)[0] == pytest.approx(eps_ldp_s, abs=1e-12)
    # δ vanishes exactly from that ε on, and not before.
    assert distp_delta(q, joint, eps_ldp_s)[0] <= 1e-12
    assert robust_distp_delta(q, at_p_hat, eps_ldp_s)[0] <= 1e-12
    assert distp_delta(q, joint, eps_ldp_s - 1e-3)[0] > 0
    # At radius 0 the robust δ is the exact one at P̂ for every ε.
    for eps in (0.0, 0.4, eps_ldp_s / 2):
        assert robust_distp_delta(q, at_p_hat, eps)[0] == pytest.approx(distp_delta(q, joint, eps)[0], abs=1e-12)
    result = audit_distp(q, at_p_hat, eps_ldp_s, 0.0)
    assert result.passed and result.epsilon == eps_ldp_s and result.extra["scope"] == "at P̂ only"
    assert result.extra["delta_exact"] is True
    assert not audit_distp(q, at_p_hat, eps_ldp_s - 1e-3, 0.0).passed


# --------------------------------------------------------------------------- over the uncertainty set: sound


def sample_in_balls(uset: UncertaintySet, rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Joint distributions whose conditionals P_U|s lie in the projected balls F_U|s (F′, what the audit covers)."""
    cond, radii = uset.conditionals, uset.projected_radii
    found: list[np.ndarray] = []
    while len(found) < count:
        rows = []
        for s in range(uset.n_sensitive):
            while True:  # shrink a random direction until it is inside the ball (and sometimes near its edge)
                direction = rng.dirichlet(np.full(uset.n_released, 0.5))
                w = rng.uniform(0, 1)
                while w > 1e-6:
                    r = (1 - w) * cond[s] + w * direction
                    if renyi_divergence(cond[s], r, uset.order) <= radii[s]:
                        break
                    w *= 0.7
                rows.append(r)
                break
        found.append(np.array(rows) * uset.marginal[:, None])
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("outputs", "order"), [(4, 2.0), (7, 1.0), (EXACT_SUBSET_MAX_OUTPUTS + 1, 2.0), (6, 0.5)])
def test_the_robust_delta_bounds_the_exact_delta_at_p_hat_and_inside_the_balls(outputs: int, order: float) -> None:
    rng = np.random.default_rng(20 + outputs)
    joint = rng.dirichlet(np.full(8, 3.0)).reshape(2, 4)
    uset = UncertaintySet(joint, 0.05, order)
    q = random_mechanism(outputs, 8, rng)
    points = sample_in_balls(uset, rng, 60)
    for eps in (0.0, 0.5, 1.0):
        robust, _ = robust_distp_delta(q, uset, eps)
        at_p_hat, _ = distp_delta(q, joint, eps)
        assert robust >= at_p_hat - 1e-12
        sampled = max(distp_delta(q, point, eps)[0] for point in points)
        assert robust >= sampled - 1e-12
        assert sampled > at_p_hat or at_p_hat == 0  # the balls do reach further than P̂
    # At δ = 0 the robust ε is the RLDP audit's (the worst-case ε over the same F′).
    assert robust_distp_epsilon(q, uset, 0.0)[0] == pytest.approx(rldp_epsilon(q, uset)[0], rel=1e-9)


@pytest.mark.parametrize("order", [2.0, 1.0])
def test_the_robust_delta_is_exact_over_the_balls_when_they_are_intervals(order: float) -> None:
    """|U| = 2: each ball F_U|s is an interval of (r, 1 − r); δ(λ_θ, λ_θ′) is convex (a max of affine
    functions), so its maximum over the product of intervals is at one of the corners."""
    rng = np.random.default_rng(51)
    joint = rng.dirichlet(np.full(6, 3.0)).reshape(3, 2)
    uset = UncertaintySet(joint, 0.03, order)
    ends = np.stack([uset.lower_bounds()[:, 0], uset.upper_bounds()[:, 0]], axis=1)  # r range per s
    q = random_mechanism(6, 6, rng)
    blocks = q.reshape(6, 3, 2)
    for eps in (0.0, 0.4, 1.2):
        corners = 0.0
        for s1, s2 in itertools.permutations(range(3), 2):
            for r1, r2 in itertools.product(ends[s1], ends[s2]):
                out1 = blocks[:, s1] @ np.array([r1, 1 - r1])
                out2 = blocks[:, s2] @ np.array([r2, 1 - r2])
                corners = max(corners, brute_force_delta(out1, out2, eps))
        robust, _ = robust_distp_delta(q, uset, eps)
        assert robust == pytest.approx(corners, abs=1e-9)
        assert robust > distp_delta(q, joint, eps)[0] + 1e-3


def test_the_exact_robust_delta_is_below_the_per_output_bound_and_its_epsilon_is_its_threshold() -> None:
    rng = np.random.default_rng(31)
    joint = rng.dirichlet(np.full(6, 2.0)).reshape(2, 3)
    uset = UncertaintySet(joint, 0.1)
    q = random_mechanism(5, 6, rng)
    hi, lo = uset.extremes(q.reshape(-1, 2, 3))
    for eps in (0.0, 0.7):
        per_output = max(
            float(np.maximum(hi[:, s1] - math.exp(eps) * np.maximum(lo[:, s2], 0), 0).sum())
            for s1, s2 in ((0, 1), (1, 0))
        )
        exact, _ = robust_distp_delta(q, uset, eps)
        assert exact <= per_output + 1e-12
    for delta in (0.0, 0.02, 0.2):
        eps, _ = robust_distp_epsilon(q, uset, delta)
        assert robust_distp_delta(q, uset, eps)[0] <= delta + 1e-9
        if eps > 1e-4:
            assert robust_distp_delta(q, uset, eps - 1e-4)[0] > delta


def test_an_unbounded_set_covers_every_input_distribution() -> None:
    rng = np.random.default_rng(41)
    q = random_mechanism(5, 6, rng)
    uset = UncertaintySet(P_HAT, math.inf)
    robust, _ = robust_distp_delta(q, uset, 0.3)
    for _ in range(50):  # any conditionals at all, including point masses
        joint = rng.dirichlet(np.full(6, 0.3)).reshape(2, 3)
        assert distp_delta(q, joint, 0.3)[0] <= robust + 1e-12
    corners = np.zeros((2, 3))
    corners[0, int(np.argmax(q[0, :3]))] = corners[1, int(np.argmin(q[0, 3:]))] = 0.5
    assert distp_delta(q, corners, 0.3)[0] <= robust + 1e-12
    assert audit_distp(q, uset, 0.3, robust).extra["scope"] == "for every input distribution"


# --------------------------------------------------------------------------- documents


def test_a_grr_document_under_distp_audits_and_refuses_a_too_small_delta() -> None:
    # GRR on X at ε = 2 is 2-LDP: δ = 0 at ε = 2 whatever the distributions; at ε = 0.5 it needs some δ.
    assert audit_document(grr_document(2.0, privacy(2.0))).passed
    uset = UncertaintySet(P_HAT, 0.01)
    needed, worst = robust_distp_delta(grr(6, 2.0), uset, 0.5)
    assert 0.01 < needed < 0.5 and set(worst) == {"s1", "s2"}
    ok = audit_document(grr_document(2.0, privacy(0.5, needed + 1e-6)))
    assert isinstance(ok, AuditResult) and ok.passed and ok.notion == "distp" and ok.reasons == ()
    assert ok.epsilon == pytest.approx(rldp_epsilon(grr(6, 2.0), uset)[0], abs=0) and ok.claimed == 0.5
    assert ok.extra["delta"] == pytest.approx(needed, abs=1e-15) and ok.extra["delta_claimed"] == needed + 1e-6
    assert ok.extra["delta_at_p_hat"] == pytest.approx(distp_delta(grr(6, 2.0), P_HAT, 0.5)[0], abs=1e-15)
    # GRR on X: (Aλ)(R) for R = the outputs with s = θ does not depend on λ, so the worst δ is already at P̂.
    assert ok.extra["delta_at_p_hat"] == pytest.approx(needed, abs=1e-12)
    assert ok.extra["scope"] == "over the uncertainty set (radius 0.01 nats)"
    bad = audit_document(grr_document(2.0, privacy(0.5, needed / 2)))
    assert bad.passed is False and len(bad.reasons) == 1
    assert "exceeds the claimed delta" in bad.reasons[0] and f"{needed:.12g}" in bad.reasons[0]
    # Passes when δ ≤ claimed δ + AUDIT_TOLERANCE, and not beyond.
    assert audit_document(grr_document(2.0, privacy(0.5, needed - 0.5 * AUDIT_TOLERANCE))).passed
    assert not audit_document(grr_document(2.0, privacy(0.5, needed - 2 * AUDIT_TOLERANCE))).passed
    # A claim without delta means δ = 0.
    assert audit_document(grr_document(2.0, privacy(0.5))).passed is False
    as_dict = bad.to_dict()
    assert as_dict["extra"]["delta"] == bad.extra["delta"] and as_dict["notion"] == "distp"


def test_a_latent_s_grr_document_and_the_scope_at_p_hat_only() -> None:
    doc = grr_document(1.0, privacy(0.2, 0.5, radius=0.0), latent=True)
    assert len(doc["matrix"][0]) == 3  # GRR on U only
    result = audit_document(doc)
    assert result.passed and result.extra["scope"] == "at P̂ only"
    joint_q = np.tile(grr(3, 1.0), (1, 2))
    assert result.extra["delta"] == pytest.approx(distp_delta(joint_q, P_HAT, 0.2)[0], abs=1e-12)


def test_epsilon_zero_is_a_distp_claim_the_total_variation_bounds() -> None:
    # (0, δ)-DistP: δ bounds the total variation between the output distributions [KM19, Def 3].
    doc = grr_document(1.0, privacy(0.0, 0.3, radius=0.0))
    result = audit_document(doc)
    out, _ = conditional_outputs(grr(6, 1.0), P_HAT)
    tv = 0.5 * float(np.abs(out[0] - out[1]).sum())
    assert result.extra["delta"] == pytest.approx(tv, abs=1e-12) and result.passed


def test_the_stated_radius_must_cover_the_confidence_radius_of_n_and_beta() -> None:
    result = audit_document(grr_document(2.0, privacy(2.0, 0.0, radius=1e-6, n=1000, beta=0.05)))
    assert result.passed is False and any("confidence radius" in reason for reason in result.reasons)


def test_a_per_report_layer_is_audited_by_the_distp_audit_too() -> None:
    assert notion_audit("distp").supports_per_report
    layer = np.random.default_rng(3).dirichlet(np.ones(4), size=6).T
    claim = privacy(1.0, 0.05)
    base = grr_document(2.0, claim)
    doc = build_document(
        method="grr",
        matrix=base["matrix"],
        alphabet=Alphabet(SEX, [COLOUR]),
        public_distribution=P_HAT,
        privacy=claim,
        extra={"collection": {"per_report": {"matrix": layer.tolist(), "epsilon": 0.5}}},
    )
    result = audit_document(doc)
    assert isinstance(result, LayeredAuditResult) and result.per_report is not None
    single = audit_distp(layer @ grr(6, 2.0), UncertaintySet(P_HAT, 0.01), 0.5, 0.05)
    assert result.per_report.extra == single.extra and result.passed == (
        single.passed and result.extra["delta"] <= 0.05
    )
    assert result.extra == audit_document(base).extra  # the long-run fields are Q's


def test_other_notions_keep_their_audit_dict() -> None:
    doc = grr_document(2.0, privacy(2.0))
    rldp = copy.deepcopy(doc)
    rldp["privacy"] = {**doc["privacy"], "notion": "rldp"}
    rldp["id"] = content_id(rldp)
    as_dict = audit_document(rldp).to_dict()
    assert set(as_dict) == {"notion", "epsilon", "claimed", "passed", "worst", "reasons"}


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ({**privacy(1.0), "delta": -0.1}, r"privacy.delta must be a number in \[0, 1\); got -0.1"),
        ({**privacy(1.0), "delta": 1.0}, r"privacy.delta must be a number in \[0, 1\); got 1.0"),
        ({**privacy(1.0), "delta": "0.1"}, "privacy.delta must be a number, got '0.1'"),
        ({**privacy(1.0), "delta": True}, "privacy.delta must be a number, got True"),
        ({**privacy(1.0), "detla": 0.1}, "privacy has unknown field 'detla' for notion 'distp'; its fields are"),
        (
            {"notion": "distp", "epsilon": 1.0, "delta": 0.1},
            r"privacy.uncertainty \(an object\) is required for notion 'distp'",
        ),
        ({**privacy(1.0), "epsilon": -0.5}, r"privacy.epsilon must be a finite number ≥ 0 \(nats\); got -0.5"),
        ({**privacy(1.0), "uncertainty": {"order": 2.0}}, "missing required field 'radius'"),
        (
            {"notion": "rldp", "epsilon": 1.0, "delta": 0.1, "uncertainty": {"order": 2.0, "radius": 0.1}},
            "privacy.delta is a parameter of notion 'distp'; notion 'rldp' has no delta",
        ),
        ({"notion": "ldp", "epsilon": 1.0, "delta": 0.0}, "notion 'ldp' has no delta"),
    ],
)
def test_invalid_or_unknown_delta_fields_are_refused_naming_the_field(claim: dict, message: str) -> None:
    doc = grr_document(2.0, privacy(1.0))
    doc["privacy"] = claim
    if isinstance(claim.get("uncertainty"), dict):
        claim["uncertainty"].setdefault("divergence", "renyi")
    with pytest.raises(DocumentError, match=message):
        validate_document(doc)


def test_function_arguments_are_checked() -> None:
    with pytest.raises(ValidationError, match="lambda0 must sum to 1"):
        smallest_delta(np.eye(3), [0.2, 0.2, 0.2], LAMBDA1, 0.0)
    with pytest.raises(ValidationError, match="lambda1 must be a distribution over the matrix's 3 columns"):
        smallest_delta(np.eye(3), LAMBDA0, [0.5, 0.5], 0.0)
    with pytest.raises(ValidationError, match="epsilon must be a finite number ≥ 0"):
        smallest_delta(np.eye(3), LAMBDA0, LAMBDA1, -1.0)
    with pytest.raises(ValidationError, match=r"delta must be a number in \[0, 1\]"):
        smallest_epsilon(np.eye(3), LAMBDA0, LAMBDA1, 1.5)
    with pytest.raises(ValidationError, match="distribution must have shape"):
        distp_delta(np.eye(3), LAMBDA0, 0.0)


# --------------------------------------------------------------------------- [KM19, Example 2]


def example_document(radius: float, epsilon: float = 0.0, delta: float = 0.0) -> dict:
    """θ ∈ {0, 1} with rows λ₀, λ₁ (P̂_θ = ½); θ = 0 coupled to λ₁ by Fig 2's γ, θ = 1 left as is (λ₁ → λ₁)."""
    coupling = GAMMA / LAMBDA0[:, None]  # A(y|x) = γ(x, y)/λ₀(x): row x
    matrix = np.hstack([coupling.T, np.eye(3)])  # columns (θ, x), θ major
    return build_document(
        method="coupling",
        matrix=matrix,
        alphabet=Alphabet(Attribute("theta", ("0", "1")), [Attribute("x", ("1", "2", "3"))]),
        public_distribution=0.5 * np.vstack([LAMBDA0, LAMBDA1]),
        privacy=privacy(epsilon, delta, radius=radius),
    )


def test_example_2_numbers() -> None:
    # Fig 2(b) is a coupling of λ₀ and λ₁; input 2 goes to (0.2, 0.4, 0.4); its expected |x − y| is the EMD 0.3.
    np.testing.assert_allclose(GAMMA.sum(axis=1), LAMBDA0, atol=1e-15)
    np.testing.assert_allclose(GAMMA.sum(axis=0), LAMBDA1, atol=1e-15)
    np.testing.assert_allclose(GAMMA[1] / LAMBDA0[1], [0.2, 0.4, 0.4], atol=1e-15)
    distance = np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    assert float((GAMMA * distance).sum()) == pytest.approx(0.3, abs=1e-15)
    # Without obfuscation the two distributions are 0.3 apart in total variation, ε = log 2.5 at δ = 0.
    for x0, x1 in ((LAMBDA0, LAMBDA1), (LAMBDA1, LAMBDA0)):
        assert smallest_delta(np.eye(3), x0, x1, 0.0) == pytest.approx(0.3, abs=1e-15)
    assert smallest_delta(np.eye(3), LAMBDA0, LAMBDA1, math.log(2)) == pytest.approx(0.5 - 2 * 0.2, abs=1e-15)
    assert smallest_epsilon(np.eye(3), LAMBDA1, LAMBDA0) == pytest.approx(math.log(0.5 / 0.3), abs=1e-15)
    # The coupling mechanism: exactly (0, 0)-DistP at P̂ (both θ give λ₁).
    doc = example_document(radius=0.0)
    out, _ = conditional_outputs(doc["matrix"], doc["public_distribution"])
    np.testing.assert_allclose(out, [LAMBDA1, LAMBDA1], atol=1e-15)
    result = audit_document(doc)
    assert result.passed and result.epsilon == pytest.approx(0.0, abs=1e-12)
    assert result.extra["delta"] == pytest.approx(0.0, abs=1e-12) and result.extra["scope"] == "at P̂ only"
    # Exact only at λ̂: over a ball it leaks, the δ at ε = 0 grows with the radius, and the audit says so.
    deltas = [audit_document(example_document(r)).extra["delta"] for r in (0.001, 0.01, 0.1)]
    assert 0 < deltas[0] < deltas[1] < deltas[2] < 1
    assert audit_document(example_document(0.01)).passed is False
    assert audit_document(example_document(0.01, 0.0, deltas[1] + 1e-9)).passed
