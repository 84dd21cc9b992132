"""Mechanism verification (id, audit, ε ceiling) and privatisation of every record form."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.client import Mechanism, MechanismRejected
from rldp.shared.records import RecordError, Table

from service.rldp_live import make_document, tampered


@pytest.fixture(scope="module")
def mech() -> Mechanism:
    return Mechanism.from_document(make_document("client-mech"))


def test_verified_mechanism_properties(mech):
    assert mech.method == "grr" and mech.epsilon == 1.0 and abs(mech.epsilon_audited - 1.0) < 1e-9
    assert (mech.outputs, mech.size, mech.notion) == (6, 6, "rldp")
    assert mech.id[:12] in repr(mech)


def test_tampered_document_is_refused():
    with pytest.raises(MechanismRejected, match="id mismatch"):
        Mechanism.from_document(tampered(make_document()))


def test_leaky_document_is_refused():
    leaky = make_document(leak=1.7)  # correctly hashed, but its matrix leaks ε = 1.7 > 1
    with pytest.raises(MechanismRejected, match="privacy audit failed") as info:
        Mechanism.from_document(leaky)
    assert info.value.reasons and "exceeds the claimed 1" in info.value.reasons[0]


def test_epsilon_ceiling_and_expected_id():
    doc = make_document(epsilon=2.0)
    with pytest.raises(MechanismRejected, match="above the allowed maximum 1"):
        Mechanism.from_document(doc, max_epsilon=1.0)
    with pytest.raises(MechanismRejected, match="different mechanism"):
        Mechanism.from_document(doc, expected_id="0" * 64)
    with pytest.raises(MechanismRejected, match="invalid or tampered"):
        Mechanism.from_document({"id": "x"})


def test_every_record_form_gives_the_same_outputs(mech):
    records = [("Female", "red"), ("Male", "blue"), ("Male", "green")] * 50
    as_dicts = [{"sex": s, "colour": c, "other": 1} for s, c in records]
    as_columns = {"sex": [r[0] for r in records], "colour": [r[1] for r in records]}
    as_table = Table.from_columns(as_columns)
    outs = [mech.privatize(form, rng=np.random.default_rng(1)) for form in (records, as_dicts, as_columns, as_table)]
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    x = mech.alphabet.encode(records)
    np.testing.assert_array_equal(mech.privatize_indices(x, rng=np.random.default_rng(1)), outs[0])
    assert 0 <= mech.privatize_one({"sex": "Male", "colour": "red"}) < mech.outputs


@pytest.mark.parametrize("records, needles", [
    ([{"sex": "Femal", "colour": "red"}], ["'Femal'", "Female, Male"]),
    ([{"sex": "Male", "colour": "purple"}], ["'purple'", "blue, green, red"]),
    ([{"colour": "red"}], ["missing the sensitive attribute 'sex'"]),
    ([("Male",)], ["1 fields", "2 fields (sex, colour)"]),
    ([("Male", "red", "x")], ["3 fields"]),
])
def test_record_errors_name_the_value_and_the_allowed_ones(mech, records, needles):
    with pytest.raises(RecordError) as info:
        mech.privatize(records)
    for needle in needles:
        assert needle in str(info.value)
