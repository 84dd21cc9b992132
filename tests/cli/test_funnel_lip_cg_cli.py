"""``rldp design --notion lip|alip --method optimal`` on Adult with S an input: X = (S, U) has 87 symbols,
beyond exact vertex enumeration, so column generation designs it; the document passes ``rldp audit``."""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error
from cli_helpers import run_cli as run

S_INPUT = ("--sensitive", "relationship", "--released", "occupation", "--radius", "0", "--method", "optimal")


@pytest.mark.slow
@pytest.mark.parametrize(
    "budget",
    [("--notion", "lip", "--epsilon", "1"), ("--notion", "alip", "--epsilon-lower", "2", "--epsilon-upper", "1")],
)
def test_optimal_lip_on_87_symbols(adult_csv, tmp_path, budget):
    out = tmp_path / "opt.json"
    proc = run("design", adult_csv, *S_INPUT, *budget, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["solver"] == "cg" and record["status"] == "converged"
    assert record["mutual_information"] <= record["upper_bound"] <= record["mutual_information"] + 1e-6
    doc = json.loads(out.read_text())
    assert len(doc["matrix"][0]) == 90  # every (s, u) cell, 87 with positive probability
    audit = run("audit", out, "--json")
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)["notion"] == budget[1]


@pytest.mark.slow
def test_human_summary_names_the_solver_and_bound(adult_csv, tmp_path):
    proc = run("design", adult_csv, *S_INPUT, "--notion", "lip", "--epsilon", "2", "--out", tmp_path / "o.json")
    assert proc.returncode == 0, proc.stderr
    assert "solver   cg" in proc.stdout and "lagrangian-exact-pricing" in proc.stdout


@pytest.mark.slow
def test_exact_solver_on_87_symbols_is_one_line(adult_csv, tmp_path):
    out = tmp_path / "x.json"
    proc = run("design", adult_csv, *S_INPUT, "--notion", "lip", "--epsilon", "1", "--solver", "exact", "--out", out)
    assert_one_line_error(proc, "limited to 24 input symbols", "this input has 87")
    assert not out.exists()
