"""The exceptions of rldp: one root, one subclass per kind of refusal.

Every error rldp raises on purpose is an :class:`RldpError`. Each also derives from the
built-in class a caller would naturally catch (bad input is a ``ValueError``, an
unreachable service an ``OSError``), so ``except ValueError`` keeps working.

Callers that must react differently to different failures (the HTTP layer choosing a
problem type, the CLI choosing an exit code) dispatch on these *types*, never on the
text of a message: messages are for people and may be reworded at any time.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "RldpError",
    "ValidationError",
    "ParameterError",
    "RecordError",
    "TableError",
    "AlphabetError",
    "DocumentError",
    "DocumentSyntaxError",
    "IdMismatch",
    "UnknownNotion",
    "AuditError",
    "ReportError",
    "one_line",
    "cut_list",
    "LISTED_IN_ERRORS",
]

#: How many values an error message lists before it says how many more there are.
LISTED_IN_ERRORS = 10


class RldpError(Exception):
    """Root of every error rldp raises on purpose.

    ``receipt`` is set by the client SDK on errors raised during an upload: what the
    server had already accepted, so a caller that retries sends only the rest.
    """

    receipt: Any = None


class ValidationError(RldpError, ValueError):
    """Input that does not have the expected form or range; the message says which."""


class ParameterError(ValidationError):
    """A parameter out of its range or of the wrong kind; ``parameter`` names it (see :mod:`.parameters`)."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


class RecordError(ValidationError):
    """A record or value that does not fit the alphabet (unknown value, missing attribute...)."""


class TableError(ValidationError):
    """A CSV file or table column that cannot be used (missing file, ragged row, unknown column...)."""


class AlphabetError(ValidationError):
    """An invalid attribute or alphabet definition (duplicate names, too few sensitive values...)."""


class DocumentError(ValidationError):
    """A mechanism document that is malformed, inconsistent or cannot be read."""


class DocumentSyntaxError(DocumentError):
    """The bytes are not valid JSON / msgpack at all (``encoding`` says which was expected)."""

    def __init__(self, message: str, encoding: str) -> None:
        super().__init__(message)
        self.encoding = encoding


class IdMismatch(DocumentError):
    """The document's ``id`` is not the content hash of its other fields."""

    def __init__(self, message: str, stated: str, computed: str) -> None:
        super().__init__(message)
        self.stated = stated
        self.computed = computed


class UnknownNotion(DocumentError):
    """``privacy.notion`` names a notion this version has no exact audit for."""


class AuditError(RldpError, ValueError):
    """A document whose privacy claim cannot be audited (its parameters do not admit the audit)."""


class ReportError(ValidationError):
    """A report batch that is malformed or does not fit its mechanism."""


def one_line(exc: BaseException) -> str:
    """The exception's message on one line (whitespace runs collapsed), or its type's name.

    Why: error messages of the CLI, logs and problem details are read one per line.
    """
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def cut_list(values: Any, most: int = LISTED_IN_ERRORS) -> str:
    """``values`` joined by ", ", cut after ``most`` of them: "a, b, c, … and 1,234 more".

    Why: an error that lists every value of a continuous column ran to 54 KB on one line."""
    items = [str(v) for v in values]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f", … and {len(items) - most:,} more"
