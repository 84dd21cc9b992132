"""``rldp design --notion ldp|lip|alip``: documents that pass ``rldp audit``, and one-line errors."""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error
from cli_helpers import run_cli as run

FUNNEL = ("--sensitive", "relationship", "--released", "occupation", "--latent", "--radius", "0")


def _design(public, out, *extra: object):
    return run("design", public, *FUNNEL, "--out", out, *extra)


def test_alip_watchdog_on_adult_passes_the_audit(adult_csv, tmp_path):
    out = tmp_path / "wd.json"
    proc = _design(
        adult_csv, out, "--notion", "alip", "--epsilon-lower", "1", "--epsilon-upper", "1", "--method", "watchdog"
    )
    assert proc.returncode == 0, proc.stderr
    assert "alip claimed (eps_l, eps_u) = (1, 1)" in proc.stdout and "at P̂ only (pass)" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["privacy"] == {
        "notion": "alip",
        "epsilon": 1.0,
        "epsilon_lower": 1.0,
        "epsilon_upper": 1.0,
        "uncertainty": doc["privacy"]["uncertainty"],
    }
    assert doc["privacy"]["uncertainty"]["radius"] == 0
    audit = run("audit", out, "--json")
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)["notion"] == "alip"


def test_lip_grr_json_record(adult_csv, tmp_path):
    proc = _design(adult_csv, tmp_path / "grr.json", "--notion", "lip", "--epsilon", "0.5", "--method", "grr", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["method"] == "grr" and record["epsilon"] == 0.5 and record["epsilon_audited"] <= 0.5 + 1e-9


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (
            ("--notion", "alip", "--epsilon-lower", "1", "--epsilon-upper", "1", "--method", "watchdog-paper"),
            ("watchdog-paper mechanism failed its audit", "1.568"),
        ),
        (("--notion", "lip", "--epsilon", "1", "--method", "cr"), ("method 'cr' needs the sensitive attribute",)),
        (("--notion", "alip", "--epsilon-lower", "1", "--method", "watchdog"), ("--epsilon-upper",)),
        (("--notion", "alip", "--epsilon", "1", "--method", "watchdog"), ("--epsilon-lower and --epsilon-upper",)),
        (("--notion", "lip", "--epsilon", "0", "--method", "watchdog"), ("epsilon", "> 0")),
        (("--notion", "lip", "--method", "watchdog"), ("--notion lip needs --epsilon",)),
        (("--notion", "ldp", "--epsilon", "1", "--method", "subset-rr"), ("methods for ldp", "optimal")),
        (("--notion", "lip", "--epsilon", "1", "--method", "oue"), ("oue has 2^|X| outputs",)),
        (("--notion", "lip", "--epsilon", "1", "--epsilon-upper", "2", "--method", "grr"), ("alip only",)),
    ],
)
def test_bad_requests_get_one_line(adult_csv, tmp_path, extra, needles):
    out = tmp_path / "x.json"
    proc = _design(adult_csv, out, *extra)
    assert_one_line_error(proc, *needles)
    assert not out.exists()
