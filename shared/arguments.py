"""Command-line argument types shared by every ``rldp`` subcommand (standard library only).

Each returns an ``argparse`` type function whose error names the option and its allowed
range, so that bad input gets one clear line (argparse prints it with exit status 2).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "checked",
    "positive_int",
    "nonnegative_int",
    "positive_float",
    "port",
    "names",
    "add_json_flag",
    "add_progress_flags",
]

T = TypeVar("T")


def checked(
    convert: Callable[[str], T], accept: Callable[[T], bool], not_a_value: str, out_of_range: str
) -> Callable[[str], T]:
    """An argparse type: ``convert(text)``, refused with the message ``not_a_value`` if that raises
    ValueError and with ``out_of_range`` unless ``accept(value)``. Both messages are ``str.format``
    templates with the fields ``text`` (the argument as typed) and ``value`` (as converted)."""

    def parse(text: str) -> T:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(not_a_value.format(text=text, value=None)) from None
        if not accept(value):
            raise argparse.ArgumentTypeError(out_of_range.format(text=text, value=value))
        return value

    return parse


def _integer(name: str, lowest: int) -> Callable[[str], int]:
    message = f"{name} must be an integer ≥ {lowest}; got {{text!r}}"
    return checked(int, lambda value: value >= lowest, message, message)


def positive_int(name: str) -> Callable[[str], int]:
    """An integer ≥ 1 (e.g. workers, batch size)."""
    return _integer(name, 1)


def nonnegative_int(name: str) -> Callable[[str], int]:
    """An integer ≥ 0 (e.g. a seed)."""
    return _integer(name, 0)


def positive_float(name: str) -> Callable[[str], float]:
    """A finite number > 0 (e.g. ε in nats, seconds)."""
    message = f"{name} must be a finite number > 0; got {{text!r}}"
    return checked(float, lambda value: math.isfinite(value) and value > 0, message, message)


#: A TCP port number, 0..65535 (0: any free port).
port = checked(
    int,
    lambda value: 0 <= value <= 65535,
    "port must be an integer in 0..65535; got {text!r}",
    "port must be in 0..65535; got {value}",
)


def names(text: str) -> list[str]:
    """Comma-separated column names (blank entries dropped; at least one)."""
    out = [t.strip() for t in text.split(",") if t.strip()]
    if not out:
        raise argparse.ArgumentTypeError("expected one or more comma-separated column names")
    return out


def delimiter(text: str) -> str:
    """One field-separator character ('\\t' or tab for a tab)."""
    value = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(value) != 1:
        raise argparse.ArgumentTypeError(f"delimiter must be one character (or '\\t' / tab); got {text!r}")
    return value


def add_csv_flags(parser: argparse.ArgumentParser) -> None:
    """``--delimiter`` and ``--encoding`` on a command that reads a CSV (the flags its errors' hints name)."""
    parser.add_argument(
        "--delimiter", type=delimiter, default=",", metavar="CHAR", help="field separator (default ',')"
    )
    parser.add_argument(
        "--encoding", default="utf-8-sig", metavar="CODEC", help="text encoding of the CSV (default utf-8)"
    )


def add_json_flag(parser: argparse.ArgumentParser, help: str = "print one JSON line instead of text") -> None:
    """``--json``: the command's answer as one JSON line on stdout (every command that has a JSON form)."""
    parser.add_argument("--json", action="store_true", help=help)


def add_progress_flags(parser: argparse.ArgumentParser, shown: str, never: str) -> None:
    """``--progress`` / ``--no-progress`` into ``args.progress`` (None: the command decides, on a terminal)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None, help=shown)
    group.add_argument("--no-progress", dest="progress", action="store_false", help=never)
