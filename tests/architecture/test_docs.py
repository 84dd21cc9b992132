"""The API reference (`make docs`, docs/api) keeps up with the package tree, checked without building it.

docs/api/conf.py lists the modules the reference documents (``REFERENCE``: module → page) and every
other module with why it is left out (``INTERNAL``). A module of the tree in neither, and not inside
a package in either, would silently fall out of the reference: these tests fail instead.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

DOCS = ROOT / "docs" / "api"
CONF = DOCS / "conf.py"


def _conf_tables() -> dict[str, dict[str, str]]:
    """REFERENCE and INTERNAL of docs/api/conf.py, read from its source (no Sphinx import)."""
    namespace: dict[str, Any] = {}
    for node in ast.parse(CONF.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if set(names) & {"REFERENCE", "INTERNAL", "_SHARED"}:
                value = eval(compile(ast.Expression(node.value), str(CONF), "eval"), {"__builtins__": {}}, namespace)
                namespace.update(dict.fromkeys(names, value))
    assert {"REFERENCE", "INTERNAL"} <= set(namespace), "docs/api/conf.py must define REFERENCE and INTERNAL"
    return {"REFERENCE": namespace["REFERENCE"], "INTERNAL": namespace["INTERNAL"]}


def _tree_modules() -> dict[str, Path]:
    """{dotted name: file} of every public module of rldp, from pyproject's package-dir map."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    modules: dict[str, Path] = {}
    for package, folder in config["tool"]["setuptools"]["package-dir"].items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(part.startswith("_") for part in parts):
                continue  # private: rldp.client._alias and the like
            modules[".".join((package, *parts))] = path
    return modules


def _uncovered(modules: set[str], listed: set[str]) -> list[str]:
    """The modules neither listed, nor inside a listed package, nor a package that groups listed ones."""

    def covered(module: str) -> bool:
        parts = module.split(".")
        inside = any(".".join(parts[:i]) in listed for i in range(1, len(parts) + 1))
        return inside or any(entry.startswith(module + ".") for entry in listed)

    return sorted(m for m in modules if not covered(m))


def test_every_module_is_in_the_reference_or_declared_internal() -> None:
    tables = _conf_tables()
    missing = _uncovered(set(_tree_modules()), set(tables["REFERENCE"]) | set(tables["INTERNAL"]))
    assert not missing, (
        f"modules neither in the API reference nor declared internal: {missing}; add each to REFERENCE "
        "(and the automodule of its page in docs/api/) or to INTERNAL, with why, in docs/api/conf.py"
    )


def test_the_check_sees_a_new_module() -> None:
    # The rule itself: a module added beside documented ones is not covered by their listing.
    listed = {"rldp.client", "rldp.shared.pilot"}
    assert _uncovered({"rldp.shared", "rldp.shared.pilot", "rldp.client.new", "rldp.shared.new"}, listed) == [
        "rldp.shared.new"
    ]


def test_no_stale_or_double_entry() -> None:
    tables = _conf_tables()
    modules = _tree_modules()
    stale = sorted((set(tables["REFERENCE"]) | set(tables["INTERNAL"])) - set(modules))
    assert not stale, f"docs/api/conf.py lists modules the tree does not have: {stale}"
    both = sorted(set(tables["REFERENCE"]) & set(tables["INTERNAL"]))
    assert not both, f"in both REFERENCE and INTERNAL: {both}"


def _assigned_names(path: Path) -> set[str]:
    """The names a module assigns at its top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_each_documented_module_has_its_page_and_its_all() -> None:
    reference = _conf_tables()["REFERENCE"]
    directives: dict[str, str] = {}
    for page in DOCS.glob("*.rst"):
        for module in re.findall(r"^\.\. automodule:: (\S+)\s*$", page.read_text(encoding="utf-8"), re.M):
            directives[module] = page.stem
    assert directives == reference, (
        "the automodule directives of docs/api/*.rst and REFERENCE in docs/api/conf.py disagree: "
        f"only on the pages {sorted(set(directives) - set(reference))}, only in REFERENCE "
        f"{sorted(set(reference) - set(directives))}, on another page "
        f"{sorted(m for m in set(directives) & set(reference) if directives[m] != reference[m])}"
    )
    # The reference documents each module's __all__ with its re-exports (imported-members): a module
    # without __all__ would list every name it imports.
    modules = _tree_modules()
    without_all = [module for module in reference if "__all__" not in _assigned_names(modules[module])]
    assert not without_all, f"documented modules without __all__: {without_all}"


def test_make_docs_fails_on_a_warning_and_ci_runs_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^docs:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "the Makefile has no docs target"
    assert re.search(r"sphinx .*-W .*docs/api build/docs", recipe.group(1)), recipe.group(1)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make docs\b", ci, re.M), ".ci/run does not build the API reference"


def test_bars_are_text_outside_literals() -> None:
    # |X| is a cardinality in rldp's docstrings, never a reST substitution; literals keep their bars.
    pytest.importorskip("sphinx")
    import runpy

    process = runpy.run_path(str(CONF))["_process_docstring"]
    lines = [
        "Q is |Y| × |X|; ``{a: 1 | None,",
        "b}`` stays, :class:`A|B` too::",
        "",
        "    x = |u|",
        "",
        "Back to |S|.",
        ">>> abs(-1) | 0",
    ]
    process(None, "function", "f", None, None, lines)
    assert lines == [
        r"Q is \|Y\| × \|X\|; ``{a: 1 | None,",
        "b}`` stays, :class:`A|B` too::",
        "",
        "    x = |u|",
        "",
        r"Back to \|S\|.",
        ">>> abs(-1) | 0",
    ]
