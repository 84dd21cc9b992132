"""The per-report layer of a document (collection.per_report): schema, accessors, both audits.

R (|Y'| × |Y|) is applied afresh to the memoised Y on every report: one report is distributed
as R·Q and its claimed ε₁ is audited by the document's own notion audit on R·Q; the long-run
claim (privacy.epsilon) stays Q's. Documents here are small (|X| = 6) with fixed seeds.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from rldp.shared.audit import (
    AuditResult,
    LayeredAuditResult,
    audit_document,
    audit_rldp,
    ldp_epsilon,
    notion_audit,
    registry,
)
from rldp.shared.document import (
    FORMAT,
    FORMAT_2,
    build_document,
    content_id,
    from_json,
    from_msgpack,
    mechanism_matrix,
    per_report_layer,
    report_matrix,
    to_json,
    to_msgpack,
    validate_document,
)
from rldp.shared.errors import DocumentError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tolerances import AUDIT_TOLERANCE
from rldp.shared.uncertainty import UncertaintySet

ALPHA = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("colour", ("blue", "green", "red"))])
P_HAT = np.array([[0.1, 0.2, 0.15], [0.25, 0.1, 0.2]])
RADIUS = 0.01


def grr(k: int, eps: float) -> np.ndarray:
    q = np.full((k, k), 1.0 / (math.exp(eps) + k - 1))
    np.fill_diagonal(q, math.exp(eps) / (math.exp(eps) + k - 1))
    return q


def random_layer(rows: int, cols: int, seed: int) -> np.ndarray:
    """A column-stochastic R (rows × cols) with every entry > 0 (fixed seed)."""
    r = np.random.default_rng(seed).dirichlet(np.ones(rows), size=cols).T
    return r / r.sum(axis=0)


def document(
    layer: np.ndarray | None = None,
    per_report_epsilon: float | None = None,
    *,
    epsilon: float = 2.0,
    notion: str = "rldp",
    window: str | None = "P1D",
) -> dict:
    """GRR on X at ε (an (ε, F)-RLDP and ε-LDP mechanism), with a per-report layer when given."""
    collection: dict = {} if window is None else {"window": window}
    if layer is not None:
        collection["per_report"] = {"matrix": np.asarray(layer).tolist(), "epsilon": per_report_epsilon}
    privacy: dict = {"notion": notion, "epsilon": epsilon}
    if notion == "rldp":
        privacy["uncertainty"] = {"order": 2.0, "radius": RADIUS}
    return build_document(
        method="grr",
        matrix=grr(ALPHA.size, epsilon),
        alphabet=ALPHA,
        public_distribution=P_HAT,
        privacy=privacy,
        extra={"collection": collection} if collection else None,
    )


def single_report_epsilon(layer: np.ndarray, epsilon: float = 2.0) -> float:
    """The exact RLDP audit of R·Q, computed here without the document machinery."""
    return audit_rldp(layer @ grr(ALPHA.size, epsilon), UncertaintySet(P_HAT, RADIUS, 2.0)).epsilon


R8 = random_layer(8, 6, seed=1)  # |Y'| = 8 > |Y| = 6: reports take values a plain report cannot
E1 = single_report_epsilon(R8) + 1e-6  # a claim the layer meets


def test_a_layered_document_validates_round_trips_and_is_format_2():
    doc = document(R8, E1)
    assert doc["format"] == FORMAT_2  # a format-1 reader would send the memoised Y itself
    assert doc["collection"] == {"window": "P1D", "per_report": {"matrix": R8.tolist(), "epsilon": E1}}
    for again in (from_json(to_json(doc)), from_msgpack(to_msgpack(doc)), validate_document(doc)):
        assert again["id"] == doc["id"] == content_id(again)
        assert again["collection"] == doc["collection"]
    layer = per_report_layer(doc)
    assert layer is not None and layer.epsilon == E1
    np.testing.assert_array_equal(layer.matrix, R8)
    np.testing.assert_allclose(report_matrix(doc), R8 @ mechanism_matrix(doc), rtol=0, atol=1e-15)
    assert report_matrix(doc).shape == (8, 6)
    # The layer is covered by the id: another R or another ε₁ is another mechanism.
    assert document(random_layer(8, 6, seed=2), E1)["id"] != doc["id"]
    assert document(R8, E1 + 0.01)["id"] != doc["id"]


def test_without_a_layer_nothing_changes():
    doc = document()
    assert doc["format"] == FORMAT and per_report_layer(doc) is None
    np.testing.assert_array_equal(report_matrix(doc), mechanism_matrix(doc))
    result = audit_document(doc)
    assert type(result) is AuditResult and "per_report" not in result.to_dict()


def test_both_guarantees_are_audited_with_the_notion_audit():
    result = audit_document(document(R8, E1))
    assert isinstance(result, LayeredAuditResult) and result.passed and result.reasons == ()
    # The long-run fields are Q's audit, unchanged by the layer.
    plain = audit_document(document())
    assert (result.notion, result.epsilon, result.claimed, result.worst) == (
        plain.notion,
        plain.epsilon,
        plain.claimed,
        plain.worst,
    )
    single = result.per_report
    assert single is not None and single.passed and single.claimed == E1
    assert single.epsilon == pytest.approx(single_report_epsilon(R8), abs=1e-12)
    assert single.epsilon < result.epsilon  # post-processing: one report reveals less than Y
    as_dict = result.to_dict()
    assert as_dict["per_report"]["claimed"] == E1 and as_dict["per_report"]["passed"] is True


def test_a_too_small_single_report_claim_fails_with_a_reason_naming_it():
    actual = single_report_epsilon(R8)
    result = audit_document(document(R8, actual * 0.9))
    assert result.passed is False and result.per_report is not None and result.per_report.passed is False
    (reason,) = result.reasons
    assert reason.startswith("per-report guarantee (collection.per_report.epsilon): audited epsilon")
    assert f"{actual:.12g}" in reason
    # Just above the audit's tolerance fails; at the audited value it passes.
    assert audit_document(document(R8, actual - 10 * AUDIT_TOLERANCE)).passed is False
    assert audit_document(document(R8, actual)).passed is True


def test_a_failing_long_run_claim_is_named_as_such():
    doc = document(R8, E1)
    tampered = copy.deepcopy(doc)
    tampered["matrix"] = grr(ALPHA.size, 3.0).tolist()  # Q leaks more than the claimed ε = 2
    tampered["id"] = content_id(tampered)
    result = audit_document(tampered)
    assert result.passed is False and result.epsilon > 2.0
    assert result.reasons[0].startswith("audited epsilon") and "exceeds the claimed 2 " in result.reasons[0]


def test_the_ldp_notion_audits_the_composed_matrix_too():
    r = random_layer(5, 6, seed=3)
    e1 = ldp_epsilon(r @ grr(ALPHA.size, 2.0))
    assert 0 < e1 < 2.0
    result = audit_document(document(r, e1 + 1e-9, notion="ldp"))
    assert result.passed and result.per_report is not None
    assert result.per_report.epsilon == pytest.approx(e1, abs=1e-12)
    failed = audit_document(document(r, e1 * 0.95, notion="ldp"))
    assert failed.passed is False and "per-report guarantee" in failed.reasons[0] and "LDP epsilon" in failed.reasons[0]


def test_a_notion_whose_audit_does_not_declare_the_capability_is_refused(monkeypatch):
    rldp = notion_audit("rldp")

    class WithoutLayers:  # the rldp audit, without supports_per_report: a notion that has not opted in
        name = "rldp"

        def audit_document(self, doc):
            return rldp.audit_document(doc)

    assert rldp.supports_per_report is True and notion_audit("ldp").supports_per_report is True
    monkeypatch.setitem(registry._REGISTRY, "rldp", WithoutLayers())
    assert audit_document(document()).passed  # documents without a layer are unaffected
    with pytest.raises(DocumentError, match=r"'rldp' cannot audit a per-report layer.*supports_per_report"):
        audit_document(document(R8, E1))


def test_post_processing_never_raises_the_audited_epsilon():
    # R·Q is a post-processing of Q: for every R its audited ε is at most Q's (seeded R's of several shapes).
    q_eps = audit_document(document()).epsilon
    for seed, rows in enumerate((2, 3, 6, 9, 12)):
        r = random_layer(rows, 6, seed=10 + seed)
        assert single_report_epsilon(r) <= q_eps + AUDIT_TOLERANCE


BAD_LAYERS = [
    ({"matrix": R8.tolist()}, "exactly the fields epsilon and matrix; missing: epsilon"),
    ({"matrix": R8.tolist(), "epsilon": 1.0, "seed": 3}, "unknown: seed"),
    ("grr", "must be an object"),
    ({"matrix": R8.tolist(), "epsilon": 0}, "epsilon must be a finite number > 0"),
    ({"matrix": R8.tolist(), "epsilon": True}, "epsilon must be a finite number > 0"),
    ({"matrix": R8.tolist(), "epsilon": "1"}, "epsilon must be a finite number > 0"),
    ({"matrix": [], "epsilon": 1.0}, "non-empty list of rows"),
    ({"matrix": random_layer(4, 5, seed=4).tolist(), "epsilon": 1.0}, r"shape 4×5; expected .* \|Y\| = 6 columns"),
    ({"matrix": (R8 * 1.01).tolist(), "epsilon": 1.0}, r"collection\.per_report\.matrix: matrix column 0 sums to"),
    (
        {"matrix": [[1.5] * 6, [-0.5] * 6], "epsilon": 1.0},
        r"per_report\.matrix\[1\]\[0\] is -0\.5; entries must be ≥ 0",
    ),
    ({"matrix": [["a"] * 6], "epsilon": 1.0}, r"collection\.per_report\.matrix\[0\]\[0\] must be a number"),
    ({"matrix": R8.tolist(), "epsilon": 2.5}, "more than privacy.epsilon 2.0; the single-report guarantee"),
]


@pytest.mark.parametrize(("layer", "message"), BAD_LAYERS)
def test_malformed_layers_are_refused_naming_the_field(layer, message):
    doc = document()
    doc["format"] = FORMAT_2
    doc["collection"] = {"window": "P1D", "per_report": layer}
    doc["id"] = ""
    with pytest.raises(DocumentError, match=message):
        validate_document(doc)


def test_a_layer_in_a_format_1_document_is_refused():
    doc = document(R8, E1)
    doc["format"] = FORMAT
    doc["id"] = content_id(doc)
    with pytest.raises(DocumentError, match="per-report layer .* needs format 'rldp.mechanism/2'"):
        validate_document(doc)


def test_a_layer_without_a_window_is_allowed():
    # Memoisation needs a state file, not a window: the layer stands on its own.
    doc = document(R8, E1, window=None)
    assert doc["collection"] == {"per_report": {"matrix": R8.tolist(), "epsilon": E1}}
    assert audit_document(doc).passed
