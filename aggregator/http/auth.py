"""Bearer-token authorisation of the admin (and read) endpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import request

from rldp.aggregator.services import Unauthorized, token_allowed, tokens_configured

__all__ = ["authorize"]


def authorize(config: Mapping[str, Any], *, read: bool = False) -> None:
    """Raise Unauthorized unless the request's bearer token is the admin token (or, with ``read``, a read token)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token_allowed(config, token.strip(), read=read):
        return
    need = "an admin or read token" if read else "the admin token"
    if not tokens_configured(config, read=read):
        detail = (
            f"this endpoint needs {need}, but none is configured on this server "
            "(set RLDP_ADMIN_TOKEN or RLDP_ADMIN_TOKEN_SHA256)"
        )
    elif not header:
        detail = f"missing 'Authorization: Bearer <token>' header; this endpoint needs {need}"
    elif scheme.lower() != "bearer":
        detail = f"the Authorization header must use the Bearer scheme; this endpoint needs {need}"
    else:
        detail = f"the bearer token is not valid for this endpoint (it needs {need})"
    raise Unauthorized(detail)
