"""A design request is validated once, at its boundary, and its document built once (issue 36, point 5).

The rules of a request (:func:`validate_request`) run once per design through the Python API, ``rldp design``
and the service (``POST /v1/designs``: checked in the server, designed in a process that takes the checked
request as it is); the document is assembled and validated once, its audit hashed with it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from rldp_live import design_child_result

import rldp.aggregator.design.orchestration.build as build_module
import rldp.aggregator.design.orchestration.request as request_module
import rldp.shared.document.schema as schema_module
from rldp.aggregator.design import DesignError, DesignRequest, design, design_document, validate_request
from rldp.aggregator.services.designs import design_request
from rldp.cli import main
from rldp.shared.audit import audit_document
from rldp.shared.document import build_document, from_msgpack
from rldp.shared.records import Alphabet

ALPHA = Alphabet.from_dict(
    {"sensitive": {"name": "s", "values": ["a", "b"]}, "released": [{"name": "u", "values": ["x", "y", "z"]}]}
)
P_HAT = np.array([[0.2, 0.15, 0.1], [0.1, 0.25, 0.2]])
CSV = "sex,colour\n" + "Female,red\nMale,blue\nMale,red\nFemale,green\n" * 25


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Count the calls of ``module.name`` (looked up at call time by the code under test)."""
    calls: list[int] = []
    inner = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.fixture
def rules(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per run of validate_request's rules (its first rule, the notion's, runs once per call)."""
    return _counting(monkeypatch, request_module, "_notion")


@pytest.mark.parametrize(
    ("method", "notion", "claim"),
    [
        ("grr", "rldp", {"epsilon": 1.0}),
        ("polyopt", "rldp", {"epsilon": 1.0}),
        ("coupling", "distp", {"epsilon": 1.0, "delta": 0.1}),
        ("optimal", "alip", {"epsilon_lower": 0.5, "epsilon_upper": 1.0}),
    ],
)
def test_the_python_api_validates_once_and_builds_once(monkeypatch, rules, method, notion, claim) -> None:
    builds = _counting(monkeypatch, build_module, "build_document")
    checks = _counting(monkeypatch, schema_module, "_checked")  # assembling or validating a document
    doc = design(method, alphabet=ALPHA, public_distribution=P_HAT, notion=notion, n=500, solver="exact", **claim)
    assert (len(rules), len(builds), len(checks)) == (1, 1, 1)
    assert audit_document(doc).passed and doc["audit"]["passed"]


def test_the_document_built_once_is_the_one_its_fields_build(rules) -> None:
    """The audit hashed inside the one build: the same id and bytes as building every field (audit included)."""
    for method in ("grr", "nr", "ir-calibrated"):
        doc = design(method, alphabet=ALPHA, public_distribution=P_HAT, epsilon=1.0, n=500)
        core = ("format", "id", "method", "privacy", "sensitive", "released", "public_distribution", "matrix")
        again = build_document(
            method=doc["method"],
            matrix=doc["matrix"],
            alphabet=ALPHA,
            public_distribution=doc["public_distribution"],
            privacy=doc["privacy"],
            extra={k: v for k, v in doc.items() if k not in core},
        )
        assert again == doc and list(again) == list(doc)


def test_the_cli_validates_once(tmp_path: Path, rules, capsys) -> None:
    (tmp_path / "p.csv").write_text(CSV)
    out = tmp_path / "m.json"
    args = ["design", str(tmp_path / "p.csv"), "--sensitive", "sex", "--released", "colour", "--out", str(out)]
    assert main([*args, "--epsilon", "1", "--method", "polyopt"]) == 0
    assert len(rules) == 1


def test_the_service_validates_once(rules) -> None:
    """Checked in the server (before and after reading the CSV: one validation, then n and |U| bound to it),
    designed in the job's process from the checked request."""
    body = {"csv": CSV, "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "polyopt"}
    payload, _ = design_request(body)
    assert len(rules) == 1

    status, value = design_child_result(payload)
    assert len(rules) == 1
    assert status == "ok", value
    assert from_msgpack(value)["privacy"]["uncertainty"]["n"] == 100


def test_a_changed_validated_request_is_validated_again(rules) -> None:
    from rldp.aggregator.design import ValidatedRequest

    request = validate_request(DesignRequest(method="grr", epsilon=1.0, n=500))
    assert isinstance(request, ValidatedRequest) and request.validated and len(rules) == 1
    design_document(request.local(extra={"note": "x"}), alphabet=ALPHA, public_distribution=P_HAT)
    assert len(rules) == 1  # a local field changed: still validated
    changed = dataclasses.replace(request, epsilon=-1.0)  # a rule field changed: no longer validated
    assert not changed.validated
    with pytest.raises(DesignError, match="epsilon"):
        design_document(changed, alphabet=ALPHA, public_distribution=P_HAT)
    with pytest.raises(DesignError, match="epsilon: a validated request changes only"):
        request.local(epsilon=2.0)


def test_a_request_validated_for_another_s_is_refused(rules) -> None:
    request = validate_request(DesignRequest(method="grr", epsilon=1.0, n=500, latent=True))
    with pytest.raises(DesignError, match="latent"):
        design_document(request, alphabet=ALPHA, public_distribution=P_HAT)


def test_a_per_report_layer_is_audited_and_built_once(monkeypatch, rules) -> None:
    """The layered document: the design's (1), the layer's entry check of it (1), the layered build (1)."""
    checks = _counting(monkeypatch, schema_module, "_checked")
    request = DesignRequest(method="srr", epsilon=1.0, n=500, per_report_epsilon=0.3)
    doc = design_document(request, alphabet=ALPHA, public_distribution=P_HAT)
    assert (len(rules), len(checks)) == (1, 3)
    assert audit_document(doc).passed and doc["audit"]["per_report"]["passed"]
