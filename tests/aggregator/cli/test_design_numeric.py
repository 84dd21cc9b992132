"""`rldp design` with a numeric column (issue 38): declared or detected, its bins in the document, the
range clamped, empty cells dropped, the task's choice and the note on what protects the number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rldp.cli import main
from rldp.shared.document import read_document

_RNG = np.random.default_rng(3)
_AGES = _RNG.integers(17, 91, 400)
_SEX = np.where(_RNG.random(400) < 0.5, "Female", "Male")
CSV = "sex,age\n" + "".join(f"{s},{a}\n" for s, a in zip(_SEX, _AGES, strict=True))
BASE = ["--sensitive", "sex", "--released", "age", "--epsilon", "1"]


def _design(tmp_path: Path, *flags: str, csv: str = CSV) -> tuple[int, dict | None]:
    (tmp_path / "p.csv").write_text(csv)
    out = tmp_path / "m.json"
    code = main(["design", str(tmp_path / "p.csv"), *BASE, "--out", str(out), *flags])
    return code, (read_document(out) if out.exists() else None)


def test_declared_numeric_with_range_and_bins(tmp_path: Path, capsys) -> None:
    code, doc = _design(tmp_path, "--numeric", "age", "--range", "age=20:80", "--bins", "4", "--method", "grr")
    assert code == 0 and doc is not None
    numeric = doc["released"][0]["numeric"]
    assert numeric["closed"] == "left" and numeric["edges"][0] == 20.0 and numeric["edges"][-1] == 80.0
    assert len(doc["released"][0]["values"]) == len(numeric["edges"]) - 1
    # the ages below 20 and above 80 were clamped into the first and last bin: every public row counted
    assert doc["provenance"]["n"] == 400
    out = capsys.readouterr().out
    assert "age itself is protected only as far as it reveals sex" in out
    assert "values outside are clamped" in out


def test_detected_numeric_says_so(tmp_path: Path, capsys) -> None:
    code, doc = _design(tmp_path, "--method", "grr")
    assert code == 0 and doc is not None and "numeric" in doc["released"][0]
    assert "released as numeric bins (--categorical age" in capsys.readouterr().err
    code, doc = _design(tmp_path, "--method", "grr", "--categorical", "age")
    assert code == 0 and doc is not None and "numeric" not in doc["released"][0]


def test_given_edges_and_the_task(tmp_path: Path, capsys) -> None:
    code, doc = _design(
        tmp_path, "--edges", "age=17,30,45,60,90", "--method", "polyopt", "--task", "distribution", "--solver", "exact"
    )
    assert code == 0 and doc is not None
    assert doc["released"][0]["numeric"]["edges"] == [17.0, 30.0, 45.0, 60.0, 90.0]
    assert doc["parameters"]["task"]["asked"] == "polyopt"
    assert "  task     distribution: chose" in capsys.readouterr().out


def test_empty_numeric_cells_are_dropped_or_refused(tmp_path: Path, capsys) -> None:
    csv = CSV + "Male,\nFemale,\n"
    code, doc = _design(tmp_path, "--numeric", "age", "--method", "grr", csv=csv)
    assert code == 0 and doc is not None and doc["provenance"]["n"] == 400
    assert "dropped 2 rows with no number in age (2)" in capsys.readouterr().err
    code, _ = _design(tmp_path, "--numeric", "age", "--method", "grr", "--missing", "error", csv=csv)
    assert code == 2 and "empty cells in numeric age" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, message",
    [
        (("--numeric", "age", "--range", "17:90"), "expected COL=VALUE"),
        (("--numeric", "age", "--range", "age=90:17"), "is empty"),
        (("--edges", "age=17,30,20"), "strictly increasing"),
        (("--numeric", "colour"), "neither --sensitive nor --released"),
    ],
)
def test_bad_numeric_flags(tmp_path: Path, capsys, flags: tuple[str, ...], message: str) -> None:
    code, _ = _design(tmp_path, "--method", "grr", *flags)
    assert code == 2 and message in capsys.readouterr().err


def test_text_in_a_numeric_column_is_named(tmp_path: Path, capsys) -> None:
    code, _ = _design(tmp_path, "--numeric", "age", "--method", "grr", csv=CSV + "Male,forty\n")
    assert code == 2 and "'forty' is not a finite decimal number" in capsys.readouterr().err


def test_method_auto_with_a_task_keeps_the_least_task_error(tmp_path: Path, capsys) -> None:
    """--method auto --task mean: every certified method is designed and the least error for the mean is kept
    (not the highest NMI); the line and the JSON record say each method's error."""
    rng = np.random.default_rng(38)
    sex = np.where(rng.random(600) < 0.5, "Female", "Male")
    ages = np.where(sex == "Female", rng.integers(17, 50, 600), rng.integers(30, 91, 600))
    csv = "sex,age\n" + "".join(f"{s},{a}\n" for s, a in zip(sex, ages, strict=True))
    code, doc = _design(tmp_path, "--numeric", "age", "--bins", "4", "--method", "auto", "--task", "mean", csv=csv)
    assert code == 0 and doc is not None
    out = capsys.readouterr().out
    chosen = next(line for line in out.splitlines() if line.startswith("  chosen "))
    assert chosen.startswith(f"  chosen   {doc['method']}, the least absolute error of the mean per report of ")
    errors = {m: e for m, e in doc["parameters"]["task"]["per_report_error"].items() if e is not None}
    kept = errors[doc["parameters"]["task"]["chosen"]]
    parts = chosen.split("(", 1)[1].rstrip(")").split(", ")
    listed = [float(p.rsplit(" ", 1)[1]) for p in parts if not p.endswith("not identified")]
    assert all(p.endswith("not identified") for p in parts[len(listed) :])  # those last
    assert listed == sorted(listed) and f"{kept:.4g}" == f"{listed[0]:.4g}"  # the kept design's error is the least
    assert doc["audit"]["epsilon"] >= 0.99  # tight for the claim of 1
