"""Ids given in full or by a unique prefix, as every ``rldp`` command and the SDK take them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rldp.shared.errors import ValidationError

from .errors import ProblemError

__all__ = ["SHORT", "is_id_text", "resolve_prefix", "full_mechanism_id", "listed"]

#: How many characters of an id the tables print (and a prefix usually needs).
SHORT = 12
_HEX = re.compile(r"[0-9a-f]+")


def is_id_text(given: str) -> bool:
    """Whether ``given`` reads as an id or a prefix of one (hexadecimal digits, any case, spaces around)."""
    return _HEX.fullmatch(given.strip().lower()) is not None


def resolve_prefix(given: str, known: Callable[[], list[str]], kind: str, length: int, listing: str) -> str:
    """The full id ``given`` abbreviates: itself when it has ``length`` hex digits, else the one id of
    ``known()`` it is a prefix of (ValidationError when none or several are, or it is not hex)."""
    text = given.strip().lower()
    if not is_id_text(text) or len(text) > length:
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


def full_mechanism_id(given: str, verified: list[str], catalogue: Callable[[], list[str]]) -> str:
    """The mechanism id ``given`` abbreviates: the one ``verified`` id it prefixes, else the catalogue's."""
    if len(given) == 64:
        return given
    return resolve_prefix(
        given, lambda: verified if len(verified) == 1 else catalogue(), "mechanism", 64, "GET /v1/mechanisms"
    )


def listed(answer: dict[str, Any], key: str, url: str) -> list[dict[str, Any]]:
    """The list under ``key`` of a listing's answer (ProblemError ``not-rldp`` when the server is not an aggregator)."""
    items = answer.get(key)
    if not isinstance(items, list):
        detail = f"{url} answered no list of {key}: is this an rldp aggregator?"
        raise ProblemError(200, {"reason": "not-rldp", "detail": detail})
    return items
