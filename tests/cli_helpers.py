"""Running the ``rldp`` command line in a subprocess, for the tests of its subcommands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RLDP = [sys.executable, "-m", "rldp.cli"]


def run_cli(
    *args: object,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``rldp *args`` (each argument through ``str``), its output captured as text.

    ``env`` adds variables to this process's environment; ``stdin`` is sent as input.
    """
    full_env = None if env is None else dict(os.environ, **env)
    return subprocess.run(
        [*RLDP, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=full_env, input=stdin, timeout=timeout
    )


def design_args(
    public: object, out: object, *, method: str, epsilon: str = "1", sensitive: str = "sex", released: str = "race"
) -> list[object]:
    """The arguments of ``rldp design PUBLIC --sensitive … --released … --epsilon … --method … --out OUT``."""
    return [
        "design",
        public,
        "--sensitive",
        sensitive,
        "--released",
        released,
        "--epsilon",
        epsilon,
        "--method",
        method,
        "--out",
        out,
    ]


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """The command failed with no traceback, and its last stderr line names every needle."""
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    for needle in needles:
        assert needle in last, proc.stderr
