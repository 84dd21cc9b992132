"""A pilot's box as a document states it: what reading refuses (the TypeScript SDK gives the same messages,
conformance/cases/pilot.json), and the marginal set F_S of a loose box the LIP/ALIP audits use."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rldp.shared.audit.secret import lip_epsilons, robust_lip_epsilons
from rldp.shared.box_bounds import check_box
from rldp.shared.document import build_document, content_id, validate_document
from rldp.shared.errors import DocumentError, ValidationError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

ALPHABET = Alphabet(Attribute("sex", ("F", "M")), [Attribute("colour", ("blue", "green", "red"))])
P_HAT = np.array([[0.05, 0.15, 0.3], [0.04, 0.16, 0.3]])
LOWER = [[0.01, 0.1, 0.2], [0.01, 0.1, 0.2]]
UPPER = [[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]]  # each row sums to 1.0: both rows' upper sums reach 1


def _document() -> dict:
    """A small rldp document over a ball (its box is what each test sets)."""
    return build_document(
        method="grr",
        matrix=np.full((1, 6), 1.0),
        alphabet=ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2.0, "radius": 0.1}},
    )


@pytest.mark.parametrize("leaf", ["0.01", True, None, {"v": 0.01}])
def test_a_box_leaf_that_is_no_number_is_refused(leaf):
    # Why: numpy reads "0.01" and True as numbers; a document must say numbers.
    lower = json.loads(json.dumps(LOWER))
    lower[0][0] = leaf
    with pytest.raises(ValidationError, match=r"^box\.lower must be a 2×3 array of numbers$"):
        check_box(lower, UPPER, (2, 3))


def test_an_integer_too_large_for_a_float_is_out_of_range_not_a_crash():
    upper = json.loads(json.dumps(UPPER))
    upper[1][2] = 10**400
    with pytest.raises(ValidationError, match=r"^box\.upper must hold finite numbers in \[0, 1\]$"):
        check_box(LOWER, upper, (2, 3))


def test_the_box_messages_name_what_was_given():
    def refusal(box):
        doc = _document()
        doc["privacy"]["uncertainty"]["box"] = box
        doc["id"] = content_id(doc)
        with pytest.raises(DocumentError) as info:
            validate_document(doc)
        return str(info.value)

    head = "privacy.uncertainty.box must be an object with exactly the fields 'lower' and 'upper' (|S| × |U| arrays of numbers), got "
    assert refusal([[0.1]]) == head + "a value of type list"
    assert (
        refusal({"upper": UPPER, "lower": LOWER, "z": 1, "a": 2})
        == head + "an object with the fields 'a', 'lower', 'upper', 'z'"
    )
    assert (
        refusal({str(i): 0 for i in range(9)}) == head + "an object with the fields '0', '1', '2', '3', '4', '5', ..."
    )
    assert refusal({"lower": [[0.01, 0.1, 0.1]] * 2, "upper": [[0.15] * 3] * 2}) == (
        "privacy.uncertainty.box must meet the simplex: Σ lower ≤ 1 ≤ Σ upper (±1e-9); got Σ lower = 0.42, Σ upper = 0.9"
    )


def test_a_notion_rldp_does_not_know_with_an_uncertainty_list_is_read_not_a_crash():
    doc = _document()
    doc["privacy"] = {"notion": "future-notion", "epsilon": 1.0, "uncertainty": [1, 2]}
    doc["id"] = content_id(doc)
    assert validate_document(doc)["privacy"]["uncertainty"] == [1, 2]


def test_the_marginal_set_of_a_loose_box_caps_its_row_sums_at_one():
    """Upper row sums above 1 (a box from few pilot reports): F_S's box is capped at 1, not refused (the LIP
    audit raised "box.upper must hold finite numbers in [0, 1]" on every such design)."""
    upper = np.array([[0.3, 0.5, 0.6], [0.2, 0.3, 0.5]])  # row sums 1.4 and 1.0
    uset = UncertaintySet(P_HAT, 0.05, 2.0, (np.array(LOWER), upper))
    marginal = uset.marginal_set()
    assert marginal.box is not None
    np.testing.assert_array_equal(marginal.box[1], [[1.0, 1.0]])
    np.testing.assert_allclose(marginal.box[0], [[0.31, 0.31]])
    q = np.array([[0.6, 0.3, 0.2, 0.4, 0.1, 0.2], [0.4, 0.7, 0.8, 0.6, 0.9, 0.8]])
    lower, upper_eps = robust_lip_epsilons(q, uset)
    point = lip_epsilons(q, P_HAT)
    ball = robust_lip_epsilons(q, UncertaintySet(P_HAT, 0.05, 2.0))
    assert point[0] <= lower <= ball[0] + 1e-12 and point[1] <= upper_eps <= ball[1] + 1e-12
