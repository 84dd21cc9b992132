"""The rldp CLI (design / audit / evaluate): JSON output and one-line errors."""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error, design_args
from cli_helpers import run_cli as run
from helpers import adult_path


@pytest.fixture(scope="module")
def designed(adult_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "mech.json"
    proc = run(*design_args(adult_csv, out, method="ir-calibrated"), "--json")
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


@pytest.mark.slow
def test_design_json_line(designed):
    out, record = designed
    assert set(record) == {
        "id",
        "method",
        "epsilon",
        "epsilon_audited",
        "mutual_information",
        "nmi",
        "outputs",
        "seconds",
    }
    assert record["method"] == "ir-calibrated" and record["epsilon"] == 1.0
    assert record["epsilon_audited"] <= 1.0 + 1e-9
    assert 0 < record["nmi"] < 1 and record["outputs"] == 10
    assert json.loads(out.read_text())["id"] == record["id"]


@pytest.mark.slow
def test_audit_pass_and_fail(designed, tmp_path):
    out, _ = designed
    proc = run("audit", out, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["passed"] is True
    # Claim a smaller epsilon than the mechanism gives: re-id the document and it must fail.
    from rldp.shared.document import alphabet, build_document, mechanism_matrix, public_distribution

    doc = json.loads(out.read_text())
    forged = build_document(
        method=doc["method"],
        matrix=mechanism_matrix(doc),
        alphabet=alphabet(doc),
        public_distribution=public_distribution(doc),
        privacy=dict(doc["privacy"], epsilon=0.5),
    )
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(forged))
    proc = run("audit", path)
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout and "exceeds the claimed" in proc.stdout


@pytest.mark.slow
def test_evaluate_under_users_distribution(designed):
    out, _ = designed
    proc = run("evaluate", out, "--data", adult_path("adult.test.csv.gz"), "--json")
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["n"] == 16281 and 0 < rec["nmi"] < 1
    assert rec["epsilon_realised"] is not None and rec["epsilon_realised"] <= 1.0 + 1e-9


@pytest.mark.slow
def test_bad_inputs_get_one_clear_line(adult_csv, tmp_path):
    out = tmp_path / "m.json"
    assert_one_line_error(
        run(*design_args(adult_csv, out, method="grr", sensitive="sexx")), "no column 'sexx'", "available:"
    )
    assert_one_line_error(run(*design_args(adult_csv, out, method="magic")), "invalid choice", "magic")
    assert_one_line_error(
        run(*design_args(adult_csv, out, method="grr", epsilon="0")), "epsilon must be a finite number > 0"
    )
    assert_one_line_error(run(*design_args(adult_csv, out, method="grr"), "--beta", "1.2"), "beta")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert_one_line_error(run(*design_args(empty, out, method="grr")), "empty")
    one = tmp_path / "one.csv"
    one.write_text("sex,race\nMale,White\nMale,Black\n")
    assert_one_line_error(run(*design_args(one, out, method="grr")), "only one value")
    assert_one_line_error(run("audit", tmp_path / "missing.json"), "missing.json")


@pytest.mark.slow
def test_non_stochastic_matrix_is_refused(designed, tmp_path):
    out, _ = designed
    doc = json.loads(out.read_text())
    doc["matrix"][0][0] *= 0.5  # the column no longer sums to 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert_one_line_error(run("audit", bad), "sum")


@pytest.mark.slow
def test_warm_start_seeds_a_design_and_refuses_a_foreign_alphabet(adult_csv, tmp_path):
    low, high = tmp_path / "low.json", tmp_path / "high.json"
    solver = ("--solver", "cg", "--time-budget", "2", "--json")
    first = run(*design_args(adult_csv, low, method="polyopt", epsilon="0.5"), *solver)
    assert first.returncode == 0, first.stderr
    second = run(*design_args(adult_csv, high, method="polyopt", epsilon="0.75"), *solver, "--warm-start", low)
    assert second.returncode == 0, second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    # Γ grows with ε, so the seeded design is never below the one it was seeded with.
    assert b["mutual_information"] >= a["mutual_information"] * (1 - 1e-7)
    assert b["epsilon_audited"] <= 0.75 + 1e-9
    swapped = run(
        *design_args(adult_csv, tmp_path / "x.json", method="polyopt", sensitive="race", released="sex"),
        "--warm-start",
        low,
    )
    assert_one_line_error(swapped, "--warm-start", "alphabet")
    other = run(*design_args(adult_csv, tmp_path / "y.json", method="grr"), "--warm-start", low)
    assert_one_line_error(other, "--warm-start applies to", "not to 'grr'")
