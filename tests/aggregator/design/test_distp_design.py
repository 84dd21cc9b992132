"""Designing for the distp notion: design(notion="distp"), the registry per notion, XDistP with EMD,
and the bounds of [KM19, Thm 2, Thm 3] on random cases.

Every document designed here is re-audited by the registered distp audit (audit_document), which is
what the service and the client run: a design that passes only at design time would be caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import (
    NOTION_METHODS,
    NUMERIC_METHODS,
    DesignError,
    cost_matrix,
    design,
    emd,
    grr_matrix,
    methods_for,
    validate_parameters,
)
from rldp.aggregator.design.solvers.coupling import coupling_matrix
from rldp.aggregator.design.solvers.xdistp import emd_table, xdistp_epsilon
from rldp.shared.audit import all_distributions_epsilon, audit_document, audit_rldp, distp_delta, distp_epsilon
from rldp.shared.distp_measures import divergence
from rldp.shared.document import mechanism_matrix, validate_document
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

P_HAT = np.array([[0.10, 0.15, 0.05, 0.10], [0.05, 0.10, 0.25, 0.20]])
N = 2000


def _alphabet(k: int = 4, n_theta: int = 2, latent: bool = False) -> Alphabet:
    s = Attribute("group", tuple(f"g{i}" for i in range(n_theta)))
    u = [Attribute("colour", tuple(f"c{j}" for j in range(k)))]
    return Alphabet(s, u, latent=True) if latent else Alphabet(s, u)


def _check(doc: dict, epsilon: float, delta: float) -> None:
    validate_document(doc)
    assert doc["privacy"]["notion"] == "distp"
    assert doc["privacy"]["epsilon"] == epsilon and doc["privacy"]["delta"] == delta
    result = audit_document(doc)  # recomputed from the matrix, as the service and client do
    assert result.passed and result.extra["delta"] <= delta + 1e-9
    assert doc["audit"] == result.to_dict()


# ----------------------------------------------------------------------------- design(notion="distp")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("radius", "delta", "target", "cost"),
    [
        (0.0, None, None, None),
        (0.0, 0.0, "uniform", "hamming"),
        (None, None, None, None),  # the 95 % confidence set for n = 2000
        (None, 0.01, "marginal", "absolute"),
        (None, 0.0, "barycenter", [[0, 1, 4, 9], [1, 0, 1, 4], [4, 1, 0, 1], [9, 4, 1, 0]]),
        (0.05, 0.001, [0.1, 0.2, 0.3, 0.4], None),
        (math.inf, 0.0, None, None),  # every distribution
    ],
)
def test_every_coupling_design_passes_the_distp_audit(radius, delta, target, cost):
    epsilon = 0.7
    doc = design(
        "coupling",
        alphabet=_alphabet(),
        public_distribution=P_HAT,
        epsilon=epsilon,
        radius=radius,
        n=N,
        notion="distp",
        delta=delta,
        target=target,
        cost=cost,
    )
    _check(doc, epsilon, delta or 0.0)
    params = doc["parameters"]
    assert set(params) >= {"target", "target_rule", "cost", "expected_loss", "emd", "mix", "outputs"}
    stated = doc["privacy"]["uncertainty"]["radius"]
    assert stated == (None if radius == math.inf else radius) if radius is not None else stated > 0
    extra = doc["audit"]["extra"]
    assert extra["delta_at_p_hat"] <= 1e-12  # exact at P̂: one common target
    if radius == 0.0:
        assert params["mix"] == 0.0 and extra["scope"] == "at P̂ only"
    if radius == math.inf:  # every distribution: (ε, P_X)-RLDP [LZG24, Prop 3], reached by mixing
        assert 0 < params["mix"] < 1
        assert all_distributions_epsilon(mechanism_matrix(doc), 2) <= epsilon + 1e-9


def test_the_privacy_block_and_the_recorded_parameters():
    doc = design(
        "coupling", alphabet=_alphabet(), public_distribution=P_HAT, epsilon=1.0, n=N, notion="distp", delta=0.01
    )
    privacy = doc["privacy"]
    assert set(privacy) == {"notion", "epsilon", "delta", "uncertainty"}
    assert privacy["uncertainty"]["n"] == N and privacy["uncertainty"]["beta"] == 0.05
    assert privacy["uncertainty"]["radius"] > 0 and privacy["uncertainty"]["divergence"] == "renyi"
    q = mechanism_matrix(doc)
    assert q.shape == (len(doc["parameters"]["outputs"]), 8)  # reads θ: |S|·|U| columns
    assert doc["audit"]["notion"] == "distp" and doc["audit"]["claimed"] == 1.0
    assert {"delta", "delta_at_p_hat", "scope"} <= set(doc["audit"]["extra"])


@pytest.mark.slow
@pytest.mark.parametrize("method", [m for m in NOTION_METHODS["distp"] if m not in ("coupling", *NUMERIC_METHODS)])
def test_the_rldp_methods_under_distp_pass_and_their_epsilon_is_the_rldp_audits(method):
    """(ε, F)-RLDP is (ε, 0)-DistP between every pair of conditionals in F: the distp audit's ε at δ = 0
    is the RLDP audit's ε."""
    doc = design(method, alphabet=_alphabet(), public_distribution=P_HAT, epsilon=1.0, n=N, notion="distp")
    _check(doc, 1.0, 0.0)
    uset = UncertaintySet.from_confidence(P_HAT, N, 0.05)
    assert doc["audit"]["epsilon"] == pytest.approx(audit_rldp(mechanism_matrix(doc), uset).epsilon, abs=1e-12)


def test_latent_grr_under_distp():
    doc = design("grr", alphabet=_alphabet(latent=True), public_distribution=P_HAT, epsilon=0.5, n=N, notion="distp")
    _check(doc, 0.5, 0.0)
    assert mechanism_matrix(doc).shape == (4, 4)


def test_epsilon_ldp_wrt_s_at_p_hat_is_epsilon_zero_distp():
    """(ε, 0)-DistP between every pair P_U|s at P̂ ≡ ε-LDP w.r.t. S at P̂ ≡ the RLDP audit at radius 0."""
    uset = UncertaintySet(P_HAT, 0.0)
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = rng.dirichlet(np.ones(5), size=8).T  # a random mechanism reading (θ, x)
        eps_rldp = audit_rldp(q, uset).epsilon
        assert distp_epsilon(q, P_HAT, 0.0)[0] == pytest.approx(eps_rldp, abs=1e-9)
        assert distp_delta(q, P_HAT, eps_rldp + 1e-9)[0] <= 1e-12
        assert distp_delta(q, P_HAT, max(eps_rldp - 0.05, 0.0))[0] > 0


# ----------------------------------------------------------------------------- refused requests


def test_the_registry_per_notion():
    assert "coupling" in methods_for("distp") and "grr" in methods_for("distp") and "nr" not in methods_for("distp")
    assert "coupling" not in methods_for("rldp")
    assert not methods_for("distp")["coupling"].supports_latent
    with pytest.raises(DesignError, match="notion must be one of rldp, distp, ldp, lip, alip; got 'srlip'"):
        methods_for("srlip")


@pytest.mark.parametrize(
    ("method", "kwargs", "needle"),
    [
        ("coupling", {}, "method 'coupling' does not design for notion 'rldp' .it does for distp."),
        ("nr", {"notion": "distp"}, "method 'nr' does not design for notion 'distp'"),
        ("grr", {"delta": 0.1}, "delta applies to notion distp only"),
        ("coupling", {"notion": "distp", "delta": 1.0}, r"delta must be a number in \[0, 1\); got 1.0"),
        ("coupling", {"notion": "distp", "delta": -0.1}, r"delta must be a number in \[0, 1\)"),
        ("coupling", {"notion": "distp", "epsilon": -1.0}, "epsilon must be a finite number > 0"),
        ("grr", {"notion": "distp", "target": "uniform"}, "target applies to method coupling only"),
        ("polyopt", {"notion": "distp", "cost": "hamming"}, "cost applies to method coupling only"),
        ("coupling", {"notion": "ldp"}, "method 'coupling' does not design for notion 'ldp' .it does for distp."),
        ("coupling", {"notion": "srlip"}, "notion must be one of rldp, distp, ldp, lip, alip"),
    ],
)
def test_bad_requests_are_refused_naming_the_field(method, kwargs, needle):
    args = {"epsilon": 1.0, "n": N, **kwargs}
    with pytest.raises(DesignError, match=needle):
        design(method, alphabet=_alphabet(), public_distribution=P_HAT, **args)


def test_coupling_refuses_a_latent_s():
    with pytest.raises(
        DesignError,
        match="'coupling' needs the sensitive attribute as an input.*: grr, rr-released, square-wave, piecewise$",
    ):
        design("coupling", alphabet=_alphabet(latent=True), public_distribution=P_HAT, epsilon=1.0, n=N, notion="distp")


def test_validate_parameters_knows_the_notions():
    validate_parameters("coupling", 1.0, radius=0.0, notion="distp", delta=0.0)
    with pytest.raises(DesignError, match="unknown method 'simplex'"):
        validate_parameters("simplex", 1.0, radius=0.0, notion="distp")


# ----------------------------------------------------------------------------- XDistP and the theorems


def test_xdistp_by_hand():
    """Two groups, GRR on U (θ latent): XDistP ε = D(P(·|0) ‖ P(·|1)) / EMD(λ₀, λ₁) for each D."""
    p = np.vstack([[0.2, 0.5, 0.3], [0.3, 0.2, 0.5]]) / 2
    q = grr_matrix(3, 1.0)
    out0, out1 = q @ np.array([0.2, 0.5, 0.3]), q @ np.array([0.3, 0.2, 0.5])
    result = xdistp_epsilon(q, p, "absolute")
    both = max(math.log(np.max(out0 / out1)), math.log(np.max(out1 / out0)))
    assert result["max"] == pytest.approx(both / 0.3, rel=1e-9)
    assert result["kl"] == pytest.approx(max(divergence("kl", out0, out1), divergence("kl", out1, out0)) / 0.3)
    np.testing.assert_allclose(emd_table(p, "absolute"), [[0.0, 0.3], [0.3, 0.0]], atol=1e-12)
    exact = coupling_matrix(
        p / p.sum(axis=1, keepdims=True), p.sum(axis=1), np.array([0.3, 0.2, 0.5]), cost_matrix("absolute", 3)
    )
    assert all(v == 0.0 for v in xdistp_epsilon(exact.matrix, p).values())  # exact at P̂: nothing to see


@pytest.mark.parametrize("seed", range(5))
def test_theorem_2_xdp_gives_xdistp_wrt_emd(seed):
    """[KM19, Thm 2] for the jointly convex divergences: a mechanism with D(A_x ‖ A_x′) ≤ ε|x − x′| has
    D(Aλ₀ ‖ Aλ₁) ≤ ε·EMD(λ₀, λ₁). The exponential mechanism A(y|x) ∝ e^{−ε|x−y|/2} is ε-XDP (max
    divergence ≤ ε|x − x′|), hence also for KL, reverse KL and total variation."""
    rng = np.random.default_rng(seed)
    k, eps = 6, float(rng.uniform(0.2, 2.0))
    idx = np.arange(k)
    a = np.exp(-eps * np.abs(idx[:, None] - idx[None, :]) / 2)
    a /= a.sum(axis=0, keepdims=True)
    for _ in range(30):
        p = rng.dirichlet(np.full(2 * k, 0.5)).reshape(2, k)
        bounds = xdistp_epsilon(a, p, "absolute")  # latent θ: A reads x only
        for name in ("kl", "reverse_kl", "total_variation"):
            assert bounds[name] <= eps + 1e-9, (name, bounds[name], eps)


@pytest.mark.parametrize("seed", range(5))
def test_theorem_3_the_coupling_under_approximate_knowledge(seed):
    """[KM19, Thm 3] (its bounds lost in extraction; rebuilt): if the real λ_θ is within e^{±ε₀} of λ̂_θ
    pointwise, then P(y|θ) ∈ [e^{−ε₀}, e^{ε₀}]·λ_T(y), so the coupling mechanism is (2ε₀, 0)-DistP; and
    TV(P(·|θ), P(·|θ′)) ≤ TV(λ_θ, λ̂_θ) + TV(λ_θ′, λ̂_θ′) (data processing), i.e. its δ at ε = 0."""
    rng = np.random.default_rng(50 + seed)
    k = 5
    p_hat = rng.dirichlet(np.ones(3 * k)).reshape(3, k)
    weights, lams = p_hat.sum(axis=1), p_hat / p_hat.sum(axis=1, keepdims=True)
    q = coupling_matrix(lams, weights, weights @ lams, cost_matrix("absolute", k)).matrix
    for _ in range(20):
        real = lams * np.exp(rng.uniform(-0.3, 0.3, lams.shape))
        real /= real.sum(axis=1, keepdims=True)
        eps0 = float(np.max(np.abs(np.log(real / lams))))
        p_real = real * weights[:, None]
        assert distp_epsilon(q, p_real, 0.0)[0] <= 2 * eps0 + 1e-12
        tv = 0.5 * np.abs(real - lams).sum(axis=1)
        assert distp_delta(q, p_real, 0.0)[0] <= np.max(tv[:, None] + tv[None, :]) + 1e-12


def test_emd_is_a_metric_on_the_protected_distributions():
    rng = np.random.default_rng(9)
    c = cost_matrix("absolute", 4)
    for _ in range(20):
        a, b, m = (rng.dirichlet(np.ones(4)) for _ in range(3))
        assert emd(a, b, c) <= emd(a, m, c) + emd(m, b, c) + 1e-12
        assert emd(a, b, c) == pytest.approx(emd(b, a, c), abs=1e-12)
