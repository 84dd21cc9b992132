"""Copy the source folders into one package tree, ``build/package-tree/rldp/...``, for static tools.

pyproject maps ``rldp.shared`` to ``shared/``, ``rldp.client`` to ``client/`` and so on, and
the editable install resolves that mapping at import time; import-linter (grimp) and mypy
read the file system instead, so they see ``rldp`` as only ``rldp/``. This script lays the
same modules out as the installed package would be, which both tools can read.

Usage: ``python tools/package_tree.py`` → prints the directory to put on PYTHONPATH/MYPYPATH.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "package-tree"


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(OUT, ignore_errors=True)
    # Parents before children: "rldp" first, then "rldp.shared", ...
    for package, folder in sorted(package_dir.items(), key=lambda item: item[0].count(".")):
        target = OUT.joinpath(*package.split("."))
        shutil.copytree(
            ROOT / folder, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "data"), dirs_exist_ok=True
        )
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
