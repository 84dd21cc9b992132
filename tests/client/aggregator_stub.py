"""A recording stub aggregator for the client tests, and small helpers (documents, a clock).

The stub serves documents and keeps every batch it is sent, for the parts of the wire format
the real service may not accept yet (batches labelled with a collection window). It is the
standard library's HTTP server and rldp.shared only, so the client's tests run on a client-only
install (``make test-client-only``).
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgpack
import numpy as np
from documents import SMALL_ALPHABET, grr

from rldp.shared.document import build_document, to_msgpack

# 2026-11-24T05:00:00Z: a fixed "now" for window labels.
NOW = 1_795_496_400.0
DAY = 86_400.0


def grr_document(epsilon: float = 1.0, window: str | None = None, tag: str | None = None) -> dict[str, Any]:
    """GRR on the small alphabet (sex × colour, |X| = |Y| = 6), optionally with a collection window."""
    extra: dict[str, Any] = {"test": tag or uuid.uuid4().hex}
    if window is not None:
        extra["collection"] = {"window": window}
    return build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, epsilon),
        alphabet=SMALL_ALPHABET,
        public_distribution=np.full(SMALL_ALPHABET.shape, 1 / SMALL_ALPHABET.size),
        privacy={"notion": "rldp", "epsilon": epsilon, "uncertainty": {"order": 2, "radius": None}},
        extra=extra,
    )


class Clock:
    """An adjustable clock for ``Client(clock=...)``."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Aggregator:
    """A stub aggregator on loopback: GET /v1/mechanisms/{id} serves ``documents``; POST
    /v1/reports keeps each batch once by batch id (``batches``), like the service.

    ``mode``: "ok"; "down" (503 to every POST); "refuse" (422 problem); "paused" (423
    collection-paused, as a collection whose drift policy paused it); "timeout" (408 request-timeout, as the
    service answers a body that came too slowly); "hang" (read the body
    into ``in_flight``, then never answer until ``release`` is set).
    """

    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = {doc["id"]: doc for doc in documents}
        self.batches: dict[str, dict[str, Any]] = {}
        self.posts: list[dict[str, Any]] = []
        self.in_flight: list[dict[str, Any]] = []
        self.gets = 0
        self.post_count = 0  # every POST, answered or refused
        self.mode = "ok"
        self.release = threading.Event()
        self._lock = threading.Lock()

        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in two writes: with Nagle on, the second waits for the client's
            # delayed ACK (~40 ms a request on a kept-alive connection).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _answer(self, status: int, body: bytes, media: str, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                with stub._lock:
                    stub.gets += 1
                doc = stub.documents.get(self.path.split("?", 1)[0].rsplit("/", 1)[-1])
                if doc is None:
                    self._answer(404, json.dumps({"type": "x/unknown-mechanism"}).encode(), "application/json")
                else:
                    self._answer(200, to_msgpack(doc), "application/msgpack")

            def do_POST(self) -> None:
                body = msgpack.unpackb(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with stub._lock:
                    stub.post_count += 1
                if stub.mode == "hang":
                    with stub._lock:
                        stub.in_flight.append(body)
                    stub.release.wait(60)
                    self._answer(503, b"gone", "text/plain")
                elif stub.mode == "down":
                    self._answer(503, b"down", "text/plain", {"Retry-After": "0"})
                elif stub.mode == "paused":
                    problem = {
                        "type": "https://rldp.dev/problems/collection-paused",
                        "reason": "collection-paused",
                        "detail": "collection 'app' is paused: the reporting population no longer looks like P̂",
                    }
                    self._answer(423, json.dumps(problem).encode(), "application/problem+json", {"Retry-After": "300"})
                elif stub.mode == "timeout":
                    problem = {
                        "type": "https://rldp.dev/problems/request-timeout",
                        "reason": "request-timeout",
                        "detail": "the body did not arrive within the server's deadline; nothing was stored",
                    }
                    self._answer(408, json.dumps(problem).encode(), "application/problem+json")
                elif stub.mode == "refuse":
                    problem = {"type": "https://rldp.dev/problems/window-refused", "title": "no", "detail": "refused"}
                    self._answer(422, json.dumps(problem).encode(), "application/problem+json")
                else:
                    with stub._lock:
                        stub.posts.append(body)
                        duplicate = body["batch"] in stub.batches
                        stub.batches.setdefault(body["batch"], body)
                    answer = {"batch": body["batch"], "accepted": len(body["reports"]), "duplicate": duplicate}
                    self._answer(200 if duplicate else 201, json.dumps(answer).encode(), "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def reports(self, window: str | None = None) -> list[int]:
        """Every stored report (of one window label), in arrival order."""
        with self._lock:
            return [
                y for b in self.batches.values() if window is None or b.get("window") == window for y in b["reports"]
            ]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
