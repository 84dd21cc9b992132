"""Every designer: stochastic, non-negative, audited and passing; the utility ordering."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EXAMPLE_N, EXAMPLE_P_HAT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rldp.aggregator.design import (
    METHODS,
    NUMERIC_METHODS,
    DesignError,
    PolyOptError,
    design,
    design_matrix,
    solve_polyopt,
)
from rldp.shared.audit import audit_document, audit_rldp
from rldp.shared.document import mechanism_matrix, validate_document
from rldp.shared.information import mutual_information
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

# The LDP baselines for a numeric U need a numeric U (tests/aggregator/design/test_numeric_ldp.py).
CATEGORICAL = [m for m in METHODS if m not in NUMERIC_METHODS]
ROBUST = [m for m in CATEGORICAL if m != "nr"]


def _alphabet(a1: int, a2: int) -> Alphabet:
    return Alphabet(
        Attribute("s", tuple(f"s{i}" for i in range(a1))), [Attribute("u", tuple(f"u{j}" for j in range(a2)))]
    )


@st.composite
def problems(draw):
    a1, a2 = draw(st.sampled_from([(2, 2), (2, 3), (3, 2)]))
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(30, 5000))
    eps = draw(st.floats(0.1, 3.0))
    rng = np.random.default_rng(seed)
    p_true = rng.dirichlet(np.full(a1 * a2, 0.5))
    p_hat = rng.multinomial(n, p_true).reshape(a1, a2) / n
    return p_hat, n, eps


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_every_designer_is_stochastic_and_passes_its_audit(problem):
    p_hat, n, eps = problem
    uset = UncertaintySet.from_confidence(p_hat, n, 0.05)
    info = {}
    for method in CATEGORICAL:
        q, _ = design_matrix(method, uset, eps)
        assert np.all(q >= 0)
        np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-9)
        if method != "nr":
            res = audit_rldp(q, uset, eps)
            assert res.passed, (method, res.epsilon, eps)
        info[method] = mutual_information(q, p_hat)
    tol = 1e-7
    assert info["nr"] >= info["polyopt"] - tol
    assert info["polyopt"] >= info["polyopt-paper"] - tol
    assert info["polyopt-paper"] >= info["ir"] - tol
    assert info["ir-calibrated"] >= info["ir"] - tol
    assert info["cr-calibrated"] >= info["cr"] - tol
    assert info["srr"] >= info["grr"] - tol  # SRR relaxes GRR's constraint (Prop. 3)


@pytest.mark.slow
@pytest.mark.parametrize("method", CATEGORICAL)
def test_design_document_carries_a_passing_audit(method):
    alphabet = _alphabet(2, 2)
    doc = design(
        method, alphabet=alphabet, public_distribution=EXAMPLE_P_HAT, epsilon=math.log(2), n=EXAMPLE_N, beta=0.05
    )
    validate_document(doc)
    assert doc["method"] == method
    assert doc["audit"]["passed"] is True
    result = audit_document(doc)  # recomputed from the matrix, not read from the document
    assert result.passed
    assert result.epsilon == pytest.approx(doc["audit"]["epsilon"], abs=1e-12)
    if method == "nr":
        # NR only claims privacy for P̂ itself; over the requested set it leaks more.
        assert doc["privacy"]["uncertainty"]["radius"] == 0.0
        assert doc["audit"]["epsilon_requested_set"] > math.log(2)
    else:
        assert doc["privacy"]["uncertainty"]["n"] == EXAMPLE_N
        assert doc["privacy"]["uncertainty"]["radius"] == pytest.approx(0.07524, abs=1e-5)
    assert mechanism_matrix(doc).shape[1] == 4


def test_nr_is_not_private_for_the_confidence_set():
    uset = UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05)
    q, _ = design_matrix("nr", uset, math.log(2))
    assert not audit_rldp(q, uset, math.log(2)).passed


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(method="nope"), "unknown method"),
        (dict(epsilon=0.0), "epsilon must be"),
        (dict(epsilon=float("nan")), "epsilon must be"),
        (dict(beta=1.5), "beta"),
        (dict(radius=-1.0, beta=None), "radius must be"),
        (dict(order=-2.0), "order"),
        (dict(n=None, beta=0.05), "n \\(number of public records\\)"),
    ],
)
def test_design_rejects_bad_parameters(kwargs, match):
    args = dict(
        method="grr", alphabet=_alphabet(2, 2), public_distribution=EXAMPLE_P_HAT, epsilon=1.0, n=EXAMPLE_N, beta=0.05
    )
    args.update(kwargs)
    method = args.pop("method")
    with pytest.raises(DesignError, match=match):
        design(method, **args)


@pytest.mark.slow
def test_radius_infinity_designs_need_no_public_knowledge():
    # With F = the whole simplex only (ε, P_X)-RLDP mechanisms qualify: calibrated IR must
    # then report U no better than SRR's guarantee allows.
    uset = UncertaintySet(EXAMPLE_P_HAT, math.inf)
    for method in ("srr", "ir-calibrated", "cr-calibrated", "polyopt"):
        q, _ = design_matrix(method, uset, 1.0)
        assert audit_rldp(q, uset, 1.0).passed


def test_exact_polyopt_refuses_large_alphabets_clearly():
    p = np.full((4, 4), 1 / 16)
    uset = UncertaintySet.from_confidence(p, 1000, 0.05)
    with pytest.raises(PolyOptError, match="exact PolyOpt enumerates every vertex"):
        solve_polyopt(p, uset.lower_bounds(), 1.0)
