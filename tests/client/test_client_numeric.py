"""The client bins numbers when it privatises (issue 38): a numeric attribute's edges come from the document,
numbers (ints, floats, decimal strings, out of range) map to their bin in one vectorised pass, and NaN,
infinities, empty cells and text are refused before anything is sampled."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.client import Mechanism
from rldp.shared.attributes import Attribute
from rldp.shared.document import build_document
from rldp.shared.errors import RecordError
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet

ALPHA = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute.binned("age", NumericSpec((17, 25, 40, 90)))])


def _mechanism() -> Mechanism:
    # the report is the age's bin itself (Q reads U only); with P̂ uniform it reveals nothing about sex
    q = np.tile(np.eye(3), (1, 2))
    doc = build_document(
        method="test-identity-on-u",
        matrix=q,
        alphabet=ALPHA,
        public_distribution=np.full((2, 3), 1 / 6),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2.0, "radius": 0.0}},
    )
    return Mechanism.from_document(doc)


def test_privatize_bins_numbers() -> None:
    mech = _mechanism()
    ages = [16, 17, 24.9, 25, "40", "2.5e1", 1e9, np.float32(39.5)]
    y = mech.privatize({"sex": ["Male"] * len(ages), "age": ages})
    assert y.tolist() == [0, 0, 0, 1, 2, 1, 2, 1]
    assert mech.privatize_one({"sex": "Female", "age": 89}) == 2
    assert mech.privatize({"sex": np.array(["Male"] * 3), "age": np.array([20, 30, 50])}).tolist() == [0, 1, 2]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "", "n/a", " 30", None])
def test_privatize_refuses_what_is_not_a_number(bad: object) -> None:
    with pytest.raises(RecordError, match="age"):
        _mechanism().privatize({"sex": ["Male", "Female"], "age": [30, bad]})
