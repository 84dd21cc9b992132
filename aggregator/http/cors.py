"""Cross-origin requests from one web origin (``rldp serve --cors-origin ORIGIN``; off by default).

Why: an app page served from another origin (the JavaScript SDK in a browser) must be allowed by
the service to read its answers. Only the one configured origin is: a request whose ``Origin`` is
exactly it gets ``Access-Control-Allow-Origin`` on every answer (``Retry-After`` exposed, so the
SDK's retries can honour it), and its preflight (``OPTIONS`` with ``Access-Control-Request-Method``)
is answered here with 204. Any other origin gets no CORS header, so browsers keep refusing it.
Bearer tokens travel in the ``Authorization`` header, never in cookies: no credentials mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["CorsMiddleware", "cors_headers"]

_METHODS = "GET, POST, OPTIONS"
_HEADERS = "Accept, Authorization, Content-Type, X-Request-Id"
_MAX_AGE = "600"
_EXPOSE = ("Access-Control-Expose-Headers", "Retry-After, X-Request-Id")


def cors_headers(origin: str) -> list[tuple[str, str]]:
    """The headers of an answer to a request from ``origin``, the configured one."""
    return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"), _EXPOSE]


class CorsMiddleware:
    """WSGI middleware adding CORS for exactly one origin (see the module docstring)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], origin: str) -> None:
        self.app = app
        self.origin = origin

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("HTTP_ORIGIN") != self.origin:
            return self.app(environ, start_response)
        allow = [("Access-Control-Allow-Origin", self.origin), ("Vary", "Origin")]
        if environ.get("REQUEST_METHOD") == "OPTIONS" and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
            start_response(
                "204 No Content",
                [
                    *allow,
                    ("Access-Control-Allow-Methods", _METHODS),
                    ("Access-Control-Allow-Headers", _HEADERS),
                    ("Access-Control-Max-Age", _MAX_AGE),
                    ("Content-Length", "0"),
                ],
            )
            return [b""]

        def with_cors(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(k, v) for k, v in headers if k.lower() not in ("access-control-allow-origin", "vary")]
            return start_response(status, [*kept, *cors_headers(self.origin)], exc_info)

        return self.app(environ, with_cors)
