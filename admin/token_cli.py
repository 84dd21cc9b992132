"""``rldp token``: make a bearer token for the service, or hash one. Needs nothing beyond the client, so an
operator can make tokens on any machine (the server itself needs only their SHA-256).

    rldp token                            # a new random token and its SHA-256 (for RLDP_ADMIN_TOKEN_SHA256)
    export RLDP_ADMIN_TOKEN=$(rldp token --plain)   # the new token alone
    echo -n "$TOKEN" | rldp token --hash  # the SHA-256 of an existing token
"""

from __future__ import annotations

import argparse
import sys

from rldp.shared.tokens import hash_token, new_token

__all__ = ["add_parser", "cmd_token"]


def cmd_token(args: argparse.Namespace) -> int:
    """Print a new random token and its SHA-256, (``--plain``) the new token alone, or (``--hash``) the
    SHA-256 of a token on stdin. ``--plain`` prints nothing else, on either stream, so that
    ``export RLDP_ADMIN_TOKEN=$(rldp token --plain)`` holds exactly the token."""
    if args.plain:
        print(new_token())
        return 0
    if args.hash:
        token = sys.stdin.readline().rstrip("\r\n")
        if not token:
            raise ValueError('no token on standard input (pipe it in: echo -n "$TOKEN" | rldp token --hash)')
        print(hash_token(token))
        return 0
    token = new_token()
    print(f"token   {token}")
    print(f"sha256  {hash_token(token)}")
    print(
        "give the token to the operator (RLDP_ADMIN_TOKEN) or only its sha256 to the server (RLDP_ADMIN_TOKEN_SHA256)",
        file=sys.stderr,
    )
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``token``."""
    p = subparsers.add_parser(
        "token",
        help="make a bearer token (or hash one) for the service",
        description="Print a new random token ('rldp_' and 32 random bytes in URL-safe base64) and its SHA-256.",
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument("--hash", action="store_true", help="print the SHA-256 of a token read from standard input")
    form.add_argument(
        "--plain",
        action="store_true",
        help="print only the new token: export RLDP_ADMIN_TOKEN=$(rldp token --plain) "
        '(its SHA-256 for the server: echo -n "$RLDP_ADMIN_TOKEN" | rldp token --hash)',
    )
    p.set_defaults(func=cmd_token)
