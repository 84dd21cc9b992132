"""Optimal LIP on Adult with S = occupation, X = relationship (and the reverse): cddlib's floating-point
double description returned no vertex at ε = 3 (redundant slab sides made Δ degenerate), and the LP then
failed. Redundant sides are now left out, and a vertex set that cannot carry p_X is re-enumerated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import DesignError, design
from rldp.aggregator.design.solvers.funnel import lip, lip_polytope
from rldp.shared.audit import audit_document
from rldp.shared.records import Alphabet

EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0)
PAIRS = (("occupation", "relationship"), ("relationship", "occupation"))


@pytest.fixture(scope="module", params=PAIRS, ids=lambda pair: "-".join(pair))
def adult(request):
    from rldp.demo.datasets import adult_distribution

    alph, p, _ = adult_distribution(*request.param)
    return alph, p


@pytest.mark.slow
@pytest.mark.parametrize("eps", EPSILONS)
def test_latent_optimal_lip_on_adult_passes_its_audit(adult, eps):
    alph, p = adult
    latent = Alphabet(alph.sensitive, alph.released, latent=True)
    doc = design("optimal", alphabet=latent, public_distribution=p, radius=0.0, notion="lip", epsilon=eps)
    assert audit_document(doc).passed and doc["audit"]["passed"]
    np.testing.assert_allclose(np.asarray(doc["matrix"]).sum(axis=0), 1.0, atol=1e-9)


@pytest.mark.slow
def test_s_as_an_input_on_adult_goes_to_column_generation(adult):
    alph, p = adult  # X = (S, U) has 87 symbols with positive probability: beyond the exact method
    doc = design("optimal", alphabet=alph, public_distribution=p, radius=0.0, notion="lip", epsilon=3.0)
    assert doc["parameters"]["solver"] == "cg" and audit_document(doc).passed
    with pytest.raises(DesignError, match="limited to 24 input symbols"):
        design("optimal", alphabet=alph, public_distribution=p, radius=0.0, notion="lip", epsilon=3.0, solver="exact")


@pytest.mark.slow
@pytest.mark.parametrize("eps", EPSILONS)
def test_cddlib_finds_every_vertex_the_support_enumeration_finds(eps):
    from rldp.demo.datasets import adult_distribution

    _, p, _ = adult_distribution("occupation", "relationship")  # |X| = 6: supports are cheap
    p_x, p_s = p.sum(axis=0), p.sum(axis=1)
    cond = p / p_x
    low, high = math.exp(-eps) * p_s, math.exp(eps) * p_s
    by_cdd = {tuple(v) for v in np.round(lip._cdd_vertices(cond, low, high), 8)}
    by_support = {tuple(v) for v in np.round(lip_polytope.support_vertices(cond, low, high), 8)}
    assert by_cdd and by_cdd == by_support


@pytest.mark.slow
def test_a_lossy_enumeration_falls_back_to_the_supports(monkeypatch):
    """If the floating-point enumeration loses vertices so that p_X is out of their hull, the optimum is
    still found (by supports), and equals the one from a complete enumeration."""
    from rldp.demo.datasets import adult_distribution

    _, p, _ = adult_distribution("occupation", "relationship")
    reference = lip.optimal_lip(p, 3.0, 3.0)
    monkeypatch.setattr(lip, "_cdd_vertices", lambda c, low, high: np.zeros((0, c.shape[1])))
    again = lip.optimal_lip(p, 3.0, 3.0)
    assert again.information == pytest.approx(reference.information, rel=1e-9)
    assert again.vertices == reference.vertices
