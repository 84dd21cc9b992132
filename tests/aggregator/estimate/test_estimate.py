"""Estimation of P_X from report counts: exact recovery, the Qᵀ in EM, statistics, intervals, errors.

Statistical tests use fixed seeds; their tolerances are derived from the sample size or
the estimator's exact covariance (stated next to each bound).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import EXAMPLE_N, EXAMPLE_P_HAT, EXAMPLE_P_TRUE
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rldp.aggregator.design import cr_matrix, grr_matrix, ir_matrix, solve_polyopt, srr_matrix
from rldp.aggregator.estimate import LEVEL, Estimate, Likelihood, estimate_distribution, project_simplex, report_counts
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

SHAPE = (2, 3)
THETA = np.array([[0.10, 0.25, 0.05], [0.20, 0.15, 0.25]])  # interior, sums to 1
BIG_N = 10**12  # counts = round(BIG_N · Qθ): the exact expectation up to 5e-13 relative


def _random_stochastic(rng, outputs, inputs):
    q = rng.random((outputs, inputs)) ** 2 + 0.02
    return q / q.sum(axis=0, keepdims=True)


def _expected_counts(q, theta, n=BIG_N):
    return np.round(n * (q @ np.ravel(theta))).astype(np.int64)


def _mechanisms():
    rng = np.random.default_rng(20240601)
    cond = THETA / THETA.sum(axis=1, keepdims=True)
    return {
        "grr": grr_matrix(6, 1.0),
        "srr": srr_matrix(2, 3, 1.0),
        "ir": ir_matrix(2, 3, 1.0, 0.7),
        "cr": cr_matrix(cond, 1.0, np.array([0.8, 1.2])),
        "random-square": _random_stochastic(rng, 6, 6),
        "random-tall": _random_stochastic(rng, 9, 6),
    }


def _polyopt(epsilon, same_sensitive):
    uset = UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05, 2)
    return solve_polyopt(EXAMPLE_P_HAT, uset.lower_bounds(), epsilon, same_sensitive=same_sensitive).matrix


def _assert_distribution(joint):
    assert np.all(joint >= 0)
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- counting


def test_report_counts_counts_every_output():
    reports = np.array([0, 2, 2, 4, 0, 2], dtype=np.int32)
    counts = report_counts(reports, 6)
    assert counts.dtype == np.int64
    assert counts.tolist() == [2, 0, 3, 0, 1, 0]
    assert report_counts([], 3).tolist() == [0, 0, 0]
    assert report_counts(np.array([1, 1], dtype=np.uint8), 2).tolist() == [0, 2]


@pytest.mark.parametrize(
    "reports, n_outputs, message",
    [
        ([0, 1, 7, 2], 5, r"report 2 is y = 7, outside the mechanism's outputs 0\.\.4"),
        ([0, -1], 5, r"report 1 is y = -1"),
        ([0.0, 1.0], 5, r"integers .* float64"),
        ([True, False], 5, r"integers .* bool"),
        (["1", "2"], 5, r"integers"),
        ([[0, 1], [1, 0]], 5, r"1-D .* \(2, 2\)"),
        ([0, 1], 0, r"n_outputs must be a positive integer"),
        ([0, 1], 2.5, r"n_outputs must be a positive integer"),
    ],
)
def test_report_counts_refuses_bad_reports(reports, n_outputs, message):
    with pytest.raises(ValueError, match=message):
        report_counts(np.asarray(reports), n_outputs)


# --------------------------------------------------------------------------- exact recovery


@pytest.mark.parametrize("name", list(_mechanisms()))
@pytest.mark.parametrize("method", ["em", "inverse"])
def test_exact_expectation_is_recovered(name, method):
    q = _mechanisms()[name]
    est = estimate_distribution(q, _expected_counts(q, THETA), SHAPE, method=method, tol=1e-14)
    assert est.method == method
    assert est.identifiable and est.rank == 6
    assert est.converged
    _assert_distribution(est.joint)
    # gap ≤ 1e-14 nats/report bounds the error at ~1e-7 for these well-conditioned Q.
    np.testing.assert_allclose(est.joint, THETA, atol=1e-6)
    assert np.all(est.ci95_low <= est.joint) and np.all(est.joint <= est.ci95_high)


def test_auto_is_em():
    q = _mechanisms()["srr"]
    est = estimate_distribution(q, _expected_counts(q, THETA), SHAPE)
    assert est.method == "em"


def test_identity_mechanism_gives_the_empirical_distribution():
    counts = np.array([3, 1, 5, 2, 7, 3])
    est = estimate_distribution(np.eye(6), counts, SHAPE, tol=1e-14)
    theta = counts / counts.sum()
    np.testing.assert_allclose(est.joint.ravel(), theta, atol=1e-9)
    # Direct observation: the Fisher covariance is the multinomial one, (diag θ − θθᵀ)/n.
    np.testing.assert_allclose(est.covariance, (np.diag(theta) - np.outer(theta, theta)) / counts.sum(), atol=1e-12)


def test_unobserved_cell_does_not_get_a_zero_width_interval():
    counts = np.array([3, 0, 5, 2, 7, 3])
    est = estimate_distribution(np.eye(6), counts, SHAPE, tol=1e-14)
    assert est.joint.ravel()[1] == pytest.approx(0.0, abs=1e-9)
    # The Wald interval would be [0, 0]; the 1/n floor on π gives ≈ [0, 1.96/n].
    assert est.ci95_high.ravel()[1] >= 1.9 / counts.sum()


def test_polyopt_example_identifiable_at_log2():
    """Example 3 (ε = log 2, the paper's PolyOpt): 4 outputs, full rank, P_X recovered."""
    q = _polyopt(math.log(2), same_sensitive=True)
    for method in ("em", "inverse"):
        est = estimate_distribution(q, _expected_counts(q, EXAMPLE_P_TRUE), (2, 2), method=method, tol=1e-14)
        assert est.identifiable
        np.testing.assert_allclose(est.joint, EXAMPLE_P_TRUE, atol=1e-6)


@pytest.mark.parametrize("epsilon, same_sensitive, rank", [(0.1, False, 3), (0.3, True, 2)])
def test_polyopt_not_identifiable(epsilon, same_sensitive, rank):
    """Strong privacy on the Example: PolyOpt keeps fewer outputs than |X| = 4, so P_X is not
    identifiable. EM still returns a distribution whose implied P_Y is the data's, the
    inverse estimator refuses, and no interval excludes the truth or the other solutions."""
    q = _polyopt(epsilon, same_sensitive)
    assert q.shape[0] == rank
    n = 10**6
    counts = _expected_counts(q, EXAMPLE_P_TRUE, n)
    est = estimate_distribution(q, counts, (2, 2))
    assert not est.identifiable and est.rank == rank
    assert est.converged
    _assert_distribution(est.joint)
    np.testing.assert_allclose(est.fitted, counts / n, atol=1e-8)
    np.testing.assert_allclose(q @ est.joint.ravel(), counts / n, atol=1e-8)
    assert np.all(est.ci95_low <= EXAMPLE_P_TRUE) and np.all(EXAMPLE_P_TRUE <= est.ci95_high)
    # Along the null space of Q every point fits equally well: the intervals must span it.
    null = np.linalg.svd(q)[2][rank:]  # rows ⟂ rowspace(Q) ∋ 1, so each sums to 0
    for d in null:
        ts = np.linspace(-2, 2, 4001)
        pts = est.joint.ravel()[None, :] + ts[:, None] * d[None, :]
        pts = pts[(pts >= 0).all(axis=1)]
        assert np.all(est.ci95_low.ravel() <= pts.min(axis=0) + 1e-9)
        assert np.all(pts.max(axis=0) - 1e-9 <= est.ci95_high.ravel())
    with pytest.raises(ValueError, match=rf"full column rank.*rank {rank} < \|X\| = 4"):
        estimate_distribution(q, counts, (2, 2), method="inverse")
    doc = est.to_dict()
    json.dumps(doc, allow_nan=False)
    # A cell is identified iff e_x = Qᵀw for some w (least squares residual 0); the
    # document says which intervals are partial-identification bounds.
    w, *_ = np.linalg.lstsq(q.T, np.eye(4), rcond=None)
    in_rowspace = np.abs(q.T @ w - np.eye(4)).max(axis=0) < 1e-9
    assert np.array(doc["ci95"]["identified"]).ravel().tolist() == in_rowspace.tolist()
    assert not in_rowspace.all()
    assert est.identified(np.ones(4)).all()  # the total is always identified


def test_prior_start_matters_only_when_not_identifiable():
    prior = EXAMPLE_P_HAT
    q = _polyopt(0.1, same_sensitive=False)
    counts = _expected_counts(q, EXAMPLE_P_TRUE, 10**6)
    flat = estimate_distribution(q, counts, (2, 2))
    started = estimate_distribution(q, counts, (2, 2), prior=prior)
    assert np.abs(flat.joint - started.joint).sum() > 1e-3  # a different point of the flat likelihood ...
    np.testing.assert_allclose(flat.fitted, started.fitted, atol=1e-8)  # ... with the same fit
    assert flat.log_likelihood == pytest.approx(started.log_likelihood, rel=1e-12)
    # Identifiable: one maximiser whatever the start.
    q = _mechanisms()["cr"]
    counts = _expected_counts(q, THETA, 10**5)
    a = estimate_distribution(q, counts, SHAPE, tol=1e-14)
    b = estimate_distribution(q, counts, SHAPE, prior=[[0.5, 0, 0], [0, 0, 0.5]], tol=1e-14)
    np.testing.assert_allclose(a.joint, b.joint, atol=1e-6)


def test_prior_weight_regularises_towards_the_prior():
    q = grr_matrix(6, 0.5)
    rng = np.random.default_rng(7)
    counts = rng.multinomial(2000, q @ THETA.ravel())
    prior = np.full(SHAPE, 1 / 6)
    mle = estimate_distribution(q, counts, SHAPE, prior=prior)
    light = estimate_distribution(q, counts, SHAPE, prior=prior, prior_weight=200)
    heavy = estimate_distribution(q, counts, SHAPE, prior=prior, prior_weight=1e9)
    d = [np.abs(e.joint - prior).sum() for e in (mle, light, heavy)]
    assert d[0] > d[1] > d[2]
    assert d[2] < 1e-5
    assert light.converged and light.prior_weight == 200
    # The MAP-EM fixed point: θ_x = (θ_x g_x n + κ P̂_x) / (n + κ).
    theta = light.joint.ravel()
    g = q.T @ (counts / (q @ theta))
    np.testing.assert_allclose(theta, (theta * g + 200 * prior.ravel()) / (counts.sum() + 200), atol=1e-8)


# --------------------------------------------------------------------------- the transpose


def _buggy_em(q, counts, iterations):
    """EM with Q where Qᵀ belongs (the bug this file guards against)."""
    n = counts.sum()
    theta = np.full(q.shape[1], 1.0 / q.shape[1])
    for _ in range(iterations):
        theta = theta * (q @ (counts / (q @ theta))) / n
        theta /= theta.sum()
    return theta


def test_em_update_uses_q_transpose():
    """Non-symmetric Q: EM alone recovers θ; the same update with Q instead of Qᵀ does not."""
    rng = np.random.default_rng(11)
    q = _random_stochastic(rng, 6, 6)
    assert np.abs(q - q.T).max() > 0.05
    counts = _expected_counts(q, THETA)
    est = estimate_distribution(q, counts, SHAPE, tol=1e-13)
    assert est.converged
    np.testing.assert_allclose(est.joint, THETA, atol=1e-6)
    # EM alone (no interior-point finish) reaches the same point.
    lik = Likelihood(q, counts[None, :].astype(float), None, 0.0)
    theta, updates, converged, gap = lik.em(np.full((1, 6), 1 / 6), 1e-13, 20_000)
    assert converged[0] and gap[0] <= 1e-13
    np.testing.assert_allclose(theta[0], THETA.ravel(), atol=1e-6)
    # The check has teeth: the buggy update lands far away.
    assert np.abs(_buggy_em(q, counts.astype(float), 2000) - THETA.ravel()).sum() > 0.05


def test_em_step_is_the_posterior_average():
    """One update, against a per-report loop over the posterior P(x | y) ∝ Q(y|x) θ_x."""
    rng = np.random.default_rng(3)
    q = _random_stochastic(rng, 5, 4)
    theta = rng.dirichlet(np.ones(4))
    reports = rng.integers(0, 5, size=300)
    expected = np.zeros(4)
    for y in reports:
        post = q[y] * theta
        expected += post / post.sum()
    expected /= len(reports)
    counts = np.bincount(reports, minlength=5).astype(float)
    lik = Likelihood(q, counts[None, :], None, 0.0)
    new, _ = lik.step(theta[None, :], np.array([0]))
    np.testing.assert_allclose(new[0], expected, atol=1e-12)


# --------------------------------------------------------------------------- large alphabets


def test_large_alphabet_converges_with_certificate():
    """|X| = 240, noisy GRR, truth with zero cells: the estimate satisfies the KKT
    conditions of the MLE on the simplex (checked here independently of the solver)."""
    rng = np.random.default_rng(5)
    theta = rng.dirichlet(np.full(240, 0.3))
    q = grr_matrix(240, 1.0)
    counts = rng.multinomial(10**6, q @ theta)
    est = estimate_distribution(q, counts, (15, 16))
    assert est.converged and est.gap <= 1e-10
    th = est.joint.ravel()
    g = q.T @ (counts / (q @ th)) / counts.sum()
    assert g.max() - 1 <= 1e-10  # no direction increases the likelihood
    assert np.all(np.abs(g[th > 1e-6] - 1) <= 1e-6)  # stationary on the support
    assert np.sum(th < 1e-9) > 0  # this sample's MLE is on the boundary


def test_max_iter_reports_non_convergence():
    q = grr_matrix(240, 1.0)
    rng = np.random.default_rng(6)
    counts = rng.multinomial(10**5, q @ rng.dirichlet(np.ones(240)))
    est = estimate_distribution(q, counts, (15, 16), max_iter=3)
    assert not est.converged and est.iterations == 3 and est.gap > 1e-10
    _assert_distribution(est.joint)
    assert est.to_dict()["converged"] is False


# --------------------------------------------------------------------------- statistics


@pytest.mark.slow
def test_inverse_l1_error_matches_its_exact_covariance():
    """E‖θ̃ − θ‖₁ = Σ_x sd_x·sqrt(2/π) for the unbiased (Gaussian in the limit) inverse
    estimator; the projection onto the simplex can only shorten the L2 error. Mean over
    R = 100 runs; the L1 error's own spread (~25 % per run) gives < 3 % on the mean, so
    10 % is a > 3σ margin, and the lower bound 0.8 catches an estimator that is too good
    to be true (e.g. one that peeked at θ)."""
    q = ir_matrix(3, 4, 1.0, 1.0)
    theta = np.random.default_rng(1).dirichlet(np.full(12, 5.0))
    n, reps = 20_000, 100
    pi = q @ theta
    qinv = np.linalg.inv(q)
    sd = np.sqrt(np.diag(qinv @ (np.diag(pi) - np.outer(pi, pi)) @ qinv.T / n))
    bound = sd.sum() * math.sqrt(2 / math.pi)
    rng = np.random.default_rng(2024)
    l1 = {"inverse": [], "em": []}
    for _ in range(reps):
        counts = rng.multinomial(n, pi)
        for method in l1:
            est = estimate_distribution(q, counts, (3, 4), method=method)
            l1[method].append(np.abs(est.joint.ravel() - theta).sum())
    for method, errs in l1.items():
        assert 0.8 * bound <= np.mean(errs) <= 1.1 * bound, (method, np.mean(errs), bound)


def _coverage(q, theta, shape, n, reps, seed, **kwargs):
    rng = np.random.default_rng(seed)
    hits = np.zeros(theta.size)
    marg_hits = np.zeros(shape[0])
    s_marg = theta.reshape(shape).sum(axis=1)
    for _ in range(reps):
        counts = rng.multinomial(n, q @ theta)
        est = estimate_distribution(q, counts, shape, rng=rng, **kwargs)
        hits += (est.ci95_low.ravel() <= theta) & (theta <= est.ci95_high.ravel())
        m = est.marginals()["sensitive"]
        marg_hits += (m["ci95_low"] <= s_marg) & (s_marg <= m["ci95_high"])
    return hits / reps, marg_hits / reps


def _check_coverage(cells, marginal, reps):
    # Binomial tolerances: per cell 3.5σ of a proportion from `reps` trials; pooled over
    # the cells 4σ (cells are correlated, so the pooled σ is only approximate: generous).
    sigma = math.sqrt(LEVEL * (1 - LEVEL) / reps)
    assert cells.min() >= LEVEL - 3.5 * sigma, cells
    assert marginal.min() >= LEVEL - 3.5 * sigma, marginal
    pooled = math.sqrt(LEVEL * (1 - LEVEL) / (reps * cells.size))
    assert abs(cells.mean() - LEVEL) <= 4 * pooled + 0.01, cells.mean()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["em", "inverse"])
def test_delta_intervals_cover_95_percent(method):
    q = srr_matrix(2, 3, 1.0)
    cells, marginal = _coverage(q, THETA.ravel(), SHAPE, 5000, 200, seed=99, method=method)
    _check_coverage(cells, marginal, 200)


@pytest.mark.slow
def test_bootstrap_intervals_cover_95_percent():
    q = ir_matrix(2, 3, 1.0, 1.0)
    cells, marginal = _coverage(q, THETA.ravel(), SHAPE, 5000, 100, seed=7, interval="bootstrap", n_bootstrap=200)
    _check_coverage(cells, marginal, 100)


@pytest.mark.slow
def test_delta_interval_at_the_boundary_is_conservative():
    """A true zero cell: the MLE sits at or near 0 and its interval still covers 0."""
    theta = np.array([0.0, 0.3, 0.1, 0.2, 0.15, 0.25])
    q = grr_matrix(6, 1.0)
    cells, _ = _coverage(q, theta, SHAPE, 3000, 200, seed=5)
    assert cells[0] >= LEVEL - 3.5 * math.sqrt(LEVEL * (1 - LEVEL) / 200)


def test_bootstrap_is_reproducible_with_an_injected_generator():
    q = grr_matrix(6, 1.0)
    counts = np.random.default_rng(1).multinomial(4000, q @ THETA.ravel())
    runs = [
        estimate_distribution(q, counts, SHAPE, interval="bootstrap", n_bootstrap=50, rng=np.random.default_rng(42))
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].ci95_low, runs[1].ci95_low)
    assert runs[0].replicates.shape == (50, 6)
    assert runs[0].bootstrap_converged == 1.0
    for method in ("em", "inverse"):
        est = estimate_distribution(
            q, counts, SHAPE, method=method, interval="bootstrap", n_bootstrap=50, rng=np.random.default_rng(0)
        )
        ci = est.to_dict()["ci95"]
        assert ci["method"] == "bootstrap" and ci["replicates"] == 50
        assert np.all(est.ci95_low <= est.joint) and np.all(est.joint <= est.ci95_high)


# --------------------------------------------------------------------------- results


def _alphabet():
    return Alphabet(Attribute("sex", ("F", "M")), [Attribute("race", ("A", "B", "C")), Attribute("edu", ("hi", "lo"))])


def test_marginals_and_json_with_an_alphabet():
    alpha = _alphabet()
    rng = np.random.default_rng(8)
    theta = rng.dirichlet(np.full(12, 2.0)).reshape(2, 6)
    q = ir_matrix(2, 6, 1.5, 1.5)
    counts = rng.multinomial(50_000, q @ theta.ravel())
    est = estimate_distribution(q, counts, alpha.shape)
    doc = est.to_dict(alpha)
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text) == doc
    assert doc["n"] == 50_000 and doc["method"] == "em" and doc["identifiable"] is True
    assert doc["ci95"]["level"] == 0.95 and doc["ci95"]["method"] == "delta"
    assert np.all(doc["ci95"]["identified"]) and np.array(doc["ci95"]["identified"]).shape == (2, 6)
    assert np.array(doc["joint"]).shape == (2, 6)
    assert doc["labels"]["sensitive"] == {"name": "sex", "values": ["F", "M"]}
    assert doc["labels"]["released"]["values"][:3] == ["A|hi", "A|lo", "B|hi"]  # last attribute fastest
    assert set(doc["marginals"]) == {"sex", "race", "edu"}
    joint = est.joint.reshape(2, 3, 2)
    expect = {"sex": joint.sum(axis=(1, 2)), "race": joint.sum(axis=(0, 2)), "edu": joint.sum(axis=(0, 1))}
    for name, values in expect.items():
        m = doc["marginals"][name]
        np.testing.assert_allclose(m["estimate"], values, atol=1e-12)
        assert len(m["labels"]) == len(values)
        assert np.all(np.array(m["ci95_low"]) <= values) and np.all(values <= np.array(m["ci95_high"]))
        assert sum(m["estimate"]) == pytest.approx(1.0)
    # The marginal's interval comes from the same covariance (Σ_x∈group θ_x), not from cells.
    sd = math.sqrt(np.ones(6) @ est.covariance[:6, :6] @ np.ones(6))
    assert doc["marginals"]["sex"]["ci95_high"][0] == pytest.approx(joint[0].sum() + 1.959963984540054 * sd)
    plain = est.marginals()
    assert set(plain) == {"sensitive", "U"} and plain["U"]["estimate"].shape == (6,)
    with pytest.raises(ValueError, match=r"alphabet has shape \(2, 3\)"):
        est.to_dict(Alphabet(Attribute("sex", ("F", "M")), [Attribute("race", ("A", "B", "C"))]))


def test_linear_functionals():
    q = srr_matrix(2, 3, 1.0)
    est = estimate_distribution(q, _expected_counts(q, THETA, 10**4), SHAPE)
    value, low, high = est.linear(np.ones(SHAPE))
    assert value[0] == pytest.approx(1.0) and low[0] == pytest.approx(1.0) and high[0] == pytest.approx(1.0)
    value, low, high = est.linear([[1, -1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1]])
    assert value.shape == (2,) and np.all(low <= value) and np.all(value <= high)
    assert low[0] >= -1 and high[0] <= 1
    with pytest.raises(ValueError, match="weights must have shape"):
        est.linear(np.ones(5))
    with pytest.raises(ValueError, match="NaN"):
        est.linear([np.nan] * 6)


def test_estimate_is_a_frozen_value():
    q = srr_matrix(2, 3, 1.0)
    est = estimate_distribution(q, _expected_counts(q, THETA, 10**4), SHAPE)
    assert isinstance(est, Estimate)
    with pytest.raises(AttributeError):
        est.n = 5  # type: ignore[misc]
    assert "joint=" in repr(est)


# --------------------------------------------------------------------------- validation


def _q():
    return srr_matrix(2, 3, 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(counts=np.zeros(6, dtype=int)), r"no reports yet"),
        (dict(counts=[1, 2, 3]), r"counts has 3 entries but the matrix has 6 outputs"),
        (dict(counts=[1, 2, -3, 0, 0, 0]), r"counts must be ≥ 0; counts\[2\] = -3"),
        (dict(counts=[0.1, 0.2, 0.3, 0.1, 0.2, 0.1]), r"whole numbers .* frequencies"),
        (dict(counts=[True] * 6), r"counts must be integers"),
        (dict(counts=[[1, 2, 3, 4, 5, 6]]), r"counts must be a 1-D array"),
        (dict(counts=[1, 2, np.nan, 0, 0, 0]), r"NaN"),
        (dict(matrix=np.ones((6, 6))), r"matrix column 0 sums to 6; every column must sum to 1"),
        (dict(matrix=np.eye(6) * 2 - np.roll(np.eye(6), 1, axis=0)), r"negative entry"),
        (dict(matrix=np.full((6, 6), np.nan)), r"NaN"),
        (dict(matrix=np.ones(6)), r"2-D"),
        (dict(matrix="garbage"), r"matrix"),
        (dict(shape=(3, 3)), r"shape \(3, 3\) has 9 cells but the matrix has 6 inputs"),
        (dict(shape=(2, 3, 1)), r"shape must be a pair"),
        (dict(shape=(2.0, 3)), r"positive integers"),
        (dict(method="mle"), r"method must be one of auto, em, inverse"),
        (dict(interval="wald"), r"interval must be one of delta, bootstrap"),
        (dict(tol=0), r"tol must be"),
        (dict(tol=math.nan), r"tol must be"),
        (dict(max_iter=0), r"max_iter must be a positive integer"),
        (dict(max_iter=10.5), r"max_iter must be a positive integer"),
        (dict(prior=np.ones(5) / 5), r"prior must have shape \(2, 3\)"),
        (dict(prior=np.ones(6)), r"prior must sum to 1"),
        (dict(prior=[-0.5, 0.5, 0.25, 0.25, 0.25, 0.25]), r"prior must contain finite probabilities ≥ 0"),
        (dict(prior_weight=5.0), r"prior_weight > 0 needs a prior"),
        (dict(prior_weight=-1.0), r"prior_weight must be"),
        (dict(interval="bootstrap", n_bootstrap=1), r"n_bootstrap must be an integer ≥ 2"),
        (dict(rng=np.random.RandomState(0)), r"rng must be a numpy Generator"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(kwargs, message):
    args = dict(matrix=_q(), counts=[10, 20, 30, 5, 5, 5], shape=SHAPE)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        estimate_distribution(args.pop("matrix"), args.pop("counts"), args.pop("shape"), **args)


def test_reports_impossible_under_the_mechanism_are_refused():
    q = np.vstack([np.eye(4), np.zeros((1, 4))])
    with pytest.raises(ValueError, match=r"counts\[4\] = 2 but Q\(y=4\|x\) = 0 for every x"):
        estimate_distribution(q, [1, 1, 1, 1, 2], (2, 2))


# --------------------------------------------------------------------------- simplex projection


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 12), elements=st.floats(-5, 5, allow_nan=False)))
def test_project_simplex_is_the_euclidean_projection(v):
    p = project_simplex(v)
    assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-9)
    # KKT of argmin ‖p − v‖²: p = max(v − τ, 0) for one τ (so v − p is constant on the support
    # and ≤ that constant off it).
    support = p > 0
    tau = (v - p)[support]
    assert np.ptp(tau) <= 1e-9
    assert np.all(v[~support] <= tau[0] + 1e-9)
    np.testing.assert_allclose(project_simplex(p), p, atol=1e-12)  # idempotent


def test_project_simplex_rows():
    v = np.array([[0.5, 0.5, 0.5], [2.0, 0.0, -1.0], [0.2, 0.3, 0.5]])
    np.testing.assert_allclose(project_simplex(v), [[1 / 3] * 3, [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]], atol=1e-12)


def test_project_simplex_refuses_bad_input():
    with pytest.raises(ValueError, match="shape"):
        project_simplex(np.array([]))
    with pytest.raises(ValueError, match="NaN"):
        project_simplex(np.array([0.5, np.nan]))


# --------------------------------------------------------------------------- process state


def test_blas_thread_limit_is_restored_even_under_concurrency_and_errors():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from concurrent.futures import ThreadPoolExecutor

    import scipy.linalg  # noqa: F401  (so that its BLAS is listed before and after)

    def threads():
        return sorted((i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info())

    before = threads()
    q = grr_matrix(6, 1.0)
    counts = _expected_counts(q, THETA, 10**4)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: estimate_distribution(q, counts, SHAPE), range(16)))
    assert all(r.converged for r in results)
    with pytest.raises(ValueError):
        estimate_distribution(_polyopt(0.1, False), [10, 10, 10], (2, 2), method="inverse")
    assert threads() == before


@pytest.mark.slow
def test_prior_weight_makes_a_flat_likelihood_single_valued():
    """Non-identifiable PolyOpt + κ > 0 with a positive prior: the MAP is unique (the
    interior-point finish is allowed) and satisfies its fixed-point equation."""
    q = _polyopt(0.1, same_sensitive=False)
    counts = _expected_counts(q, EXAMPLE_P_TRUE, 10**5)
    est = estimate_distribution(q, counts, (2, 2), prior=EXAMPLE_P_HAT, prior_weight=50)
    assert not est.identifiable and est.converged
    theta, p = est.joint.ravel(), EXAMPLE_P_HAT.ravel()
    g = q.T @ (counts / (q @ theta))
    np.testing.assert_allclose(theta, (theta * g + 50 * p) / (counts.sum() + 50), atol=1e-9)
    boot = estimate_distribution(
        q, counts, (2, 2), prior=EXAMPLE_P_HAT, interval="bootstrap", n_bootstrap=100, rng=np.random.default_rng(3)
    )
    assert not boot.identifiable and boot.bootstrap_converged > 0.9
    assert np.all(boot.ci95_low <= EXAMPLE_P_TRUE) and np.all(EXAMPLE_P_TRUE <= boot.ci95_high)
