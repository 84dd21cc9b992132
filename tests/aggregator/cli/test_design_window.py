"""`rldp design` collects by day unless told otherwise (issue 24, "windows by default")."""

from __future__ import annotations

from pathlib import Path

import pytest

from rldp.cli import main
from rldp.shared.document import read_document

CSV = "sex,colour\n" + "Female,red\nMale,blue\nMale,red\nFemale,green\n" * 25


@pytest.mark.parametrize(
    ("flags", "window"), [((), "P1D"), (("--window", "PT6H"), "PT6H"), (("--window", "none"), None)]
)
def test_design_window_default_and_none(tmp_path: Path, capsys, flags, window) -> None:
    (tmp_path / "p.csv").write_text(CSV)
    out = tmp_path / "m.json"
    args = ["design", str(tmp_path / "p.csv"), "--sensitive", "sex", "--released", "colour"]
    assert main([*args, "--epsilon", "1", "--method", "grr", "--out", str(out), *flags]) == 0
    doc = read_document(out)
    assert doc.get("collection", {}).get("window") == window


def test_a_bad_window_names_none(tmp_path: Path, capsys) -> None:
    (tmp_path / "p.csv").write_text(CSV)
    args = ["design", str(tmp_path / "p.csv"), "--sensitive", "sex", "--released", "colour", "--epsilon", "1"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--method", "grr", "--out", str(tmp_path / "m.json"), "--window", "daily"])
    assert info.value.code == 2 and "or 'none' for no windows" in capsys.readouterr().err
