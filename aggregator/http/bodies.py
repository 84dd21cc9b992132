"""Request bodies: media types, the size limit, decoding JSON and msgpack.

Bodies are JSON (``application/json`` or any ``application/*+json``) or msgpack
(``application/msgpack``, ``application/x-msgpack``, ``application/vnd.msgpack``). JSON
is strict: NaN and Infinity are not JSON and are refused like any syntax error.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
from flask import request
from werkzeug.exceptions import RequestEntityTooLarge

from rldp.aggregator.services import BodySyntaxError, BodyTooLarge, UnsupportedMediaType
from rldp.shared.errors import one_line

__all__ = [
    "JSON",
    "MSGPACK",
    "MSGPACK_TYPES",
    "media_kind",
    "body_kind",
    "unsupported_media_type",
    "check_body_size",
    "read_body",
    "decode",
    "maybe_booleans",
]

JSON = "application/json"
MSGPACK = "application/msgpack"
MSGPACK_TYPES = frozenset({"application/msgpack", "application/x-msgpack", "application/vnd.msgpack"})


def media_kind(content_type: str) -> str | None:
    """ "json" or "msgpack" for a request body's media type (parameters ignored), else None."""
    mime = content_type.partition(";")[0].strip().lower()
    if mime == JSON or (mime.startswith("application/") and mime.endswith("+json")):
        return "json"
    return "msgpack" if mime in MSGPACK_TYPES else None


def body_kind() -> str:
    """The current request body's kind; UnsupportedMediaType if neither JSON nor msgpack."""
    kind = media_kind(request.mimetype or "")
    if kind is not None:
        return kind
    raise unsupported_media_type(request.headers.get("Content-Type"))


def unsupported_media_type(content_type: str | None) -> UnsupportedMediaType:
    """The refusal of a body that is neither JSON nor msgpack (``content_type``: the header as sent)."""
    return UnsupportedMediaType(
        f"Content-Type {content_type!r} is not supported; send application/json or application/msgpack"
        if content_type
        else "the request has no Content-Type; send application/json or application/msgpack"
    )


def check_body_size(size: int | None, limit: int) -> None:
    """Refuse a body whose announced size exceeds ``limit`` (MAX_BODY_BYTES), before reading it."""
    if size is not None and size > limit:
        raise BodyTooLarge(
            f"the body has {size} bytes; the limit is {limit} (MAX_BODY_BYTES); split the batch", limit=limit
        )


def read_body(limit: int) -> bytes:
    """The current request's body, at most ``limit`` bytes (BodyTooLarge beyond)."""
    check_body_size(request.content_length, limit)
    try:
        if request.content_length is not None:
            return request.get_data(cache=False)
        # No Content-Length (chunked): Werkzeug hands over the server's stream unbounded
        # (wsgi.input_terminated), so enforce the limit while reading.
        chunks, total = [], 0
        while chunk := request.stream.read(min(1 << 16, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise RequestEntityTooLarge()
        return b"".join(chunks)
    except RequestEntityTooLarge:
        raise BodyTooLarge(f"the body exceeds the limit of {limit} bytes (MAX_BODY_BYTES)", limit=limit) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode(body: bytes, kind: str) -> Any:
    """The decoded body ("json" or "msgpack"); BodySyntaxError saying where it is invalid."""
    if kind == "json":
        try:
            return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
        except UnicodeDecodeError as exc:
            raise BodySyntaxError(f"the body is not UTF-8 ({exc.reason} at byte {exc.start})", "json") from None
        except json.JSONDecodeError as exc:
            raise BodySyntaxError(
                f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", "json"
            ) from None
        except (ValueError, RecursionError) as exc:
            raise BodySyntaxError(f"the body is not valid JSON: {one_line(exc)}", "json") from None
    try:
        return msgpack.unpackb(body, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, StackError, ValueError…)
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise BodySyntaxError(
            f"the body is not valid msgpack ({type(exc).__name__}{': ' + detail if detail else ''})", "msgpack"
        ) from None


def maybe_booleans(body: bytes, kind: str) -> bool:
    """Whether a decoded body might hold booleans: only if their encoding occurs in it
    (msgpack 0xc2/0xc3, the JSON literals), so a batch's element scan is rarely needed."""
    if kind == "msgpack":
        return b"\xc2" in body or b"\xc3" in body
    return b"true" in body or b"false" in body
