"""``rldp data adult``: write the shipped UCI Adult files as plain CSVs with a header row.

    rldp data adult                 # adult.csv (public side data) and adult.test.csv (users) here
    rldp data adult --dir data/     # elsewhere

The README's commands (``rldp design adult.csv …``, ``rldp evaluate … --data adult.test.csv``)
start from these two files. The data is package data of ``rldp.demo.data`` (installed with the
client too), so this needs neither the aggregator's nor the demo's extra dependencies.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
from pathlib import Path

from rldp.shared.errors import ValidationError

from .datasets import ADULT_COLUMNS, ADULT_FILES, data_file

__all__ = ["add_parser", "cmd_data", "ADULT_OUTPUTS"]

#: Adult split -> the file ``rldp data adult`` writes it to.
ADULT_OUTPUTS: dict[str, str] = {"data": "adult.csv", "test": "adult.test.csv"}


def _write_split(split: str, out: Path) -> int:
    """Write one split with its header; the UCI ", " separators become ","; returns the number of rows."""
    name, has_header = ADULT_FILES[split]
    rows = 0
    with data_file(name) as src, gzip.open(src, "rt", encoding="utf-8", newline="") as fin:
        reader = csv.reader(fin, skipinitialspace=True)
        with open(out, "w", encoding="utf-8", newline="") as fout:
            writer = csv.writer(fout, lineterminator="\n")
            if not has_header:
                writer.writerow(ADULT_COLUMNS)
            for i, row in enumerate(reader):
                if not row or not any(cell.strip() for cell in row):
                    continue
                writer.writerow([cell.strip() for cell in row])
                rows += 0 if (has_header and i == 0) else 1
    return rows


def cmd_data(args: argparse.Namespace) -> int:
    """Write adult.csv and adult.test.csv into ``--dir`` (refusing to overwrite without ``--force``)."""
    folder = Path(args.dir)
    if not folder.is_dir():
        raise ValidationError(f"--dir {folder}: no such folder")
    targets = {split: folder / file for split, file in ADULT_OUTPUTS.items()}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing and not args.force:
        verb = "already exists" if len(existing) == 1 else "already exist"
        raise ValidationError(f"{', '.join(existing)} {verb}; pass --force to overwrite")
    for split, path in targets.items():
        rows = _write_split(split, path)
        what = "public side data, to design from" if split == "data" else "users, to evaluate or simulate"
        print(f"wrote {path} ({rows:,} rows, {len(ADULT_COLUMNS)} columns: {what})")
    print("UCI Adult (Becker & Kohavi 1996), CC BY 4.0: https://doi.org/10.24432/C5XW20", file=sys.stderr)
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``data``."""
    p = subparsers.add_parser(
        "data",
        help="write the shipped example data (UCI Adult) as CSV files",
        description="Write the UCI Adult census extract shipped with rldp as adult.csv (32,561 rows, the public "
        "side data) and adult.test.csv (16,281 rows, users), each with a header row.",
    )
    p.add_argument("dataset", choices=["adult"], help="the data set (adult: the UCI Adult census extract)")
    p.add_argument("--dir", default=".", metavar="DIR", help="folder to write into (default: the current one)")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(func=cmd_data)
