"""The writer process's wire format: one home for what its clients send and it answers.

One msgpack object per message on a ``SOCK_STREAM`` Unix socket::

    request  ["ingest", mechanism, batch, n, digest, encoding, payload, counts, window]
             counts: "<i8" bytes; window: the collection window's label ("" for none)
             ["ping"]
    answer   [status, accepted]  |  ["pong"]  |  ["error", message]  |  ["error", message, "full"]
             ("full": the store has no space left, StoreFull on the client's side)

The writer answers a connection's ingest requests in the order they arrived (a group is a
prefix of what is queued, answered in order), so a client may keep several in flight on one
connection and match answers to requests by order — the HTTP front's asyncio client does. A
ping is answered at once, ahead of queued ingests: a connection that pipelines ingests sends
no pings. The threads' blocking client keeps one request in flight per connection.
"""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np

from rldp.shared.errors import ValidationError, one_line

from ..storage import BatchItem, IngestResult, StorageError, StoreFull

__all__ = ["PING", "PONG", "batch_item", "encode", "error_answer", "ingest_request", "ingest_result", "unpacker"]

PING: list[Any] = ["ping"]
PONG: list[Any] = ["pong"]
_STATUSES = frozenset({"accepted", "duplicate", "conflict", "unknown", "retired"})


def encode(message: list[Any]) -> bytes:
    """One message's bytes."""
    return msgpack.packb(message, use_bin_type=True)


def unpacker(max_buffer_size: int) -> msgpack.Unpacker:
    """A stream decoder of messages (at most ``max_buffer_size`` bytes buffered)."""
    return msgpack.Unpacker(raw=False, max_buffer_size=max_buffer_size)


def ingest_request(item: BatchItem) -> bytes:
    """The request that commits ``item``."""
    return encode(
        [
            "ingest",
            item.mechanism,
            item.batch,
            item.n,
            item.digest,
            item.encoding,
            item.payload,
            np.ascontiguousarray(item.counts, dtype="<i8").tobytes(),
            item.window,
        ]
    )


def ingest_result(answer: Any) -> IngestResult:
    """The writer's answer to an ingest request; StorageError for its refusal or a malformed answer."""
    if isinstance(answer, list) and len(answer) == 2 and answer[0] in _STATUSES and isinstance(answer[1], int):
        return IngestResult(answer[0], answer[1])
    if isinstance(answer, list) and len(answer) == 3 and answer[0] == "error" and answer[2] == "full":
        raise StoreFull(str(answer[1]))
    if isinstance(answer, list) and len(answer) == 2 and answer[0] == "error":
        raise StorageError(str(answer[1]))
    raise StorageError(f"the writer process answered {answer!r:.80}")


def error_answer(exc: BaseException) -> list[Any]:
    """The answer to requests a failure stopped: its message, and "full" when the store has no space left."""
    return ["error", one_line(exc), *(["full"] if isinstance(exc, StoreFull) else [])]


def batch_item(message: Any) -> BatchItem:
    """An ingest request as the BatchItem the storage commits (ValidationError if malformed)."""
    if not (isinstance(message, list) and len(message) == 9 and message[0] == "ingest"):
        raise ValidationError("malformed request")
    _, mechanism, batch, n, digest, encoding, payload, counts, window = message
    if not (
        isinstance(mechanism, str)
        and isinstance(batch, str)
        and isinstance(n, int)
        and isinstance(digest, bytes)
        and encoding in ("reports", "counts")
        and isinstance(payload, bytes)
        and isinstance(counts, bytes)
        and len(counts) % 8 == 0
        and isinstance(window, str)
    ):
        raise ValidationError("malformed ingest request")
    return BatchItem(
        mechanism=mechanism,
        batch=batch,
        n=n,
        digest=digest,
        encoding=encoding,
        payload=payload,
        counts=np.frombuffer(counts, dtype="<i8").astype(np.int64),
        window=window,
    )
