"""The ``rldp`` command: one entry point that finds its subcommands in the installed parts.

rldp installs in layers: ``pip install rldp`` gives the client (``rldp privatize``), the
operator's commands over the HTTP API (publish, mechanisms, estimate, retire, jobs, job), ``token``
and ``data`` (the shipped Adult CSVs the README starts from); ``rldp[aggregator]`` adds design, audit,
evaluate, serve and the store's backup, restore and prune; ``rldp[demo]`` adds the demo and the
experiments. This module sits above every package, so it imports them
downwards only, and only the part a command needs (starting ``rldp privatize`` never loads
scipy). A command whose part's dependencies are not installed answers with the extra to
install (exit 2), never a traceback.

Every command prints one clear line on stderr and exits 2 on bad input, never a traceback
(set RLDP_DEBUG=1 to see one). Each part's CLI module defines ``add_parser(subparsers)``
and sets ``func`` on its parsers; ``func(args)`` returns the exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

from rldp import __version__
from rldp.shared.errors import RldpError, one_line
from rldp.shared.interrupts import take_ctrl_c

__all__ = ["main", "build_parser", "install_hint", "COMMAND_GROUPS"]

EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def _client_cli() -> ModuleType:
    from rldp.client import cli  # numpy, requests, msgpack only

    return cli


def _operator_cli() -> ModuleType:
    from rldp.admin import cli  # the operator's SDK over the client's: requests, numpy, msgpack

    return cli


def _token_cli() -> ModuleType:
    from rldp.admin import token_cli  # the standard library only: tokens are made anywhere

    return token_cli


def _aggregator_cli() -> ModuleType:
    from rldp.aggregator import cli  # scipy, pycddlib, highspy (the designers)

    return cli


def _store_cli() -> ModuleType:
    from rldp.aggregator.cli import store  # the storage (psycopg only for a PostgreSQL store)

    return store


def _serve_cli() -> ModuleType:
    from rldp.aggregator.http import serve  # flask, granian, psycopg, prometheus_client

    return serve


def _data_cli() -> ModuleType:
    from rldp.demo import data_cli  # the standard library and the shipped data: a client install is enough

    return data_cli


def _demo_cli() -> ModuleType:
    from rldp.demo import cli  # the aggregator's dependencies and matplotlib

    return cli


@dataclass(frozen=True)
class CommandGroup:
    """Subcommands one part of rldp provides (each with the one line ``--help`` lists it with when its
    part is not installed), how to load them, and the extra that installs them."""

    helps: dict[str, str]
    load: Callable[[], ModuleType]
    extra: str

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(self.helps)


COMMAND_GROUPS: tuple[CommandGroup, ...] = (
    CommandGroup(
        {
            "design": "design an audited mechanism from a public CSV",
            "audit": "audit a mechanism document (exit 0 if it passes)",
            "evaluate": "utility and realised epsilon of a mechanism",
        },
        _aggregator_cli,
        "rldp[aggregator]",
    ),
    CommandGroup({"serve": "run the aggregator HTTP service"}, _serve_cli, "rldp[aggregator]"),
    CommandGroup(
        {
            "backup": "back up the store (safe while the server runs)",
            "restore": "restore a backup into an empty store (stop the server first)",
            "prune": "remove reports received before a date",
        },
        _store_cli,
        "rldp[aggregator]",
    ),
    CommandGroup({"token": "make a bearer token (or hash one) for the service"}, _token_cli, "rldp"),
    CommandGroup({"privatize": "privatise a CSV of records locally and submit the outputs"}, _client_cli, "rldp"),
    CommandGroup(
        {
            name: "operate an aggregator over its HTTP API"
            for name in ("publish", "mechanisms", "estimate", "retire", "jobs", "job", "collections", "collection")
        },
        _operator_cli,
        "rldp",
    ),
    CommandGroup({"data": "write the shipped example data (UCI Adult) as CSV files"}, _data_cli, "rldp"),
    CommandGroup(
        {
            "demo": "simulate many users on census data, end to end",
            "experiment": "reproduce an experiment of the papers (CSV + PNG)",
        },
        _demo_cli,
        "rldp[demo]",
    ),
)


def _missing_dependency(exc: ModuleNotFoundError) -> str | None:
    """The third-party module whose absence ``exc`` reports, or None if rldp itself is broken."""
    name = (exc.name or "").split(".")[0]
    return None if name in ("", "rldp") else name


def install_hint(extra: str) -> str:
    """How to install ``extra`` ("rldp[aggregator]"): from the clone, the way that works without a package index
    that has rldp (the index name alone answers "No matching distribution" where rldp is not published)."""
    local = extra.replace("rldp", ".", 1) if extra.startswith("rldp[") else "."
    return f"pip install '{local}' in rldp's source folder (or pip install '{extra}' from an index that has rldp)"


class MissingExtra(RldpError):
    """A command whose part of rldp is installed without its dependencies."""

    def __init__(self, group: CommandGroup, command: str, missing: str) -> None:
        super().__init__(
            f"this command needs {group.extra} (the module {missing!r} is not installed); "
            f"install it with: {install_hint(group.extra)}"
        )
        self.command = command


def _load(group: CommandGroup, command: str | None) -> ModuleType | None:
    """The group's CLI module; None if its dependencies are missing and ``command`` is not its own."""
    try:
        return group.load()
    except ModuleNotFoundError as exc:
        missing = _missing_dependency(exc)
        if missing is None:
            raise
        if command in group.commands:
            raise MissingExtra(group, command, missing) from None
        return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The root parser; with ``command``, only the part providing it is loaded.

    Raises :class:`MissingExtra` when ``command``'s part lacks its dependencies; commands of
    other such parts are listed in ``--help`` with the extra they need.
    """
    parser = argparse.ArgumentParser(prog="rldp", description="Robust local differential privacy toolkit.")
    parser.add_argument("--version", action="version", version=f"rldp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups = [g for g in COMMAND_GROUPS if command in g.commands] or list(COMMAND_GROUPS)
    for group in groups:
        module = _load(group, command)
        if module is not None:
            module.add_parser(sub)
        else:
            for name in group.commands:
                sub.add_parser(name, help=f"{group.helps[name]} (needs {group.extra}: {install_hint(group.extra)})")
    return parser


def _message(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"no such file: {exc.filename}"
    return one_line(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``rldp`` command; returns its exit status."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # while a command's part loads (scipy's import takes ~0.4 s): before it ran
        print("rldp: interrupted before the command started; nothing done", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    if first is None and "--version" in args_list:  # answered before any part of rldp is loaded
        print(f"rldp {__version__}")
        return 0
    if first == "design":  # as early as can be: answer Ctrl-C even when started with it ignored
        take_ctrl_c()
    try:
        parser = build_parser(first)
    except MissingExtra as exc:
        print(f"rldp {exc.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(args_list)
    if getattr(args, "func", None) is None:  # listed only: its part's dependencies are missing
        parser.error(f"{args.command} needs more of rldp installed (see rldp --help)")
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away shows here, not as noise at exit
        return status
    except BrokenPipeError:  # rldp … | head: the reader stopped reading; like any Unix tool, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except ModuleNotFoundError as exc:  # a dependency imported only on this command's path
        missing = _missing_dependency(exc)
        if missing is None or os.environ.get("RLDP_DEBUG"):
            raise
        group = next(g for g in COMMAND_GROUPS if args.command in g.commands)
        print(f"rldp {args.command}: {MissingExtra(group, args.command, missing)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rldp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (RldpError, ValueError, OSError, LookupError) as exc:
        if os.environ.get("RLDP_DEBUG"):
            raise
        print(f"rldp {args.command}: error: {_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get("RLDP_DEBUG"):
            raise
        print(
            f"rldp {args.command}: internal error ({type(exc).__name__}): {_message(exc)} "
            "(set RLDP_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
