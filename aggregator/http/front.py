"""The buffering front of ``rldp serve``: bodies are read whole before a thread runs the app.

Under Granian's WSGI interface a request occupies one of the worker's ``--threads`` from its
first byte: the app's ``wsgi.input.read()`` blocks that thread until the body has arrived.
Seven clients trickling a byte every 0.5 s therefore stalled normal uploads on 2 workers × 4
threads, and sixteen stalled ``/healthz``. This front runs under Granian's RSGI (asyncio)
interface instead: each body is read on the worker's event loop — a slow client costs a
socket and a buffer, not a thread — with a size limit (``MAX_BODY_BYTES``, 413) and a
deadline (``BODY_TIMEOUT``, 408); only a complete body is handed, as ``wsgi.input``, to
the unchanged WSGI app (:func:`.app.create_app`) in a pool of ``--threads`` threads.

Report uploads (``POST /v1/reports``) do not go to the WSGI app: the front awaits the upload
route's coroutine (:class:`.upload.ReportUpload`) on its event loop, which checks the batch there
and awaits its commit while the loop serves other requests (:mod:`.upload`).

It also makes shutdown graceful: on SIGTERM Granian stops accepting connections and calls
``__rsgi_del__``, which marks the service draining (``/readyz`` answers 503 from then on) and
waits — at most ``DRAIN_SECONDS`` — until every request already being served has been
answered, so no acknowledged upload is lost and none in flight is reset.
An incomplete body (a chunked upload cut before its ``0`` chunk, or fewer bytes than its
Content-Length) is refused with 400 and never reaches the app.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from rldp.aggregator.services import async_committer

from .access import REQUEST_ID, access_line, log, request_id_from
from .app import create_app
from .front_keys import BODY_REFUSED_KEY, DRAINING_KEY
from .pool import ThreadPool
from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import Problem
from .responses import EXTENSION, METRICS_EXTENSION
from .upload import PATH as UPLOAD_PATH
from .upload import ReportUpload, UploadRequest
from .upload.rsgi import COMMIT_THREADS

__all__ = ["BODY_TIMEOUT", "DRAIN_SECONDS", "INGEST_THREADS", "BufferedFront", "create_front"]

#: Seconds a client gets to send a whole request body (408 after; BODY_TIMEOUT in the configuration).
BODY_TIMEOUT = 60.0
#: Seconds a stopping worker waits for the requests it is serving.
DRAIN_SECONDS = 10.0
#: Where the dashboard's pages live (their errors are HTML pages).
_DASHBOARD_PREFIX = "/ui/"
#: Threads per worker waiting for report commits without a writer process (``--ingest-threads``: :mod:`.upload`).
INGEST_THREADS = COMMIT_THREADS


class _Refused(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.problem = problem


#: The upload route's coroutine (:class:`.upload.ReportUpload`).
Upload = Callable[[UploadRequest], Awaitable[tuple[int, list[tuple[str, str]], bytes]]]


class BufferedFront:
    """An RSGI application: buffer the body on the event loop, then await ``upload`` for a report
    upload (when given), or call ``wsgi_app`` in one of ``threads`` threads."""

    def __init__(
        self,
        wsgi_app: Callable[..., Iterable[bytes]],
        *,
        threads: int,
        max_body: int,
        body_timeout: float = BODY_TIMEOUT,
        drain_seconds: float = DRAIN_SECONDS,
        count: Callable[[str], None] | None = None,
        access_log: bool = False,
        upload: Upload | None = None,
    ) -> None:
        self.wsgi_app = wsgi_app
        self.access_log = access_log  # JSON lines for the front's own refusals (the app logs the rest)
        self.count = count  # the rejection counter (/metrics), told each refusal's reason
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.drain_seconds = drain_seconds
        self.upload = upload  # awaited for a report upload, if given
        self.pool = ThreadPool(threads, "rldp-app")
        self.draining = threading.Event()
        self.in_flight = 0

    # -- Granian's hooks
    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        pass

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Called once the worker was told to stop: drain, bounded, then release the threads."""
        self.draining.set()
        deadline = time.monotonic() + self.drain_seconds

        async def drained() -> None:
            while self.in_flight and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)  # the last answers leave the Rust side's buffers

        loop.run_until_complete(drained())
        self.pool.shutdown(wait=False)
        close = getattr(self.upload, "close", None)
        if close is not None:
            close()

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        if scope.proto != "http":
            return
        self.in_flight += 1
        try:
            await self._serve(scope, proto)
        finally:
            self.in_flight -= 1

    # -- one request
    async def _serve(self, scope: Any, proto: Any) -> None:
        began = time.perf_counter()
        try:
            async with asyncio.timeout(self.body_timeout):  # no task per request, unlike wait_for
                body = await self._body(scope, proto)
        except _Refused as exc:
            if exc.problem.reason == "body-too-large" and scope.path.startswith(_DASHBOARD_PREFIX):
                await self._page_too_large(scope, proto)
            else:
                self._problem(proto, exc.problem, scope, began)
            return
        except TimeoutError:
            self._problem(
                proto,
                Problem("request-timeout", f"the body did not arrive within {self.body_timeout:g} s; send it faster"),
                scope,
                began,
            )
            return
        except Exception:  # the client went away, or sent a malformed stream: nothing to answer
            return
        if self.upload is not None and scope.path == UPLOAD_PATH and scope.method == "POST":
            remote = scope.client.rpartition(":")[0]
            status, headers, chunks = await self.upload(UploadRequest.of(body, scope.headers.items(), remote))
        else:
            status, headers, chunks = await self.pool.submit(self._call, self._environ(scope, body))
        proto.response_bytes(status, headers, chunks)

    async def _body(self, scope: Any, proto: Any) -> bytes:
        length = scope.headers.get("content-length")
        chunked = "chunked" in (scope.headers.get("transfer-encoding") or "").lower()
        expected = None
        if length is not None and not chunked:
            try:
                expected = int(length)
            except ValueError:
                raise _Refused(Problem("bad-request", f"Content-Length {length!r:.40} is not a number")) from None
            if expected > self.max_body:
                raise _Refused(self._too_large())
            if expected == 0:
                return b""
        elif not chunked:
            return b""
        if expected is not None:
            # The whole body in one await, gathered on the Rust side (the size is known and allowed):
            # per chunk, ``async for`` cost an event-loop round each.
            try:
                body = await proto()
            except Exception:  # Granian's error for a stream cut short (hyper's "incomplete body")
                body = None
            if body is None or len(body) != expected:
                got = "early" if body is None else f"after {len(body)}"
                raise _Refused(Problem("bad-request", f"the body is incomplete: it ended {got} of {expected} bytes"))
            return body
        parts, size, gaps = [], 0, 0
        async for chunk in proto:
            # Granian yields b"" for a stream error (hyper's "incomplete body" at the client's end
            # of file) and once more at the end: an empty chunk before the last one means the
            # body was cut short (trailers, which no uploader sends, also read as one)
            if not chunk:
                gaps += 1
                continue
            size += len(chunk)
            if size > self.max_body:
                raise _Refused(self._too_large())
            parts.append(chunk)
        if gaps > 1 or (expected is not None and size != expected):
            what = "without its terminating 0 chunk" if chunked else f"after {size} of {expected} bytes"
            raise _Refused(Problem("bad-request", f"the body is incomplete: it ended {what}"))
        return b"".join(parts)

    async def _page_too_large(self, scope: Any, proto: Any) -> None:
        """The dashboard's HTML 413 page, rendered by the app for this request without its body."""
        environ = {**self._environ(scope, b""), BODY_REFUSED_KEY: True}
        status, headers, chunks = await self.pool.submit(self._call, environ)
        proto.response_bytes(status, [*headers, ("connection", "close")], chunks)  # the body stays unread

    def _too_large(self) -> Problem:
        return Problem("body-too-large", f"the body exceeds the limit of {self.max_body} bytes (MAX_BODY_BYTES)")

    def _environ(self, scope: Any, body: bytes) -> dict[str, Any]:
        host, _, port = scope.server.rpartition(":")
        remote, _, remote_port = scope.client.rpartition(":")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": scope.method,
            "SCRIPT_NAME": "",
            "PATH_INFO": scope.path.encode("utf-8", "surrogateescape").decode("latin-1"),
            "QUERY_STRING": scope.query_string,
            "SERVER_NAME": host,
            "SERVER_PORT": port,
            "SERVER_PROTOCOL": f"HTTP/{scope.http_version}",
            "REMOTE_ADDR": remote,
            "REMOTE_PORT": remote_port,
            "CONTENT_LENGTH": str(len(body)) if body else "",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": scope.scheme,
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            DRAINING_KEY: self.draining,
        }
        for key, value in scope.headers.items():
            name = key.upper().replace("-", "_")
            if name in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
                continue
            if name != "CONTENT_TYPE":
                name = "HTTP_" + name
            environ[name] = f"{environ[name]},{value}" if name in environ else value
        return environ

    def _call(self, environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        return self._finish(*self._start(environ))

    def _start(self, environ: dict[str, Any]) -> tuple[list[Any], Iterable[bytes]]:
        """Call the app; (what it passed to start_response once it has, its answer's iterable)."""
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers]
            return lambda data: None

        return started, self.wsgi_app(environ, start_response)

    def _finish(self, started: list[Any], result: Iterable[bytes]) -> tuple[int, list[tuple[str, str]], bytes]:
        """Read the app's answer whole (an app may start the response only now); (status, headers, body)."""
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return int(started[0].split(" ", 1)[0]), list(started[1]), body

    def _problem(self, proto: Any, problem: Problem, scope: Any, began: float) -> None:
        """Answer a refusal of the front itself (the app never saw the request), with a request id."""
        if self.count is not None:
            self.count(problem.reason)
        rid = request_id_from(scope.headers.get("x-request-id"))
        token = REQUEST_ID.set(rid)  # this task's own context: problem.encode echoes the id
        try:
            body = problem.encode(scope.path)
        finally:
            REQUEST_ID.reset(token)
        headers = [("content-type", PROBLEM_MEDIA_TYPE), ("connection", "close"), ("x-request-id", rid)]
        proto.response_bytes(problem.status, [*headers, *problem.headers.items()], body)
        if self.access_log:
            remote = scope.client.rpartition(":")[0]
            log.info(
                access_line(
                    scope.method, scope.path, problem.status, time.perf_counter() - began, len(body), rid, remote
                )
            )


def create_front() -> BufferedFront:
    """What each Granian worker calls (``rldp serve``): the app of :func:`.app.create_app`,
    configured from the environment, behind a :class:`BufferedFront`."""
    app = create_app()
    threads = int(os.environ.get("RLDP_THREADS", "4"))  # set by rldp serve from --threads
    ingest_threads = int(os.environ.get("RLDP_INGEST_THREADS", str(INGEST_THREADS)))  # … from --ingest-threads
    cfg = app.config["RLDP"]
    metrics = app.extensions[METRICS_EXTENSION]
    upload = ReportUpload(
        app.extensions[EXTENSION],
        metrics,
        commit=async_committer(cfg.get("WRITER_SOCKET")),  # SQLite under rldp serve: the writer process
        commit_threads=ingest_threads,  # else (PostgreSQL): the storage's group commit, in threads
        cors_origin=cfg.get("CORS_ORIGIN"),
        access_log=cfg["ACCESS_LOG"] == "json",
    )
    return BufferedFront(
        app,
        threads=threads,
        max_body=cfg["MAX_BODY_BYTES"],
        body_timeout=cfg["BODY_TIMEOUT"],
        count=metrics.rejected,
        access_log=cfg["ACCESS_LOG"] == "json",
        upload=upload,
    )
