"""The operator commands' connection (``rldp publish``, ``mechanisms``, ``collection``, …): a Client
of ``--server`` bearing the admin or read token, and full ids from the prefixes a person types.

Below both command modules (:mod:`.operator_cli`, :mod:`.collection_cli`), which import it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable

from rldp.shared.errors import ValidationError

from .client import Client
from .connection import server_url

__all__ = ["ADMIN_TOKEN_ENV", "READ_TOKEN_ENV", "SHORT", "mechanism_id", "operator_client", "resolve_id"]

ADMIN_TOKEN_ENV = "RLDP_ADMIN_TOKEN"
READ_TOKEN_ENV = "RLDP_READ_TOKEN"
#: How many characters of an id the tables show (a prefix this long is unique in practice).
SHORT = 12
_HEX = re.compile(r"[0-9a-f]+")


def operator_client(args: argparse.Namespace, *, auth: bool = False, read: bool = False) -> Client:
    """A Client of ``--server`` / RLDP_SERVER; with ``auth``, bearing the admin token from RLDP_ADMIN_TOKEN
    (with ``read`` too, RLDP_READ_TOKEN when there is no admin token: the call only reads)."""
    url = server_url(args)
    secret = None
    if auth:
        secret = os.environ.get(ADMIN_TOKEN_ENV) or (os.environ.get(READ_TOKEN_ENV) if read else None)
        if not secret:
            also = f" (or {READ_TOKEN_ENV}, a token that may read estimates)" if read else ""
            raise ValidationError(
                f"set {ADMIN_TOKEN_ENV}{also}: this command needs the service's admin token (rldp token --plain makes one)"
            )
    return Client(url, timeout=args.timeout, retries=args.retries, token=secret, state_path=None)  # draws nothing


def resolve_id(given: str, known: Callable[[], list[str]], kind: str, length: int, listing: str) -> str:
    """The full id ``given`` abbreviates: itself when it has ``length`` hex digits, else the one id of
    ``known()`` it is a prefix of (refused when none or several are)."""
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


def mechanism_id(client: Client, given: str) -> str:
    """The full mechanism id ``given`` abbreviates (the catalogue is public: no token needed)."""
    return resolve_id(given, lambda: [m["id"] for m in client.mechanisms()], "mechanism", 64, "rldp mechanisms")
