"""Mechanism labels: an operator's human name for a mechanism ("Sign-ups by region, 2026").

A label is the service's metadata, not part of the document: it never enters the content id, the
signed or hashed bytes, or what a client verifies; publishing the same document again keeps its id.
It is set at publish (``POST /v1/mechanisms?label=…``) or later (``PATCH /v1/mechanisms/{id}``, admin),
and shown by the API's listing, ``rldp mechanisms`` and the dashboard.
"""

from __future__ import annotations

from typing import Any

from rldp.shared.parameters import check_text

from .errors import InvalidParameter

__all__ = ["LABEL_MAX", "check_label"]

#: The longest label, in characters: a name for a table row, not a description.
LABEL_MAX = 200


def _refusal(message: str, *, parameter: str) -> InvalidParameter:
    return InvalidParameter(message, parameter=parameter)


def check_label(value: Any) -> str | None:
    """A label as given (surrounding spaces removed), or None (JSON null: no label). InvalidParameter
    (parameter ``label``) for what is not a non-blank line of at most LABEL_MAX characters: no control, format,
    bidi or separator character, no lone surrogate (:func:`rldp.shared.parameters.check_text`)."""
    if value is None:
        return None
    text = check_text(value, "label", error=_refusal).strip()
    if len(text) > LABEL_MAX:
        raise InvalidParameter(f"label is {len(text)} characters long; at most {LABEL_MAX}", parameter="label")
    return text
