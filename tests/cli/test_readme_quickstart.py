"""The README's "Design a mechanism" section runs as printed: every ```sh block of it, line by line with
``set -e``, in an empty folder with this install's ``rldp`` first on the PATH (issue 27 rough edge: its first
``rldp design adult.csv …`` failed for want of adult.csv)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Design a mechanism"
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def quick_start_blocks() -> list[str]:
    """The ```sh blocks of the README's design section (up to the next ``## `` heading)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return _BLOCK.findall(text[start : end if end > 0 else None])


def test_the_quick_start_starts_by_writing_its_data() -> None:
    first = quick_start_blocks()[0].splitlines()
    assert first[0].startswith("rldp data adult"), first[0]
    used = {m for block in quick_start_blocks() for m in re.findall(r"\b[\w.]+\.csv\b", block)}
    assert used <= {"adult.csv", "adult.test.csv"}, used  # what `rldp data adult` writes


@pytest.mark.slow
def test_every_quick_start_command_runs_as_printed(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("RLDP_DEBUG", None)
    for block in quick_start_blocks():
        script = "set -euo pipefail\n" + block
        proc = subprocess.run([bash, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (block, proc.stdout[-2000:], proc.stderr[-2000:])
    for written in ("adult.csv", "adult.test.csv", "mech.json", "prod.json", "funnel.json", "coupling.json"):
        assert (tmp_path / written).is_file(), written
    listing = (tmp_path / "adult.csv").read_text(encoding="utf-8").splitlines()
    assert listing[0].startswith("age,workclass,fnlwgt") and len(listing) == 32_562
