"""The worked examples of [LZG24] (Examples 1-5), reproduced by the designers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EXAMPLE_EPSILON, EXAMPLE_N, EXAMPLE_P_HAT, EXAMPLE_P_TRUE

from rldp.aggregator.design import grr_matrix, ir_matrix, solve_polyopt, srr_matrix
from rldp.aggregator.design.solvers import calibrate
from rldp.shared.audit import rldp_epsilon
from rldp.shared.information import mutual_information
from rldp.shared.uncertainty import UncertaintySet

PAPER_Q_POLYOPT = np.array(
    [  # Example 3, rows y1..y4
        [0.0885, 0.3840, 0.6667, 0.0507],
        [0.0860, 0.3731, 0.0, 0.3080],
        [0.6162, 0.1813, 0.0, 0.6159],
        [0.2094, 0.0616, 0.3333, 0.0254],
    ]
)


@pytest.fixture(scope="module")
def example_set() -> UncertaintySet:
    return UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05)


def _same_rows(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """Equal up to a permutation of the rows (outputs are unordered)."""
    if a.shape != b.shape:
        return False
    used = set()
    for row in a:
        match = [i for i in range(len(b)) if i not in used and np.allclose(row, b[i], atol=atol)]
        if not match:
            return False
        used.add(match[0])
    return True


def test_example3_polyopt_paper(example_set):
    # Definition 3 with all (s1, s2), L from Theorem 1 / Prop. 2: 16 vertices, 4 outputs, I = 0.4228.
    res = solve_polyopt(EXAMPLE_P_HAT, example_set.lower_bounds(), EXAMPLE_EPSILON, same_sensitive=True)
    assert len(res.vertices) == 16
    assert res.matrix.shape == (4, 4)
    assert round(res.information, 4) == 0.4228
    assert round(mutual_information(res.matrix, EXAMPLE_P_HAT), 4) == 0.4228
    assert _same_rows(res.matrix, PAPER_Q_POLYOPT, atol=6e-4)
    # Erratum: the paper says I_P*(X;Y) = 0.2804, but its own printed Q gives 0.3702 under
    # P* (and 0.2804 under no arrangement of P* we tried); we match the printed Q.
    printed = PAPER_Q_POLYOPT / PAPER_Q_POLYOPT.sum(axis=0)
    assert round(mutual_information(printed, EXAMPLE_P_TRUE), 4) == 0.3702
    assert mutual_information(res.matrix, EXAMPLE_P_TRUE) == pytest.approx(0.3702, abs=2e-4)


def test_example3_polyopt_without_same_sensitive_rows(example_set):
    # RLDP does not constrain s1 = s2: a larger cone, still certified (docs/design.md, errata: I ≈ 0.563).
    res = solve_polyopt(EXAMPLE_P_HAT, example_set.lower_bounds(), EXAMPLE_EPSILON, same_sensitive=False)
    assert round(res.information, 3) == 0.563
    eps, _ = rldp_epsilon(res.matrix, example_set)
    assert eps <= EXAMPLE_EPSILON + 1e-9


def test_example4_grr_and_srr():
    grr = grr_matrix(4, EXAMPLE_EPSILON)
    srr = srr_matrix(2, 2, EXAMPLE_EPSILON)
    np.testing.assert_allclose(np.diag(grr), 0.4)
    np.testing.assert_allclose(srr[:, 0], [4 / 9, 1 / 9, 2 / 9, 2 / 9])
    assert round(mutual_information(grr, EXAMPLE_P_HAT), 4) == 0.0419
    assert round(mutual_information(srr, EXAMPLE_P_HAT), 4) == 0.1005
    assert round(mutual_information(grr, EXAMPLE_P_TRUE), 4) == 0.0412
    assert round(mutual_information(srr, EXAMPLE_P_TRUE), 4) == 0.0942


def test_example5_independent_reporting(example_set):
    d = calibrate._ir_spread(example_set)
    assert round(d, 4) == 1.4591
    q, params = calibrate.ir_theorem(example_set, EXAMPLE_EPSILON)
    assert params["epsilon_s"] == pytest.approx(0.0, abs=1e-6)  # optimum at ε₂ = log 2
    assert round(mutual_information(q, EXAMPLE_P_HAT), 4) == 0.0755
    assert round(mutual_information(q, EXAMPLE_P_TRUE), 4) == 0.0718
    np.testing.assert_allclose(np.sort(np.unique(np.round(q, 4))), [0.1483, 0.3517])
    # δ₂ = log(1.3707 e^ε₂ − 0.3707) at ε₂ = log 2
    assert params["delta_u"] == pytest.approx(math.log(1.3707 * 2 - 0.3707), abs=1e-4)
    np.testing.assert_allclose(q, ir_matrix(2, 2, params["epsilon_s"], params["delta_u"]))


@pytest.mark.slow
def test_ir_calibrated_about_doubles_example5(example_set):
    theorem, _ = calibrate.ir_theorem(example_set, EXAMPLE_EPSILON)
    tuned, _ = calibrate.ir_calibrated(example_set, EXAMPLE_EPSILON)
    i_theorem = mutual_information(theorem, EXAMPLE_P_HAT)
    i_tuned = mutual_information(tuned, EXAMPLE_P_HAT)
    assert i_tuned >= 1.8 * i_theorem
    eps, _ = rldp_epsilon(tuned, example_set)
    assert eps <= EXAMPLE_EPSILON + 1e-9
    # The theorem's bound is loose: its own mechanism audits far below ε.
    assert rldp_epsilon(theorem, example_set)[0] < 0.8 * EXAMPLE_EPSILON
