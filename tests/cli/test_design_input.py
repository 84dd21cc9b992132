"""``rldp design`` on awkward public CSVs: a headerless file, blank cells, another delimiter or
encoding, a continuous column, an ``--out`` into a missing folder. Each is one clear line (or a
warning) before any design work starts."""

from __future__ import annotations

import json

import pytest
from cli_helpers import assert_one_line_error, design_args
from cli_helpers import run_cli as run
from helpers import ADULT_COLUMNS, adult_path

from rldp.aggregator.cli.public_table import MAX_DESIGN_SYMBOLS
from rldp.shared.errors import TableError
from rldp.shared.tables import Table, blank_counts, header_looks_like_data, read_csv

SMALL = "sex,race\nMale,White\nFemale,Black\nMale,Black\nFemale,White\nMale,White\nFemale,White\n"


@pytest.mark.slow
def test_headerless_file_gets_a_hint_to_use_names(tmp_path):
    proc = run(*design_args(adult_path(), tmp_path / "m.json", method="grr"))
    assert_one_line_error(proc, "no column 'sex'", "looks like data", "--names")
    names = ",".join(ADULT_COLUMNS)
    proc = run(*design_args(adult_path(), tmp_path / "m.json", method="grr"), "--names", names, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outputs"] > 0


def test_header_detection():
    assert header_looks_like_data(Table.from_rows(["39", "Male"], [("40", "Female")]))
    assert header_looks_like_data(Table.from_rows(["Male", "White"], [("Male", "Black")]))
    assert not header_looks_like_data(Table.from_rows(["sex", "race"], [("Male", "Black")]))


def _blank_csv(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text(SMALL + "Male,\n,White\n")
    return path


@pytest.mark.slow
def test_blank_cells_warn_by_default_and_follow_missing(tmp_path):
    path = _blank_csv(tmp_path)
    assert blank_counts(read_csv(path), ["sex", "race"]) == {"sex": 1, "race": 1}
    out = tmp_path / "keep.json"
    proc = run(*design_args(path, out, method="grr"))
    assert proc.returncode == 0, proc.stderr
    assert "warning: empty cells in sex (1), race (1)" in proc.stderr and "--missing" in proc.stderr
    kept = json.loads(out.read_text())
    assert "" in kept["sensitive"]["values"]

    out = tmp_path / "drop.json"
    proc = run(*design_args(path, out, method="grr"), "--missing", "drop")
    assert proc.returncode == 0, proc.stderr
    assert "dropped 2 rows" in proc.stderr
    doc = json.loads(out.read_text())
    assert "" not in doc["sensitive"]["values"] and doc["provenance"]["n"] == 6

    proc = run(*design_args(path, tmp_path / "err.json", method="grr"), "--missing", "error")
    assert_one_line_error(proc, "empty cells in sex (1), race (1)")
    assert not (tmp_path / "err.json").exists()

    proc = run(*design_args(path, tmp_path / "k.json", method="grr"), "--missing", "keep")
    assert proc.returncode == 0 and "warning: empty cells" not in proc.stderr  # (the few-rows warning may show)


@pytest.mark.slow
def test_delimiter_and_encoding(tmp_path):
    tsv = tmp_path / "public.tsv"
    tsv.write_bytes(SMALL.replace(",", "\t").replace("White", "Wh\u00efte").encode("latin-1"))
    proc = run(*design_args(tsv, tmp_path / "a.json", method="grr"))
    assert_one_line_error(proc, "not UTF-8 text", "--encoding")
    proc = run(*design_args(tsv, tmp_path / "a.json", method="grr"), "--encoding", "latin-1")
    assert_one_line_error(proc, "single column", "--delimiter")
    out = tmp_path / "b.json"
    proc = run(*design_args(tsv, out, method="grr"), "--encoding", "latin-1", "--delimiter", "\\t")
    assert proc.returncode == 0, proc.stderr
    assert "Wh\u00efte" in json.loads(out.read_text())["released"][0]["values"]
    proc = run(*design_args(tsv, out, method="grr"), "--encoding", "no-such-codec")
    assert_one_line_error(proc, "unknown encoding 'no-such-codec'")
    with pytest.raises(TableError, match="delimiter must be one character"):
        read_csv(tsv, delimiter=";;")


@pytest.mark.slow
def test_continuous_column_is_binned_or_refused_before_allocating(tmp_path):
    """Adult's fnlwgt has ~21k values: |X| = 2 × 21k; GRR alone would be a 14 GiB matrix. Detected as numeric
    (every cell a decimal, more than 32 values) it is binned from the public quantiles; kept categorical on
    request (--categorical) it is refused before any allocation, saying to bin it."""
    refused = run(
        *design_args(adult_path(), tmp_path / "m.json", method="grr", released="fnlwgt"),
        "--names",
        ",".join(ADULT_COLUMNS),
        "--categorical",
        "fnlwgt",
        timeout=60,
    )
    assert_one_line_error(refused, "|X| = ", f"> {MAX_DESIGN_SYMBOLS:,}", "'fnlwgt' has", "numeric values", "bin it")
    binned = run(
        *design_args(adult_path(), tmp_path / "b.json", method="grr", released="fnlwgt"),
        "--names",
        ",".join(ADULT_COLUMNS),
        timeout=60,
    )
    assert binned.returncode == 0, binned.stderr[-2000:]
    released = json.loads((tmp_path / "b.json").read_text())["released"][0]
    assert released["name"] == "fnlwgt" and 2 <= len(released["numeric"]["edges"]) <= 17


def test_a_42_value_column_is_not_called_continuous():
    # Issue 27 rough edge: sex × native-country (42 values) × occupation × education was refused with
    # "column 'native-country' has 42 distinct values: is it continuous?".
    from rldp.aggregator.design import check_design_size
    from rldp.shared.errors import ValidationError
    from rldp.shared.records import Alphabet, Attribute

    def attr(name, n, fmt="v{}"):
        return Attribute(name, tuple(fmt.format(i) for i in range(n)))

    alphabet = Alphabet(attr("sex", 2), [attr("native-country", 42), attr("occupation", 15), attr("education", 16)])
    with pytest.raises(ValidationError) as info:
        check_design_size(alphabet, "pub.csv")
    text = str(info.value)
    assert "continuous?" not in text and "20,160" in text and "native-country (42)" in text
    assert "42 distinct values" in text and "release fewer columns" in text
    alphabet = Alphabet(attr("sex", 2), [attr("age", 5000, "{}")])  # many numbers: likely continuous
    with pytest.raises(ValidationError, match=r"'age' has 5,000 distinct numeric values: if it is continuous, bin it"):
        check_design_size(alphabet, "pub.csv")


@pytest.mark.slow
def test_out_into_a_missing_folder_names_the_folder(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(SMALL)
    missing = tmp_path / "nowhere"
    proc = run(*design_args(path, missing / "m.json", method="grr"))
    assert_one_line_error(proc, f"no such folder '{missing}'")
    assert ".tmp-" not in proc.stderr
    proc = run(*design_args(path, tmp_path / "m.txt", method="grr"))
    assert_one_line_error(proc, "unknown extension")


def test_write_document_names_the_missing_folder(tmp_path):
    from rldp.shared.document import write_document
    from rldp.shared.errors import DocumentError

    with pytest.raises(DocumentError, match="no such folder") as info:
        write_document({}, tmp_path / "nowhere" / "m.json")
    assert ".tmp-" not in str(info.value)


@pytest.mark.slow
def test_polyopt_at_a_large_epsilon_designs_or_says_its_range(tmp_path):
    # Issue 27 D11: --epsilon 50 --method polyopt was "internal error (ZeroDivisionError)".
    public = tmp_path / "public.csv"
    public.write_text(SMALL * 10)
    proc = run(*design_args(public, tmp_path / "m.json", method="polyopt", epsilon="50"), "--no-progress")
    assert proc.returncode == 0 and "Warning" not in proc.stderr, proc.stderr
    audit = run("audit", tmp_path / "m.json")
    assert audit.returncode == 0 and "PASS" in audit.stdout, audit.stdout + audit.stderr
    proc = run(*design_args(public, tmp_path / "m.json", method="polyopt", epsilon="301"), "--no-progress")
    assert proc.returncode == 2
    assert_one_line_error(proc, "epsilon 301", "300 nats", "polyopt")


@pytest.mark.slow
def test_few_public_rows_are_designed_with_a_warning(tmp_path):
    # Issue 27 rough edge: 5 public rows were designed without a word.
    few = tmp_path / "few.csv"
    few.write_text("sex,race\nMale,White\nFemale,Black\nMale,Black\nFemale,White\nMale,White\n")
    proc = run(*design_args(few, tmp_path / "few.json", method="grr"), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if "public rows" in line]
    assert len(warning) == 1 and "few.csv: only 5 public rows" in warning[0] and "4 cells" in warning[0]
    assert "radius 0.941 nats (at 100 rows: 0.0752)" in warning[0], proc.stderr
    enough = tmp_path / "enough.csv"
    enough.write_text("sex,race\n" + "Male,White\nFemale,Black\nMale,Black\nFemale,White\n" * 100)
    proc = run(*design_args(enough, tmp_path / "enough.json", method="grr"), "--no-progress")
    assert proc.returncode == 0 and "public rows" not in proc.stderr, proc.stderr
