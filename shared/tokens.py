"""Bearer tokens: the one hash the service stores and every command prints (numpy-free, flask-free)."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["hash_token", "new_token"]


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a bearer token (what RLDP_*_TOKEN_SHA256 holds)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new random token: 32 bytes from the OS CSPRNG, URL-safe base64."""
    return secrets.token_urlsafe(32)
