"""A new notion is one object: registered with its audit, every surface picks it up with no other change.

The dummy notion below lives in a temporary package outside rldp (its object and a trivial audit:
(ε, F)-RLDP's, under its own name) and is designed as rldp is (by its designers). A fresh interpreter registers it
before importing the rest, then checks what a person meets: ``rldp design --notion`` choices, the design
request's validation and the HTTP schema's enum, the dashboard's form, the claim and audit text, the drift
watch, and a GRR design claiming it that its audit passes. (Adding one for real: its module in
``shared/notions/``, its audit in ``shared/audit/`` and, if no existing designer serves it, a designer —
CONTRIBUTING.md, "Adding a notion".)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DUMMY = """
import dataclasses

from rldp.shared.notions.base import Notion


class DummyAudit:
    name = "dummy"
    supports_per_report = False

    def audit_document(self, doc):
        from rldp.shared.audit.rldp import RldpAudit

        return dataclasses.replace(RldpAudit().audit_document(doc), notion="dummy")


class Dummy(Notion):
    def audited_text(self, epsilon_audited):
        return f"dummy {epsilon_audited:.3g}"


DUMMY = Dummy(
    "dummy",
    "ε-DUMMY",
    "LZG24, Def 1",
    ("epsilon",),
    ("notion", "epsilon", "uncertainty"),
    help="epsilon-DUMMY: a notion made for a test",
    audit="dummy_notion.notion:DummyAudit",
    recommended="grr",
    rank=60,
    designed_as="rldp",
)
"""

CHECK = """
import argparse, json, sys

import numpy as np

from rldp.shared import notions
from dummy_notion.notion import DUMMY

notions.register(DUMMY)  # before anything reads the registry

from rldp.aggregator.cli.design_flags import add_design_flags
from rldp.aggregator.design import DesignRequest, design, validate_request
from rldp.aggregator.estimate.drift import drift_scope
from rldp.aggregator.http.schemas import SCHEMAS
from rldp.aggregator.services.dashboard import NOTION_CHOICES
from rldp.shared.audit import audit_document
from rldp.shared.claims import audit_text, claim_text, record_audited_text
from rldp.shared.records import Alphabet

parser = argparse.ArgumentParser()
add_design_flags(parser)
choices = next(a.choices for a in parser._actions if "--notion" in a.option_strings)
request = validate_request(DesignRequest(notion="dummy", method="grr", epsilon=1.0, n=1000))
form = {c.name: [list(c.methods), c.recommended, list(c.claim)] for c in NOTION_CHOICES}
alphabet = Alphabet.from_dict(
    {"sensitive": {"name": "s", "values": ["a", "b"]}, "released": [{"name": "u", "values": ["x", "y", "z"]}]}
)
p_hat = np.array([[0.05, 0.15, 0.10], [0.30, 0.25, 0.15]])
doc = design("grr", alphabet=alphabet, public_distribution=p_hat, epsilon=1.0, n=5000, notion="dummy")
result = audit_document(doc)
print(json.dumps({
    "cli": list(choices),
    "request": [request.notion, request.method],
    "schema": SCHEMAS["DesignRequest"]["properties"]["notion"]["enum"],
    "form": form.get("dummy"),
    "rldp_form": form["rldp"],
    "claim": claim_text(doc["privacy"]),
    "audit": audit_text(result.to_dict()),
    "stored": record_audited_text("dummy", 0.5),
    "privacy": doc["privacy"]["notion"],
    "drift": drift_scope(doc),
}))
"""


def test_a_registered_notion_reaches_every_surface(tmp_path: Path) -> None:
    package = tmp_path / "dummy_notion"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "notion.py").write_text(DUMMY, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen["cli"][-1] == "dummy" and seen["cli"][0] == "rldp"
    assert seen["request"] == ["dummy", "grr"]
    assert seen["schema"][-1] == "dummy"
    assert seen["form"] == [seen["rldp_form"][0], "grr", ["epsilon"]]  # rldp's designers, its own recommendation
    assert seen["privacy"] == "dummy" and seen["claim"] == "ε = 1"
    assert seen["audit"].startswith("Passed: audited ε = ") and seen["audit"].endswith("claimed ε = 1")
    assert seen["stored"] == "dummy 0.5"  # the notion's own reading of its stored number
    assert seen["drift"] is None  # its claim rests on F (uncertainty "required"): drift applies
