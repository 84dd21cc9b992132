"""`rldp design` with several sensitive attributes, and with a latent one, end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import design_args, run_cli

from rldp.shared.audit import audit_document
from rldp.shared.document import FORMAT_2, alphabet, mechanism_matrix, read_document


@pytest.mark.slow
def test_a_product_secret_designs_and_audits(adult_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sex-race.json"
    proc = run_cli(
        "design",
        adult_csv,
        "--sensitive",
        "sex,race",
        "--released",
        "relationship",
        "--epsilon",
        "1",
        "--method",
        "srr",
        "--out",
        out,
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = read_document(out)
    alpha = alphabet(doc)
    assert doc["format"] == FORMAT_2 and [a.name for a in alpha.sensitive_attributes] == ["sex", "race"]
    assert alpha.n_sensitive == 10 and alpha.n_released == 6 and mechanism_matrix(doc).shape[1] == 60
    assert audit_document(doc).passed and json.loads(proc.stdout)["epsilon_audited"] <= 1 + 1e-9
    audit = run_cli("audit", out)
    assert audit.returncode == 0 and "PASS" in audit.stdout


@pytest.mark.slow
def test_a_latent_secret_designs_audits_and_evaluates(adult_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "latent.json"
    proc = run_cli(*design_args(adult_csv, out, method="grr", released="relationship"), "--latent")
    assert proc.returncode == 0, proc.stderr
    doc = read_document(out)
    assert doc["sensitive"]["released"] is False
    assert mechanism_matrix(doc).shape == (6, 6)  # GRR on relationship only; sex is never read
    result = audit_document(doc)
    assert result.passed and result.epsilon <= 1.0
    evaluated = run_cli("evaluate", out, "--json")
    assert evaluated.returncode == 0, evaluated.stderr
    record = json.loads(evaluated.stdout)
    assert np.isclose(record["epsilon_ldp"], 1.0) and 0 < record["nmi"] < 1


@pytest.mark.slow
def test_a_latent_secret_refuses_methods_that_read_it(adult_csv: Path, tmp_path: Path) -> None:
    proc = run_cli(*design_args(adult_csv, tmp_path / "x.json", method="polyopt", released="relationship"), "--latent")
    assert proc.returncode == 2
    assert "latent" in proc.stderr and "grr" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
