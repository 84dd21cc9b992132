"""Run every benchmark in bench/ (``make bench``); each prints lines ``name value unit``.

Usage: python bench/run.py [--quick] [NAME ...]   (NAME: core, polyopt, design_quality, estimate, client, ingest, scale, audit, ...)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("-")]
    names = [a for a in argv if not a.startswith("-")]
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    status = 0
    for script in scripts:
        print(f"# {script.name}", flush=True)
        status |= subprocess.call([sys.executable, str(script), *flags])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
