"""The notion-generic core: several and latent sensitive attributes, formats 1 and 2, the registry."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rldp.shared.audit import audit_document, notion_audit, notions, realised_epsilon, rldp_epsilon
from rldp.shared.document import (
    FORMAT,
    FORMAT_2,
    alphabet,
    build_document,
    content_id,
    from_json,
    mechanism_matrix,
    to_json,
    validate_document,
)
from rldp.shared.errors import DocumentError, UnknownNotion
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

DATA = Path(__file__).parent / "data"

SEX = Attribute("sex", ("Female", "Male"))
RACE = Attribute("race", ("Black", "Other", "White"))
REL = Attribute("relationship", ("Husband", "Other", "Wife"))


def _grr(k: int, eps: float) -> np.ndarray:
    q = np.full((k, k), 1.0 / (math.exp(eps) + k - 1))
    np.fill_diagonal(q, math.exp(eps) / (math.exp(eps) + k - 1))
    return q


def _joint(shape: tuple[int, int], seed: int = 1) -> np.ndarray:
    p = np.random.default_rng(seed).dirichlet(np.ones(shape[0] * shape[1])).reshape(shape)
    return p / p.sum()


def _rldp(epsilon: float, radius: float) -> dict[str, object]:
    return {"notion": "rldp", "epsilon": epsilon, "uncertainty": {"order": 2.0, "radius": radius}}


def test_a_format1_document_written_before_the_change_keeps_reading_and_its_id() -> None:
    text = (DATA / "format1_srr.json").read_text(encoding="utf-8")
    doc = from_json(text)  # validates, including the id against the content
    assert doc["format"] == FORMAT and doc["id"] == json.loads(text)["id"] == content_id(doc)
    result = audit_document(doc)
    assert result.passed and result.notion == "rldp"
    rebuilt = build_document(
        method=doc["method"],
        matrix=doc["matrix"],
        alphabet=alphabet(doc),
        public_distribution=doc["public_distribution"],
        privacy=doc["privacy"],
        extra={k: doc[k] for k in ("parameters", "audit", "utility", "design")},
    )
    assert rebuilt["id"] == doc["id"]


def test_several_sensitive_attributes_form_a_product() -> None:
    alpha = Alphabet([SEX, RACE], [REL])
    assert alpha.n_sensitive == 6 and alpha.n_released == 3 and alpha.size == 18 and not alpha.latent
    assert alpha.names == ("sex", "race", "relationship")
    assert alpha.sensitive.name == "sex,race" and alpha.sensitive.values[1] == "Female|Other"
    assert alpha.encode_one({"sex": "Male", "race": "Black", "relationship": "Wife"}) == (1 * 3 + 0) * 3 + 2
    doc = build_document(
        method="grr", matrix=_grr(18, 3.0), alphabet=alpha, public_distribution=_joint((6, 3)), privacy=_rldp(3.0, 0.0)
    )
    assert doc["format"] == FORMAT_2
    assert doc["sensitive"] == {"attributes": [SEX.to_dict(), RACE.to_dict()]}
    again = from_json(to_json(doc))
    assert alphabet(again) == alpha and again["id"] == doc["id"]
    assert audit_document(again).passed


def test_a_latent_secret_is_not_an_input() -> None:
    alpha = Alphabet(SEX, [RACE, REL], latent=True)
    assert alpha.size == 9 and alpha.shape == (2, 9) and alpha.names == ("race", "relationship")
    # The mechanism reads U only: S may be absent from the records it privatises.
    assert alpha.encode([{"race": "White", "relationship": "Wife"}]).tolist() == [8]
    assert alpha.encode_joint([{"sex": "Male", "race": "White", "relationship": "Wife"}]).tolist() == [17]
    p = _joint((2, 9), seed=3)
    doc = build_document(
        method="grr", matrix=_grr(9, 1.0), alphabet=alpha, public_distribution=p, privacy=_rldp(1.0, 0.0)
    )
    assert doc["format"] == FORMAT_2 and doc["sensitive"]["released"] is False
    assert np.asarray(doc["matrix"]).shape == (9, 9)
    result = audit_document(from_json(to_json(doc)))
    # Radius 0: the audit is exactly ε* at P̂, P(y|s) = Σ_u Q(y|u) P̂(u|s), computed by hand here.
    cond = p / p.sum(axis=1, keepdims=True)
    given = _grr(9, 1.0) @ cond.T  # (y, s)
    by_hand = float(np.max(np.log(given[:, :, None] / given[:, None, :])))
    assert result.passed and result.epsilon == pytest.approx(by_hand, abs=1e-10)
    assert realised_epsilon(mechanism_matrix(doc), p) == pytest.approx(by_hand, abs=1e-10)
    # GRR on U at ε is ε-LDP w.r.t. U, so S leaks less than ε whatever the distribution.
    assert by_hand < 1.0


def test_latent_audit_equals_the_audit_of_the_repeated_matrix() -> None:
    uset = UncertaintySet(_joint((3, 4), seed=5), 0.01)
    q = np.random.default_rng(7).dirichlet(np.ones(5), size=4).T  # 5 outputs × 4 inputs (U)
    assert rldp_epsilon(q, uset) == rldp_epsilon(np.tile(q, (1, 3)), uset)


def test_format_1_cannot_claim_a_latent_or_product_secret() -> None:
    doc = build_document(
        method="grr",
        matrix=_grr(3, 1.0),
        alphabet=Alphabet(SEX, [RACE], latent=True),
        public_distribution=_joint((2, 3)),
        privacy=_rldp(1.0, 0.0),
    )
    old = {**copy.deepcopy(doc), "format": FORMAT}
    old["id"] = content_id(old)
    with pytest.raises(DocumentError, match="need format 'rldp.mechanism/2'"):
        validate_document(old)


def test_the_registry_refuses_an_unknown_notion() -> None:
    doc = from_json((DATA / "format1_srr.json").read_text(encoding="utf-8"))
    doc["privacy"] = {"notion": "telepathy", "epsilon": 1.0}
    doc["id"] = content_id(doc)
    with pytest.raises(UnknownNotion, match="unknown privacy notion 'telepathy'; this version audits 'alip', ") as info:
        audit_document(doc)
    assert str(info.value).endswith(", ".join(repr(name) for name in notions()))
    assert {"alip", "distp", "ldp", "lip", "rldp"} <= set(notions())
    assert {"rldp", "ldp"} <= set(notions()) and notion_audit("rldp").name == "rldp"
