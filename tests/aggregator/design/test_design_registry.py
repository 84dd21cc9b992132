"""The designer registry: one designer per method, every output audited by design(), latent S."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EXAMPLE_N, EXAMPLE_P_HAT

from rldp.aggregator.design import (
    LATENT_METHODS,
    METHODS,
    NON_ROBUST,
    NUMERIC_METHODS,
    REGISTRY,
    SOLVER_METHODS,
    DesignError,
    DesignRequest,
    design,
    design_document,
    design_matrix,
)
from rldp.shared.audit import audit_document
from rldp.shared.document import mechanism_matrix, validate_document
from rldp.shared.errors import RldpError, ValidationError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

HAS_LATENT = hasattr(Alphabet, "latent")  # a latent S (not an input of the mechanism)


def _alphabet(latent: bool = False) -> Alphabet:
    s, u = Attribute("s", ("s0", "s1")), [Attribute("u", ("u0", "u1"))]
    return Alphabet(s, u, latent=True) if latent else Alphabet(s, u)


def test_the_registry_derives_the_method_sets():
    assert list(METHODS) == [
        "grr",
        "srr",
        "ir",
        "ir-calibrated",
        "cr",
        "cr-calibrated",
        "polyopt",
        "polyopt-paper",
        "nr",
        "rr-released",
        "square-wave",
        "piecewise",
    ]
    assert METHODS is REGISTRY
    for name, designer in REGISTRY.items():
        assert designer.name == name and designer.summary
    assert SOLVER_METHODS == {"polyopt", "polyopt-paper", "nr"}
    assert NON_ROBUST == {"nr"}
    assert LATENT_METHODS == ("grr", "rr-released", "square-wave", "piecewise")
    assert NUMERIC_METHODS == {"square-wave", "piecewise"}
    assert issubclass(DesignError, ValidationError) and issubclass(DesignError, ValueError)
    assert issubclass(DesignError, RldpError)


@pytest.mark.parametrize("method", list(METHODS))
def test_design_audits_every_designer_and_refuses_a_leaky_one(method, monkeypatch):
    """Privacy is the product: whatever a designer returns, design() audits it before it
    packages a document. A designer that overshoots (here: no noise at all) is refused."""
    designer = REGISTRY[method]

    def leaky(self, uncertainty, options):
        return np.eye(uncertainty.public_distribution.size), {}

    monkeypatch.setattr(type(designer), "__call__", leaky)
    with pytest.raises(DesignError, match=f"the {method} mechanism failed its audit"):
        design(method, alphabet=_alphabet(), public_distribution=EXAMPLE_P_HAT, epsilon=math.log(2), n=EXAMPLE_N)


@pytest.mark.slow
def test_design_document_takes_the_request_as_one_object():
    request = DesignRequest(method="cr-calibrated", epsilon=math.log(2), n=EXAMPLE_N, beta=0.05)
    doc = design_document(request, alphabet=_alphabet(), public_distribution=EXAMPLE_P_HAT)
    same = design(
        "cr-calibrated",
        alphabet=_alphabet(),
        public_distribution=EXAMPLE_P_HAT,
        epsilon=math.log(2),
        n=EXAMPLE_N,
        beta=0.05,
    )
    np.testing.assert_array_equal(mechanism_matrix(doc), mechanism_matrix(same))
    assert doc["privacy"] == same["privacy"] and doc["audit"] == same["audit"]


def test_design_matrix_checks_options_even_where_it_ignores_them():
    uset = UncertaintySet.from_confidence(EXAMPLE_P_HAT, EXAMPLE_N, 0.05)
    q, _ = design_matrix("grr", uset, 1.0, solver="cg", time_budget=3.0)
    assert q.shape == (4, 4)
    with pytest.raises(DesignError, match="solver must be one of"):
        design_matrix("grr", uset, 1.0, solver="simplex")


@pytest.mark.skipif(not HAS_LATENT, reason="Alphabet has no latent S yet")
def test_latent_grr_reads_u_only_and_passes_its_audit():
    alphabet = _alphabet(latent=True)
    doc = design("grr", alphabet=alphabet, public_distribution=EXAMPLE_P_HAT, epsilon=math.log(2), n=EXAMPLE_N)
    validate_document(doc)
    q = mechanism_matrix(doc)
    assert q.shape == (2, 2)  # |Y| × |U|: the mechanism never sees S
    assert doc["audit"]["passed"] is True
    result = audit_document(doc)  # recomputed from the matrix
    assert result.passed and result.epsilon <= math.log(2)
    assert 0 < doc["utility"]["mutual_information"] <= doc["utility"]["nmi"] * math.log(2) + 1e-12


@pytest.mark.skipif(not HAS_LATENT, reason="Alphabet has no latent S yet")
def test_latent_grr_is_audited_too(monkeypatch):
    designer = REGISTRY["grr"]

    def leaky(self, uncertainty, options):  # the identity on U: S leaks through U's correlation with it
        return np.eye(uncertainty.n_released), {}

    monkeypatch.setattr(type(designer), "__call__", leaky)
    with pytest.raises(DesignError, match="the grr mechanism failed its audit"):
        design("grr", alphabet=_alphabet(latent=True), public_distribution=EXAMPLE_P_HAT, epsilon=0.05, radius=0.0)


@pytest.mark.skipif(not HAS_LATENT, reason="Alphabet has no latent S yet")
@pytest.mark.parametrize("method", [m for m in METHODS if m not in LATENT_METHODS])
def test_other_methods_refuse_a_latent_s_and_name_the_ones_that_can(method):
    with pytest.raises(DesignError, match=rf"{method!r}.*latent.*: grr, rr-released, square-wave, piecewise$"):
        design(
            method, alphabet=_alphabet(latent=True), public_distribution=EXAMPLE_P_HAT, epsilon=math.log(2), n=EXAMPLE_N
        )
