"""`rldp design --task distribution|mean` without --bins: U's number of bins by the rule (issue 38), recorded
in the document and shown; --planned-reports validated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rldp.cli import main
from rldp.shared.document import read_document

_RNG = np.random.default_rng(38)
_SEX = np.where(_RNG.random(3000) < 0.5, "Female", "Male")
_AGES = np.round(np.where(_SEX == "Male", 44, 36) + _RNG.normal(0, 12, 3000)).clip(17, 90).astype(int)
CSV = "sex,age\n" + "".join(f"{s},{a}\n" for s, a in zip(_SEX, _AGES, strict=True))
BASE = ["--sensitive", "sex", "--released", "age", "--numeric", "age", "--epsilon", "0.5", "--method", "rr-released"]


def _design(tmp_path: Path, *flags: str) -> tuple[int, dict | None]:
    (tmp_path / "p.csv").write_text(CSV)
    out = tmp_path / "m.json"
    out.unlink(missing_ok=True)
    code = main(["design", str(tmp_path / "p.csv"), *BASE, "--out", str(out), *flags])
    return code, (read_document(out) if out.exists() else None)


def test_the_rules_choice_is_in_the_document_and_shown(tmp_path: Path, capsys) -> None:
    code, doc = _design(tmp_path, "--task", "distribution", "--planned-reports", "5000", "--json")
    assert code == 0 and doc is not None  # read_document checked the id: the choice is covered by it
    binning = doc["binning"]
    bins = len(doc["released"][0]["values"])
    assert binning["bins"] == bins and binning["column"] == "age" and binning["planned_reports"] == 5000
    assert binning["task"] == "distribution" and binning["predicted_by"] == "rr-released"
    assert binning["spread"] == "uniform"
    chosen = next(c for c in binning["candidates"] if c["bins"] == bins)
    total = chosen["binning_error"] + chosen["estimation_error"]
    assert all(
        total <= c["binning_error"] + c["estimation_error"]
        for c in binning["candidates"]
        if c["estimation_error"] is not None
    )
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["binning"]["bins"] == bins
    _design(tmp_path, "--task", "distribution", "--planned-reports", "5000")
    out = capsys.readouterr().out
    assert f"  bins     age: k = {bins}: binning error " in out and "at 5,000 reports" in out


def test_fewer_planned_reports_fewer_bins(tmp_path: Path) -> None:
    ks = []
    for planned in ("30", "1000000"):
        code, doc = _design(tmp_path, "--task", "distribution", "--planned-reports", planned)
        assert code == 0 and doc is not None
        ks.append(doc["binning"]["bins"])
    assert ks[0] < ks[1]


@pytest.mark.parametrize(
    "flags",
    [("--task", "distribution", "--bins", "6"), ("--task", "joint"), ("--task", "mean", "--edges", "age=17,40,90")],
)
def test_no_rule_when_the_bins_are_given_or_the_task_is_joint(tmp_path: Path, flags: tuple[str, ...]) -> None:
    code, doc = _design(tmp_path, *flags)
    assert code == 0 and doc is not None and "binning" not in doc
    if "--bins" in flags:
        assert len(doc["released"][0]["values"]) == 6


@pytest.mark.parametrize("bad", ["0", "-3", "2.5", "many"])
def test_bad_planned_reports_is_a_clear_error(tmp_path: Path, capsys, bad: str) -> None:
    with pytest.raises(SystemExit) as exc:
        _design(tmp_path, "--task", "distribution", "--planned-reports", bad)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--planned-reports" in err and "must be an integer ≥ 1" in err and "Traceback" not in err
