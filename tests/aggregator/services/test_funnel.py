"""The service publishes funnel/lift documents (lip, alip, srlip, ldp w.r.t. S) only when their exact audit passes."""

from __future__ import annotations

import numpy as np
import pytest
from rldp_live import ADMIN, in_process_app

from rldp.shared.audit import lip_epsilons, srlip_leakage
from rldp.shared.document import build_document
from rldp.shared.records import Alphabet, Attribute

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
SIZE = Attribute("size", ("S", "L"))
P_HAT = np.array([[0.05, 0.1, 0.1, 0.05, 0.05, 0.1], [0.1, 0.05, 0.1, 0.1, 0.15, 0.05]])
ALPHABET = Alphabet(SEX, [COLOUR, SIZE], latent=True)


def rr(k: int, keep: float) -> np.ndarray:
    q = np.full((k, k), (1 - keep) / (k - 1))
    np.fill_diagonal(q, keep)
    return q


Q = rr(6, 0.4)


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def doc(privacy: dict, tag: str) -> dict:
    return build_document(
        method="grr", matrix=Q, alphabet=ALPHABET, public_distribution=P_HAT, privacy=privacy, extra={"test": tag}
    )


def test_passing_documents_are_published_and_leaky_ones_refused(http) -> None:
    lower, upper = lip_epsilons(Q, P_HAT)
    eps = max(lower, upper)
    unc = {"order": 2.0, "radius": 0.0}
    srlip = srlip_leakage(Q, P_HAT, (3, 2)).epsilon
    good = [
        {"notion": "lip", "epsilon": eps + 1e-6, "uncertainty": unc},
        {
            "notion": "alip",
            "epsilon": max(lower, upper) + 1e-6,
            "epsilon_lower": lower + 1e-6,
            "epsilon_upper": upper + 1e-6,
            "uncertainty": unc,
        },
        {"notion": "srlip", "epsilon": srlip + 1e-6, "uncertainty": unc},
        {"notion": "ldp", "epsilon": eps * 2 + 1e-6, "uncertainty": unc},
    ]
    for privacy in good:
        resp = http.post("/v1/mechanisms", json=doc(privacy, "good"), headers=ADMIN)
        assert resp.status_code == 201, resp.json
    leaky = [
        {"notion": "lip", "epsilon": eps * 0.9, "uncertainty": unc},
        {
            "notion": "alip",
            "epsilon": lower + 1e-6,
            "epsilon_lower": lower + 1e-6,
            "epsilon_upper": upper * 0.9,
            "uncertainty": unc,
        },
        {"notion": "srlip", "epsilon": srlip * 0.95, "uncertainty": unc},
        {"notion": "lip", "epsilon": eps + 1e-6, "uncertainty": {"order": 2.0, "radius": 0.05}},  # not robust
    ]
    for privacy in leaky:
        resp = http.post("/v1/mechanisms", json=doc(privacy, "leaky"), headers=ADMIN)
        assert resp.status_code == 422, resp.json
        assert "audit" in resp.json["type"] and "exceeds the claimed" in resp.json["detail"]
