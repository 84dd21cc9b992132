"""The buffering front runs report uploads in a pool of their own (``--ingest-threads``)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from rldp_live import RsgiProto, RsgiScope

from rldp.aggregator.http.front import BufferedFront


def _serve_all(front: BufferedFront, requests: list[tuple[str, str]]) -> list[RsgiProto]:
    async def main() -> list[RsgiProto]:
        protos = [RsgiProto(b"{}") for _ in requests]
        await asyncio.gather(
            *(front.__rsgi__(RsgiScope(m, p, b"{}"), proto) for (m, p), proto in zip(requests, protos, strict=True))
        )
        return protos

    try:
        return asyncio.run(main())
    finally:
        front.pool.shutdown()
        front.ingest_pool.shutdown()


def test_uploads_wait_together_in_their_own_pool_while_other_requests_keep_theirs():
    uploads = 4
    together = threading.Barrier(uploads, timeout=5)  # broken (an error) unless 4 uploads run at once
    seen: dict[str, set[str]] = {"upload": set(), "other": set()}

    def app(environ: dict, start_response: Any) -> list[bytes]:
        upload = environ["PATH_INFO"] == "/v1/reports" and environ["REQUEST_METHOD"] == "POST"
        seen["upload" if upload else "other"].add(threading.current_thread().name)
        if upload:
            together.wait()  # as a batch waits for its commit
        start_response("201 Created" if upload else "200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    front = BufferedFront(app, threads=1, max_body=1000, ingest_threads=uploads)
    requests = [("POST", "/v1/reports")] * uploads + [("GET", "/healthz"), ("POST", "/v1/mechanisms")]
    protos = _serve_all(front, requests)
    assert [p.answer[0] for p in protos if p.answer] == [201] * uploads + [200, 200]
    assert len(seen["upload"]) == uploads and all(name.startswith("rldp-ingest") for name in seen["upload"])
    assert seen["other"] == {"rldp-app_0"}


def test_without_ingest_threads_every_request_shares_the_app_threads():
    names: set[str] = set()

    def app(environ: dict, start_response: Any) -> list[bytes]:
        names.add(threading.current_thread().name)
        start_response("201 Created", [])
        return [b"{}"]

    front = BufferedFront(app, threads=1, max_body=1000)
    assert front.ingest_pool is front.pool
    protos = _serve_all(front, [("POST", "/v1/reports"), ("GET", "/healthz")])
    assert [p.answer[0] for p in protos if p.answer] == [201, 201] and names == {"rldp-app_0"}
