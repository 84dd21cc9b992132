"""The workers' side of the writer process: a blocking client for threads, an asyncio one for
the HTTP front's event loop. Both wait until the writer has committed (or refused) a batch."""

from __future__ import annotations

import asyncio
import collections
import os
import socket
import threading
from typing import Any, cast

import msgpack

from rldp.shared.errors import one_line

from ..storage import COMMIT_WAIT_SECONDS, BatchItem, IngestResult, StorageError
from . import wire

__all__ = ["AsyncWriterClient", "WriterClient"]

#: Bytes an answer may buffer (answers are a few bytes; an error message a line).
_ANSWER_BUFFER = 1 << 20


def _no_answer(reason: str) -> StorageError:
    return StorageError(
        f"the writer process did not answer ({reason}); a batch sent may or may not be stored: "
        "retry it with the same batch id"
    )


class WriterClient:
    """A worker's connection(s) to the writer process: :meth:`submit` stores one batch.

    A :class:`~rldp.aggregator.storage.GroupSink`: give it to
    :func:`~rldp.aggregator.storage.open_storage` (``sink=``). Thread-safe: each thread
    (and each process after a fork) has its own connection, with one request in flight.
    """

    def __init__(self, path: str, timeout: float = COMMIT_WAIT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout
        self._local = threading.local()

    def submit(self, item: BatchItem) -> IngestResult:
        """Send a batch and wait until the writer has committed it (or refused it)."""
        return wire.ingest_result(self._call(wire.ingest_request(item)))

    def ping(self) -> None:
        """Raise StorageError unless the writer answers."""
        if self._call(wire.encode(wire.PING)) != wire.PONG:
            raise StorageError("the writer process answered a ping wrongly")

    def _call(self, request: bytes) -> Any:
        sock, unpacker = self._connection()
        try:
            sock.sendall(request)
            while True:
                try:
                    return unpacker.unpack()
                except msgpack.OutOfData:
                    pass
                chunk = sock.recv(1 << 12)
                if not chunk:
                    raise ConnectionError("the writer closed the connection")
                unpacker.feed(chunk)
        except (OSError, ValueError) as exc:
            self.close()  # the stream may hold half an answer: never reuse it
            raise _no_answer(one_line(exc)) from exc

    def _connection(self) -> tuple[socket.socket, msgpack.Unpacker]:
        local = self._local
        if getattr(local, "sock", None) is None or local.pid != os.getpid():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.path)
            except OSError as exc:
                sock.close()
                raise StorageError(f"cannot reach the writer process at {self.path}: {one_line(exc)}") from exc
            local.sock, local.pid = sock, os.getpid()
            local.unpacker = wire.unpacker(_ANSWER_BUFFER)
        return local.sock, local.unpacker

    def close(self) -> None:
        """Close this thread's connection (the next call reconnects)."""
        sock = getattr(self._local, "sock", None)
        if sock is not None and self._local.pid == os.getpid():
            sock.close()
        self._local.sock = None


class _Pipeline(asyncio.Protocol):
    """One connection with any number of ingest requests in flight, answered in order (:mod:`.wire`).

    One timer per connection, not one per request: when the oldest request has waited
    ``timeout`` seconds the connection fails (a later answer could no longer be matched).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self.unpacker = wire.unpacker(_ANSWER_BUFFER)
        self.closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._out: list[bytes] = []  # requests of this loop iteration, written together

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports (Granian runs on uvloop when it is installed) do not subclass asyncio's
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.unpacker.feed(data)
            for answer in self.unpacker:
                if not self.waiting:
                    raise ValueError("an answer to no request")
                fut, _ = self.waiting.popleft()
                if not fut.done():  # cancelled: its request's task was
                    fut.set_result(answer)
        except ValueError as exc:  # msgpack's errors are ValueErrors: the stream cannot be trusted
            self.fail(one_line(exc))

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(one_line(exc) if exc else "the writer closed the connection")

    def fail(self, reason: str) -> None:
        """Close the connection and fail every request in flight."""
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
        try:
            if self.transport is not None:
                self.transport.close()
            while self.waiting:
                fut, _ = self.waiting.popleft()
                if not fut.done():
                    fut.set_exception(_no_answer(reason))
        except RuntimeError:  # the connection's event loop is closed: nobody awaits these any more
            self.waiting.clear()

    def send(self, request: bytes) -> asyncio.Future[Any]:
        """Write a request (with the others of this loop iteration: one write, one wake-up of the
        writer); the future of its answer."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.waiting.append((fut, loop.time()))
        if not self._out:
            loop.call_soon(self._flush)
        self._out.append(request)
        if self._timer is None:
            self._timer = loop.call_later(self.timeout, self._check)
        return fut

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self.transport is not None and not self.closed:
            self.transport.write(b"".join(out))

    def _check(self) -> None:
        self._timer = None
        if not self.waiting:
            return
        due = self.waiting[0][1] + self.timeout
        loop = asyncio.get_running_loop()
        if loop.time() >= due:
            self.fail(f"no answer within {self.timeout:g} s")
        else:
            self._timer = loop.call_at(due, self._check)


class AsyncWriterClient:
    """The writer's client for one asyncio event loop: ``await submit(item)`` stores one batch.

    All requests share one connection, pipelined (the writer answers them in order), so a
    request costs the loop one write and one read event — no thread hand-off. A lost
    connection fails the requests in flight (StorageError: retry with the same batch id) and
    the next request reconnects; so does one whose answer takes longer than ``timeout``.
    """

    def __init__(self, path: str, timeout: float = COMMIT_WAIT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout
        self._pipeline: _Pipeline | None = None
        self._connecting: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def submit(self, item: BatchItem) -> IngestResult:
        """Send a batch and wait until the writer has committed it (or refused it)."""
        pipeline = await self._connection()
        return wire.ingest_result(await pipeline.send(wire.ingest_request(item)))

    async def _connection(self) -> _Pipeline:
        loop = asyncio.get_running_loop()
        if self._pipeline is not None and self._loop is not loop:  # a connection belongs to its loop
            self._pipeline.fail("its event loop ended")
            self._pipeline, self._connecting = None, None
        self._loop = loop
        if self._pipeline is not None and not self._pipeline.closed:
            return self._pipeline
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:  # one connection, however many requests find none
            if self._pipeline is None or self._pipeline.closed:
                try:
                    _, pipeline = await loop.create_unix_connection(lambda: _Pipeline(self.timeout), self.path)
                except OSError as exc:
                    raise StorageError(f"cannot reach the writer process at {self.path}: {one_line(exc)}") from exc
                self._pipeline = pipeline
            return self._pipeline

    def close(self) -> None:
        """Close the connection (requests in flight fail; the next one reconnects)."""
        if self._pipeline is not None:
            self._pipeline.fail("the client closed the connection")
            self._pipeline = None
