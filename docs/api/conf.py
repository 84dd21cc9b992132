"""Sphinx configuration of the API reference: ``make docs`` builds it into build/docs, warnings as errors.

``REFERENCE`` is what the reference documents (each entry is the ``automodule`` of its page, which
documents the names of the module's ``__all__``); ``INTERNAL`` is every other module of rldp, with why
it is not part of the API. tests/architecture/test_docs.py checks that every module of the package
tree is in one of the two, inside a package that is, or a package that only groups them (``rldp``,
``rldp.shared``, ``rldp.aggregator``): a new module cannot fall out of the reference unnoticed.
"""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version as _version
from typing import Any

from sphinx.pycode import ModuleAnalyzer

project = "rldp"
author = "the rldp authors"
release = _version("rldp")
version = release

# {module: the page (docs/api/<page>.rst) that documents it}
REFERENCE = {
    "rldp.client": "client",
    "rldp.admin": "admin",
    "rldp.shared.document": "shared",
    "rldp.shared.audit": "shared",
    "rldp.shared.errors": "shared",
    "rldp.shared.parameters": "shared",
    "rldp.shared.collection": "shared",
    "rldp.shared.pilot": "shared",
    "rldp.shared.numeric": "shared",
    "rldp.aggregator.design": "designers",
    "rldp.aggregator.estimate": "estimate",
    "rldp.aggregator.services": "services",
}

_SHARED = "a building block of the client and the aggregator, reached through the documented modules"
# {module: why it is not in the reference}
INTERNAL = {
    "rldp.cli": "the rldp command (rldp --help documents it)",
    "rldp.demo": "the demo and the papers' experiments (rldp demo)",
    "rldp.aggregator.cli": "rldp design / audit / evaluate (rldp --help documents them)",
    "rldp.aggregator.http": "the HTTP API: documented by its OpenAPI description at /docs of rldp serve",
    "rldp.aggregator.storage": "the service's storage, reached through rldp.aggregator.services",
    "rldp.aggregator.writer": "the SQLite writer process, reached through rldp.aggregator.services",
    "rldp.aggregator.scheduling": "the service's background scheduling, reached through rldp.aggregator.services",
    "rldp.aggregator.frames": "DataFrames in and out: reached through Estimate.to_frame and Mechanism.privatize",
    "rldp.shared.arguments": "the command lines' argument types",
    "rldp.shared.interrupts": "how the commands take Ctrl-C (rldp --help documents the commands)",
    "rldp.shared.problems": "the refusals both sides raise, documented where rldp.client and rldp.aggregator.services export them",
    "rldp.shared.attributes": _SHARED,
    "rldp.shared.ball_search": _SHARED,
    "rldp.shared.box_bounds": _SHARED,
    "rldp.shared.claims": _SHARED,
    "rldp.shared.columns": _SHARED,
    "rldp.shared.distp_measures": _SHARED,
    "rldp.shared.divergence": _SHARED,
    "rldp.shared.fixed_width": _SHARED,
    "rldp.shared.format_characters": "a data table (the format characters of Unicode 14.0), read by rldp.shared.parameters",
    "rldp.shared.information": _SHARED,
    "rldp.shared.lift": _SHARED,
    "rldp.shared.line_search": _SHARED,
    "rldp.shared.notions": _SHARED,
    "rldp.shared.paths": _SHARED,
    "rldp.shared.pilot_dual": "the pilot's dual ball, a step of rldp.shared.pilot (documented there)",
    "rldp.shared.probability": _SHARED,
    "rldp.shared.provenance": _SHARED,
    "rldp.shared.public_counts": _SHARED,
    "rldp.shared.python_strings": _SHARED,
    "rldp.shared.records": _SHARED,
    "rldp.shared.reports": _SHARED,
    "rldp.shared.tables": _SHARED,
    "rldp.shared.tokens": _SHARED,
    "rldp.shared.tolerances": _SHARED,
    "rldp.shared.uncertainty": _SHARED,
}

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns: list[str] = []

# The documented names are each module's __all__ (re-exports included), in the order written there.
autodoc_default_options = {"members": True, "undoc-members": True, "imported-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Google- and NumPy-style sections (Args:, Returns:, ...) read as fields; plain reST passes through.
napoleon_google_docstring = True
napoleon_numpy_docstring = True

# docs/design.md and docs/references.md are included as pages; their headings are link targets.
myst_heading_anchors = 3

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"rldp {release} API reference"


# rldp's docstrings are plain-text mathematics: a bar is a cardinality or an absolute value
# (|X|, |S|·|U|, |Y'|), never a reST substitution (no docstring uses one). The bars are escaped
# outside inline literals and literal blocks, so that docutils reads them as the text they are.
_INLINE = re.compile(r"(``.+?``|`[^`]*`_{0,2})", re.S)


def _escape_bars(text: str) -> str:
    parts = _INLINE.split(text)
    return "".join(part if i % 2 else part.replace("|", "\\|") for i, part in enumerate(parts))


def _constants(module: Any) -> list[str]:
    """A py:data entry for each name of the module's ``__all__`` that is a value, not a class or a
    function: autodoc documents only the values with a doc comment in the module itself (``#:``),
    and most are re-exported from where they are defined."""
    documented = {name for _, name in ModuleAnalyzer.for_module(module.__name__).find_attr_docs()}
    lines: list[str] = []
    for name in getattr(module, "__all__", ()):
        value = getattr(module, name)
        if name in documented or inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value):
            continue
        text = " ".join(repr(value).split())
        text = text if len(text) <= 80 else text[:79] + "…"
        lines += ["", f".. py:data:: {name}", f"   :value: {text}"]
    return ["", ".. rubric:: Constants", *lines] if lines else []


def _process_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    # Lines of literal blocks (the indented lines after a "::") and doctests keep their bars.
    literal = [False] * len(lines)
    parent: int | None = None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if parent is not None and (not line.strip() or indent > parent):
            literal[i] = True
            continue
        parent = indent if line.rstrip().endswith("::") else None
        literal[i] = line.lstrip().startswith(">>>")
    # The rest, run by run: an inline literal may span lines.
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and literal[end] == literal[start]:
            end += 1
        if not literal[start]:
            lines[start:end] = _escape_bars("\n".join(lines[start:end])).split("\n")
        start = end
    if what == "module":
        lines.extend(_constants(obj))


def setup(app: Any) -> dict[str, bool]:
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"parallel_read_safe": True}
