"""Ids given in full or by a unique prefix, as every ``rldp`` command and the SDK take them."""

from __future__ import annotations

import re
from collections.abc import Callable

from rldp.shared.errors import ValidationError

__all__ = ["SHORT", "resolve_prefix"]

#: How many characters of an id the tables print (and a prefix usually needs).
SHORT = 12
_HEX = re.compile(r"[0-9a-f]+")


def resolve_prefix(given: str, known: Callable[[], list[str]], kind: str, length: int, listing: str) -> str:
    """The full id ``given`` abbreviates: itself when it has ``length`` hex digits, else the one id of
    ``known()`` it is a prefix of (ValidationError when none or several are, or it is not hex)."""
    text = given.strip().lower()
    if not _HEX.fullmatch(text) or len(text) > length:
        raise ValidationError(f"a {kind} id is {length} hexadecimal characters (or a prefix of one); got {given!r}")
    if len(text) == length:
        return text
    matches = sorted(i for i in known() if i.startswith(text))
    if not matches:
        raise ValidationError(f"no {kind} id starts with {given!r} on this server ({listing} lists them)")
    if len(matches) > 1:
        shown = ", ".join(m[:SHORT] for m in matches[:5])
        raise ValidationError(f"{given!r} is the prefix of {len(matches)} {kind} ids ({shown}); give more characters")
    return matches[0]
