"""What both upload entries share: reading the body's media type and the answer they send."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rldp.aggregator.services import Receipt

from ..bodies import JSON, decode, maybe_booleans, media_kind, unsupported_media_type
from ..problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from ..problems import answer

__all__ = ["PATH", "Answer", "decoded", "receipt_answer", "upload_answer"]

#: The upload route.
PATH = "/v1/reports"
#: (HTTP status, headers, body) of an answer.
Answer = tuple[int, list[tuple[str, str]], bytes]

#: The receipts' encoder, made once (json.dumps with options builds one per call).
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def decoded(body: bytes, content_type: str | None) -> tuple[Any, bool]:
    """(the decoded body, whether it may hold booleans); UnsupportedMediaType or BodySyntaxError."""
    kind = media_kind(content_type or "")
    if kind is None:
        raise unsupported_media_type(content_type)
    return decode(body, kind), maybe_booleans(body, kind)


def receipt_answer(receipt: Receipt) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of a stored batch's receipt: 201 when stored now, 200 for a duplicate."""
    return (200 if receipt.duplicate else 201), receipt.to_dict()


def upload_answer(receipt: Receipt | Exception, count: Callable[[str], None]) -> Answer:
    """The answer to an upload: its receipt, or the problem of its refusal (``count`` is told its reason)."""
    if isinstance(receipt, Exception):
        problem, data = answer(receipt, "POST", PATH, count)
        headers = [("Content-Type", PROBLEM_MEDIA_TYPE), ("Content-Length", str(len(data)))]
        return problem.status, [*headers, *problem.headers.items()], data
    status, payload = receipt_answer(receipt)
    data = _JSON.encode(payload).encode("utf-8")
    return status, [("Content-Type", JSON), ("Content-Length", str(len(data)))], data
