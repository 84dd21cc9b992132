"""Every code snippet in README.md, checked.

* ```python blocks: **run**, each in a fresh namespace, in README order, in a folder holding the
  public ``adult.csv`` and the ``mech.json`` the README's first ``rldp design`` line writes, against
  a live ``rldp serve`` on loopback (RLDP_SERVER and RLDP_ADMIN_TOKEN set as the README says).
* ```sh blocks: **syntax-checked only** (``bash -n``): they start servers, need a PostgreSQL
  database, print tokens or use ids of the reader's own mechanisms. The README's first design
  and audit lines are also **run** (below), since the Python snippets need their mech.json.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_helpers import run_cli
from rldp_live import ADMIN_TOKEN, LiveServer

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.S | re.M)


def _blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    out = []
    for indent, lang, body in _BLOCK.findall(text):
        if lang == language:
            out.append("\n".join(line[len(indent) :] for line in body.splitlines()))
    return out


def test_readme_has_snippets():
    assert len(_blocks("python")) >= 3 and len(_blocks("sh")) >= 5


@pytest.mark.parametrize("index", range(len(_blocks("sh"))))
def test_shell_snippet_syntax(index):
    bash = shutil.which("bash")
    assert bash is not None
    proc = subprocess.run([bash, "-n"], input=_blocks("sh")[index], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _design_lines() -> list[str]:
    first = _blocks("sh")[[i for i, b in enumerate(_blocks("sh")) if "rldp design adult.csv" in b][0]]
    return [line for line in first.splitlines() if line.startswith(("rldp design", "rldp audit"))]


@pytest.mark.slow
@pytest.mark.live
def test_python_snippets_run_against_a_live_server(adult_csv, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(adult_csv, work / "adult.csv")
    for line in _design_lines():  # rldp design … --out mech.json; rldp audit mech.json
        proc = run_cli(*line.split("#")[0].split()[1:], cwd=work)
        assert proc.returncode == 0, (line, proc.stderr)
    assert (work / "mech.json").exists()
    server = LiveServer(f"sqlite:///{tmp_path}/db.sqlite3", tmp_path, workers=1, threads=2).start()
    try:
        monkeypatch.chdir(work)
        monkeypatch.setenv("RLDP_SERVER", server.url)
        monkeypatch.setenv("RLDP_ADMIN_TOKEN", ADMIN_TOKEN)
        for i, code in enumerate(_blocks("python")):
            namespace: dict[str, object] = {"__name__": f"readme_snippet_{i}"}
            exec(compile(code, f"README.md python block {i + 1}", "exec"), namespace)
    finally:
        server.stop()
