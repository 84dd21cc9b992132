"""The typed read-only document view (issue 36, point 5): a document parsed once into typed fields."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from documents import SMALL_ALPHABET, grr, make_document

from rldp.shared.audit import audit_document, audit_validated
from rldp.shared.document import (
    DocumentView,
    alphabet,
    build_document,
    mechanism_shape,
    report_outputs,
    uncertainty_parameters,
)
from rldp.shared.errors import DocumentError


def _doc(privacy: dict, *, compact: bool | None = None, extra: dict | None = None, audited: bool = False) -> dict:
    k = SMALL_ALPHABET.size
    return build_document(
        method="grr",
        matrix=grr(k, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=np.full(SMALL_ALPHABET.shape, 1.0 / k),
        privacy=privacy,
        extra=extra,
        compact=compact,
        audit=(lambda content: audit_validated(content).to_dict()) if audited else None,
    )


def test_the_view_reads_what_the_accessors_read() -> None:
    doc = make_document("view", epsilon=1.0, window="P1D")
    view = DocumentView.of(doc)
    assert (view.id, view.method, view.notion, view.epsilon) == (doc["id"], "grr", "rldp", 1.0)
    assert view.alphabet == alphabet(doc) and view.matrix_shape == mechanism_shape(doc)
    assert view.outputs == report_outputs(doc) and view.window is not None and view.window.text == "P1D"
    assert view.uncertainty is not None and not view.uncertainty.bounded  # null radius: every distribution
    assert view.uncertainty.radius == math.inf == uncertainty_parameters(doc)["radius"]
    assert view.audit is None and view.per_report_epsilon is None and view.provenance is None


def test_a_bounded_claim_its_notion_fields_and_its_audit() -> None:
    unc = {"order": 2, "radius": 0.1, "n": 500, "beta": 0.05}
    doc = _doc({"notion": "distp", "epsilon": 1.0, "uncertainty": unc}, audited=True)
    view = DocumentView.of(doc)
    assert view.uncertainty is not None and view.uncertainty.bounded
    assert (view.uncertainty.radius, view.uncertainty.n, view.uncertainty.beta) == (0.1, 500, 0.05)
    assert dict(view.claim) == {"notion": "distp", "epsilon": 1.0, "delta": 0.0}  # δ defaults to 0
    assert view.audit is not None and view.audit.passed == audit_document(doc).passed is True
    assert view.audit.fields == doc["audit"] and view.audit.epsilon == doc["audit"]["epsilon"] < 1.0
    leaky = DocumentView.of({**doc, "audit": {**doc["audit"], "epsilon": None, "passed": False}}).audit
    assert leaky is not None and leaky.epsilon == math.inf and not leaky.passed  # null: unbounded


def test_an_ldp_claim_over_x_has_no_uncertainty_set() -> None:
    assert DocumentView.of(_doc({"notion": "ldp", "epsilon": 1.0})).uncertainty is None


def test_a_compact_matrix_is_not_expanded_for_its_shape() -> None:
    doc = _doc({"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}}, compact=True)
    assert isinstance(doc["matrix"], dict)
    assert DocumentView.of(doc).matrix_shape == (SMALL_ALPHABET.size, SMALL_ALPHABET.size)


def test_the_view_is_read_only() -> None:
    view = DocumentView.of(make_document("frozen"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        view.parameters["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        view.claim["epsilon"] = 9.0  # type: ignore[index]


def test_an_alphabet_this_version_refuses_is_refused_when_read_not_before() -> None:
    """A document stored by an older rldp may hold text this version refuses: its window and claim still read."""
    doc = make_document("old", window="P1D")
    doc["sensitive"] = {**doc["sensitive"], "values": ["same", "same"]}
    view = DocumentView.of(doc)
    assert view.window is not None and view.claim["epsilon"] == 1.0
    with pytest.raises(DocumentError, match="sensitive/released"):
        _ = view.alphabet


def test_build_document_hashes_the_audit_it_is_given_once() -> None:
    privacy = {"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}}
    calls: list[dict] = []

    def audit(content: object) -> dict:
        calls.append(dict(content))  # type: ignore[call-overload]
        return {"passed": True, "epsilon": 1.0}

    doc = _doc(privacy, extra={"note": "x"})
    audited = build_document(
        method="grr",
        matrix=doc["matrix"],
        alphabet=SMALL_ALPHABET,
        public_distribution=doc["public_distribution"],
        privacy=privacy,
        extra={"note": "x"},
        audit=audit,
    )
    assert len(calls) == 1 and "audit" not in calls[0] and calls[0]["matrix"] == doc["matrix"]
    again = build_document(
        method="grr",
        matrix=doc["matrix"],
        alphabet=SMALL_ALPHABET,
        public_distribution=doc["public_distribution"],
        privacy=privacy,
        extra={"note": "x", "audit": {"passed": True, "epsilon": 1.0}},
    )
    assert audited == again and audited["id"] != doc["id"]
    layered = build_document(  # an audit in extra (a layer added to an audited document): replaced in its place
        method="grr",
        matrix=doc["matrix"],
        alphabet=SMALL_ALPHABET,
        public_distribution=doc["public_distribution"],
        privacy=privacy,
        extra={"audit": {"old": True}, "note": "x"},
        audit=audit,
    )
    assert layered["audit"] == {"passed": True, "epsilon": 1.0} and list(layered)[-2:] == ["audit", "note"]
    assert "old" in calls[1]["audit"]
