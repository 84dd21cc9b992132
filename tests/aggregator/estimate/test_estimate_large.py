"""Estimation over large alphabets: the cached row space, the full-rank certificate, the
in-place linear algebra used above SMALL_ALPHABET, and the BLAS thread policy."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.aggregator.design import grr_matrix, ir_matrix
from rldp.aggregator.estimate import estimate_distribution, intervals, likelihood, linalg, newton_system
from rldp.aggregator.estimate.square_inverse import certified_inverse


def _draw(q: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(q.shape[1], 0.5))
    pi = q @ theta
    return rng.multinomial(n, pi / pi.sum())


@pytest.mark.slow
@pytest.mark.parametrize(
    "q",
    [
        grr_matrix(50, 1.0),
        grr_matrix(300, 0.5),
        ir_matrix(4, 6, 1.0, 2.0),
        np.random.default_rng(0).random((30, 12)),  # tall
    ],
)
def test_the_certificate_agrees_with_the_svd_on_full_rank_matrices(q):
    assert linalg.full_rank_certified(q)
    assert linalg.row_space(q)[0] == q.shape[1]


def test_the_certificate_refuses_what_it_cannot_prove():
    dup = np.random.default_rng(1).random((8, 5))
    dup[:, 4] = dup[:, 3]
    assert not linalg.full_rank_certified(dup)  # rank 4
    assert not linalg.full_rank_certified(np.ones((4, 4)) / 4)
    assert not linalg.full_rank_certified(np.random.default_rng(2).random((3, 5)))  # wide
    u, _, vt = np.linalg.svd(np.random.default_rng(3).random((10, 10)))
    near = u @ np.diag(np.logspace(0, -10, 10)) @ vt  # σ_min = 1e-10 σ_max: below RANK_RTOL
    assert not linalg.full_rank_certified(near)
    space = linalg.RowSpace()
    assert space.rank(near) == linalg.row_space(near)[0] == 9  # the SVD decides instead


@pytest.mark.slow
@pytest.mark.parametrize(
    "q",
    [
        grr_matrix(50, 1.0),
        grr_matrix(600, 0.5),  # beyond one 256-column block of the norms
        np.random.default_rng(4).random((40, 40)),
        np.random.default_rng(5).standard_normal((300, 300)),  # pivoting moves rows
    ],
)
def test_the_lu_certificate_gives_the_inverse_of_full_rank_square_matrices(q):
    inverse = certified_inverse(q, linalg.RANK_RTOL)
    assert inverse is not None and not inverse.flags.writeable
    reference = np.linalg.inv(q)
    np.testing.assert_allclose(inverse, reference, rtol=0, atol=1e-11 * np.abs(reference).max())
    space = linalg.RowSpace()
    assert space.rank(q) == q.shape[1]
    assert space.inverse(q) is space.inverse(q)  # computed once, with the rank
    np.testing.assert_allclose(space.inverse(q), reference, rtol=0, atol=1e-11 * np.abs(reference).max())


def test_the_lu_certificate_refuses_what_it_cannot_prove():
    dup = np.random.default_rng(1).random((6, 6))
    dup[5] = dup[4]
    u, _, vt = np.linalg.svd(np.random.default_rng(3).random((10, 10)))
    near = u @ np.diag(np.logspace(0, -10, 10)) @ vt  # σ_min = 1e-10 σ_max: below RANK_RTOL
    for q in (dup, np.ones((4, 4)) / 4, near, np.zeros((3, 3)), np.random.default_rng(2).random((5, 3))):
        assert certified_inverse(q, linalg.RANK_RTOL) is None
    # Conservative, yet not blind: σ_min = 1e-6 σ_max (1,000× the threshold) is certified.
    fine = u @ np.diag(np.logspace(0, -6, 10)) @ vt
    assert certified_inverse(fine, linalg.RANK_RTOL) is not None


def test_row_spaces_are_cached_by_content_and_bounded(monkeypatch):
    linalg.clear_cache()
    q = grr_matrix(20, 1.0)
    first = linalg.mechanism_row_space(q)
    assert linalg.mechanism_row_space(q.copy()) is first  # same content, another array
    assert linalg.mechanism_row_space(grr_matrix(20, 2.0)) is not first
    assert first.rank(q) == 20
    np.testing.assert_allclose(first.pinv(q), np.linalg.inv(q), rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(linalg, "CACHE_ENTRIES", 2)
    for eps in (0.5, 0.6, 0.7):
        linalg.mechanism_row_space(grr_matrix(20, eps))
    assert len(linalg._CACHE) == 2 and linalg.mechanism_row_space(q) is not first  # evicted
    linalg.clear_cache()


def test_in_place_inverse_and_blocked_gram():
    rng = np.random.default_rng(4)
    q = rng.random((700, 600))
    w = rng.random(700) + 0.5
    small = (q * w[:, None]).T @ (q * w[:, None])
    big = linalg.weighted_gram(q, w)  # 600 > SMALL_ALPHABET: blocked syrk, lower triangle
    np.testing.assert_allclose(np.tril(big), np.tril(small), rtol=1e-12)
    inv = linalg.cho_inverse(big.copy(order="F"))
    np.testing.assert_allclose(inv, np.linalg.inv(small), rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(inv, inv.T)
    assert linalg.cho_inverse(-np.eye(3)) is None


@pytest.mark.parametrize("interval", ["delta", "bootstrap"])
def test_the_large_alphabet_path_gives_the_same_estimate(monkeypatch, interval):
    q = grr_matrix(60, 1.0)
    counts = _draw(q, 10**6, seed=5)
    kwargs = {"interval": interval, "n_bootstrap": 40}
    reference = estimate_distribution(q, counts, (6, 10), rng=np.random.default_rng(1), **kwargs)
    for module in (linalg, likelihood, intervals):
        monkeypatch.setattr(module, "SMALL_ALPHABET", 10)  # every K × K step on the large path
    linalg.clear_cache()
    large = estimate_distribution(q, counts, (6, 10), rng=np.random.default_rng(1), **kwargs)
    assert large.converged and reference.converged
    # The same maximiser, certified to the same gap: equal far below the intervals' width.
    tol = 1e-6 * (reference.ci95_high - reference.ci95_low).min()
    np.testing.assert_allclose(large.joint, reference.joint, atol=tol)
    np.testing.assert_allclose(large.ci95_low, reference.ci95_low, atol=1e-3 * tol if interval == "delta" else 1e-4)
    np.testing.assert_allclose(large.ci95_high, reference.ci95_high, atol=1e-3 * tol if interval == "delta" else 1e-4)


def test_cell_intervals_are_the_identity_functionals():
    q = ir_matrix(3, 4, 1.0, 2.0)
    est = estimate_distribution(q, _draw(q, 10**5, seed=6), (3, 4))
    unc = est._uncertainty
    low, high = unc.cell_intervals()
    _, low_eye, high_eye = unc.intervals(np.eye(12))
    np.testing.assert_array_equal(low, low_eye)
    np.testing.assert_array_equal(high, high_eye)


def test_blas_threads_are_set_at_every_size(monkeypatch):
    monkeypatch.setattr(linalg, "_usable_cores", lambda: 4)
    monkeypatch.setattr(linalg.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert [linalg.blas_threads(a) for a in (10, 512, 1000, 1600, 4000)] == [1, 1, 1, 3, 4]
    monkeypatch.setattr(linalg.os, "getloadavg", lambda: (3.6, 3.0, 3.0))  # 3 cores busy elsewhere
    assert linalg.blas_threads(4000) == 1


def test_the_reduced_newton_system_is_solved_to_round_off():
    rng = np.random.default_rng(8)
    q = rng.random((90, 80)) ** 4
    q /= q.sum(axis=0)
    w = rng.random(90) + 0.1
    dvec = np.where(rng.random(80) < 0.6, 1e6, 1e-3) * (rng.random(80) + 0.5)  # 60 % bound for 0
    rhs = rng.standard_normal(80)
    d = newton_system.reduced_newton_direction(q, w, dvec, rhs)
    assert d is not None
    exact = np.linalg.solve(q.T @ (w[:, None] * q) + np.diag(dvec), rhs)
    np.testing.assert_allclose(d, exact, rtol=1e-9, atol=1e-12 * np.abs(exact).max())
    # Nothing bound: the split would not pay, the caller factors the full matrix.
    assert newton_system.reduced_newton_direction(q, w, np.full(80, 1e-3), rhs) is None


def test_the_factored_covariance_is_the_inverse_information():
    q = grr_matrix(40, 1.0)
    theta = np.random.default_rng(9).dirichlet(np.full(40, 0.5))
    pi = np.maximum(q @ theta, 1e-5)
    cov = intervals.FactoredCovariance(np.linalg.inv(q), pi, 1e5)
    info = q.T @ (q / pi[:, None])
    inv = np.linalg.inv(info)
    v = inv.sum(axis=1)
    dense = (inv - np.outer(v, v) / v.sum()) / 1e5
    np.testing.assert_allclose(cov.dense(), dense, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(cov.diagonal(), np.diagonal(dense), rtol=1e-8, atol=1e-14)
    w = np.random.default_rng(10).standard_normal((3, 40))
    np.testing.assert_allclose(cov.quadratic(w), np.einsum("ka,ab,kb->k", w, dense, w), rtol=1e-8)


def test_the_large_path_newton_steps_match_the_direct_solve(monkeypatch):
    """The CG-solved interior-point steps reach the iterates of the direct Cholesky steps (GRR: most cells
    bound for 0), and the factored covariance the Gram route's intervals."""
    q = grr_matrix(200, 1.0)
    counts = _draw(q, 10**6, seed=11)
    for module in (linalg, likelihood, intervals):
        monkeypatch.setattr(module, "SMALL_ALPHABET", 10)
    calls = []
    reduced = likelihood.reduced_newton_direction
    monkeypatch.setattr(likelihood, "reduced_newton_direction", lambda *a: calls.append(1) or reduced(*a))
    linalg.clear_cache()
    fast = estimate_distribution(q, counts, (200, 1))
    assert fast.newton_steps > 0 and len(calls) == fast.newton_steps
    assert isinstance(fast._uncertainty.covariance, intervals.FactoredCovariance)
    monkeypatch.setattr(likelihood, "reduced_newton_direction", lambda *a: None)
    monkeypatch.setattr(linalg.RowSpace, "inverse", lambda self, q: None)
    direct = estimate_distribution(q, counts, (200, 1))
    assert fast.converged and direct.converged and fast.newton_steps == direct.newton_steps
    np.testing.assert_allclose(fast.joint, direct.joint, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(fast.ci95_high, direct.ci95_high, rtol=1e-8)
    np.testing.assert_allclose(fast.covariance, direct.covariance, rtol=1e-7, atol=1e-14)
    linalg.clear_cache()


def test_a_cache_key_names_the_mechanism_instead_of_its_digest(monkeypatch):
    linalg.clear_cache()
    q = grr_matrix(20, 1.0)
    counts = _draw(q, 10**4, seed=12)
    by_key = estimate_distribution(q, counts, (4, 5), cache_key="mech-1")
    assert ("id", "mech-1", q.shape) in linalg._CACHE
    digests = []
    monkeypatch.setattr(
        linalg.hashlib, "blake2b", lambda *a, **k: digests.append(1) or __import__("hashlib").blake2b(*a, **k)
    )
    again = estimate_distribution(q, counts, (4, 5), cache_key="mech-1")
    assert not digests
    np.testing.assert_array_equal(again.joint, by_key.joint)
    with pytest.raises(ValueError, match="cache_key must be a string"):
        estimate_distribution(q, counts, (4, 5), cache_key=7)
    linalg.clear_cache()
