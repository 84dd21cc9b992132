"""Divergence DistP measures [KM19, Defs 5–6, 11–12] against hand computations and their definitions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rldp.shared.distp_measures import (
    DIVERGENCES,
    approximate_max_divergence,
    divergence,
    divergence_distp,
    pairwise_divergences,
)
from rldp.shared.errors import ValidationError

P = np.array([0.5, 0.3, 0.2])
Q = np.array([0.25, 0.25, 0.5])
LAMBDA0 = np.array([0.2, 0.5, 0.3])  # [KM19, Example 2]
LAMBDA1 = np.array([0.3, 0.2, 0.5])

# f of each f-divergence D_f(p ‖ q) = Σ q f(p/q) [KM19, Def 6]
F = {
    "kl": lambda t: t * math.log(t),
    "reverse_kl": lambda t: -math.log(t),
    "total_variation": lambda t: 0.5 * abs(t - 1),
    "chi2": lambda t: (t - 1) ** 2,
    "hellinger": lambda t: 0.5 * (math.sqrt(t) - 1) ** 2,
}


def test_hand_computed_values() -> None:
    expected = {
        "max": math.log(0.5 / 0.25),
        "kl": 0.5 * math.log(2) + 0.3 * math.log(1.2) + 0.2 * math.log(0.4),
        "reverse_kl": 0.25 * math.log(0.5) + 0.25 * math.log(0.25 / 0.3) + 0.5 * math.log(2.5),
        "total_variation": 0.5 * (0.25 + 0.05 + 0.3),
        "chi2": 0.25**2 / 0.25 + 0.05**2 / 0.25 + 0.3**2 / 0.5,
        "hellinger": 0.5
        * ((math.sqrt(0.5) - 0.5) ** 2 + (math.sqrt(0.3) - 0.5) ** 2 + (math.sqrt(0.2) - math.sqrt(0.5)) ** 2),
    }
    assert set(expected) == set(DIVERGENCES)
    for name, value in expected.items():
        assert divergence(name, P, Q) == pytest.approx(value, abs=1e-15), name
    assert divergence("total_variation", P, Q) == pytest.approx(0.3, abs=1e-15)
    assert divergence("chi2", P, Q) == pytest.approx(0.44, abs=1e-15)


def test_f_divergences_follow_their_f_on_full_support_and_are_divergences() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        for name, f in F.items():
            assert divergence(name, p, q) == pytest.approx(sum(qi * f(pi / qi) for pi, qi in zip(p, q)), rel=1e-12)
            assert divergence(name, p, q) > 0 and divergence(name, p, p) == pytest.approx(0.0, abs=1e-15)
        assert divergence("reverse_kl", p, q) == pytest.approx(divergence("kl", q, p), rel=1e-14)
        assert divergence("max", p, q) == pytest.approx(max(np.log(p / q)), rel=1e-14)


def test_zero_cells_follow_the_limit_convention() -> None:
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.5, 0.0, 0.5])
    values = {name: divergence(name, p, q) for name in DIVERGENCES}
    assert values["max"] == values["kl"] == values["chi2"] == values["reverse_kl"] == math.inf
    assert values["total_variation"] == pytest.approx(0.5, abs=1e-15)
    assert values["hellinger"] == pytest.approx(0.5 * (0.5 + 0.5), abs=1e-15)
    # q = 0 < p costs reverse KL nothing (−log t grows slower than t); p = 0 < q is infinite.
    assert divergence("reverse_kl", [0.5, 0.5], [1.0, 0.0]) == pytest.approx(math.log(2), abs=1e-15)
    assert divergence("reverse_kl", [1.0, 0.0], [0.5, 0.5]) == math.inf
    assert divergence("kl", [1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2), abs=1e-15)


def test_the_data_processing_inequality_holds_for_every_measure() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        a = rng.dirichlet(np.ones(4), size=5).T  # a channel 5 → 4
        for name in DIVERGENCES:
            assert divergence(name, a @ p, a @ q) <= divergence(name, p, q) + 1e-12, name


def test_the_approximate_max_divergence_is_its_definition() -> None:
    """D∞^δ(p ‖ q) = max over sets R with p(R) > δ of log((p(R) − δ)/q(R)) [KM19, Def 5], by brute force."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        for delta in (0.0, 0.05, 0.2):
            best = -math.inf
            for size in range(1, 7):
                for subset in itertools.combinations(range(6), size):
                    mass = p[list(subset)].sum()
                    if mass > delta:
                        best = max(best, math.log((mass - delta) / q[list(subset)].sum()))
            assert approximate_max_divergence(p, q, delta) == pytest.approx(best, abs=1e-12)
    assert approximate_max_divergence(P, Q, 0.0) == pytest.approx(divergence("max", P, Q), abs=1e-15)
    assert approximate_max_divergence(P, Q, 1.0) == -math.inf


def test_example_2_without_obfuscation_and_pairs_in_both_orders() -> None:
    joint = 0.5 * np.vstack([LAMBDA0, LAMBDA1])
    identity = np.eye(6)  # θ read, y = (θ, x): the output reveals θ itself
    x_only = np.eye(3)  # θ latent: y = x, the output distributions are λ₀ and λ₁
    tables = pairwise_divergences(x_only, joint)
    for name in DIVERGENCES:
        table = tables[name]
        assert np.isnan(np.diag(table)).all()
        assert table[0, 1] == pytest.approx(divergence(name, LAMBDA0, LAMBDA1), abs=1e-15)
        assert table[1, 0] == pytest.approx(divergence(name, LAMBDA1, LAMBDA0), abs=1e-15)
    worst = divergence_distp(x_only, joint)
    assert list(worst) == list(DIVERGENCES)
    assert worst["total_variation"] == pytest.approx(0.3, abs=1e-15)
    assert worst["max"] == pytest.approx(math.log(0.5 / 0.2), abs=1e-15)
    kl01 = 0.2 * math.log(0.2 / 0.3) + 0.5 * math.log(0.5 / 0.2) + 0.3 * math.log(0.3 / 0.5)
    kl10 = 0.3 * math.log(0.3 / 0.2) + 0.2 * math.log(0.2 / 0.5) + 0.5 * math.log(0.5 / 0.3)
    assert worst["kl"] == pytest.approx(max(kl01, kl10), abs=1e-15)
    assert worst["reverse_kl"] == pytest.approx(max(kl01, kl10), abs=1e-15)
    revealed = divergence_distp(identity, joint)  # disjoint supports
    assert revealed["total_variation"] == pytest.approx(1.0) and revealed["hellinger"] == pytest.approx(1.0)
    assert revealed["kl"] == revealed["max"] == math.inf
    # The coupling mechanism of Fig 2 gives λ₁ for both θ: every divergence is 0.
    gamma = np.array([[0.2, 0.0, 0.0], [0.1, 0.2, 0.2], [0.0, 0.0, 0.3]])
    coupling = np.hstack([(gamma / LAMBDA0[:, None]).T, np.eye(3)])
    assert all(v == pytest.approx(0.0, abs=1e-15) for v in divergence_distp(coupling, joint).values())


def test_values_of_theta_without_mass_are_skipped() -> None:
    joint = np.array([[0.2, 0.3], [0.0, 0.0], [0.4, 0.1]])
    q = np.random.default_rng(4).dirichlet(np.ones(3), size=6).T
    tables = pairwise_divergences(q, joint)
    assert np.isnan(tables["kl"][1]).all() and np.isnan(tables["kl"][:, 1]).all()
    assert not np.isnan(tables["kl"][0, 2])
    worst = divergence_distp(q, joint)
    assert worst["kl"] == pytest.approx(max(tables["kl"][0, 2], tables["kl"][2, 0]), abs=0)
    assert divergence_distp(q, np.array([[0.5, 0.5], [0.0, 0.0], [0.0, 0.0]])) == dict.fromkeys(DIVERGENCES, 0.0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValidationError, match="unknown divergence 'js'; expected one of max, kl"):
        divergence("js", P, Q)
    with pytest.raises(ValidationError, match="same length"):
        divergence("kl", P, Q[:2])
    with pytest.raises(ValidationError, match="finite numbers ≥ 0"):
        divergence("kl", [0.5, -0.5], [0.5, 0.5])
    with pytest.raises(ValidationError, match=r"delta must be a number in \[0, 1\]"):
        approximate_max_divergence(P, Q, 2.0)
