"""``rldp mechanisms get ID [--out FILE]``: download a published mechanism document, verified as an app verifies it.

    rldp mechanisms get 3f2a9c --out next.json      # JSON or msgpack (.msgpack, .mpk) by the extension
    rldp mechanisms get 3f2a9c > next.json          # without --out: the document as JSON on stdout
    rldp mechanisms get --collection app-usage --out next.json   # a collection's current mechanism

The document is checked as :meth:`rldp.client.Client.mechanism` checks it (its content id, its privacy
audit re-run here) before it is written, so the file holds exactly what the id names: `rldp audit FILE`
(``--public-data``, ``--pilot``) can then check it again offline. No token is needed: documents are public.
"""

from __future__ import annotations

import argparse
import sys

from rldp.shared.document import to_json, write_document
from rldp.shared.errors import ValidationError

from .connect import ID_HELP
from .connect import app_client as _client
from .connect import mechanism_id as _mechanism_id

__all__ = ["cmd_get", "add_get_parser"]


def cmd_get(args: argparse.Namespace) -> int:
    """Download, verify and write (or print) one mechanism document."""
    if (args.mechanism is None) == (args.collection is None):
        raise ValidationError("give a mechanism ID or --collection NAME (its current mechanism), not both")
    with _client(args) as client:
        if args.collection is not None:
            mech = client.collection(args.collection).current()  # verified as the SDK verifies what apps follow
        else:
            mech = client.mechanism(_mechanism_id(client, args.mechanism))
    if args.out is None or args.out == "-":
        sys.stdout.write(to_json(mech.document) + "\n")
        return 0
    write_document(mech.document, args.out)  # atomic; .json, .msgpack or .mpk (another extension is refused)
    print(f"wrote {mech.id} ({mech.method}, audited epsilon {mech.epsilon_audited:.6g}) to {args.out}")
    return 0


def add_get_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], common: list[argparse.ArgumentParser]
) -> None:
    """Register ``rldp mechanisms get``."""
    a = actions.add_parser(
        "get",
        parents=common,
        help="download a published mechanism document",
        description="Download a published mechanism document, check its content id and re-run its privacy audit "
        "(as an app does), and write it to FILE: JSON for .json, msgpack for .msgpack or .mpk. Without --out, "
        "print it as JSON. No token needed.",
    )
    a.add_argument("mechanism", metavar="ID", nargs="?", default=None, help=ID_HELP)
    a.add_argument("--collection", metavar="NAME", default=None, help="instead of ID: this collection's current one")
    a.add_argument("--out", metavar="FILE", default=None, help="write the document here (default: JSON on stdout)")
    a.set_defaults(func=cmd_get)
