"""A recording stub aggregator for the client tests, and small helpers (documents, a clock).

The stub serves documents and keeps every batch it is sent, for the parts of the wire format
the real service may not accept yet (batches labelled with a collection window).
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import msgpack
import numpy as np
from service.rldp_live import SMALL_ALPHABET
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from rldp.aggregator.design import grr_matrix
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
        matrix=grr_matrix(SMALL_ALPHABET.size, epsilon),
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

    ``mode``: "ok"; "down" (503 to every POST); "refuse" (422 problem); "hang" (read the body
    into ``in_flight``, then never answer until ``release`` is set).
    """

    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = {doc["id"]: doc for doc in documents}
        self.batches: dict[str, dict[str, Any]] = {}
        self.posts: list[dict[str, Any]] = []
        self.in_flight: list[dict[str, Any]] = []
        self.gets = 0
        self.mode = "ok"
        self.release = threading.Event()
        self._lock = threading.Lock()

        @Request.application
        def app(request: Request) -> Response:
            if request.method == "GET":
                with self._lock:
                    self.gets += 1
                doc = self.documents.get(request.path.rsplit("/", 1)[-1])
                if doc is None:
                    return Response(json.dumps({"type": "x/unknown-mechanism"}), 404, mimetype="application/json")
                return Response(to_msgpack(doc), 200, mimetype="application/msgpack")
            body = msgpack.unpackb(request.get_data())
            if self.mode == "hang":
                with self._lock:
                    self.in_flight.append(body)
                self.release.wait(60)
                return Response("gone", 503)
            if self.mode == "down":
                return Response("down", 503, headers={"Retry-After": "0"})
            if self.mode == "refuse":
                problem = {"type": "https://rldp.dev/problems/window-refused", "title": "no", "detail": "refused"}
                return Response(json.dumps(problem), 422, mimetype="application/problem+json")
            with self._lock:
                self.posts.append(body)
                duplicate = body["batch"] in self.batches
                self.batches.setdefault(body["batch"], body)
            answer = {"batch": body["batch"], "accepted": len(body["reports"]), "duplicate": duplicate}
            return Response(json.dumps(answer), 200 if duplicate else 201, mimetype="application/json")

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
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
