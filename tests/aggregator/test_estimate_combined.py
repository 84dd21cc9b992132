"""One likelihood over several mechanisms (a collection's rotations): EM over stacked Q recovers P."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.aggregator.estimate import estimate_combined, estimate_distribution
from rldp.shared.errors import ValidationError


def grr(k: int, eps: float) -> np.ndarray:
    q = np.full((k, k), 1.0)
    np.fill_diagonal(q, np.exp(eps))
    return q / q.sum(axis=0)


def indicator_rr(k: int, cells: list[int], keep: float) -> np.ndarray:
    """Two outputs: 'x in cells', reported truthfully with probability ``keep`` (rank 2)."""
    inside = np.isin(np.arange(k), cells).astype(float)
    yes = keep * inside + (1 - keep) * (1 - inside)
    return np.vstack([yes, 1 - yes])


def draw(rng: np.random.Generator, q: np.ndarray, truth: np.ndarray, n: int) -> np.ndarray:
    x = rng.choice(truth.size, size=n, p=truth)
    ys = (rng.random(n) > np.cumsum(q[:, x], axis=0)).sum(axis=0)
    return np.bincount(ys, minlength=q.shape[0])


def sd_at_truth(qs: list[np.ndarray], ns: list[int], truth: np.ndarray) -> np.ndarray:
    """√diag of the inverse Fisher information on the simplex, Σ_m n_m Q_mᵀ diag(1/Q_mθ) Q_m (at the truth)."""
    info = sum(n * q.T @ (q / (q @ truth)[:, None]) for q, n in zip(qs, ns, strict=True))
    v = np.linalg.inv(info) - np.outer(truth, truth) / sum(ns)
    return np.sqrt(np.diag(v))


TRUTH = np.array([0.32, 0.08, 0.15, 0.05, 0.25, 0.15])


@pytest.mark.parametrize("n", [2_000, 50_000])
def test_em_over_several_mechanisms_recovers_p_within_its_fisher_sd(n):
    rng = np.random.default_rng(11)
    qs = [grr(6, 0.5), grr(6, 1.5), grr(6, 1.0)]
    ns = [n // 4, n // 2, n - n // 4 - n // 2]
    counts = [draw(rng, q, TRUTH, m) for q, m in zip(qs, ns, strict=True)]
    est, totals = estimate_combined(qs, counts, (2, 3))
    assert totals == ns and est.n == n and est.converged
    sd = sd_at_truth(qs, ns, TRUTH)
    err = np.abs(est.joint.reshape(-1) - TRUTH)
    assert np.all(err <= 4.5 * sd), (err, sd)  # a 4.5-σ band: tight as n grows, never hard-coded
    # The delta intervals' width is the Fisher information's (summed over mechanisms), to within the
    # plug-in at θ̂ instead of θ and the union with the unbiased estimate's interval.
    width = (est.ci95_high - est.ci95_low).reshape(-1)
    assert np.all(width >= 2 * 1.96 * sd * 0.8)
    assert np.all(width <= 2 * 1.96 * sd * 2.0)


def test_mechanisms_that_identify_nothing_alone_identify_p_together():
    rng = np.random.default_rng(5)
    truth = np.array([0.4, 0.1, 0.2, 0.3])
    qs = [indicator_rr(4, [0, 1], 0.85), indicator_rr(4, [0, 2], 0.85), indicator_rr(4, [0, 3], 0.85)]
    ns = [40_000, 40_000, 40_000]
    counts = [draw(rng, q, truth, m) for q, m in zip(qs, ns, strict=True)]
    for q, c in zip(qs, counts, strict=True):
        assert not estimate_distribution(q, c, (2, 2)).identifiable
    est, _ = estimate_combined(qs, counts, (2, 2))
    assert est.identifiable and est.rank == 4
    sd = sd_at_truth(qs, ns, truth)
    assert np.all(np.abs(est.joint.reshape(-1) - truth) <= 4.5 * sd)


def test_one_mechanism_alone_is_the_ordinary_estimate_and_bad_input_is_refused():
    rng = np.random.default_rng(3)
    q = grr(6, 1.0)
    c = draw(rng, q, TRUTH, 5_000)
    est, _ = estimate_combined([q, grr(6, 2.0)], [c, np.zeros(6)], (2, 3))  # a mechanism without reports adds nothing
    ref = estimate_distribution(q, c, (2, 3))
    np.testing.assert_allclose(est.joint, ref.joint, atol=1e-7)
    np.testing.assert_allclose(est.ci95_low, ref.ci95_low, atol=1e-6)
    with pytest.raises(ValidationError, match="same X"):
        estimate_combined([q, grr(4, 1.0)], [c, np.ones(4)], (2, 3))
    with pytest.raises(ValidationError, match="no reports"):
        estimate_combined([q], [np.zeros(6)], (2, 3))
    with pytest.raises(ValidationError, match="one count vector per mechanism"):
        estimate_combined([q, q], [c], (2, 3))
