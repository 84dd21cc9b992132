"""``POST /v1/reports`` under ``rldp serve``'s buffering front: one coroutine per upload.

The front (:mod:`..front`) has read the body whole on its event loop; :class:`ReportUpload` checks
the batch there, awaits its commit while the loop serves other requests, and returns the answer.
An upload spends most of its time waiting for its commit (an fsync) and a fraction of a
millisecond computing: handed to a thread, it cost more in hand-offs and GIL switches than in
work (measured with ``bench/bench_ingest.py``: the front's two workers used 1.0-1.3 ms of CPU per
10,000-report batch through threads, 0.6-0.8 ms on the loop; the writer's 0.35-0.42 ms before,
0.13-0.23 ms after, as one connection delivers many batches per read).

The commit awaited is the writer process's (SQLite: :func:`~rldp.aggregator.services.async_committer`)
or, without one (PostgreSQL), the storage's own group commit run in ``commit_threads`` threads
(``rldp serve --ingest-threads``): the batches waiting together are what one transaction takes.

Flask is not involved, so what its middleware adds to every other answer is added here: the
request id (``X-Request-Id``, and ``request_id`` in problems), CORS for the configured origin, the
JSON access-log line and the request metrics — the same as under WSGI (:mod:`.wsgi`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rldp.aggregator.services import AggregatorService, AsyncCommit

from ..access import REQUEST_ID, access_line, log, request_id_from
from ..cors import cors_headers
from ..metrics import Metrics
from ..pool import ThreadPool
from .answers import PATH, Answer, decoded, upload_answer

__all__ = ["COMMIT_THREADS", "ReportUpload", "UploadRequest"]

#: Threads per worker waiting for commits without a writer process (``--ingest-threads``; see the module docstring).
COMMIT_THREADS = 16


@dataclass(frozen=True, slots=True)
class UploadRequest:
    """What an upload's answer depends on: its body and a few headers (None when absent)."""

    body: bytes
    content_type: str | None = None
    authorization: str | None = None
    request_id: str | None = None  # X-Request-Id as the client sent it
    origin: str | None = None
    remote: str = ""  # the peer's address, for the access log

    @classmethod
    def of(cls, body: bytes, headers: Iterable[tuple[str, str]], remote: str = "") -> UploadRequest:
        """The request with ``headers`` (name, value); a header sent several times reads as its values
        joined by commas, as in a WSGI environ."""
        wanted: dict[str, str] = {}
        for name, value in headers:
            key = name.lower()
            if key in _FIELDS:
                wanted[key] = f"{wanted[key]},{value}" if key in wanted else value
        return cls(body, **{_FIELDS[key]: value for key, value in wanted.items()}, remote=remote)


_FIELDS = {
    "content-type": "content_type",
    "authorization": "authorization",
    "x-request-id": "request_id",
    "origin": "origin",
}


class ReportUpload:
    """The upload route's coroutine (see the module docstring): ``await upload(request)`` is its answer."""

    def __init__(
        self,
        service: AggregatorService,
        metrics: Metrics,
        *,
        commit: AsyncCommit | None = None,
        commit_threads: int = COMMIT_THREADS,
        cors_origin: str | None = None,
        access_log: bool = False,
    ) -> None:
        self.service = service
        self.metrics = metrics
        self.cors_origin = cors_origin or None
        self.access_log = access_log
        self.threads: ThreadPool | None = None  # waiting for the storage's group commit (no writer process)
        self.commit = commit if commit is not None else self._threaded_commit(commit_threads)

    def _threaded_commit(self, threads: int) -> AsyncCommit:
        pool = self.threads = ThreadPool(threads, "rldp-ingest")
        commit = self.service.storage.commit

        def threaded(item: Any) -> Any:  # the BatchItem; an asyncio future of its IngestResult
            return pool.submit(commit, item)

        return threaded

    def close(self) -> None:
        """Release the commit threads, if any (a stopping worker)."""
        if self.threads is not None:
            self.threads.shutdown(wait=False)

    async def __call__(self, request: UploadRequest) -> Answer:
        began = time.perf_counter()
        rid = request_id_from(request.request_id)
        token = REQUEST_ID.set(rid)  # a refusal's problem names its request
        try:
            try:
                # The decoded batch is handed over, not kept here while the commit is awaited (see Ingest.check).
                outcome: Any = await self.service.write_reports(
                    *decoded(request.body, request.content_type),
                    authorization=request.authorization,
                    commit=self.commit,
                )
            except Exception as exc:  # a refusal, or a failed commit (503: retry with the same batch id)
                outcome = exc
            status, headers, body = upload_answer(outcome, self.metrics.rejected)
        finally:
            REQUEST_ID.reset(token)
        self.metrics.observe("POST", PATH, status, time.perf_counter() - began)
        if request.origin is not None and request.origin == self.cors_origin:
            headers.extend(cors_headers(self.cors_origin))
        headers.append(("X-Request-Id", rid))
        if self.access_log:
            seconds = time.perf_counter() - began
            log.info(access_line("POST", PATH, status, seconds, len(body), rid, request.remote))
        return status, headers, body
