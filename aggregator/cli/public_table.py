"""How ``rldp design`` reads its public CSV: delimiter, encoding, header and blank cells, size.

Every check here runs before any design work starts, so a wrong file, a header that is
really data, blank cells, a continuous column or an ``--out`` that cannot be written is
one clear line on stderr within a second, not a traceback (or a 14 GiB allocation) later.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import numpy as np

from rldp.shared.arguments import add_csv_flags, names, positive_int
from rldp.shared.audit import ldp_epsilon
from rldp.shared.document import mechanism_matrix
from rldp.shared.errors import ValidationError
from rldp.shared.numeric import DETECT_MIN_DISTINCT, MAX_BINS, NumericSpec, looks_numeric, spec_from_cells
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, blank_counts, header_looks_like_data, read_csv

from ..design.orchestration.bins import binning_line
from ..frames import MAX_DESIGN_SYMBOLS, check_design_size
from .common import CommandError

__all__ = [
    "MAX_DESIGN_SYMBOLS",
    "MISSING_POLICIES",
    "add_numeric_flags",
    "add_table_flags",
    "numeric_lines",
    "numeric_specs",
    "read_public",
    "check_alphabet",
    "check_out",
]

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


def add_numeric_flags(p: argparse.ArgumentParser) -> None:
    """``--numeric``, ``--categorical``, ``--bins``, ``--range``, ``--edges``, ``--closed``."""
    p.add_argument(
        "--numeric",
        type=names,
        default=[],
        metavar="COL[,COL...]",
        help="numeric columns, released as their bin (bins from the public data's quantiles unless --edges); a "
        "released column whose non-empty cells are all decimal numbers with more than "
        f"{DETECT_MIN_DISTINCT} distinct values is numeric unless --categorical names it",
    )
    p.add_argument("--categorical", type=names, default=[], metavar="COL[,COL...]", help="never treat these as numeric")
    p.add_argument(
        "--bins",
        type=positive_int("bins"),
        help="bins per numeric column (default: with --task distribution or mean, the number with the least "
        "predicted error at --planned-reports; else ceil(n^(1/3)), at most 16 and the distinct values; "
        f"<= {MAX_BINS})",
    )
    p.add_argument(
        "--range",
        action="append",
        default=[],
        metavar="COL=LO:HI",
        help="a numeric column's domain (default: the public min and max); values outside are clamped into the "
        "first or last bin; repeatable",
    )
    p.add_argument("--edges", action="append", default=[], metavar="COL=E0,E1,...", help="a numeric column's bin edges")
    p.add_argument(
        "--closed", choices=("left", "right"), default="left", help="the side bins are closed on (default left)"
    )


def _pairs(items: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:  # e.g. "--range 17:90" without the column
            raise CommandError(f"{flag} {item!r}: expected COL=VALUE (e.g. {flag} age=17:90)")
        out[name] = value
    return out


def _floats(text: str, sep: str, flag: str) -> list[float]:
    try:
        return [float(v) for v in text.split(sep)]
    except ValueError:
        raise CommandError(f"{flag} {text!r}: expected numbers separated by {sep!r}") from None


def numeric_specs(args: argparse.Namespace, table: Table) -> dict[str, NumericSpec]:
    """The numeric columns (declared, or detected among the released ones) and their bins; a line on stderr
    names each detected one. Rows with an empty cell in a numeric column are dropped (a line says how many)
    unless ``--missing error``: an empty cell is no number, and no bin holds it."""
    ranges, edges = _pairs(args.range, "--range"), _pairs(args.edges, "--edges")
    declared = [*args.numeric, *(c for c in (*ranges, *edges) if c not in args.numeric)]
    for name in declared:
        if name not in (*args.sensitive, *args.released):
            raise CommandError(f"numeric column {name!r} is neither --sensitive nor --released")
    detected = [
        c for c in args.released if c not in declared and c not in args.categorical and looks_numeric(table.column(c))
    ]
    for name in detected:
        print(
            f"rldp design: {name}: every cell is a number and it has more than {DETECT_MIN_DISTINCT} distinct "
            f"values: released as numeric bins (--categorical {name} to keep its values)",
            file=sys.stderr,
        )
    args.numeric_columns = [*declared, *detected]
    out = {}
    for name in (*declared, *detected):
        span = _floats(ranges[name], ":", "--range") if name in ranges else [None, None]
        if len(span) != 2:
            raise CommandError(f"--range {name}={ranges[name]}: expected LO:HI")
        cells = table.column(name)
        try:
            out[name] = spec_from_cells(
                cells[cells != ""],
                name,
                bins=args.bins if name not in edges else None,
                lo=span[0],
                hi=span[1],
                edges=_floats(edges[name], ",", "--edges") if name in edges else None,
                closed=args.closed,
            )
        except ValidationError as exc:
            raise CommandError(f"{args.public}: {exc}") from None
    return out


def read_public_numeric(args: argparse.Namespace, columns: Sequence[str]) -> tuple[Table, dict[str, NumericSpec]]:
    """:func:`read_public` and the bins of its numeric columns (:func:`numeric_specs`), rows with an empty
    numeric cell dropped."""
    table = read_csv(args.public, names=args.names, delimiter=args.delimiter, encoding=args.encoding)
    _absent(args, table, columns)
    specs = numeric_specs(args, table)
    blanks = blank_counts(table, list(specs))
    if blanks:
        where = ", ".join(f"{name} ({n:,})" for name, n in blanks.items())
        if args.missing == "error":
            raise CommandError(f"{args.public}: empty cells in numeric {where}; --missing drop to go on")
        keep = np.ones(table.n_rows, dtype=bool)
        for name in blanks:
            keep &= table.column(name) != ""
        print(f"rldp design: dropped {int((~keep).sum()):,} rows with no number in {where}", file=sys.stderr)
        table = Table(table.columns, tuple(col[keep] for col in table.data))
    return _missing(args, table, [c for c in columns if c not in specs]), specs


def read_public(args: argparse.Namespace, columns: Sequence[str]) -> Table:
    """The public table for ``columns``, read with the command's table flags (see :func:`add_table_flags`).

    A requested column that is not in the header, when the header looks like data, gets the
    hint to give ``--names``; empty cells in ``columns`` follow ``--missing``."""
    table = read_csv(args.public, names=args.names, delimiter=args.delimiter, encoding=args.encoding)
    _absent(args, table, columns)
    return _missing(args, table, columns)


def _absent(args: argparse.Namespace, table: Table, columns: Sequence[str]) -> None:
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


def numeric_lines(doc: dict, alphabet: Alphabet) -> list[str]:
    """What ``rldp design`` says of numeric columns and of the task: each column's bins, the design chosen
    for the task and its error, and that a released number is protected only as far as it reveals S (or, for
    any mechanism whose matrix proves it, e.g. the LDP baselines for numbers, also its LDP level)."""
    lines = []
    sens = ",".join(a.name for a in alphabet.sensitive_attributes)
    on_input = ldp_epsilon(mechanism_matrix(doc))  # computed, never read from the document's parameters
    for attr in alphabet.joint_attributes:
        if attr.numeric is not None:
            spec = attr.numeric
            lines.append(
                f"  numeric  {attr.name}: {spec.bins} bins on [{spec.lo:g}, {spec.hi:g}] (closed {spec.closed}; "
                "values outside are clamped)"
            )
            if (binning := doc.get("binning")) and binning.get("column") == attr.name:
                lines.append(f"  bins     {attr.name}: {binning_line(binning)}")
            if attr in alphabet.released:
                lines.append(f"  note     {attr.name} itself is protected only as far as it reveals {sens}")
                if math.isfinite(on_input):  # the matrix proves more: the number itself is that LDP
                    lines.append(
                        f"  on U     {attr.name} itself is {on_input:.4g}-LDP (max log Q(y|x)/Q(y|x') of the matrix)"
                    )
    task = doc.get("parameters", {}).get("task")
    if task:
        errors = ", ".join(
            f"{m} {'not identifiable' if e is None else format(e, '.4g')}" for m, e in task["per_report_error"].items()
        )
        lines.append(
            f"  task     {task['task']}: chose {task['chosen']} ({task['measure']} per report at P̂, /sqrt(n) "
            f"for n reports: {errors})"
        )
    return lines
