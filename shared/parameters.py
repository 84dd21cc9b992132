"""One validator per kind of repeated parameter: ε, δ, β, the radius, the Rényi order, counts, texts.

Every boundary (the design request, the service's JSON, the CLI's flags, a document's privacy block,
the client's policy) checks these parameters through the functions here, so each rule and its message
exist once. A validator returns the value as a Python number and raises ``error(message,
parameter=name)`` — the boundary's own error type (:class:`ParameterError` by default; the design
request passes its DesignError kind, the service its problem type) — with a message that names the
parameter, its range and what was given.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .errors import ParameterError
from .format_characters import FORMAT_CHARACTERS

__all__ = [
    "ErrorFactory",
    "check_number",
    "check_epsilon",
    "check_design_epsilon",
    "MAX_DESIGN_EPSILON",
    "check_delta",
    "check_beta",
    "check_radius",
    "check_order",
    "check_count",
    "check_text",
    "unsafe_character",
    "character_name",
    "UNSAFE_CATEGORIES",
    "describe",
    "DEFAULT_MAX_BETA",
]

#: The largest significance level β a service publishes and a client accepts by default: β → 1 shrinks
#: the confidence set F to a point, so β is part of the trust check. 0.05 is rldp design's default and
#: covers the confidence set of every shipped design.
DEFAULT_MAX_BETA = 0.05


class ErrorFactory(Protocol):
    def __call__(self, message: str, *, parameter: str) -> Exception: ...


def describe(value: Any) -> str:
    """A short description of a given value for an error message (its repr, cut to 60 characters)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))


def check_number(
    value: Any,
    name: str,
    *,
    accept: Callable[[float], bool] = math.isfinite,
    expected: str = "a finite number",
    error: ErrorFactory = ParameterError,
) -> float:
    """``value`` as a float, if it is a number (not a bool) that ``accept`` takes; else ``error``."""
    if not _is_number(value) or math.isnan(float(value)) or not accept(float(value)):
        raise error(f"{name} must be {expected}; got {describe(value)}", parameter=name)
    return float(value)


def check_epsilon(
    value: Any, name: str = "epsilon", *, zero: bool = False, error: ErrorFactory = ParameterError
) -> float:
    """A privacy level ε in nats: finite and > 0 (≥ 0 with ``zero``: (0, δ)-DistP is a claim [KM19, Def 3])."""
    if zero:
        return check_number(
            value,
            name,
            accept=lambda v: math.isfinite(v) and v >= 0,
            expected="a finite number ≥ 0 (nats)",
            error=error,
        )
    return check_number(
        value, name, accept=lambda v: math.isfinite(v) and v > 0, expected="a finite number > 0 (nats)", error=error
    )


#: The largest ε (nats) rldp designs for. Above it e^-ε, the weight a mechanism such as GRR gives every
#: other record, is no longer a normal double (below 2^-1022 from ε ≈ 708.4): GRR's audited ε drifts
#: from its claim (744.3 for 745) and turns infinite from ε ≈ 745, where e^-ε underflows to 0.
#: Long before that a design releases the data as it is (see rldp.aggregator.design's warning).
MAX_DESIGN_EPSILON = 700.0


def check_design_epsilon(
    value: Any, name: str = "epsilon", *, zero: bool = False, error: ErrorFactory = ParameterError
) -> float:
    """A privacy level to design for: :func:`check_epsilon`, and at most :data:`MAX_DESIGN_EPSILON`."""
    eps = check_epsilon(value, name, zero=zero, error=error)
    if eps > MAX_DESIGN_EPSILON:
        raise error(
            f"{name} must be at most {MAX_DESIGN_EPSILON:g} nats to design for; got {describe(value)} (e^-{name}, the "
            "noise of GRR and of every design, is then below double precision: the audit cannot bound it)",
            parameter=name,
        )
    return eps


def check_delta(value: Any, name: str = "delta", *, error: ErrorFactory = ParameterError) -> float:
    """δ of an (ε, δ) claim: a number in [0, 1)."""
    return check_number(value, name, accept=lambda v: 0 <= v < 1, expected="a number in [0, 1)", error=error)


def check_beta(
    value: Any, name: str = "beta", *, ceiling: float | None = None, error: ErrorFactory = ParameterError
) -> float:
    """β, the significance level of a confidence set: in (0, 1), and ≤ ``ceiling`` where one is set (a
    larger β is a smaller set: β → 1 shrinks F to a point, so a trust check bounds it from above)."""
    beta = check_number(value, name, accept=lambda v: 0 < v < 1, expected="a significance level in (0, 1)", error=error)
    if ceiling is not None and beta > ceiling:
        raise error(
            f"{name} must be at most {ceiling:g} (a larger significance level makes the confidence set smaller "
            f"than this service accepts); got {describe(value)}",
            parameter=name,
        )
    return beta


def check_radius(value: Any, name: str = "radius", *, error: ErrorFactory = ParameterError) -> float:
    """B, the radius of the Rényi ball in nats: ≥ 0, inf for no knowledge of P (F = every distribution)."""
    return check_number(
        value,
        name,
        accept=lambda v: v >= 0,
        expected="a number ≥ 0 (nats; inf for no knowledge of the distribution)",
        error=error,
    )


def check_order(value: Any, name: str = "order", *, error: ErrorFactory = ParameterError) -> float:
    """α, the Rényi order of the uncertainty set: finite and > 0."""
    return check_number(
        value, name, accept=lambda v: math.isfinite(v) and v > 0, expected="a finite number > 0 (Rényi α)", error=error
    )


def check_count(value: Any, name: str, *, lowest: int = 1, error: ErrorFactory = ParameterError) -> int:
    """A whole number ≥ ``lowest`` (records, samples); integral floats such as 32561.0 are taken."""
    if not _is_number(value) or not math.isfinite(float(value)) or int(value) != value or value < lowest:
        raise error(f"{name} must be an integer ≥ {lowest}; got {describe(value)}", parameter=name)
    return int(value)


#: Unicode categories refused in text and escaped in logs: controls (C0, DEL, C1), format characters (the
#: bidirectional marks, embeddings, overrides and isolates, zero-width spaces, ...), the line and paragraph
#: separators, and lone surrogates. Each can forge a line, reorder or hide what a terminal or a page shows.
#: The format and separator characters are those of Unicode 14.0 (:mod:`rldp.shared.format_characters`).
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
#: Format characters kept: the zero-width (non-)joiners, which join letters in Persian or Indic words and
#: emoji sequences (👩\u200d💻); they neither reorder nor break lines.
_JOINERS = frozenset("\u200c\u200d")
#: What a multi-line text (``multiline=True``, a description) may hold besides printable characters.
_LINE_BREAKS = frozenset("\t\n")


def unsafe_character(ch: str) -> bool:
    """Whether ``ch`` is refused in text and escaped in logs (see :data:`UNSAFE_CATEGORIES`): the controls
    and lone surrogates (ranges that never change) and the format and separator characters of Unicode 14.0
    (:data:`~rldp.shared.format_characters.FORMAT_CHARACTERS`, frozen: the verdict must not depend on the
    Unicode version of the interpreter, nor differ from the TypeScript SDK's)."""
    if ch.isascii():
        return ch < " " or ch == "\x7f"
    cp = ord(ch)
    return 0x80 <= cp <= 0x9F or 0xD800 <= cp <= 0xDFFF or (cp in FORMAT_CHARACTERS and ch not in _JOINERS)


def character_name(ch: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``: a code point and its name, for messages."""
    cp = ord(ch)
    if cp in FORMAT_CHARACTERS:
        name = FORMAT_CHARACTERS[cp]
    elif cp < 0x20 or 0x7F <= cp <= 0x9F:
        name = "a control character"
    elif 0xD800 <= cp <= 0xDFFF:
        name = "a lone surrogate"
    else:
        name = unicodedata.name(ch, "") or unicodedata.category(ch)
    return f"U+{cp:04X} ({name})"


def check_text(
    value: Any,
    name: str,
    *,
    blank: bool = False,
    multiline: bool = False,
    error: ErrorFactory = ParameterError,
) -> str:
    """A text safe to store, log and show: a string (non-blank unless ``blank``) without control, format,
    bidi or separator characters (:func:`unsafe_character`; with ``multiline`` tab and line feed are
    allowed) and without lone surrogates (from an escaped JSON string: they cannot be stored as UTF-8)."""
    if not isinstance(value, str) or not (blank or value.strip()):
        what = "a text" if blank else "a non-empty text"
        raise error(f"{name} must be {what}; got {describe(value)}", parameter=name)
    if value.isascii() and value.isprintable():  # the common case, checked at C speed
        return value
    for i, ch in enumerate(value):
        if unsafe_character(ch) and not (multiline and ch in _LINE_BREAKS):
            allowed = " (tab and line feed are)" if multiline else ""
            raise error(
                f"{name} contains {character_name(ch)} at position {i}; control, format, bidi and separator "
                f"characters are not allowed{allowed}",
                parameter=name,
            )
    return value
