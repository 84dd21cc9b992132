"""The house's properties: module sizes, no import cycles, packaging, citations, light client.

Each is a property the layout promises (docs/design.md, "Architecture"); the import
*contracts* themselves are checked by import-linter in `make lint`.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGES = ("shared", "client", "admin", "aggregator", "demo")
MAX_MODULE_LINES = 400


def _package_dir() -> dict[str, str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["package-dir"]


def _sources() -> list[Path]:
    return sorted(p for folder in (*PACKAGES, "rldp") for p in (ROOT / folder).rglob("*.py"))


def test_no_module_over_the_size_limit() -> None:
    too_long = {
        str(path.relative_to(ROOT)): n
        for path in _sources()
        if path.parts[len(ROOT.parts)] in PACKAGES
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {too_long}"


def test_every_package_directory_is_packaged() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for package, folder in _package_dir().items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join((package, *rel.parts)))
    assert found == listed, f"pyproject [tool.setuptools] packages: missing {found - listed}, stale {listed - found}"


# Run in a fresh interpreter: this process has imported rldp from the editable install, which
# maps rldp.shared to shared/ and so on at import time; grimp, handed that package, saw 2 of the
# ~200 modules and found no cycle however many there were.
_GRAPH_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import grimp
graph = grimp.build_graph("rldp", cache_dir=None)
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))
"""


def _tree_modules(tree: Path) -> set[str]:
    """Every module the package tree holds, by its files (a package is its ``__init__``)."""
    modules = set()
    for path in (tree / "rldp").rglob("*.py"):
        parts = path.relative_to(tree).with_suffix("").parts
        modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


@pytest.fixture(scope="module")
def import_graph() -> dict[str, list[str]]:
    """{module: the modules it imports, at module level or inside a function} over the package tree
    `make lint` gives import-linter (tools/package_tree.py), built by grimp in a fresh process."""
    tree = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "package_tree.py")], check=True, capture_output=True, text=True
    ).stdout.strip()
    proc = subprocess.run(
        [sys.executable, "-c", _GRAPH_SCRIPT, tree], capture_output=True, text=True, timeout=300, cwd=tree
    )
    assert proc.returncode == 0, proc.stderr
    graph: dict[str, list[str]] = json.loads(proc.stdout)
    missing = _tree_modules(Path(tree)) - set(graph)
    assert not missing, (
        f"the import graph misses {len(missing)} of the tree's modules (built from another rldp?): {sorted(missing)[:5]}"
    )
    return graph


def test_no_import_cycle(import_graph: dict[str, list[str]]) -> None:
    # Tarjan's strongly connected components over every import (a function's too): any component of
    # more than one module is a cycle.
    # A package's __init__ importing its own submodules is how it re-exports its API: those edges
    # are left out (a child importing its package is kept), and so are the imports the acyclic
    # contract of pyproject.toml ignores (each with its reason there).
    ignored = set()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "acyclic_siblings":
            ignored |= {tuple(part.strip() for part in line.split("->")) for line in contract.get("ignore_imports", [])}
    graph = {
        module: [m for m in imported if not m.startswith(module + ".") and (module, m) not in ignored]
        for module, imported in import_graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


# "seed 000", "issue 5", "DESIGN.md" (the workspace's design notes, not docs/design.md) resolve nowhere in the repository.
_BANNED_CITATIONS = re.compile(r"(?i:\bseed 00\d\b|\bissues? #?\d+\b)|\bDESIGN\.md")


def test_citations_resolve_inside_the_repository() -> None:
    texts = [*_sources(), *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    offenders = []
    for path in texts:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _BANNED_CITATIONS.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "cite papers as [KEY, Thm n] (docs/references.md), not:\n" + "\n".join(offenders)


def test_every_citation_key_is_in_the_references() -> None:
    references = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    known = set(re.findall(r"^\|\s*\[([A-Z][A-Za-z]+\d\d)\]", references, re.MULTILINE))
    assert {"LZG24", "LZG21", "LTS20", "ZDS23", "KM19"} <= known
    used = {key for path in _sources() for key in re.findall(r"\[([A-Z]{2,4}\d\d)[,\]]", path.read_text("utf-8"))}
    assert used <= known, f"citation keys missing from docs/references.md: {used - known}"


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_client_loads_neither_scipy_nor_flask() -> None:
    proc = _run_python(
        "import sys, rldp.client, rldp.client.cli, rldp.admin, rldp.admin.cli\n"
        "heavy = sorted(m for m in ('scipy', 'flask', 'werkzeug', 'cdd', 'highspy') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"importing rldp.client loaded {proc.stdout.strip()}"


@pytest.mark.parametrize("command", ["serve", "demo", "experiment"])
def test_a_client_only_install_names_the_extra(command: str) -> None:
    # None in sys.modules makes `import scipy` / `import flask` fail as if not installed.
    proc = _run_python(
        "import sys\n"
        "for name in ('scipy', 'flask', 'matplotlib'): sys.modules[name] = None\n"
        "from rldp.cli import main\n"
        f"sys.exit(main([{command!r}, '--help']))"
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "pip install 'rldp[" in proc.stderr and "internal error" not in proc.stderr
    # From a clone, the way that works without a package index that has rldp (issue 37).
    assert "pip install '.[" in proc.stderr and "source folder" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_token_works_on_a_client_only_install() -> None:
    # Issue 27 rough edge: `rldp token` needed flask to print a random string and its SHA-256.
    proc = _run_python(
        "import hashlib, sys\n"
        "for name in ('scipy', 'flask', 'matplotlib', 'granian'): sys.modules[name] = None\n"
        "from rldp.cli import main\n"
        "sys.exit(main(['token']))"
    )
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(None, 1) for line in proc.stdout.strip().splitlines())
    assert hashlib.sha256(lines["token"].encode()).hexdigest() == lines["sha256"]


def test_the_client_command_works_without_the_aggregator() -> None:
    proc = _run_python(
        "import sys\n"
        "for name in ('scipy', 'flask', 'matplotlib'): sys.modules[name] = None\n"
        "from rldp.cli import main\n"
        "sys.exit(main(['privatize', '--help']))"
    )
    assert proc.returncode == 0, proc.stderr
    assert "--mechanism" in proc.stdout


# Concepts with exactly one home: (what, the definition's pattern, the one file allowed to have it).
_ONE_HOME = [
    ("the one-line error formatter", r"def _?one_line\(", "shared/errors.py"),
    ("the design margin", r"^DESIGN_MARGIN\s*=|1 - 1e-7", "shared/tolerances.py"),
    ("the stochastic tolerance", r"^STOCHASTIC_TOL(ERANCE)?\s*=", "shared/tolerances.py"),
    ("the audit tolerance", r"^AUDIT_TOLERANCE\s*=", "shared/tolerances.py"),
    ("the radius tolerance", r"^_?RADIUS_RTOL\s*=", "shared/tolerances.py"),
    ("the Γ cone", r"^class GammaCone\b|def gamma_inequalities\(", "aggregator/design/primitives/cone.py"),
    ("the packed report batch", r"^def (pack_reports|unpack_reports|encode_batch)\(", "shared/reports.py"),
    ("the column-sum check of Q", r"every column (Q\(·\|x\) )?must sum to 1", "shared/probability.py"),
]


@pytest.mark.parametrize(("what", "pattern", "home"), _ONE_HOME, ids=[row[0] for row in _ONE_HOME])
def test_one_home(what: str, pattern: str, home: str) -> None:
    regex = re.compile(pattern, re.MULTILINE)
    places = sorted(str(p.relative_to(ROOT)) for p in _sources() if regex.search(p.read_text(encoding="utf-8")))
    assert places == [home], f"{what} must be defined in {home} only; found in {places}"


def test_the_version_has_one_source() -> None:
    import rldp

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert rldp.__version__ == config["project"]["version"]
    literal = re.compile(r"^__version__\s*=\s*['\"]", re.MULTILINE)
    assert not [str(p) for p in _sources() if literal.search(p.read_text(encoding="utf-8"))]


def test_the_package_is_marked_typed() -> None:
    # PEP 561: the marker in the top-level package covers its subpackages, and must be package data.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (ROOT / "rldp" / "py.typed").is_file()
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["rldp"]


_AGGREGATOR_ONLY = ("rldp.aggregator", "rldp.demo.run", "rldp_live", "werkzeug", "flask", "scipy", "cdd", "highspy")


def test_the_client_tests_import_nothing_of_the_aggregator_at_module_level() -> None:
    # `make test-client-only` runs tests/client on an install without extras; a module-level import
    # of the aggregator (or of tests/rldp_live.py) there fails its collection. Inside a test, an
    # import is allowed when the test is live or skips without the extra (pytest.importorskip).
    import ast

    tests = ROOT / "tests"
    files = [
        *sorted((tests / "client").glob("*.py")),
        *sorted((tests / "admin").glob("*.py")),
        tests / "conftest.py",
        tests / "helpers.py",
        tests / "documents.py",
    ]
    offenders = []
    for path in files:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.startswith(_AGGREGATOR_ONLY)]
    assert not offenders, offenders
