"""Ids given in full or by a unique prefix, as every ``rldp`` command and the SDK take them."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from rldp.shared.document import read_document
from rldp.shared.errors import ValidationError

from .errors import ProblemError

__all__ = ["SHORT", "ID_HELP", "document_file_id", "is_id_text", "resolve_prefix", "full_mechanism_id", "listed"]

#: How many characters of an id the tables print (and a prefix usually needs).
SHORT = 12
_HEX = re.compile(r"[0-9a-f]+")


def is_id_text(given: str) -> bool:
    """Whether ``given`` reads as an id or a prefix of one (hexadecimal digits, any case, spaces around)."""
    return _HEX.fullmatch(given.strip().lower()) is not None


#: What a command's mechanism ID argument takes (its help).
ID_HELP = "mechanism id, a unique prefix of one, or a mechanism document's file (its id)"


def document_file_id(given: str) -> str | None:
    """None when ``given`` reads as an id or a prefix of one (hexadecimal: a prefix even where a file has that
    name); else the id of the mechanism document in the file ``given`` names, read and validated (the id
    recomputed from its content). A script or a README then names the document it designed, not the id one
    machine printed: a design's last bits, and so its id, can differ between machines (their BLAS, their CPU).
    ValidationError when ``given`` is neither; DocumentError when the file is not a valid document."""
    if is_id_text(given):
        return None
    if not os.path.isfile(given):
        raise ValidationError(
            f"{given!r} is neither a mechanism id (64 hexadecimal characters, or a unique prefix of one) "
            "nor a mechanism document's file"
        )
    return str(read_document(given)["id"])


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
