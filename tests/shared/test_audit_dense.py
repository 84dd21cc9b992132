"""The dense RLDP audit's Lagrange search: the Illinois bracket search gives the reference bisection's values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.shared import ball_search
from rldp.shared.audit.rldp import rldp_epsilon
from rldp.shared.uncertainty import UncertaintySet


def _dense(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """A column-stochastic Q with no constant or one-spike blocks (every block goes to the search)."""
    q = rng.gamma(2.0, size=(rows, cols)) ** 2
    return q / q.sum(axis=0)


@pytest.mark.parametrize(
    ("shape", "radius", "order", "latent"),
    [
        ((2, 30), 0.1, 2.0, False),
        ((3, 17), 1.0, 2.0, False),
        ((4, 10), 0.02, 0.5, False),
        ((2, 25), 0.3, 1.0, False),
        ((3, 12), 0.05, 3.0, True),
        ((2, 20), 0.0, 2.0, False),
        ((2, 20), math.inf, 2.0, False),
    ],
)
def test_the_audit_equals_the_bisection_audit(monkeypatch, shape, radius, order, latent):
    rng = np.random.default_rng(sum(shape) + int(10 * order))
    p = rng.dirichlet(np.full(shape[0] * shape[1], 0.7)).reshape(shape)
    p[0, :3] = 0.0  # cells outside the support of P̂ (they may absorb mass)
    p /= p.sum()
    uset = UncertaintySet(p, radius, order)
    q = _dense(shape[0] * shape[1] + 5, shape[1] if latent else shape[0] * shape[1], rng)
    eps, worst = rldp_epsilon(q, uset)
    reference = ball_search.ball_maximum
    monkeypatch.setattr("rldp.shared.uncertainty._ball_maximum", lambda *a: reference(*a, search="bisection"))
    eps_ref, worst_ref = rldp_epsilon(q, uset)
    assert eps == pytest.approx(eps_ref, rel=1e-9, abs=1e-12)
    assert worst == worst_ref


def test_a_mixed_matrix_audits_as_before(monkeypatch):
    """Constant, one-spike and dense blocks in one Q: the closed forms and the search together."""
    rng = np.random.default_rng(21)
    a1, a2 = 3, 8
    q = _dense(30, a1 * a2, rng).reshape(30, a1, a2)
    q[:10, 0, :] = q[:10, 0, :1]  # constant blocks
    q[10:20, 1, :] = q[10:20, 1, :1]
    q[10:20, 1, 3] *= 3.0  # one spike above a constant base
    q = q.reshape(30, a1 * a2)
    q /= q.sum(axis=0)
    p = rng.dirichlet(np.full(a1 * a2, 0.8)).reshape(a1, a2)
    uset = UncertaintySet(p, 0.2, 2.0)
    eps, worst = rldp_epsilon(q, uset)
    reference = ball_search.ball_maximum
    monkeypatch.setattr("rldp.shared.uncertainty._ball_maximum", lambda *a: reference(*a, search="bisection"))
    eps_ref, worst_ref = rldp_epsilon(q, uset)
    assert eps == pytest.approx(eps_ref, rel=1e-9) and worst == worst_ref


@pytest.mark.parametrize("order", [0.5, 1.0, 2.0, 4.0])
def test_ball_maxima_equal_the_bisection_and_bound_every_feasible_point(order):
    rng = np.random.default_rng(int(order * 10))
    n, k = 300, 40
    q = rng.random((n, k)) ** 3
    p = rng.dirichlet(np.full(k, 0.5), size=n)
    p[:50, :5] = 0.0
    p /= p.sum(axis=1, keepdims=True)
    radius = np.exp(rng.uniform(np.log(1e-6), np.log(3.0), n))
    radius[:10] = 0.0
    for sign in (1.0, -1.0):
        fast = ball_search.ball_maximum(sign * q, p, radius, order)
        slow = ball_search.ball_maximum(sign * q, p, radius, order, search="bisection")
        np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-13)
        # R = p is in every ball: the maximum is at least q·p (to round-off).
        assert np.all(fast >= np.sum(sign * q * p, axis=1) - 1e-12)
