"""No library code outside a notion's own module chooses behaviour by comparing a notion's name.

A notion (rldp, ldp, lip, alip, srlip, distp) is one object in ``shared/notions/`` that carries its
behaviour (docs/design.md, "The notions"); code elsewhere asks the object (an attribute, a method, the
designers registered for it), never ``notion == "distp"`` or ``notion in ("lip", "alip")``. The scan is on the
syntax tree: a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``) or a ``match``/``case`` with a notion's
name as a string constant, alone or in a tuple, list or set of constants. Passing a name (the audits'
``AuditResult("rldp", …)``, a designer's ``notions = frozenset({"rldp"})``) is not a comparison.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

#: The library packages (the demo is not library code).
LIBRARY = ("shared", "client", "admin", "aggregator")
#: Where a notion's name may be compared: its own module.
NOTION_HOME = ROOT / "shared" / "notions"
#: The notions' names (written out: the scan must not trust the registry it guards).
NAMES = frozenset({"rldp", "ldp", "lip", "alip", "srlip", "distp"})


def _names_in(node: ast.AST) -> list[str]:
    """The notion names a comparison operand or case pattern spells as constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [name for element in node.elts for name in _names_in(element)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple"):
        return [name for arg in node.args for name in _names_in(arg)]
    if isinstance(node, ast.MatchValue):
        return _names_in(node.value)
    if isinstance(node, ast.MatchOr):
        return [name for pattern in node.patterns for name in _names_in(pattern)]
    return []


def name_comparisons(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, names) of every comparison of a notion's name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            names = [n for operand in (node.left, *node.comparators) for n in _names_in(operand)]
        elif isinstance(node, ast.match_case):
            names = _names_in(node.pattern)
        else:
            continue
        if names:
            found.append((node.lineno if isinstance(node, ast.Compare) else node.pattern.lineno, ", ".join(names)))
    return found


def library_comparisons() -> dict[str, list[tuple[int, str]]]:
    """Every comparison of a notion's name in library code outside ``shared/notions/``, by file."""
    out = {}
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if NOTION_HOME in path.parents:
                continue
            found = name_comparisons(path.read_text(encoding="utf-8"), str(path))
            if found:
                out[str(path.relative_to(ROOT))] = found
    return out


def test_no_notion_name_is_compared_outside_its_module() -> None:
    found = library_comparisons()
    assert not found, (
        "library code compares a notion's name (ask the notion object in rldp.shared.notions instead: "
        f"an attribute, a method, or the designers registered for it): {found}"
    )


def test_the_scan_finds_a_planted_comparison() -> None:
    planted = (
        "def f(doc, kind):\n"
        "    if doc['privacy']['notion'] == 'distp':\n"
        "        return 1\n"
        "    if kind in ('lip', 'alip'):\n"
        "        return 2\n"
        "    match kind:\n"
        "        case 'srlip':\n"
        "            return 3\n"
        "    return AuditResult('rldp', 0.0)\n"
    )
    assert name_comparisons(planted) == [(2, "distp"), (4, "lip, alip"), (7, "srlip")]
    # Naming a notion is not comparing it; other strings are not notion names.
    assert name_comparisons("x = frozenset({'rldp', 'distp'})\ny = AuditResult('ldp', 1.0)\nz = m == 'grr'\n") == []


def test_the_library_scan_covers_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comparison planted in a library file is reported by the same walk the real test uses."""
    for folder in LIBRARY:
        (tmp_path / folder).mkdir()
    (tmp_path / "shared" / "notions").mkdir()
    (tmp_path / "aggregator" / "planted.py").write_text("ok = notion != 'rldp'\n", encoding="utf-8")
    (tmp_path / "shared" / "notions" / "rldp.py").write_text("ok = notion == 'rldp'\n", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "NOTION_HOME", tmp_path / "shared" / "notions")
    assert library_comparisons() == {"aggregator/planted.py": [(1, "rldp")]}
