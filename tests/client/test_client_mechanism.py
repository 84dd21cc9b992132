"""Mechanism verification (id, audit, ε ceiling) and privatisation of every record form."""

from __future__ import annotations

import numpy as np
import pytest
from documents import make_document, tampered

from rldp.client import Mechanism, MechanismRejected
from rldp.shared.document import build_document
from rldp.shared.errors import RecordError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import Table


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


@pytest.mark.parametrize(
    "records, needles",
    [
        ([{"sex": "Femal", "colour": "red"}], ["'Femal'", "Female, Male"]),
        ([{"sex": "Male", "colour": "purple"}], ["'purple'", "blue, green, red"]),
        ([{"colour": "red"}], ["missing the sensitive attribute 'sex'"]),
        ([("Male",)], ["1 fields", "2 fields (sex, colour)"]),
        ([("Male", "red", "x")], ["3 fields"]),
    ],
)
def test_record_errors_name_the_value_and_the_allowed_ones(mech, records, needles):
    with pytest.raises(RecordError) as info:
        mech.privatize(records)
    for needle in needles:
        assert needle in str(info.value)


def test_a_latent_secret_mechanism_privatises_records_without_it():
    # The privacy funnel: the mechanism reads only the released columns; S stays on the device
    # unread (and may be absent), and the client's audit still bounds what Y says about S.
    alpha = Alphabet(Attribute("sex", ("F", "M")), [Attribute("race", ("a", "b", "c"))], latent=True)
    e = np.exp(1.0)
    q = np.full((3, 3), 1 / (e + 2))
    np.fill_diagonal(q, e / (e + 2))
    doc = build_document(
        method="grr",
        matrix=q,
        alphabet=alpha,
        privacy={"notion": "ldp", "epsilon": 1.0},
        public_distribution=[[0.1, 0.2, 0.2], [0.2, 0.1, 0.2]],
    )
    mech = Mechanism.from_document(doc)
    assert mech.alphabet.latent and mech.size == 3 and abs(mech.epsilon_audited - 1.0) < 1e-9
    rng = np.random.default_rng(0)
    ys = mech.privatize([{"race": "c"}] * 20_000, rng=rng)
    # Output c is drawn with probability e/(e+2); tolerance 5 standard errors of 20,000 draws.
    p = e / (e + 2)
    assert abs(np.mean(ys == 2) - p) < 5 * np.sqrt(p * (1 - p) / 20_000)
