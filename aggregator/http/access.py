"""Request ids and the JSON access log.

Every request gets a request id: the client's ``X-Request-Id`` when it is a safe token (1–128
characters of ``A-Z a-z 0-9 . _ ~ : + = @ -``: no spaces, quotes or control characters that
could forge a log line), else a fresh random one. The id is returned in the ``X-Request-Id``
response header, echoed as ``request_id`` in every problem document (:mod:`.problems` reads
:data:`REQUEST_ID` while it encodes one), and logged.

With ``ACCESS_LOG=json`` (``rldp serve --access-log``, the default format) each request is one
JSON object on one line of the ``rldp.access`` logger (stderr under ``rldp serve``)::

    {"time": "2026-11-27T23:01:02.345Z", "method": "POST", "path": "/v1/reports", "status": 201,
     "duration": 0.00123, "bytes": 52, "request_id": "…", "remote": "127.0.0.1"}

``duration`` in seconds, ``bytes`` of the response body, ``remote`` the peer's address (a
reverse proxy's, behind one: its own log has the client's). ``--access-log text`` keeps
Granian's plain-text access log instead, in :data:`TEXT_FORMAT` (the request target with its query and
the User-Agent added) through :class:`TextAccessFormatter`, which escapes what a client sent the same way.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "REQUEST_ID",
    "AccessLog",
    "request_id_from",
    "access_line",
    "safe_line",
    "enable_json_log",
    "TEXT_FORMAT",
    "TextAccessFormatter",
    "text_log_config",
]

#: The id of the request this thread (or asyncio task) is serving; None outside a request.
REQUEST_ID: ContextVar[str | None] = ContextVar("rldp_request_id", default=None)
_SAFE_ID = re.compile(r"[A-Za-z0-9._~:+=@-]{1,128}")

log = logging.getLogger("rldp.access")


def request_id_from(given: str | None) -> str:
    """The client's id if it is safe to log and echo (see the module docstring), else a new one."""
    if given and _SAFE_ID.fullmatch(given):
        return given
    return os.urandom(16).hex()


def _escaped(ch: str) -> str:
    """``ch`` as a JSON escape (a surrogate pair beyond the BMP)."""
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def safe_line(line: str) -> str:
    """A JSON text with every character Python does not call printable escaped (``\\u2028``): controls, format
    and bidi characters, separators, unassigned code points. json.dumps (ensure_ascii=False) escapes only
    the C0 controls, and U+2028, U+0085 or U+009B written raw split a line for some readers or reach a
    terminal. Such characters only occur inside JSON strings, where the escape means the same character."""
    if line.isprintable():  # the common case, checked at C speed
        return line
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in line)


def access_line(method: str, path: str, status: int, seconds: float, size: int, request_id: str, remote: str) -> str:
    """One access-log line: one JSON object on one line, whatever a client put in the path or the method
    (:func:`safe_line`: no character a reader could split on or a terminal could act on is written raw)."""
    now = datetime.now(UTC)
    return safe_line(
        json.dumps(
            {
                "time": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
                "method": method,
                "path": path,
                "status": status,
                "duration": round(seconds, 6),
                "bytes": size,
                "request_id": request_id,
                "remote": remote,
            },
            ensure_ascii=False,
        )
    )


#: Granian's access-log line (its default) with the query string and the User-Agent: ``%(target)s`` is the
#: path and ``?query`` (added by :class:`TextAccessFormatter`), ``%(header{user-agent})s`` Granian's.
TEXT_FORMAT = (
    '[%(time)s] %(addr)s - "%(method)s %(target)s %(protocol)s" %(status)d %(dt_ms).3f "%(header{user-agent})s"'
)


def _text_field(value: str) -> str:
    """A client-sent field of a text log line: every character Python does not call printable escaped as in
    :func:`safe_line`, and ``"`` and ``\\`` escaped, so a field cannot end early, forge a line or reach a terminal."""
    if value.isprintable() and '"' not in value and "\\" not in value:
        return value
    return "".join(
        ch if ch.isprintable() and ch not in '"\\' else "\\" + ch if ch in '"\\' else _escaped(ch) for ch in value
    )


class TextAccessFormatter(logging.Formatter):
    """The formatter of Granian's access logger under ``--access-log text`` (:func:`text_log_config`): each
    text field of the line (the path, the query, the method, the User-Agent…) escaped by :func:`_text_field`."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, Mapping):
            args = {k: _text_field(v) if isinstance(v, str) else v for k, v in record.args.items()}
            query = args.get("query_string") or ""
            args["target"] = f"{args.get('path', '')}?{query}" if query else args.get("path", "")
            record.args = args
        return safe_line(super().format(record))


def text_log_config() -> dict[str, Any]:
    """Granian's logging configuration with :class:`TextAccessFormatter` as the access log's formatter."""
    from granian.log import LOGGING_CONFIG  # only rldp serve, which runs Granian, needs it

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["access"]["()"] = f"{__name__}.TextAccessFormatter"
    return config


def enable_json_log() -> None:
    """Send the ``rldp.access`` logger's lines, bare, to stderr (once per process)."""
    log.setLevel(logging.INFO)
    if not any(getattr(h, "rldp_access", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.rldp_access = True  # type: ignore[attr-defined]
        log.addHandler(handler)


class AccessLog:
    """WSGI middleware (outermost): the request id (header, problems) and, if ``enabled``, the JSON log."""

    def __init__(self, app: Callable[..., Iterable[bytes]], enabled: bool) -> None:
        self.app = app
        self.enabled = enabled

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        rid = request_id_from(environ.get("HTTP_X_REQUEST_ID"))
        environ["rldp.request_id"] = rid
        began = time.perf_counter()
        status: list[Any] = [""]
        header = ("X-Request-Id", rid)

        def start(line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            status[0] = line  # the app sets no X-Request-Id of its own: append ours
            headers.append(header)
            return start_response(line, headers, exc_info)

        token = REQUEST_ID.set(rid)
        try:
            result = self.app(environ, start)
        finally:
            REQUEST_ID.reset(token)
        if not self.enabled:
            return result
        if isinstance(result, list):  # the common case: the whole answer is here
            self._log(environ, status, began, sum(len(chunk) for chunk in result), rid)
            return result
        return self._logged(result, environ, status, began, rid)

    def _logged(
        self, result: Iterable[bytes], environ: dict[str, Any], status: list[Any], began: float, rid: str
    ) -> Iterator[bytes]:
        size = 0
        try:
            for chunk in result:
                size += len(chunk)
                yield chunk
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
            self._log(environ, status, began, size, rid)

    def _log(self, environ: dict[str, Any], status: list[Any], began: float, size: int, rid: str) -> None:
        # PATH_INFO is the path's bytes as latin-1 (PEP 3333): log the text the client sent
        path = environ.get("PATH_INFO", "").encode("latin-1", "replace").decode("utf-8", "replace")
        log.info(
            access_line(
                environ.get("REQUEST_METHOD", ""),
                path,
                int(str(status[0]).split(" ", 1)[0] or 0),
                time.perf_counter() - began,
                size,
                rid,
                environ.get("REMOTE_ADDR", ""),
            )
        )
