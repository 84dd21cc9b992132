"""How ``rldp design`` reads its public CSV: delimiter, encoding, header and blank cells, size.

Every check here runs before any design work starts, so a wrong file, a header that is
really data, blank cells, a continuous column or an ``--out`` that cannot be written is
one clear line on stderr within a second, not a traceback (or a 14 GiB allocation) later.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import numpy as np

from rldp.shared.arguments import add_csv_flags
from rldp.shared.errors import ValidationError
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, blank_counts, header_looks_like_data, read_csv

from ..frames import MAX_DESIGN_SYMBOLS, check_design_size
from .common import CommandError

__all__ = ["MAX_DESIGN_SYMBOLS", "MISSING_POLICIES", "add_table_flags", "read_public", "check_alphabet", "check_out"]

MISSING_POLICIES = ("keep", "drop", "error")
_OUT_EXTENSIONS = (".json", ".msgpack", ".mpk")


def add_table_flags(p: argparse.ArgumentParser) -> None:
    """``--delimiter``, ``--encoding`` and ``--missing`` on a command that reads a public CSV."""
    add_csv_flags(p)
    p.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default=None,
        help="empty cells in the chosen columns: keep them as a category of their own (the default, with a "
        "warning), drop their rows, or refuse the file",
    )


def read_public(args: argparse.Namespace, columns: Sequence[str]) -> Table:
    """The public table for ``columns``, read with the command's table flags (see :func:`add_table_flags`).

    A requested column that is not in the header, when the header looks like data, gets the
    hint to give ``--names``; empty cells in ``columns`` follow ``--missing``."""
    table = read_csv(args.public, names=args.names, delimiter=args.delimiter, encoding=args.encoding)
    absent = [c for c in columns if c not in table.columns]
    if absent:
        hint = ""
        if args.names is None and header_looks_like_data(table):
            first = ", ".join(table.columns[:6]) + (", …" if len(table.columns) > 6 else "")
            hint = (
                f"; its first row ({first}) looks like data, not a header: "
                f"give the column names with --names A,B,… ({len(table.columns)} of them)"
            )
        elif len(table.columns) == 1:
            hint = "; the file has a single column: is the delimiter right? (--delimiter)"
        raise CommandError(
            f"{args.public}: no column {', '.join(map(repr, absent))}; available: {', '.join(table.columns)}{hint}"
        )
    return _missing(args, table, columns)


def _missing(args: argparse.Namespace, table: Table, columns: Sequence[str]) -> Table:
    """Empty cells in ``columns``, as ``--missing`` says."""
    blanks = blank_counts(table, columns)
    if not blanks:
        return table
    where = ", ".join(f"{name} ({n:,})" for name, n in blanks.items())
    policy = args.missing
    if policy == "error":
        raise CommandError(f"{args.public}: empty cells in {where}; --missing drop or keep to go on")
    if policy == "drop":
        keep = np.ones(table.n_rows, dtype=bool)
        for name in blanks:
            keep &= table.column(name) != ""
        if not keep.any():
            raise CommandError(f"{args.public}: every row has an empty cell in {', '.join(blanks)}")
        print(f"rldp design: dropped {int((~keep).sum()):,} rows with empty cells in {where}", file=sys.stderr)
        return Table(table.columns, tuple(col[keep] for col in table.data))
    if policy is None:  # keep, but say so: an empty cell is then a category like any other
        print(
            f"rldp design: warning: empty cells in {where} are kept as a category of their own ('' in the "
            "document); --missing drop|error|keep to choose",
            file=sys.stderr,
        )
    return table


def check_alphabet(alphabet: Alphabet, where: str) -> None:
    """:func:`rldp.aggregator.frames.check_design_size` as a command-line error."""
    try:
        check_design_size(alphabet, where)
    except ValidationError as exc:
        raise CommandError(str(exc)) from None


def check_out(path: str) -> None:
    """Refuse an ``--out`` that cannot be written before designing (a design may take minutes)."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise CommandError(f"--out {path}: no such folder {folder!r}; create it first")
    if os.path.splitext(path)[1].lower() not in _OUT_EXTENSIONS:
        raise CommandError(f"--out {path}: unknown extension; use .json, .msgpack or .mpk")
