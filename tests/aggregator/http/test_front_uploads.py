"""Report uploads the front awaits on its event loop (SQLite under ``rldp serve``: the writer
process): the upload route's coroutine checks the batch there and awaits its commit; the answer
is the one a blocking upload through Flask gets, refusals and request ids included."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from typing import Any

import msgpack
import pytest
from rldp_live import ADMIN, RsgiProto, RsgiScope, call, in_process_app, make_document

from rldp.aggregator.http.front import BufferedFront
from rldp.aggregator.http.upload import ReportUpload
from rldp.aggregator.storage import StorageError


def _upload_scope(body: bytes, request_id: str) -> RsgiScope:
    return RsgiScope("POST", "/v1/reports", body, {"x-request-id": request_id})


@pytest.fixture
def apps(tmp_path):
    """Two services with the same mechanism: one answers blocking uploads, one the front's."""
    doc = make_document()
    with in_process_app(tmp_path / "a") as blocking, in_process_app(tmp_path / "b") as deferred:
        for app in (blocking, deferred):
            assert app.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        yield blocking, deferred, doc


def _bodies(mid: str) -> list[bytes]:
    def body(reports: list[Any], batch: str = "b1", mechanism: str = mid) -> bytes:
        return msgpack.packb({"mechanism": mechanism, "batch": batch, "reports": reports})

    return [
        body([0, 1, 1, 2]),  # stored: 201
        body([0, 1, 1, 2]),  # the same again: 200, a duplicate
        body([2, 1, 1, 0]),  # the same id, other reports: 409
        body([0, 99], batch="b2"),  # refused before any commit: 422
        body([1], mechanism="f" * 64),  # no such mechanism: 404
        body(list(range(3)), batch="b3"),  # stored: 201
    ]


def _without_id(data: bytes) -> dict:
    out = json.loads(data)
    out.pop("request_id", None)
    return out


def test_the_fronts_uploads_get_the_answers_of_blocking_uploads_and_run_on_its_loop(apps):
    blocking, deferred, doc = apps
    storage = deferred.extensions["rldp"].storage
    committed: list[int] = []
    app_threads: set[int] = set()

    async def commit(item):
        committed.append(threading.get_ident())
        return storage.commit(item)

    def app(environ, start_response):
        app_threads.add(threading.get_ident())
        return deferred(environ, start_response)

    upload = ReportUpload(deferred.extensions["rldp"], deferred.extensions["rldp.metrics"], commit=commit)
    assert upload.threads is None  # no commit threads: uploads stay on the loop
    front = BufferedFront(app, threads=1, max_body=1 << 20, upload=upload)
    bodies = _bodies(doc["id"])

    async def serve() -> list[RsgiProto]:
        out = []
        for body in bodies:  # in order: each answer depends on the ones before
            proto = RsgiProto(body)
            await front.__rsgi__(_upload_scope(body, "rid-" + uuid.uuid4().hex[:8]), proto)
            out.append(proto)
        return out, threading.get_ident()

    try:
        protos, loop_thread = asyncio.run(serve())
    finally:
        front.pool.shutdown()
    expected = [call(blocking, body, "application/msgpack") for body in bodies]
    got = [(p.answer[0], dict(p.answer[1]), p.answer[2]) for p in protos]
    assert [status for status, _, _ in got] == [int(status.split()[0]) for status, _, _ in expected]
    assert [status for status, _, _ in got] == [201, 200, 409, 422, 404, 201]
    for (_, headers, data), (_, want_headers, want) in zip(got, expected, strict=True):
        assert headers["Content-Type"] == want_headers["Content-Type"]
        assert _without_id(data) == {k: v for k, v in want.items() if k != "request_id"}
    # the problems name their request (the id the client sent), as AccessLog's header does
    for proto in protos:
        sent = dict(proto.answer[1])["X-Request-Id"]
        assert sent.startswith("rid-")
        if proto.answer[0] >= 400:
            assert json.loads(proto.answer[2])["request_id"] == sent
    assert len(committed) == 4  # the refused bodies never reached a commit
    assert app_threads == set() and set(committed) == {loop_thread}  # no upload reached the WSGI app


def test_a_failed_commit_is_a_503_naming_the_request_and_the_batch_can_be_sent_again(apps):
    _, deferred, doc = apps
    storage = deferred.extensions["rldp"].storage
    fail = [True]

    async def commit(item):
        if fail[0]:
            raise StorageError("the writer process did not answer (test); retry it with the same batch id")
        return storage.commit(item)

    upload = ReportUpload(deferred.extensions["rldp"], deferred.extensions["rldp.metrics"], commit=commit)
    front = BufferedFront(deferred, threads=1, max_body=1 << 20, upload=upload)
    body = _bodies(doc["id"])[0]

    async def upload(rid: str) -> RsgiProto:
        proto = RsgiProto(body)
        await front.__rsgi__(_upload_scope(body, rid), proto)
        return proto

    try:
        failed = asyncio.run(upload("rid-failed"))
        fail[0] = False
        again = asyncio.run(upload("rid-again"))
    finally:
        front.pool.shutdown()
    status, headers, data = failed.answer
    problem = json.loads(data)
    assert status == 503 and problem["request_id"] == "rid-failed" == dict(headers)["X-Request-Id"]
    assert "retry later with the same batch id" in problem["detail"]
    assert again.answer[0] == 201 and json.loads(again.answer[2])["accepted"] == 4
    assert storage.batch_totals(doc["id"]) == (1, 4)


def test_the_fronts_uploads_get_cors_and_the_access_log_as_the_app_gives_them(tmp_path, caplog):
    origin = "https://app.example"
    doc = make_document()
    with in_process_app(tmp_path, CORS_ORIGIN=origin, ACCESS_LOG="json") as app:
        assert app.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        storage = app.extensions["rldp"].storage

        async def commit(item):
            return storage.commit(item)

        upload = ReportUpload(
            app.extensions["rldp"], app.extensions["rldp.metrics"], commit=commit, cors_origin=origin, access_log=True
        )
        front = BufferedFront(app, threads=1, max_body=1 << 20, upload=upload)
        bodies = _bodies(doc["id"])[:4]  # 201, 200, 409, 422

        async def serve(body: bytes, headers: dict[str, str]) -> RsgiProto:
            proto = RsgiProto(body)
            await front.__rsgi__(RsgiScope("POST", "/v1/reports", body, headers), proto)
            return proto

        try:
            with caplog.at_level("INFO", logger="rldp.access"):
                got = [asyncio.run(serve(b, {"origin": origin, "x-request-id": f"c{k}"})) for k, b in enumerate(bodies)]
            other = asyncio.run(serve(bodies[0], {"origin": "https://evil.example"}))
        finally:
            front.pool.shutdown()
        flask = app.test_client().post(
            "/v1/reports", data=bodies[0], headers={"Origin": origin, "Content-Type": "application/msgpack"}
        )
        flask.close()
    cors = ("Access-Control-Allow-Origin", "Vary", "Access-Control-Expose-Headers")
    for proto in got:
        headers = dict(proto.answer[1])
        assert {k: headers[k] for k in cors} == {k: flask.headers[k] for k in cors}
        assert headers["Access-Control-Allow-Origin"] == origin
    assert not any(k.lower().startswith("access-control") for k, _ in other.answer[1])
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "rldp.access"]
    logged = {line["request_id"]: line for line in lines if line["request_id"].startswith("c")}
    assert [logged[f"c{k}"]["status"] for k in range(4)] == [p.answer[0] for p in got] == [201, 200, 409, 422]
    assert all(logged[f"c{k}"]["path"] == "/v1/reports" and logged[f"c{k}"]["remote"] == "127.0.0.1" for k in range(4))
