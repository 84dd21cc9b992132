"""Every code snippet in README.md (and every shell block of deploy/README.md), checked.

* ```python blocks: **run**, each in a fresh namespace, in README order, in a folder holding the
  public ``adult.csv`` and the ``mech.json`` the README's first ``rldp design`` line writes, against
  a live ``rldp serve`` on loopback (RLDP_SERVER and RLDP_ADMIN_TOKEN set as the README says).
* ```sh blocks: all **syntax-checked** (``bash -n``), and **run as printed, in README order**, in one
  empty folder against one live ``rldp serve`` (issue 37: the README's own commands collided, and the
  estimate example had no reports), with the python blocks that write a file a shell line reads
  (the pilot's ``write_document``) run in their place in that order. The only changes made to the
  text are the placeholders of :data:`SUBSTITUTE` (the reader's server and token); the blocks that
  cannot run here are listed in :data:`NOT_RUN`, the lines in :data:`NOT_RUN_LINES`, each with the
  reason — a listed block or line that no longer exists fails the test, so the lists cannot go stale.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli
from rldp_live import ADMIN_TOKEN, LiveServer

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DEPLOY = ROOT / "deploy" / "README.md"
_BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.S | re.M)

#: Shell blocks not run, by (file, the ``## `` section they are in): why.
NOT_RUN = {
    ("README.md", "## Two commands"): "make demo and make test: the whole demo (tests/demo runs it) and the whole "
    "suite (this test is part of it)",
    ("README.md", "## Run the aggregator"): "starts servers that run until stopped (the second needs PostgreSQL at "
    "host db): this test starts one on a free port in their place, with an admin token",
    ("README.md", "## Run it in production"): "backs up into /backups and restores into /var/lib/rldp (system "
    "folders; the server stopped first), and needs PostgreSQL: tests/integration/test_backup.py and test_ops.py "
    "run these commands on temporary stores",
    ("deploy/README.md", "## systemd (one host, SQLite)"): "needs root, systemd and /etc, /opt, /var/lib "
    "(tests/integration/test_deploy.py checks the unit files)",
    ("deploy/README.md", "## Containers (aggregator + PostgreSQL)"): "needs Docker or podman and an image registry, "
    "which test machines do not reach (test_deploy.py checks the files statically)",
}
#: Lines of run blocks left out: why.
NOT_RUN_LINES = {
    "rldp job 3f2a9c": "a design job's id is random: the reader takes it from rldp jobs, above it",
}


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


# --------------------------------------------------------------------------- the shell blocks, run in order


def _sections(path: Path) -> list[tuple[str, str, str]]:
    """(the ``## `` section, language, body) of every fenced block of ``path``, in order (indentation removed)."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in _BLOCK.finditer(text):
        indent, lang, body = match.groups()
        heading = [line for line in text[: match.start()].splitlines() if line.startswith("## ")]
        out.append((heading[-1] if heading else "", lang, "\n".join(line[len(indent) :] for line in body.splitlines())))
    return out


def _writes_a_file(code: str) -> bool:
    """A python block a later shell line depends on: it writes a document (the pilot's)."""
    return "write_document(" in code


def test_the_lists_of_blocks_not_run_name_blocks_that_exist():
    shell = {("deploy/README.md" if path == DEPLOY else "README.md", heading) for path in (README, DEPLOY)
             for heading, lang, _ in _sections(path) if lang == "sh"}  # fmt: skip
    assert set(NOT_RUN) <= shell, set(NOT_RUN) - shell
    assert {h for f, h in shell if f == "README.md"} - {h for f, h in NOT_RUN}, "no README shell block is run"
    assert all(f == "README.md" for f, _ in shell - set(NOT_RUN)), "a deploy/README.md block is neither run nor listed"
    lines = {
        line.split("#")[0].strip() for _, lang, body in _sections(README) if lang == "sh" for line in body.splitlines()
    }
    assert set(NOT_RUN_LINES) <= lines, set(NOT_RUN_LINES) - lines


@pytest.mark.slow
@pytest.mark.live
def test_the_shell_blocks_run_as_printed_in_order(tmp_path):
    bash = shutil.which("bash")
    assert bash is not None
    work = tmp_path / "work"
    work.mkdir()
    server = LiveServer(f"sqlite:///{tmp_path}/db.sqlite3", tmp_path, workers=1, threads=2).start()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(RLDP_SERVER=server.url, RLDP_ADMIN_TOKEN=ADMIN_TOKEN, XDG_DATA_HOME=str(tmp_path / "user-data"))
    for name in ("RLDP_DEBUG", "RLDP_READ_TOKEN", "RLDP_DATABASE_URL"):
        env.pop(name, None)
    substitute = {"http://127.0.0.1:8000": server.url, "RLDP_ADMIN_TOKEN=...": f"RLDP_ADMIN_TOKEN={ADMIN_TOKEN}"}
    ran = 0
    try:
        for heading, lang, body in _sections(README):
            if lang == "python" and _writes_a_file(body):
                proc = subprocess.run([sys.executable, "-c", body], cwd=work, env=env, capture_output=True, text=True)
                assert proc.returncode == 0, (heading, body, proc.stderr[-2000:])
                continue
            if lang != "sh" or ("README.md", heading) in NOT_RUN:
                continue
            script = "\n".join(line for line in body.splitlines() if line.split("#")[0].strip() not in NOT_RUN_LINES)
            for placeholder, value in substitute.items():
                script = script.replace(placeholder, value)
            proc = subprocess.run(
                [bash, "-c", "set -euo pipefail\n" + script], cwd=work, env=env, capture_output=True, text=True,
                timeout=900,
            )  # fmt: skip
            assert proc.returncode == 0, (heading, body, proc.stdout[-3000:], proc.stderr[-3000:])
            ran += 1
    finally:
        server.stop()
    assert ran >= 6
    for written in ("mech.json", "copy.json", "users.csv", "estimate.csv", "pilot.json", "next.json"):
        assert (work / written).is_file(), written
