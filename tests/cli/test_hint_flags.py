"""Every ``--flag`` an error message, a warning or a help text names exists on the command that prints it
(issue 27 rough edge: ``rldp privatize`` said "see --delimiter" and "--encoding", flags it did not have).

The hints are found in the sources: string constants inside ``raise …(…)``, calls of ``print``/``error``/
``warn``/``warning``/``say``/``write``, ``ArgumentTypeError``, ``help=`` keywords and variables named ``hint``/``advice``/``message`` (docstrings and
command lines built for subprocesses are not hints). A module that defines a command's function speaks for
that command; the modules of a package that serves one command (``demo/run``: ``rldp demo``) for it; any
other module for some command; and the CSV reader's hints (``rldp.shared.tables``) for every command that
reads a CSV through it."""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import pytest

import rldp.cli as root

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("client", "shared", "aggregator", "demo", "rldp")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
_SPEAKERS = {"print", "error", "warn", "warning", "say", "write", "ArgumentTypeError", "exit"}
#: Packages whose every module serves one command (or these commands).
_PACKAGE_COMMANDS = {
    "demo/run": {"demo"},
    "demo/experiments": {"experiment"},
    "aggregator/http": {"serve"},
    "aggregator/cli": {"design", "audit", "evaluate"},
}
#: Modules whose hints reach every command that reads a CSV with them (the commands whose module calls these).
_CSV_READERS = {"shared/tables.py": ("read_csv(", "read_public(", "read_public_numeric(")}


def _commands() -> dict[str, tuple[set[str], str]]:
    """Each leaf command ("collection create") -> (its long flags, the file defining its function)."""
    out: dict[str, tuple[set[str], str]] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and path:
            flags = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
            func = parser.get_default("func")
            module = sys.modules[func.__module__].__file__ if func is not None else ""
            out[" ".join(path)] = (flags, str(Path(module or "").resolve()))
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*path, name))

    walk(root.build_parser(), ())
    return out


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def hints(path: Path) -> list[tuple[int, str]]:
    """(line, flag) for every --flag named in a hint of ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        texts: list[str] = []
        if isinstance(node, ast.Raise) and node.exc is not None:
            texts = _strings(node.exc)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and re.search("hint|advice|message", t.id) for t in node.targets
        ):
            texts = _strings(node.value)  # a hint put together before the raise that prints it
        elif isinstance(node, ast.Call):
            if _callee(node) in _SPEAKERS:
                texts = [s for arg in node.args for s in _strings(arg)]
            texts += [s for kw in node.keywords if kw.arg == "help" for s in _strings(kw.value)]
        found += [(getattr(node, "lineno", 0), "--" + m) for text in texts for m in _FLAG.findall(text)]
    return found


def _files() -> list[Path]:
    return [p for d in SOURCES for p in sorted((ROOT / d).rglob("*.py")) if "tests" not in p.parts]


COMMANDS = _commands()
ALL_FLAGS = {f for flags, _ in COMMANDS.values() for f in flags} | {"--version", "--help"}


def _speaks_for(path: Path) -> set[str] | None:
    """The commands ``path``'s hints must name flags of (None: any command)."""
    own = {name for name, (_, module) in COMMANDS.items() if module == str(path.resolve())}
    if own:
        return own
    rel = path.relative_to(ROOT).as_posix()
    for package, commands in _PACKAGE_COMMANDS.items():
        if rel.startswith(package + "/"):
            return commands
    return None


def test_the_scan_sees_the_hints() -> None:
    assert "--delimiter" in {f for _, f in hints(ROOT / "shared" / "tables.py")}, "the scan misses raise hints"
    assert {"privatize", "design", "audit", "evaluate"} <= set(COMMANDS)


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_flag_a_hint_names_exists_on_its_command(path: Path) -> None:
    commands = _speaks_for(path)
    allowed = ALL_FLAGS if commands is None else {f for c in commands for f in COMMANDS[c][0]} | {"--help"}
    missing = [f"line {line}: {flag}" for line, flag in hints(path) if flag not in allowed]
    assert not missing, f"{path.relative_to(ROOT)} names flags {sorted(commands or ['any'])} lack: {missing}"


@pytest.mark.parametrize("reader", sorted(_CSV_READERS))
def test_every_command_reading_a_csv_has_the_flags_its_reader_names(reader: str) -> None:
    named = {flag for _, flag in hints(ROOT / reader)}
    assert named, reader
    readers = {
        name
        for name, (_, module) in COMMANDS.items()
        if any(call in Path(module).read_text(encoding="utf-8") for call in _CSV_READERS[reader])
    }
    assert {"privatize", "design", "audit", "evaluate"} <= readers, readers
    lacking = {name: sorted(named - COMMANDS[name][0]) for name in readers if named - COMMANDS[name][0]}
    assert not lacking, f"{reader}'s hints name {sorted(named)}; these commands read CSVs without them: {lacking}"
