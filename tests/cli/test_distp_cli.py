"""``rldp design --notion distp`` (the coupling mechanism) and ``rldp evaluate`` on distp documents.

Bad input gets one line naming the field (exit 2, no traceback); a designed document passes
``rldp audit`` (the registered distp audit) and ``rldp evaluate`` reports δ at ε, the divergence
DistP measures, XDistP w.r.t. the Earth mover's distance and the expected loss.
"""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error, design_args
from cli_helpers import run_cli as run
from helpers import adult_path

RELATIONSHIPS = 6  # |U| for U = relationship on Adult


def _design(public, out, *extra: object):
    return run(*design_args(public, out, method="coupling", released="relationship"), *extra)


@pytest.fixture(scope="module")
def coupling_doc(adult_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("distp") / "coupling.json"
    proc = _design(adult_csv, out, "--notion", "distp", "--delta", "0.001", "--json")
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


@pytest.mark.slow
def test_design_prints_the_claim_the_audit_and_the_coupling(coupling_doc):
    out, record = coupling_doc
    assert record["notion"] == "distp" and record["method"] == "coupling"
    assert record["epsilon"] == 1.0 and record["delta"] == 0.001
    assert record["delta_audited"] <= 0.001 + 1e-9 and record["delta_at_p_hat"] <= 1e-12
    assert len(record["target"]) == RELATIONSHIPS and abs(sum(record["target"]) - 1) < 1e-9
    assert record["expected_loss"] > 0 and 0 <= record["mix"] <= 1
    doc = json.loads(out.read_text())
    assert doc["privacy"]["notion"] == "distp" and doc["privacy"]["delta"] == 0.001
    assert doc["parameters"]["cost"] == "hamming" and doc["id"] == record["id"]  # the default: categories
    assert doc["parameters"]["target_chosen_by"] == "released_information" and 0 < record["released_nmi"] < 1
    audit = run("audit", out, "--json")
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)["notion"] == "distp"


@pytest.mark.slow
def test_evaluate_reports_delta_divergences_xdistp_and_loss(coupling_doc):
    out, _ = coupling_doc
    proc = run("evaluate", out, "--data", adult_path("adult.test.csv.gz"), "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["notion"] == "distp" and record["n"] == 16281
    assert 0 <= record["delta_at_epsilon"] <= 1 and record["epsilon_at_delta"] is not None
    assert set(record["divergence_distp"]) == {"max", "kl", "reverse_kl", "total_variation", "chi2", "hellinger"}
    assert set(record["xdistp_emd"]) == set(record["divergence_distp"])
    assert record["divergence_distp"]["max"] > 0  # adult.test is not P̂: something leaks, a little
    assert record["expected_loss"] > 0 and record["cost"] == "hamming"
    public = json.loads(run("evaluate", out, "--json").stdout)
    assert public["delta_at_epsilon"] <= 1e-12 and public["divergence_distp"]["max"] <= 1e-9  # exact at P̂
    text = run("evaluate", out, "--cost", "absolute")
    assert text.returncode == 0 and "XDistP w.r.t. EMD (absolute cost)" in text.stdout


@pytest.mark.slow
def test_a_cost_matrix_from_a_csv(adult_csv, tmp_path):
    cost = tmp_path / "cost.csv"
    cost.write_text("\n".join(",".join("0" if i == j else "2" for j in range(6)) for i in range(6)) + "\n")
    out = tmp_path / "m.json"
    proc = _design(adult_csv, out, "--notion", "distp", "--radius", "0", "--cost", cost, "--target", "marginal")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["parameters"]["cost"][0] == [0.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    assert doc["parameters"]["target_rule"] == "marginal" and doc["audit"]["extra"]["scope"] == "at P̂ only"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        ((), ["--method 'coupling' does not design for --notion 'rldp'", "distp"]),
        (("--notion", "distp", "--target", "0.5,0.5"), ["target has 2 values", "released alphabet U"]),
        (("--notion", "distp", "--target", "0.5,0.5,0,0,0,0.1"), ["target must sum to 1"]),
        (("--notion", "distp", "--target", "median"), ["argument --target", "barycenter, marginal, uniform"]),
        (("--notion", "distp", "--delta", "1"), ["argument --delta", "[0, 1)"]),
        (("--notion", "distp", "--delta", "-0.5"), ["argument --delta", "[0, 1)"]),
        (("--notion", "distp", "--latent"), ["'coupling' needs the sensitive attribute as an input"]),
        (("--notion", "distp", "--cost", "euclid.csv"), ["no such file: euclid.csv"]),
        (("--notion", "rldp", "--delta", "0.1"), ["--delta applies to --notion distp only"]),
    ],
)
def test_bad_input_gets_one_line_naming_the_field(adult_csv, tmp_path, extra, needles):
    assert_one_line_error(_design(adult_csv, tmp_path / "x.json", *extra), *needles)


@pytest.mark.slow
def test_bad_epsilon_costs_and_methods(adult_csv, tmp_path):
    out = tmp_path / "x.json"
    negative = tmp_path / "neg.csv"
    negative.write_text("\n".join(",".join("-1" if (i, j) == (2, 3) else "1" for j in range(6)) for i in range(6)))
    assert_one_line_error(_design(adult_csv, out, "--notion", "distp", "--cost", negative), "cost[2][3] = -1", "≥ 0")
    words = tmp_path / "words.csv"
    words.write_text("a,b\nc,d\n")
    assert_one_line_error(_design(adult_csv, out, "--notion", "distp", "--cost", words), "--cost", "row 1")
    square = tmp_path / "square.csv"
    square.write_text("0,1\n1,0\n")
    assert_one_line_error(
        _design(adult_csv, out, "--notion", "distp", "--cost", square), "cost matrix has shape (2, 2)"
    )
    bad_eps = run(*design_args(adult_csv, out, method="coupling", epsilon="-1"), "--notion", "distp")
    assert_one_line_error(bad_eps, "epsilon must be a finite number > 0")
    nr = run(*design_args(adult_csv, out, method="nr"), "--notion", "distp")
    assert_one_line_error(nr, "--method 'nr' does not design for --notion 'distp'")
    grr = run(*design_args(adult_csv, out, method="grr"), "--cost", "hamming")
    assert_one_line_error(grr, "--cost applies to --method coupling only")
    rldp_doc = tmp_path / "grr.json"
    assert run(*design_args(adult_csv, rldp_doc, method="grr")).returncode == 0
    assert_one_line_error(run("evaluate", rldp_doc, "--cost", "hamming"), "--cost applies to distp documents")


@pytest.mark.slow
def test_design_states_the_distp_claim_by_its_delta(tmp_path):
    # Issue 27 D13: "epsilon claimed 1, audited 2.57 at delta = 0 (pass)" read as a passed ε.
    public = tmp_path / "p.csv"
    public.write_text("sex,race\n" + "Male,White\nFemale,Black\nMale,Other\nFemale,White\n" * 50)
    proc = run(*design_args(public, tmp_path / "d.json", method="coupling"), "--notion", "distp", "--delta", "0.1")
    assert proc.returncode == 0, proc.stderr
    claim = next(line for line in proc.stdout.splitlines() if line.strip().startswith("claim"))
    assert "distp (eps, delta) = (1, 0.1); audited delta = " in claim and "<= claimed delta = 0.1" in claim, claim
    assert "audited eps" not in claim
