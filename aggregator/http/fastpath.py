"""The WSGI fast path for ``POST /v1/reports``.

Flask's request and response objects, routing and hooks cost about 80 µs per request
here — as much as decoding and counting a batch of 10,000 reports — and report uploads
are nearly all the service's traffic. The common case (a body with a Content-Length,
declared JSON or msgpack) is therefore served straight from WSGI, by the same
:func:`~.bodies.media_kind`, :func:`~.bodies.check_body_size`, :func:`~.reports.submit` and
:func:`~.problems.answer` as the Flask route, so answers, problem types and metrics are
identical. Everything else (other endpoints, chunked bodies, unsupported media types)
goes to Flask unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from rldp.aggregator.services import AggregatorService

from .bodies import JSON, check_body_size, media_kind
from .metrics import Metrics
from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import Problem, answer
from .reports import submit

__all__ = ["ReportsFastPath"]


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
        headers: list[tuple[str, str]] = []
        try:
            size = int(length)
            check_body_size(size, self.service.config["MAX_BODY_BYTES"])
            body = environ["wsgi.input"].read(size)
            if len(body) != size:
                raise Problem(
                    "bad-request", f"the body ended after {len(body)} of the {size} bytes its Content-Length announced"
                )
            status, payload = submit(self.service, body, kind)
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            media = JSON
        except Exception as exc:
            problem, data = answer(exc, "POST", self.PATH, self.metrics.rejected)
            status, media, headers = problem.status, PROBLEM_MEDIA_TYPE, list(problem.headers.items())
        start_response(
            f"{status} {HTTPStatus(status).phrase}",
            [("Content-Type", media), ("Content-Length", str(len(data))), *headers],
        )
        self.metrics.observe("POST", self.PATH, status, time.perf_counter() - start)
        return [data]
