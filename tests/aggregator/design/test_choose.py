"""Choosing: ``--method auto`` (every certified method for the notion, the best kept) and the warning for an ε
that lets any mechanism release the data nearly as it is."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ADULT_COLUMNS, adult_path

from rldp.aggregator.design import (
    DesignRequest,
    auto_methods,
    best_method,
    design_auto,
    grr_matrix,
    identifiable,
    methods_for,
    releases_the_data,
)
from rldp.shared.audit import audit_document
from rldp.shared.document import mechanism_matrix
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv


def test_auto_tries_the_certified_methods_of_the_notion():
    for notion in ("rldp", "distp", "ldp", "lip"):
        methods = auto_methods(notion)
        assert methods and all(methods_for(notion)[m].robust for m in methods)
    assert "nr" not in auto_methods("rldp")  # certified for P̂ only
    assert auto_methods("rldp", latent=True) == ["grr", "rr-released"]  # the designers that read U only


@pytest.mark.slow
def test_design_auto_keeps_the_best_identifiable_certified_design():
    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(table, ["sex"], ["race"])
    public = PublicCounts.from_table(table, alphabet, name="adult")
    request = DesignRequest(method="grr", epsilon=1.0, n=public.n)
    skipped: list[str] = []
    best, docs, cut = design_auto(
        request,
        alphabet=alphabet,
        public_distribution=public.distribution,
        skipped=lambda m, e: skipped.append(m),
    )
    assert not cut and sorted([*docs, *skipped]) == sorted(auto_methods("rldp"))
    assert all(audit_document(d).passed for d in docs.values())
    eligible = {m: d["utility"]["nmi"] for m, d in docs.items() if identifiable(mechanism_matrix(d))}
    assert best["method"] == max(eligible, key=eligible.__getitem__) == best_method(docs)
    assert best["utility"]["nmi"] > docs["grr"]["utility"]["nmi"]


def test_best_method_passes_over_a_mechanism_that_cannot_be_inverted(monkeypatch):
    import rldp.aggregator.design.orchestration.choose as choose

    docs = {"flat": {"utility": {"nmi": 0.9}}, "grr": {"utility": {"nmi": 0.1}}}
    matrices = {id(docs["flat"]): np.ones((1, 4)), id(docs["grr"]): grr_matrix(4, 1.0)}
    monkeypatch.setattr(choose, "mechanism_matrix", lambda d: matrices[id(d)])
    assert best_method(docs) == "grr"


@pytest.mark.parametrize("k", [2, 10, 240])
def test_the_warning_starts_where_grr_keeps_the_true_record_99_percent_of_the_time(k):
    threshold = math.log(99 * (k - 1))
    assert releases_the_data(threshold * (1 - 1e-9), k) is None
    loud = releases_the_data(threshold * (1 + 1e-9), k)
    assert loud is not None and "releases the data nearly as it is" in loud
    assert np.diag(grr_matrix(k, threshold * (1 + 1e-9))).min() >= 0.99  # the justification, checked
    assert np.diag(grr_matrix(k, threshold * 0.9)).min() < 0.99
    assert releases_the_data(1.0, k) is None
