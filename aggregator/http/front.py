"""The buffering front of ``rldp serve``: bodies are read whole before a thread runs the app.

Under Granian's WSGI interface a request occupies one of the worker's ``--threads`` from its
first byte: the app's ``wsgi.input.read()`` blocks that thread until the body has arrived.
Seven clients trickling a byte every 0.5 s therefore stalled normal uploads on 2 workers × 4
threads, and sixteen stalled ``/healthz``. This front runs under Granian's RSGI (asyncio)
interface instead: each body is read on the worker's event loop — a slow client costs a
socket and a buffer, not a thread — with a size limit (``MAX_BODY_BYTES``, 413) and a
deadline (``BODY_TIMEOUT``, 408); only a complete body is handed, as ``wsgi.input``, to
the unchanged WSGI app (:func:`.app.create_app`) in a pool of ``--threads`` threads.

Report uploads (``POST /v1/reports``) with a SQLite store, whose batches the writer process
commits (:mod:`rldp.aggregator.writer`), stay on the event loop: the app checks the batch
there and leaves its commit to the front (:class:`.front_keys.DeferredCommit`), which awaits
the writer over one pipelined connection while the loop serves other requests, then has the
app complete the answer (:mod:`.fastpath`). An upload spends most of its time waiting for
its commit (an fsync) and a fraction of a millisecond computing; handed to a thread, it cost
more in hand-offs and GIL switches than in work. Measured on two cores with
``bench/bench_ingest.py``'s load (CPU time per 10,000-report batch): the two workers' together
1.0-1.3 ms through threads, 0.6-0.8 ms on the loop; the writer's 0.35-0.42 ms before, 0.13-0.23
ms after (one connection delivers many batches per read, so its groups grew from ~3 to ~8).
With PostgreSQL (no writer process; each worker commits) uploads run in a pool of their own,
``--ingest-threads`` (default :data:`INGEST_THREADS`), so that the batches waiting together
are what one commit takes; the app's other requests (estimates, the dashboard) compute and
keep their ``--threads``, which bound their memory.

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
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from rldp.aggregator.services import AsyncCommit, async_committer

from .access import REQUEST_ID, access_line, log, request_id_from
from .app import create_app
from .front_keys import BODY_REFUSED_KEY, DEFERRED_COMMIT_KEY, DRAINING_KEY, DeferredCommit
from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import Problem
from .responses import METRICS_EXTENSION

__all__ = ["BODY_TIMEOUT", "DRAIN_SECONDS", "INGEST_THREADS", "BufferedFront", "create_front"]

#: Seconds a client gets to send a whole request body (408 after; BODY_TIMEOUT in the configuration).
BODY_TIMEOUT = 60.0
#: Seconds a stopping worker waits for the requests it is serving.
DRAIN_SECONDS = 10.0
#: Where the dashboard's pages live (their errors are HTML pages).
_DASHBOARD_PREFIX = "/ui/"
#: Threads per worker running report uploads without a writer process (``--ingest-threads``; see the module docstring).
INGEST_THREADS = 16
_REPORTS_PATH = "/v1/reports"


class _Refused(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.problem = problem


class _Pool:
    """``threads`` threads running calls handed over from the event loop.

    Why not ``loop.run_in_executor``: per request it chains a concurrent and an asyncio future
    (two futures, four callbacks, a condition variable), which the profile of a 10,000-report
    upload showed as a third of the front's event-loop time. Here the loop's own future is
    resolved by one ``call_soon_threadsafe`` from the thread.
    """

    def __init__(self, threads: int, name: str) -> None:
        self._work: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}_{k}", daemon=True) for k in range(max(1, threads))
        ]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> asyncio.Future[Any]:
        """Run ``fn(arg)`` in a thread; a future of the running loop with its result."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._work.put((loop, fut, fn, arg))
        return fut

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            loop, fut, fn, arg = item
            try:
                result, error = fn(arg), None
            except BaseException as exc:  # handed to the awaiting request, as an executor would
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_resolve, fut, result, error)
            except RuntimeError:  # the loop is closed: the worker is gone, nobody awaits this
                pass

    def shutdown(self, wait: bool = False, cancel_futures: bool = True) -> None:
        """Stop the threads once the calls already handed over are done (``wait``: join them)."""
        for _ in self._threads:
            self._work.put(None)
        if wait:
            for t in self._threads:
                t.join()


def _resolve(fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if fut.cancelled():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


class BufferedFront:
    """An RSGI application: buffer the body on the event loop, then call ``wsgi_app`` in a thread
    (of ``ingest_threads`` for a report upload, when given; of ``threads`` otherwise) — or, for a
    report upload when ``commit`` is given, on the loop, awaiting ``commit`` for its batch."""

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
        ingest_threads: int | None = None,
        commit: AsyncCommit | None = None,
    ) -> None:
        self.wsgi_app = wsgi_app
        self.access_log = access_log  # JSON lines for the front's own refusals (the app logs the rest)
        self.count = count  # the rejection counter (/metrics), told each refusal's reason
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.drain_seconds = drain_seconds
        self.commit = commit  # awaited for a report upload's batch (the writer process), if given
        self.pool = _Pool(threads, "rldp-app")
        self.ingest_pool = _Pool(ingest_threads, "rldp-ingest") if ingest_threads and commit is None else self.pool
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
        if self.ingest_pool is not self.pool:
            self.ingest_pool.shutdown(wait=False)

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
        upload = scope.path == _REPORTS_PATH and scope.method == "POST"
        if upload and self.commit is not None:
            status, headers, chunks = await self._upload(self._environ(scope, body), self.commit)
        else:
            pool = self.ingest_pool if upload else self.pool
            status, headers, chunks = await pool.submit(self._call, self._environ(scope, body))
        proto.response_bytes(status, headers, chunks)

    async def _upload(self, environ: dict[str, Any], commit: AsyncCommit) -> tuple[int, list[tuple[str, str]], bytes]:
        """A report upload on the event loop (see the module docstring): the app checks the batch,
        ``commit`` stores it while the loop serves others, the app completes the answer."""
        deferred = DeferredCommit()
        environ[DEFERRED_COMMIT_KEY] = deferred
        started, result = self._start(environ)
        if deferred.item is not None:  # None: refused, the answer is ready
            try:
                deferred.result = await commit(deferred.item)
            except Exception as exc:  # the app answers it (a StorageError: 503, retry with the same batch id)
                deferred.error = exc
        return self._finish(started, result)

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
    return BufferedFront(
        app,
        threads=threads,
        max_body=cfg["MAX_BODY_BYTES"],
        body_timeout=cfg["BODY_TIMEOUT"],
        count=app.extensions[METRICS_EXTENSION].rejected,
        access_log=cfg["ACCESS_LOG"] == "json",
        ingest_threads=ingest_threads,
        commit=async_committer(cfg.get("WRITER_SOCKET")),  # SQLite under rldp serve: the writer process
    )
