"""The WSGI fast path for ``POST /v1/reports``.

Flask's request and response objects, routing and hooks cost about 80 µs per request
here — as much as decoding and counting a batch of 10,000 reports — and report uploads
are nearly all the service's traffic. The common case (a body with a Content-Length,
declared JSON or msgpack) is therefore served straight from WSGI, by the same
:func:`~.bodies.media_kind`, :func:`~.bodies.check_body_size`, :func:`~.reports.submit` and
:func:`~.problems.answer` as the Flask route, so answers, problem types and metrics are
identical. Everything else (other endpoints, chunked bodies, unsupported media types)
goes to Flask unchanged.

Deferred commits: when the buffering front asks for it (a :class:`~.front_keys.DeferredCommit`
in the environ, under ``rldp serve`` with SQLite), the fast path checks the batch and returns at
once, leaving the batch in the environ; the front awaits the writer process on its event loop
and then reads the answer, which only then is completed (the receipt, or the refusal such as a
conflict) — by the same service steps (:meth:`AggregatorService.submit_steps`) as a blocking
upload, and through the same middleware (request id, access log, CORS). Under the front every
upload arrives whole with its Content-Length, so no upload it defers reaches Flask.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import Any

from rldp.aggregator.services import AggregatorService, SubmitSteps, resume

from .access import REQUEST_ID
from .bodies import JSON, check_body_size, decode, maybe_booleans, media_kind
from .front_keys import DEFERRED_COMMIT_KEY, DeferredCommit
from .metrics import Metrics
from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import Problem, answer
from .reports import receipt_answer, submit

__all__ = ["ReportsFastPath"]

#: The receipts' encoder, made once (json.dumps with options builds one per call).
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class ReportsFastPath:
    """WSGI middleware answering ``POST /v1/reports`` without Flask's per-request machinery."""

    PATH = "/v1/reports"

    def __init__(
        self, flask_wsgi: Callable[..., Iterable[bytes]], service: AggregatorService, metrics: Metrics
    ) -> None:
        self.flask_wsgi = flask_wsgi
        self.service = service
        self.metrics = metrics

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != self.PATH or environ.get("REQUEST_METHOD") != "POST":
            return self.flask_wsgi(environ, start_response)
        kind = media_kind(environ.get("CONTENT_TYPE", ""))
        length = environ.get("CONTENT_LENGTH", "")
        if kind is None or not length.isdigit() or environ.get("HTTP_TRANSFER_ENCODING"):
            return self.flask_wsgi(environ, start_response)
        start = time.perf_counter()
        deferred = environ.get(DEFERRED_COMMIT_KEY)
        try:
            size = int(length)
            check_body_size(size, self.service.config["MAX_BODY_BYTES"])
            body = environ["wsgi.input"].read(size)
            if len(body) != size:
                raise Problem(
                    "bad-request", f"the body ended after {len(body)} of the {size} bytes its Content-Length announced"
                )
            authorization = environ.get("HTTP_AUTHORIZATION")  # a collection may require an upload token
            if deferred is None:
                return self._answer(submit(self.service, body, kind, authorization), start_response, start)
            steps = self.service.submit_steps(
                decode(body, kind), maybe_bool=maybe_booleans(body, kind), authorization=authorization
            )
            deferred.item = next(steps)  # checked: the front commits it
        except Exception as exc:
            return self._answer(exc, start_response, start)
        return self._when_committed(steps, deferred, start_response, start, REQUEST_ID.get())

    def _when_committed(
        self, steps: SubmitSteps, deferred: DeferredCommit, start_response: Any, start: float, request_id: str | None
    ) -> Iterator[bytes]:
        """The answer of a deferred upload, completed when first read (the commit's outcome is then in ``deferred``)."""
        token = REQUEST_ID.set(request_id)  # a refusal's problem names the request, as AccessLog set it
        try:
            try:
                outcome: tuple[int, dict[str, Any]] | Exception = receipt_answer(
                    resume(steps, deferred.result, deferred.error)
                )
            except Exception as exc:
                outcome = exc
            chunks = self._answer(outcome, start_response, start)
        finally:
            REQUEST_ID.reset(token)
        yield from chunks

    def _answer(
        self, outcome: tuple[int, dict[str, Any]] | Exception, start_response: Any, start: float
    ) -> list[bytes]:
        """Start the response for a stored batch's (status, receipt) or a refusal; its body."""
        headers: list[tuple[str, str]] = []
        if isinstance(outcome, Exception):
            problem, data = answer(outcome, "POST", self.PATH, self.metrics.rejected)
            status, media, headers = problem.status, PROBLEM_MEDIA_TYPE, list(problem.headers.items())
        else:
            status, payload = outcome
            data = _JSON.encode(payload).encode("utf-8")
            media = JSON
        start_response(
            f"{status} {HTTPStatus(status).phrase}",
            [("Content-Type", media), ("Content-Length", str(len(data))), *headers],
        )
        self.metrics.observe("POST", self.PATH, status, time.perf_counter() - start)
        return [data]
