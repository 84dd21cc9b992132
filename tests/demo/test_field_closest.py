"""The least detectable drift's search (demo.experiments.field_closest): what it returns has ε* ≥ the target,
and no population of a dense random search with ε* ≥ the target is closer to P̂."""

from __future__ import annotations

import numpy as np

from rldp.aggregator.design import grr_matrix
from rldp.demo.experiments.field_closest import closest_population
from rldp.shared.audit import realised_epsilon
from rldp.shared.divergence import renyi_divergence
from rldp.shared.uncertainty import UncertaintySet


def test_the_closest_population_breaks_the_target_and_no_sampled_one_is_closer():
    p = np.array([[0.30, 0.15, 0.05], [0.25, 0.20, 0.05]])
    q = grr_matrix(6, 1.0)  # ε-LDP on (S, U): ε* ≤ 1 at every P, so the target must be below it
    target = 0.8 * realised_epsilon(q, np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]) + 1e-12)
    ball = UncertaintySet(p.reshape(1, -1), 0.001, 2.0)
    pop, distance = closest_population(q, p, ball, target, [])
    assert realised_epsilon(q, pop) >= target - 1e-9
    assert abs(renyi_divergence(p.ravel(), pop.ravel(), 2.0) - distance) < 1e-12
    rng = np.random.default_rng(7)
    # Dense near P̂: mixtures of P̂ with random points at every scale.
    corners = rng.dirichlet(np.full(6, 0.3), size=20_000)
    shares = rng.uniform(0.0, 1.0, size=(20_000, 1)) ** 3
    samples = (1 - shares) * p.ravel() + shares * corners
    eps = np.array([realised_epsilon(q, s.reshape(2, 3)) for s in samples])
    feasible = samples[eps >= target]
    assert feasible.size, "the random search found no population breaking the target: the test would prove nothing"
    sampled = min(renyi_divergence(p.ravel(), s, 2.0) for s in feasible)
    assert distance <= sampled * (1 + 1e-6), (distance, sampled)
