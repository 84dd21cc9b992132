"""Each notion's claim and audit verdict in its own terms (rldp.shared.claims, issue 27 D13)."""

from __future__ import annotations

import math

from rldp.shared.claims import ascii_text, audit_text, claim_fields, claim_text, record_audited_text


def test_claims_in_each_notions_terms() -> None:
    assert claim_text({"notion": "rldp", "epsilon": 1.0}) == "ε = 1"
    assert claim_text({"notion": "distp", "epsilon": 1.0, "delta": 0.05}) == "(ε, δ) = (1, 0.05)"
    assert claim_text({"notion": "distp", "epsilon": 1.0}) == "(ε, δ) = (1, 0)"  # δ absent: 0
    alip = {"notion": "alip", "epsilon": 1.2, "epsilon_lower": 0.5, "epsilon_upper": 1.2}
    assert claim_text(alip) == "(ε_l, ε_u) = (0.5, 1.2)"
    assert claim_fields(alip) == {"notion": "alip", "epsilon": 1.2, "epsilon_lower": 0.5, "epsilon_upper": 1.2}


def test_verdicts_compare_the_quantity_the_notion_claims() -> None:
    distp = {"notion": "distp", "epsilon": 2.5677, "claimed": 1.0, "passed": True}
    distp["extra"] = {"delta": 0.031, "delta_claimed": 0.05}
    text = audit_text(distp)
    assert text == "Passed: audited δ = 0.031 ≤ claimed δ = 0.05 at the claimed ε = 1 (ε at δ = 0: 2.568)"
    assert "audited ε" not in text
    failed = {"notion": "rldp", "epsilon": 1.3, "claimed": 1.0, "passed": False}
    assert audit_text(failed) == "Failed: audited ε = 1.3 > claimed ε = 1"
    # Failed on something else (a confidence radius): the numbers still read ≤.
    radius = {"notion": "rldp", "epsilon": 0.9, "claimed": 1.0, "passed": False}
    assert audit_text(radius, verdict=False) == "audited ε = 0.9 ≤ claimed ε = 1"
    alip = {"notion": "alip", "epsilon": 1.1, "claimed": 1.2, "passed": True}
    alip["extra"] = {
        "epsilon_lower": 0.4,
        "epsilon_upper": 1.1,
        "epsilon_lower_claimed": 0.5,
        "epsilon_upper_claimed": 1.2,
    }
    assert audit_text(alip) == "Passed: audited (ε_l, ε_u) = (0.4, 1.1) against claimed (0.5, 1.2)"
    assert record_audited_text("distp", 2.5677) == "2.568 at δ = 0" and record_audited_text("rldp", math.inf) == "∞"
    assert ascii_text("(ε, δ) ≤ ∞") == "(eps, delta) <= inf"
