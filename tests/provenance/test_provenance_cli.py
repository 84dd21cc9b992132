"""``rldp design`` records the provenance of P̂; ``rldp audit --public-data`` recomputes it and fails
(exit 1, one line naming what differs) on a document that misstates its public data."""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error, design_args, run_cli
from helpers import ADULT_COLUMNS, adult_path
from provenance.attacks import adult_counts, designed, inflated, shifted

from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import build_document, public_distribution, write_document
from rldp.shared.tables import read_csv


@pytest.fixture(scope="module")
def counts(adult_csv):
    return adult_counts(read_csv(adult_csv))


@pytest.fixture(scope="module")
def documents(counts, tmp_path_factory):
    """honest / inflated / shifted PolyOpt documents on disk."""
    folder = tmp_path_factory.mktemp("provenance-docs")
    out = {}
    for name, data in (("honest", counts), ("inflated", inflated(counts)), ("shifted", shifted(counts))):
        out[name] = folder / f"{name}.json"
        write_document(designed(data), out[name])
    return out


def _parts(doc):
    """build_document's arguments for a document's required fields (no provenance)."""
    return {
        "method": doc["method"],
        "matrix": doc["matrix"],
        "alphabet": doc_alphabet(doc),
        "public_distribution": public_distribution(doc),
        "privacy": doc["privacy"],
    }


def _mismatch_line(proc) -> str:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("  public data ")]
    assert len(lines) == 1, proc.stdout
    return lines[0]


@pytest.mark.slow
def test_design_records_where_p_hat_came_from(adult_csv, counts, tmp_path):
    out = tmp_path / "m.json"
    proc = run_cli(*design_args(adult_csv, out, method="srr"))
    assert proc.returncode == 0, proc.stderr
    prov = json.loads(out.read_text())["provenance"]
    assert prov == {
        "name": "adult.csv",
        "n": 32561,
        "columns": ["sex", "race"],
        "counts_sha256": counts.sha256,
        "policy": {"filter": "none", "missing": "as-value"},
    }
    assert f"counts sha256 {counts.sha256}" in proc.stdout
    named = tmp_path / "named.json"
    proc = run_cli(*design_args(adult_csv, named, method="srr"), "--public-name", "UCI Adult, adult.data (1996)")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(named.read_text())["provenance"]["name"] == "UCI Adult, adult.data (1996)"


@pytest.mark.slow
def test_audit_with_the_public_data_passes_the_honest_design(documents, adult_csv, counts):
    proc = run_cli("audit", documents["honest"], "--public-data", adult_csv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in _mismatch_line(proc) and counts.sha256 in _mismatch_line(proc)
    # The same data without a header row, given its column names, is the same table.
    proc = run_cli("audit", documents["honest"], "--public-data", adult_path(), "--names", ",".join(ADULT_COLUMNS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "attack, needles",
    [
        (
            "inflated",
            ["n: the document says 325610", "the data has 32561", "radius: the document's", "counts_sha256"],
        ),
        (
            "shifted",
            ["public_distribution[Female|White]: the document says", "the data gives 0.26541", "counts_sha256"],
        ),
    ],
)
def test_audit_with_the_public_data_catches_a_misstated_p_hat(documents, adult_csv, attack, needles):
    plain = run_cli("audit", documents[attack])
    assert plain.returncode == 0 and "PASS" in plain.stdout, plain.stdout  # the plain audit cannot tell
    proc = run_cli("audit", documents[attack], "--public-data", adult_csv)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = _mismatch_line(proc)
    assert "MISMATCH" in line
    for needle in needles:
        assert needle in line, line
    record = json.loads(run_cli("audit", documents[attack], "--public-data", adult_csv, "--json").stdout)
    assert record["passed"] is False and record["public_data"]["passed"] is False
    assert record["epsilon_audited"] <= 1.0 + 1e-9  # its own audit passes: only the data tells


@pytest.mark.slow
def test_a_document_without_provenance_is_said_so_and_still_compared(documents, adult_csv, tmp_path):
    with open(documents["honest"]) as fh:
        doc = json.load(fh)
    bare = build_document(**_parts(doc))  # as documents were before provenance
    path = tmp_path / "older.json"
    write_document(bare, path)
    proc = run_cli("audit", path)
    assert proc.returncode == 0 and "no provenance" in proc.stdout, proc.stdout
    proc = run_cli("audit", path, "--public-data", adult_csv)
    assert proc.returncode == 0 and "MATCH" in proc.stdout and "still compared" in proc.stdout, proc.stdout
    # The radius is still held to the data: one said to be 10x smaller fails.
    small = dict(bare, privacy={**bare["privacy"], "uncertainty": {"order": 2.0, "radius": 5e-5}})
    write_document(build_document(**_parts(small)), path)
    proc = run_cli("audit", path, "--public-data", adult_csv)
    assert proc.returncode == 1 and "radius: the document's 5e-05" in _mismatch_line(proc), proc.stdout


@pytest.mark.slow
def test_public_data_that_cannot_be_compared_is_one_clear_line(documents, adult_csv, tmp_path):
    lines = adult_csv.read_text().splitlines()
    no_sex = tmp_path / "no_sex.csv"
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if name != "sex"]
    no_sex.write_text("\n".join(",".join(line.split(",")[i] for i in keep) for line in lines) + "\n")
    proc = run_cli("audit", documents["honest"], "--public-data", no_sex)
    assert proc.returncode == 2
    assert_one_line_error(proc, "no column 'sex'", "sex, race")
    extra = tmp_path / "extra.csv"
    extra.write_text(adult_csv.read_text() + lines[1].replace("White", "Martian") + "\n")
    proc = run_cli("audit", documents["honest"], "--public-data", extra)
    assert proc.returncode == 2
    assert_one_line_error(proc, "outside the document's alphabet", "race: 'Martian'")


@pytest.mark.slow
def test_an_inconsistent_provenance_fails_the_plain_audit(documents, tmp_path):
    with open(documents["honest"]) as fh:
        doc = json.load(fh)
    forged = build_document(**_parts(doc), extra={"provenance": {**doc["provenance"], "n": 32562}})
    path = tmp_path / "forged.json"
    write_document(forged, path)
    proc = run_cli("audit", path)
    assert proc.returncode == 1 and "INCONSISTENT" in proc.stdout, proc.stdout
    assert "privacy.uncertainty.n is 32561 but provenance.n is 32562" in proc.stdout
