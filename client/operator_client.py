"""The operator commands' connection (``rldp publish``, ``mechanisms``, ``collection``, …): a Client
of ``--server`` bearing the admin or read token, and full mechanism ids from the prefixes a person types.

Below both command modules (:mod:`.operator_cli`, :mod:`.collection_cli`), which import it.
"""

from __future__ import annotations

import argparse
import os

from rldp.shared.errors import ValidationError

from .client import Client
from .connection import server_url
from .ids import resolve_prefix

__all__ = ["ADMIN_TOKEN_ENV", "READ_TOKEN_ENV", "mechanism_id", "operator_client"]

ADMIN_TOKEN_ENV = "RLDP_ADMIN_TOKEN"
READ_TOKEN_ENV = "RLDP_READ_TOKEN"


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


def mechanism_id(client: Client, given: str) -> str:
    """The full mechanism id ``given`` abbreviates (the catalogue is public: no token needed)."""
    return resolve_prefix(given, lambda: [m["id"] for m in client.mechanisms()], "mechanism", 64, "rldp mechanisms")
