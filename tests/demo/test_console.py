"""The demo's console report: every figure it prints has a text form, an unbounded F's radius included."""

from __future__ import annotations

import math

from rldp.demo.run.config import DemoConfig
from rldp.demo.run.console import print_report, radius_text


def _summary(radius: float | None, switched_radius: float | None) -> dict:
    return {
        "labels": ["F|a", "M|a"],
        "truth": [0.5, 0.5],
        "public": [0.5, 0.5],
        "estimate": [0.45, 0.55],
        "ci95_low": [0.4, 0.5],
        "ci95_high": [0.5, 0.6],
        "mechanism": {
            "method": "polyopt",
            "outputs": 2,
            "id": "a" * 64,
            "epsilon": 1.0,
            "epsilon_audited": 0.99,
            "radius": radius,
            "nmi": 0.3,
        },
        "within_bound": True,
        "l1_error": 0.1,
        "l1_bound": 0.2,
        "l1_expected": 0.1,
        "grr": {"nmi": 0.2, "l1_error": 0.2},
        "accepted": 100,
        "upload_seconds": 1.0,
        "reports_per_second": 100.0,
        "numeric": None,
        "curves": [],
        "attack": None,
        "no_public_data": {
            "pilot": {"method": "grr", "reports": 100, "nmi": 0.1},
            "switched": True,
            "designed": {"method": "polyopt", "radius": switched_radius, "nmi": 0.3},
        },
    }


def test_an_unbounded_radius_reads_as_infinity(capsys) -> None:
    """A pilot's F with too few reports is unbounded (the document writes null): the report says ∞, where it
    raised TypeError on None (rldp demo --released age --quick, when the pilot switched)."""
    assert radius_text(None) == "∞" and radius_text(math.inf) == "∞" and radius_text(0.01234) == "0.0123"
    print_report(DemoConfig(), _summary(None, None))
    out = capsys.readouterr().out
    assert "(radius ∞ nats)" in out and "over the pilot's F (radius ∞)" in out
    print_report(DemoConfig(), _summary(0.05, 0.2))
    out = capsys.readouterr().out
    assert "(radius 0.05 nats)" in out and "(radius 0.2)" in out
