"""``rldp experiment numeric`` (Adult age, S = sex): the baselines are what their papers define, the error
measures measure, and a quick run keeps the claims of docs/experiments/numeric.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import METHODS, NUMERIC_METHODS, square_wave_matrix
from rldp.demo.experiments import run_experiment
from rldp.demo.experiments.config import Config
from rldp.demo.experiments.numeric import table_numeric
from rldp.demo.experiments.numeric_baselines import em, metrics, piecewise_mean
from rldp.demo.experiments.tasks import select_methods


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_square_wave_is_a_mechanism_and_epsilon_ldp(epsilon: float) -> None:
    q, _ = square_wave_matrix(np.linspace(0, 1, 74), epsilon, 256)  # the product's, as the experiment uses it
    assert np.allclose(q.sum(axis=0), 1.0) and (q > 0).all()
    assert np.log(q.max(axis=1) / q.min(axis=1)).max() <= epsilon + 1e-9


def test_piecewise_mean_is_unbiased() -> None:
    rng = np.random.default_rng(4)
    values = rng.uniform(-1, 1, 20_000)
    estimates = [piecewise_mean(values, 1.0, rng) for _ in range(40)]
    # the Piecewise variance per report is at most (4e^{ε/2}/(3(e^{ε/2}-1)^2)) + 1 [WXY19, Sec III-B]
    bound = 4 * math.exp(0.5) / (3 * (math.exp(0.5) - 1) ** 2) + 1
    assert abs(np.mean(estimates) - values.mean()) < 4 * math.sqrt(bound / values.size / len(estimates))


def test_metrics_and_em() -> None:
    grid = np.arange(10.0)
    p = np.full(10, 0.1)
    assert metrics(grid, p, p) == {"w1": 0.0, "ks": 0.0, "mean_error": 0.0, "median_error": 0.0}
    shifted = np.r_[0.0, p[:-1]] + np.r_[np.zeros(9), 0.1]  # mass moved one step up (the top stays)
    assert metrics(grid, shifted, p)["w1"] == pytest.approx(0.9)
    q = np.array([[0.9, 0.2], [0.1, 0.8]])
    theta = em(q, np.array([550, 450]))
    assert np.allclose(q @ theta, [0.55, 0.45], atol=1e-4)


@pytest.mark.slow
def test_quick_run_keeps_the_claims() -> None:
    result = run_experiment("numeric", Config(quick=True, time_budget=5.0))
    w1 = {m: result.value("age", m, "w1", 1.0) for m in ("task", "sw-ems", "floor", "task-floor")}
    assert all(v is not None for v in w1.values())
    assert w1["task"] <= w1["sw-ems"] / 8
    assert w1["task"] <= 1.5 * w1["task-floor"]  # issue 38: within 1.5x of its own binning floor (the rule's bins)
    assert any("the task design's bins, by the rule" in note for note in result.notes)
    assert "rule's k" in table_numeric(result)  # the bins sweep's table
    for method in ("task", "polyopt-nmi", "grr-bins"):
        audited = result.value("age", method, "epsilon_audited", 1.0)
        assert audited is not None and audited <= 1.0 + 1e-9
    # tight, or released in the clear (the bins reveal less than the claim: no noise to add), and a note says so
    tight = result.value("age", "task", "epsilon_audited", 1.0)
    assert tight is not None and (tight >= 0.99 or result.value("age", "task", "in_the_clear", 1.0) == 1.0)
    assert tight >= 0.99 or any("in the clear" in note and "no noise to add" in note for note in result.notes)
    assert any("protected only as far as it reveals sex" in note for note in result.notes)


def test_the_categorical_experiments_leave_out_the_numeric_baselines() -> None:
    """The paper experiments' alphabets are categorical: square-wave and piecewise would only fail there."""
    chosen = select_methods(Config(), paper=("polyopt", "grr"))
    assert chosen[:2] == ["polyopt", "grr"] and not set(chosen) & NUMERIC_METHODS
    assert set(chosen) == set(METHODS) - NUMERIC_METHODS
