"""``make test`` runs the JavaScript tests even when pytest fails, and still fails at the end (issue 37: a
failing pytest made make skip the JS tests, hiding whether they passed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _make_test(tmp_path: Path, pytest_status: int, js_status: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\nexit {pytest_status}\n")
    fake_python.chmod(0o755)
    stamp = tmp_path / "stamp"
    stamp.touch()
    marker = tmp_path / "js-ran"
    proc = subprocess.run(
        [
            make,
            "--no-print-directory",
            "test",
            f"PY={fake_python}",  # "pytest" is this script: it exits with pytest_status
            f"STAMP={stamp}",  # no set-up: every prerequisite is this existing file
            f"JS_STAMP={stamp}",
            "NODE_OK=yes",
            f"JS_TEST=touch {marker} && exit {js_status}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc, marker


@pytest.mark.parametrize(("pytest_status", "js_status"), [(1, 0), (0, 1), (1, 1)])
def test_make_test_runs_the_js_tests_after_a_failure_and_fails(tmp_path, pytest_status, js_status):
    proc, marker = _make_test(tmp_path, pytest_status, js_status)
    assert marker.exists(), proc.stdout + proc.stderr  # the JS tests ran
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert f"pytest exit {pytest_status}" in proc.stderr


def test_make_test_passes_when_both_pass(tmp_path):
    proc, marker = _make_test(tmp_path, 0, 0)
    assert marker.exists() and proc.returncode == 0, proc.stdout + proc.stderr
