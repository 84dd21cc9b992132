"""Without a writer process (PostgreSQL), the front's uploads wait for the storage's group commit in
commit threads of their own (``--ingest-threads``), while other requests keep the app's threads."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import msgpack
from rldp_live import ADMIN, RsgiProto, RsgiScope, in_process_app, make_document

from rldp.aggregator.http.front import BufferedFront
from rldp.aggregator.http.upload import ReportUpload


def _serve_all(front: BufferedFront, requests: list[tuple[str, str, bytes]]) -> list[RsgiProto]:
    async def main() -> list[RsgiProto]:
        protos = [RsgiProto(body) for _, _, body in requests]
        await asyncio.gather(
            *(
                front.__rsgi__(RsgiScope(m, p, body), proto)
                for (m, p, body), proto in zip(requests, protos, strict=True)
            )
        )
        return protos

    try:
        return asyncio.run(main())
    finally:
        front.pool.shutdown()
        front.upload.close()  # type: ignore[union-attr]


def test_uploads_wait_together_for_their_commits_in_their_own_threads(tmp_path):
    uploads = 4
    together = threading.Barrier(uploads, timeout=5)  # broken (an error) unless 4 commits wait at once
    seen: dict[str, set[str]] = {"commit": set(), "other": set()}
    doc = make_document()
    with in_process_app(tmp_path) as app:
        assert app.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        service = app.extensions["rldp"]
        storage_commit = service.storage.commit

        def commit(item: Any) -> Any:
            seen["commit"].add(threading.current_thread().name)
            together.wait()  # as batches wait for their group's commit
            return storage_commit(item)

        def wsgi(environ: dict, start_response: Any) -> Any:
            seen["other"].add(threading.current_thread().name)
            return app(environ, start_response)

        service.storage.commit = commit  # read by the upload as it is built
        upload = ReportUpload(service, app.extensions["rldp.metrics"], commit_threads=uploads)
        front = BufferedFront(wsgi, threads=1, max_body=1 << 20, upload=upload)
        bodies = [msgpack.packb({"mechanism": doc["id"], "batch": f"b{k}", "reports": [0, 1]}) for k in range(uploads)]
        requests = [("POST", "/v1/reports", body) for body in bodies] + [("GET", "/healthz", b"")]
        protos = _serve_all(front, requests)
        assert [p.answer[0] for p in protos if p.answer] == [201] * uploads + [200]
        assert service.storage.batch_totals(doc["id"]) == (uploads, 2 * uploads)
    assert len(seen["commit"]) == uploads and all(name.startswith("rldp-ingest") for name in seen["commit"])
    assert seen["other"] == {"rldp-app_0"}


def test_without_an_upload_route_every_request_runs_in_the_app_threads():
    names: set[str] = set()

    def app(environ: dict, start_response: Any) -> list[bytes]:
        names.add(threading.current_thread().name)
        start_response("201 Created", [])
        return [b"{}"]

    front = BufferedFront(app, threads=1, max_body=1000)
    assert front.upload is None
    try:
        protos = asyncio.run(_gather(front, [("POST", "/v1/reports"), ("GET", "/healthz")]))
    finally:
        front.pool.shutdown()
    assert [p.answer[0] for p in protos if p.answer] == [201, 201] and names == {"rldp-app_0"}


async def _gather(front: BufferedFront, requests: list[tuple[str, str]]) -> list[RsgiProto]:
    protos = [RsgiProto(b"{}") for _ in requests]
    await asyncio.gather(
        *(front.__rsgi__(RsgiScope(m, p, b"{}"), pr) for (m, p), pr in zip(requests, protos, strict=True))
    )
    return protos
