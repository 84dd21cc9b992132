"""The dashboard's login session and CSRF tokens.

Logging in with the admin or a read token sets one cookie, ``rldp_session``: a value signed
(itsdangerous, HMAC-SHA256) with the dashboard secret that holds the SHA-256 of the token used
and a random CSRF nonce, valid for :data:`MAX_AGE` seconds. It never holds the token itself.
The role is decided again on every request from the token hashes the server is configured
with, so a token that is no longer configured logs its sessions out.

Cookie flags: HttpOnly (scripts cannot read it), SameSite=Strict (no other site can make the
browser send it), and Secure whenever the request came over https (directly, or through a
proxy that says ``X-Forwarded-Proto: https``). On plain http (``rldp serve`` on loopback, the
default) the cookie cannot be Secure, or the browser would not send it back; reach a remote
server only through https.

The secret is ``DASHBOARD_SECRET`` (config) or ``RLDP_DASHBOARD_SECRET`` (environment);
``rldp serve`` sets a random one for its workers at start, so sessions end when the server
restarts. Without either, the app draws its own (one process: the development server, tests).

CSRF: every form that changes state carries the session's nonce (``csrf_token``), checked with
``hmac.compare_digest``; the login form, before any session exists, uses a double-submit cookie
(``rldp_login_csrf``). SameSite=Strict is a second line, not the only one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app, request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from ..responses import current_service

__all__ = [
    "COOKIE",
    "LOGIN_COOKIE",
    "MAX_AGE",
    "User",
    "current_user",
    "start_session",
    "end_session",
    "csrf_valid",
    "login_nonce",
    "set_login_cookie",
    "token_role",
    "secure_request",
    "login_csrf_valid",
]

COOKIE = "rldp_session"
LOGIN_COOKIE = "rldp_login_csrf"
#: Seconds a login lasts.
MAX_AGE = 8 * 3600
_SECRET_KEY = "rldp.dashboard.secret"
_SALT = "rldp-dashboard-session"


@dataclass(frozen=True)
class User:
    """Who is logged in: ``role`` is "admin" or "read"; ``csrf`` is the session's form nonce."""

    role: str
    csrf: str

    @property
    def admin(self) -> bool:
        return self.role == "admin"


def _secret(app: Flask) -> str:
    secret = app.extensions.get(_SECRET_KEY)
    if secret is None:
        configured = app.config["RLDP"].get("DASHBOARD_SECRET") or os.environ.get("RLDP_DASHBOARD_SECRET")
        secret = str(configured) if configured else secrets.token_hex(32)
        app.extensions[_SECRET_KEY] = secret
    return secret


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(_secret(current_app), salt=_SALT)


def secure_request() -> bool:
    """Whether the browser reached us over https (directly or through a TLS-terminating proxy)."""
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return request.is_secure or forwarded == "https"


def _set_cookie(resp: Response, name: str, value: str, max_age: int | None) -> None:
    resp.set_cookie(name, value, max_age=max_age, path="/", secure=secure_request(), httponly=True, samesite="Strict")


def _role(token_hash: bytes) -> str | None:
    config = current_service().config
    role = None
    # Compare with every hash, admin first: the time taken does not tell which matched.
    for name, hashes in (("read", config["READ_HASHES"]), ("admin", config["ADMIN_HASHES"])):
        for candidate in hashes:
            if hmac.compare_digest(token_hash, candidate):
                role = name
    return role


def current_user() -> User | None:
    """The logged-in user of this request, or None (no cookie, bad signature, expired, token revoked)."""
    raw = request.cookies.get(COOKIE)
    if not raw:
        return None
    try:
        data: Any = _serializer().loads(raw, max_age=MAX_AGE)
        token_hash = bytes.fromhex(data["h"])
        csrf = str(data["c"])
    except (BadSignature, KeyError, TypeError, ValueError):
        return None
    role = _role(token_hash)
    return None if role is None else User(role, csrf)


def token_role(token: str) -> str | None:
    """The role a token logs in as ("admin", "read"), or None if it is neither."""
    if not token:
        return None
    return _role(hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest())


def start_session(resp: Response, token: str) -> None:
    """Set the session cookie for a token already checked with :func:`token_role`."""
    digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()
    value = _serializer().dumps({"h": digest, "c": secrets.token_urlsafe(24)})
    _set_cookie(resp, COOKIE, value, MAX_AGE)
    resp.delete_cookie(LOGIN_COOKIE, path="/", secure=secure_request(), httponly=True, samesite="Strict")


def end_session(resp: Response) -> None:
    """Remove the session cookie (logout)."""
    resp.delete_cookie(COOKIE, path="/", secure=secure_request(), httponly=True, samesite="Strict")


def csrf_valid(user: User, form_value: str | None) -> bool:
    """Whether a state-changing form carries this session's CSRF nonce."""
    return bool(form_value) and hmac.compare_digest(user.csrf.encode(), str(form_value).encode())


def login_nonce() -> str:
    """A fresh nonce for the login form (:func:`set_login_cookie` sets its double-submit cookie)."""
    return secrets.token_urlsafe(24)


def set_login_cookie(resp: Response, nonce: str) -> None:
    """Set the login form's double-submit cookie (valid one hour)."""
    _set_cookie(resp, LOGIN_COOKIE, nonce, 3600)


def login_csrf_valid(form_value: str | None) -> bool:
    """Whether the login form's nonce matches its cookie (the form came from this dashboard)."""
    cookie = request.cookies.get(LOGIN_COOKIE)
    if not cookie or not form_value:
        return False
    return hmac.compare_digest(cookie.encode(), str(form_value).encode())
