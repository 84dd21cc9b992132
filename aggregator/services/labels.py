"""Mechanism labels: an operator's human name for a mechanism ("Sign-ups by region, 2026").

A label is the service's metadata, not part of the document: it never enters the content id, the
signed or hashed bytes, or what a client verifies; publishing the same document again keeps its id.
It is set at publish (``POST /v1/mechanisms?label=…``) or later (``PATCH /v1/mechanisms/{id}``, admin),
and shown by the API's listing, ``rldp mechanisms`` and the dashboard.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from rldp.shared.parameters import check_text

from .errors import InvalidParameter

__all__ = ["LABEL_MAX", "check_label"]

#: The longest label, in characters: a name for a table row, not a description.
LABEL_MAX = 200
#: Characters a label may not hold besides the C0/C1 controls: the bidirectional overrides and isolates
#: (they reorder what the dashboard and the terminal show, so a label could pass for another one).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _refusal(message: str, *, parameter: str) -> InvalidParameter:
    return InvalidParameter(message, parameter=parameter)


def check_label(value: Any) -> str | None:
    """A label as given (surrounding spaces removed), or None (JSON null: no label). InvalidParameter
    (parameter ``label``) for what is not a non-blank text of at most LABEL_MAX characters without control
    characters or lone surrogates."""
    if value is None:
        return None
    text = check_text(value, "label", error=_refusal).strip()
    if len(text) > LABEL_MAX:
        raise InvalidParameter(f"label is {len(text)} characters long; at most {LABEL_MAX}", parameter="label")
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cc" or ch in _BIDI:
            raise InvalidParameter(
                f"label holds the control character U+{ord(ch):04X} at character {i}; a label is one line of "
                "printable text",
                parameter="label",
            )
    return text
