"""Bearer tokens: the one hash the service stores and every command prints (numpy-free, flask-free)."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["TOKEN_PREFIX", "hash_token", "new_token"]


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a bearer token (what RLDP_*_TOKEN_SHA256 holds)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


#: Every token rldp makes starts with this, so a token never starts with "-" (URL-safe base64 does one time in
#: 64, and ``--upload-token -xyz`` then reads as a flag) and a secret scanner can recognise one.
TOKEN_PREFIX = "rldp_"


def new_token() -> str:
    """A new random token: ``rldp_`` and 32 bytes from the OS CSPRNG in URL-safe base64 (43 characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)
