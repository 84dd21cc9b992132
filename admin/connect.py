"""The operator commands' connection (``rldp publish``, ``mechanisms``, ``collection``, …): an
:class:`~rldp.admin.AdminClient` of ``--server`` bearing the admin or read token, and full mechanism ids
from the prefixes a person types.

Below the command modules (:mod:`.cli`, :mod:`.collection_cli`, :mod:`.document_cli`), which import it.
"""

from __future__ import annotations

import argparse
import os

from rldp.client import Client
from rldp.client.connection import server_url
from rldp.client.ids import ID_HELP, document_file_id, resolve_prefix
from rldp.client.reads import ReadCalls
from rldp.shared.errors import ValidationError

from .calls import AdminClient

__all__ = ["ADMIN_TOKEN_ENV", "ID_HELP", "READ_TOKEN_ENV", "admin_client", "app_client", "mechanism_id"]

ADMIN_TOKEN_ENV = "RLDP_ADMIN_TOKEN"
READ_TOKEN_ENV = "RLDP_READ_TOKEN"


def admin_client(args: argparse.Namespace, *, auth: bool = False, read: bool = False) -> AdminClient:
    """An AdminClient of ``--server`` / RLDP_SERVER; with ``auth``, bearing the admin token from RLDP_ADMIN_TOKEN
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
    return AdminClient(url, timeout=args.timeout, retries=args.retries, token=secret)


def app_client(args: argparse.Namespace) -> Client:
    """A Client of ``--server`` / RLDP_SERVER with no token and no state file: it downloads and verifies documents
    as an app does (``rldp mechanisms get``), and draws nothing."""
    return Client(server_url(args), timeout=args.timeout, retries=args.retries, state_path=None)


def mechanism_id(client: ReadCalls, given: str) -> str:
    """The full mechanism id ``given`` abbreviates (the catalogue is public: no token needed), or the id of the
    mechanism document in the file ``given`` names (:func:`rldp.client.ids.document_file_id`)."""
    return document_file_id(given) or resolve_prefix(
        given, lambda: [m["id"] for m in client.mechanisms()], "mechanism", 64, "rldp mechanisms"
    )
