"""The client re-runs the exact audit of a lip/alip document and refuses a leaky one."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.client import Mechanism, MechanismRejected
from rldp.shared.audit import lip_epsilons
from rldp.shared.document import build_document
from rldp.shared.records import Alphabet, Attribute

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
P_HAT = np.array([[0.1, 0.2, 0.15], [0.25, 0.1, 0.2]])
Q = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])


def document(privacy: dict) -> dict:
    alphabet = Alphabet(SEX, [COLOUR], latent=True)
    return build_document(method="grr", matrix=Q, alphabet=alphabet, public_distribution=P_HAT, privacy=privacy)


def test_a_lip_document_is_verified_and_privatises_records_without_s() -> None:
    lower, upper = lip_epsilons(Q, P_HAT)
    mech = Mechanism.from_document(
        document({"notion": "lip", "epsilon": max(lower, upper) + 1e-6, "uncertainty": {"order": 2.0, "radius": 0.0}})
    )
    assert mech.notion == "lip" and mech.audit.passed and mech.audit.extra["scope"] == "at P̂ only"
    ys = mech.privatize([{"colour": "red"}] * 50, rng=np.random.default_rng(3))
    assert len(ys) == 50 and set(np.unique(ys)) <= {0, 1, 2}


def test_a_leaky_lip_or_alip_document_is_refused() -> None:
    lower, upper = lip_epsilons(Q, P_HAT)
    unc = {"order": 2.0, "radius": 0.0}
    with pytest.raises(MechanismRejected, match="privacy audit failed") as info:
        Mechanism.from_document(document({"notion": "lip", "epsilon": max(lower, upper) * 0.9, "uncertainty": unc}))
    assert "LIP epsilon" in info.value.reasons[0]
    claim = {
        "notion": "alip",
        "epsilon": lower * 0.9,
        "epsilon_lower": lower * 0.9,
        "epsilon_upper": upper * 0.5,
        "uncertainty": unc,
    }
    with pytest.raises(MechanismRejected) as info:
        Mechanism.from_document(document(claim))
    assert len(info.value.reasons) == 2  # both sides leak
