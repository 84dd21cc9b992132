"""The Client against a real server on loopback, and against scripted stubs (retries, outages)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import msgpack
import numpy as np
import pytest
import requests
from rldp_live import ADMIN_TOKEN, free_port, make_document, tampered
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from rldp.admin import AdminClient
from rldp.aggregator.storage import open_storage
from rldp.client import Client, MechanismRejected, OfflineQueue, ProblemError, ServiceUnavailable
from rldp.shared.document import to_msgpack

RECORDS = [{"sex": s, "colour": c} for s, c in [("Female", "red"), ("Male", "blue"), ("Male", "green")] * 700]


class Stub:
    """A scripted HTTP server on loopback: ``handler(request, n) -> Response`` (n = call number)."""

    def __init__(self, handler: Callable[[Request, int], Response]) -> None:
        self.handler = handler
        self.calls: list[tuple[str, str, bytes]] = []
        self._lock = threading.Lock()

        @Request.application
        def app(request: Request) -> Response:
            with self._lock:
                self.calls.append((request.method, request.path, request.get_data()))
                n = len(self.calls)
            return self.handler(request, n)

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def stubs():
    made: list[Stub] = []

    def make(handler):
        made.append(Stub(handler))
        return made[-1]

    yield make
    for stub in made:
        stub.close()


def receipt_json(request: Request, duplicate: bool = False) -> Response:
    body = msgpack.unpackb(request.get_data())
    return Response(
        json.dumps({"batch": body["batch"], "accepted": len(body["reports"]), "duplicate": duplicate}),
        status=200 if duplicate else 201,
        mimetype="application/json",
    )


@pytest.fixture(scope="module")
def published(server):
    doc = make_document("client-sdk")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        assert admin.publish(doc)["id"] == doc["id"]
    return doc


def stored_counts(server, mid: str) -> np.ndarray:
    store = open_storage(server.db_url)
    try:
        return store.counts(mid, 6)
    finally:
        store.close()


# -- against the real server


def test_submit_end_to_end(server, published):
    mid = published["id"]
    with Client(server.url, token=ADMIN_TOKEN, rng=np.random.default_rng(8), state_path=None) as client:
        mech = client.mechanism(mid)
        before = stored_counts(server, mid).sum()
        receipt = client.submit(mid, RECORDS, batch_size=500)
        assert (receipt.accepted, receipt.batches, receipt.duplicates, receipt.queued) == (2100, 5, 0, 0)
        assert len(set(receipt.batch_ids)) == 5
        assert stored_counts(server, mid).sum() == before + 2100
        assert client.estimate(mid).n == before + 2100
        assert any(m["id"] == mid for m in client.mechanisms())
        assert client.ready()
        assert mech.outputs == 6


def test_mechanism_is_verified_once_and_cached(server, published, monkeypatch):
    client = Client(server.url, state_path=None)
    gets: list[str] = []
    original = client._http.session.request

    def counting(method, url, **kwargs):
        gets.append(url)
        return original(method, url, **kwargs)

    monkeypatch.setattr(client._http.session, "request", counting)
    a = client.mechanism(published["id"])
    b = client.mechanism(published["id"])
    assert a is b and len(gets) == 1
    with pytest.raises(MechanismRejected, match="above the allowed maximum"):
        client.mechanism(published["id"], max_epsilon=0.5)
    client.close()


def test_server_refusals_are_permanent_errors(server, published):
    with Client(server.url, state_path=None) as client:
        with pytest.raises(ProblemError) as info:
            client.mechanism("0" * 64)
        assert (info.value.status, info.value.reason) == (404, "unknown-mechanism")
        with pytest.raises(ProblemError) as info:
            client.submit_reports(published["id"], [0, 1, 9])
        assert info.value.reason == "report-out-of-range" and "reports[2] is 9" in info.value.detail
        assert info.value.receipt.accepted == 0
        with pytest.raises(ValueError, match="needs a bearer token"):
            client.estimate(published["id"])


def test_many_threads_share_one_client(server, published):
    mid = published["id"]
    before = stored_counts(server, mid).sum()
    receipts = []
    with Client(server.url, state_path=None) as client:

        def work(seed: int) -> None:
            receipts.append(client.submit(mid, RECORDS[:900], batch_size=100, rng=np.random.default_rng(seed)))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sum(r.accepted for r in receipts) == 8 * 900 and sum(r.batches for r in receipts) == 72
    assert stored_counts(server, mid).sum() == before + 7200


def test_admin_calls(server):
    doc = make_document()
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        assert admin.publish(doc)["status"] == "active"
        with pytest.raises(ProblemError) as info:
            admin.publish(tampered(make_document()))
        assert info.value.reason == "id-mismatch"
        assert admin.retire(doc["id"])["status"] == "retired"
    with Client(server.url, state_path=None) as app, pytest.raises(ProblemError) as info:
        app.submit_reports(doc["id"], [1])
    assert info.value.reason == "mechanism-retired"
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        status = admin.design(
            "sex,colour\nFemale,red\nMale,blue\nMale,red\n",
            sensitive="sex",
            released="colour",
            epsilon=1.0,
            method="srr",
            poll=0.2,
            wait_timeout=120,
        )
        assert status["status"] == "done", status
    with Client(server.url, state_path=None) as app:
        assert app.mechanism(status["mechanism"]).method == "srr"


# -- against stubs: retries, refusals, tampering


def test_retries_503_and_429_then_succeeds_with_the_same_batch(stubs):
    def handler(request: Request, n: int) -> Response:
        if n == 1:
            return Response("busy", status=503, headers={"Retry-After": "0"})
        if n == 2:
            return Response("{}", status=429, headers={"Retry-After": "1"}, mimetype="application/problem+json")
        return receipt_json(request)

    stub = stubs(handler)
    with Client(stub.url, retries=4, backoff_factor=0.01, state_path=None) as client:
        start = time.monotonic()
        receipt = client.submit_reports("a" * 64, np.arange(6))
        elapsed = time.monotonic() - start
    assert receipt.accepted == 6 and receipt.batches == 1
    assert len(stub.calls) == 3 and stub.calls[0][2] == stub.calls[1][2] == stub.calls[2][2]
    assert elapsed >= 0.9  # Retry-After: 1 was honoured


def test_gives_up_after_the_retry_budget(stubs):
    stub = stubs(lambda request, n: Response("down", status=502))
    with Client(stub.url, retries=2, backoff_factor=0.01, state_path=None) as client:
        with pytest.raises(ServiceUnavailable) as info:
            client.submit_reports("a" * 64, [1, 2])
    assert info.value.status == 502 and len(stub.calls) == 3 and info.value.receipt.accepted == 0


def test_4xx_is_not_retried(stubs):
    problem = {
        "type": "https://rldp.dev/problems/wrong-type",
        "title": "Field has the wrong type",
        "status": 422,
        "detail": "reports[0] is 1.5 (number)",
        "reason": "wrong-type",
    }
    stub = stubs(lambda request, n: Response(json.dumps(problem), status=422, mimetype="application/problem+json"))
    with Client(stub.url, retries=5, backoff_factor=0.01, state_path=None) as client:
        with pytest.raises(ProblemError) as info:
            client.submit_reports("a" * 64, [1])
    assert len(stub.calls) == 1
    assert (info.value.reason, info.value.detail, info.value.status) == ("wrong-type", problem["detail"], 422)


def test_lost_answer_is_retried_and_counted_once(server, published, stubs):
    """A gateway drops the server's answer after the batch was committed: the retry is a duplicate."""
    mid = published["id"]

    def handler(request: Request, n: int) -> Response:
        real = requests.request(
            request.method,
            server.url + request.full_path.rstrip("?"),
            data=request.get_data(),
            headers={
                "Content-Type": request.headers.get("Content-Type", ""),
                "Accept": request.headers.get("Accept", "*/*"),
            },
            timeout=30,
        )
        if request.method == "POST" and n == 2:  # the first upload: committed, answer lost
            return Response("bad gateway", status=502)
        return Response(real.content, status=real.status_code, content_type=real.headers.get("Content-Type"))

    stub = stubs(handler)
    before = stored_counts(server, mid).sum()
    with Client(stub.url, retries=3, backoff_factor=0.01, state_path=None) as client:
        receipt = client.submit(mid, RECORDS[:300], batch_size=100)
    assert (receipt.accepted, receipt.batches, receipt.duplicates) == (300, 3, 1)
    assert stored_counts(server, mid).sum() == before + 300


@pytest.mark.parametrize("serve", ["tampered", "leaky", "other"])
def test_client_refuses_bad_documents_from_the_server(stubs, serve):
    good = make_document()
    bad = {"tampered": tampered(good), "leaky": make_document(leak=2.5), "other": make_document()}[serve]
    stub = stubs(lambda request, n: Response(to_msgpack(bad), mimetype="application/msgpack"))
    with Client(stub.url, state_path=None) as client:
        asked = bad["id"] if serve == "leaky" else good["id"]
        with pytest.raises(MechanismRejected):
            client.mechanism(asked)
        with pytest.raises(MechanismRejected):
            client.submit(asked, RECORDS[:3])
    assert all(method == "GET" for method, _, _ in stub.calls)  # nothing was ever uploaded


# -- the offline queue


def test_outage_queues_batches_and_flush_sends_them(server, published, stubs, tmp_path):
    mid = published["id"]
    state = {"down": True}

    def handler(request: Request, n: int) -> Response:
        if request.method == "POST" and state["down"]:
            return Response("maintenance", status=503)
        real = requests.request(
            request.method,
            server.url + request.path,
            data=request.get_data(),
            headers={
                "Content-Type": request.headers.get("Content-Type", ""),
                "Accept": request.headers.get("Accept", "*/*"),
            },
            timeout=30,
        )
        return Response(real.content, status=real.status_code, content_type=real.headers.get("Content-Type"))

    stub = stubs(handler)
    queue_path = tmp_path / "queue" / "rldp-queue.sqlite3"
    before = stored_counts(server, mid).sum()
    with Client(stub.url, retries=1, backoff_factor=0.01, queue_path=queue_path, state_path=None) as client:
        receipt = client.submit(mid, RECORDS, batch_size=1000)
        assert (receipt.accepted, receipt.queued, receipt.batches) == (0, 2100, 0)
        posts = sum(1 for m, _, _ in stub.calls if m == "POST")
        assert posts == 2  # the first batch tried twice; the rest queued without hammering the server
        assert client.flush().queued == 2100  # still down: nothing lost
    # the raw records never touch the disk (the folder of cached mechanism documents holds the
    # published alphabet, not records)
    for path in queue_path.parent.iterdir():
        if path.is_dir():
            assert path.name == queue_path.name + ".mechanisms" and [p.name for p in path.iterdir()] == [
                f"{mid}.msgpack"
            ]
            continue
        data = path.read_bytes()
        assert b"Female" not in data and b"green" not in data, path
    state["down"] = False
    with Client(stub.url, queue_path=queue_path, state_path=None) as client:  # e.g. the next app start
        flushed = client.flush()
    assert (flushed.accepted, flushed.batches, flushed.queued, flushed.rejected) == (2100, 3, 0, 0)
    assert stored_counts(server, mid).sum() == before + 2100


def test_connection_refused_raises_or_queues(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with Client(dead, retries=1, backoff_factor=0.01, state_path=None) as client:
        with pytest.raises(ServiceUnavailable, match="cannot reach"):
            client.submit_reports("a" * 64, [1, 2, 3])
    with Client(dead, retries=0, queue_path=tmp_path / "q.sqlite3", state_path=None) as client:
        receipt = client.submit_reports("a" * 64, np.arange(25) % 6, batch_size=10)
        assert (receipt.queued, receipt.accepted) == (25, 0)
        assert client.queue.stats()["pending_batches"] == 3


def test_queue_is_bounded_and_drops_the_oldest(tmp_path):
    queue = OfflineQueue(tmp_path / "q.sqlite3", limit_bytes=250)
    for i in range(5):
        stored, dropped = queue.put("m", f"b{i}", 10, bytes(100))
        assert stored and dropped == (10 if i >= 2 else 0)
    assert [b.batch for b in queue.pending()] == ["b3", "b4"]
    assert queue.put("m", "huge", 99, bytes(251)) == (False, 99)  # larger than the whole queue
    assert queue.stats() == {
        "pending_batches": 2,
        "pending_reports": 20,
        "bytes": 200,
        "dropped_batches": 4,
        "dropped_reports": 129,
    }
    queue.close()


def test_rejected_batches_are_dropped_on_flush(stubs, tmp_path):
    problem = {
        "type": "https://rldp.dev/problems/mechanism-retired",
        "status": 409,
        "title": "Mechanism retired",
        "detail": "retired",
        "reason": "mechanism-retired",
    }
    stub = stubs(lambda request, n: Response(json.dumps(problem), status=409, mimetype="application/problem+json"))
    queue_path = tmp_path / "q.sqlite3"
    queue = OfflineQueue(queue_path)
    queue.put("m", "b1", 3, msgpack.packb({"mechanism": "m", "batch": "b1", "reports": [1, 2, 3]}))
    queue.close()
    with Client(stub.url, queue_path=queue_path, state_path=None) as client:
        receipt = client.flush()
        assert (receipt.rejected, receipt.queued) == (3, 0) and "mechanism-retired" in receipt.problems[0]


def test_bad_client_arguments():
    with pytest.raises(ValueError, match="http"):
        Client("ftp://x", state_path=None)
    with pytest.raises(ValueError, match="timeout"):
        Client("http://x", timeout=0, state_path=None)
    with Client("http://127.0.0.1:9", state_path=None) as client:
        with pytest.raises(ValueError, match="batch_size"):
            client.submit_reports("a", [1], batch_size=0)
        with pytest.raises(ValueError, match="1-D array of integer"):
            client.submit_reports("a", [0.5])


def test_receipt_counts_what_the_bounded_queue_still_holds(tmp_path):
    """Batches of one submit that evict each other from the bounded queue count once: as dropped."""
    dead = f"http://127.0.0.1:{free_port()}"
    with Client(dead, retries=0, queue_path=tmp_path / "probe.sqlite3", state_path=None) as client:
        client.submit_reports("a" * 64, np.arange(10) % 6, batch_size=10)
        body = client.queue.stats()["bytes"]
    with Client(
        dead, retries=0, queue_path=tmp_path / "q.sqlite3", queue_limit_bytes=int(3.5 * body), state_path=None
    ) as client:
        receipt = client.submit_reports("a" * 64, np.arange(100) % 6, batch_size=10)
        stats = client.queue.stats()
    assert stats["pending_batches"] == 3
    assert receipt.queued == stats["pending_reports"] == 30
    assert receipt.dropped == stats["dropped_reports"] == 70
    assert receipt.queued + receipt.dropped + receipt.accepted == 100


def test_an_app_that_starts_offline_queues_with_the_cached_mechanism(server, published, tmp_path):
    mid, queue_path = published["id"], tmp_path / "q.sqlite3"
    records = [("Female", "red"), ("Male", "blue")] * 5
    with Client(server.url, queue_path=queue_path, state_path=None) as online:  # first run: verified, then kept on disk
        online.mechanism(mid)
    dead = f"http://127.0.0.1:{free_port()}"
    with Client(dead, retries=0, queue_path=queue_path, state_path=None) as offline:  # next start, no network
        receipt = offline.submit(mid, records)
        assert (receipt.queued, receipt.accepted) == (10, 0)
    cached = tmp_path / "q.sqlite3.mechanisms" / f"{mid}.msgpack"
    doc = msgpack.unpackb(cached.read_bytes())
    cached.write_bytes(msgpack.packb(tampered(doc)))  # changed on disk: no longer hashes to its id
    with Client(dead, retries=0, queue_path=queue_path, state_path=None) as offline:
        with pytest.raises(MechanismRejected, match="cached document"):
            offline.submit(mid, records)
    assert not cached.exists()  # refused and removed: the next online start downloads it again
    with Client(server.url, queue_path=queue_path, state_path=None) as online:
        assert online.mechanism(mid).id == mid and cached.exists()
