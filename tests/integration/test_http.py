"""The real service on loopback (Granian, 2 workers; SQLite through its writer process), on SQLite and on PostgreSQL."""

from __future__ import annotations

import re
import threading
import time
import uuid

import msgpack
import numpy as np
import pytest
import requests
from rldp_live import ADMIN, MAX_BODY, assert_problem, make_document, tampered

from rldp.aggregator.storage import open_storage


@pytest.fixture
def mech(live_server):
    doc = make_document()
    resp = live_server.publish(doc)
    assert resp.status_code == 201, resp.text
    return doc


@pytest.fixture
def store(live_server):
    s = open_storage(live_server.db_url)
    yield s
    s.close()


def metric(server, name: str) -> float:
    text = requests.get(server.url + "/metrics", timeout=10).text
    match = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def test_publish_download_and_refusals(live_server, store):
    doc = make_document()
    assert live_server.publish(doc).status_code == 201
    assert live_server.publish(doc).status_code == 200
    url = f"{live_server.url}/v1/mechanisms/{doc['id']}"
    packed = requests.get(url, headers={"Accept": "application/msgpack"}, timeout=10)
    assert packed.headers["Content-Type"] == "application/msgpack" and packed.headers["ETag"] == f'"{doc["id"]}"'
    assert msgpack.unpackb(packed.content)["matrix"] == doc["matrix"]
    assert requests.get(url, headers={"If-None-Match": f'"{doc["id"]}"'}, timeout=10).status_code == 304
    assert_problem(live_server.publish(tampered(make_document())), 422, "id-mismatch")
    leaky = make_document(leak=1.5)
    assert_problem(live_server.publish(leaky), 422, "audit-failed")
    ids = {m["id"] for m in requests.get(live_server.url + "/v1/mechanisms", timeout=10).json()["mechanisms"]}
    assert doc["id"] in ids and leaky["id"] not in ids
    assert store.get_mechanism(leaky["id"]) is None


def test_bad_inputs_are_problems_and_store_nothing(live_server, mech, store):
    mid = mech["id"]
    before = metric(live_server, 'rldp_rejections_total{reason="report-out-of-range"}')
    url = live_server.url + "/v1/reports"
    cases = [
        (dict(data=b"\x92\xc1\xff", headers={"Content-Type": "application/msgpack"}), 400, "invalid-msgpack"),
        (dict(data=b'{"mechanism": ', headers={"Content-Type": "application/json"}), 400, "invalid-json"),
        (
            dict(data=b"mechanism=x", headers={"Content-Type": "application/x-www-form-urlencoded"}),
            415,
            "unsupported-media-type",
        ),
        (dict(json={"mechanism": mid, "batch": "b1"}), 422, "missing-field"),
        (dict(json={"batch": "b1", "reports": [1]}), 422, "missing-field"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": [1, 2.5]}), 422, "wrong-type"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": [1, True]}), 422, "wrong-type"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": ["1"]}), 422, "wrong-type"),
        (dict(json={"mechanism": mid, "batch": "b 1", "reports": [1]}), 422, "wrong-type"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": [0, 1, 6]}), 422, "report-out-of-range"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": [-3]}), 422, "report-out-of-range"),
        (dict(json={"mechanism": mid, "batch": "b1", "reports": []}), 422, "empty-batch"),
        (dict(json={"mechanism": "f" * 64, "batch": "b1", "reports": [1]}), 404, "unknown-mechanism"),
        (
            dict(data=b"[" + b"1," * (MAX_BODY // 2) + b"1]", headers={"Content-Type": "application/json"}),
            413,
            "body-too-large",
        ),
        # no Content-Length (chunked): the limit still holds
        (
            dict(
                data=(b"0" * 65536 for _ in range(MAX_BODY // 65536 + 2)), headers={"Content-Type": "application/json"}
            ),
            413,
            "body-too-large",
        ),
    ]
    for kwargs, status, reason in cases:
        resp = requests.post(url, timeout=30, **kwargs)
        assert_problem(resp, status, reason)
    assert store.batch_totals(mid) == (0, 0)
    assert store.counts(mid, 6).sum() == 0
    assert metric(live_server, 'rldp_rejections_total{reason="report-out-of-range"}') == before + 2


def test_idempotent_batches_and_conflicts(live_server, mech, store):
    mid = mech["id"]
    assert live_server.post_reports(mid, "a", [1, 2, 3]).status_code == 201
    dup = live_server.post_reports(mid, "a", [1, 2, 3])
    assert dup.status_code == 200 and dup.json() == {"batch": "a", "accepted": 3, "duplicate": True}
    body = msgpack.packb({"mechanism": mid, "batch": "a", "reports": [1, 2, 3]})
    assert (
        requests.post(
            live_server.url + "/v1/reports", data=body, timeout=10, headers={"Content-Type": "application/msgpack"}
        ).status_code
        == 200
    )
    assert_problem(live_server.post_reports(mid, "a", [1, 2, 4]), 409, "batch-conflict")
    assert store.batch_totals(mid) == (1, 3)
    np.testing.assert_array_equal(store.counts(mid, 6), [0, 1, 1, 1, 0, 0])


def test_many_concurrent_clients_with_retries(live_server, mech, store):
    """16 threads upload 160 batches; every batch is also retried once (some concurrently)."""
    mid = mech["id"]
    rng = np.random.default_rng(7)
    batches = {uuid.uuid4().hex: rng.integers(0, 6, int(rng.integers(1, 2000))).tolist() for _ in range(160)}
    names = list(batches)
    statuses: list[int] = []
    lock = threading.Lock()
    before = metric(live_server, "rldp_batches_deduplicated_total")

    def worker(k: int) -> None:
        with requests.Session() as session:
            for name in names[k::16] + names[(k + 1) % 16 :: 16]:  # each batch by two different threads
                resp = session.post(
                    live_server.url + "/v1/reports",
                    timeout=60,
                    json={"mechanism": mid, "batch": name, "reports": batches[name]},
                )
                with lock:
                    statuses.append(resp.status_code)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(201) == 160 and statuses.count(200) == 160, sorted(set(statuses))
    expected = np.bincount(np.concatenate([np.array(v) for v in batches.values()]), minlength=6)
    np.testing.assert_array_equal(store.counts(mid, 6), expected)
    np.testing.assert_array_equal(store.recount(mid, 6), expected)
    est = live_server.estimate(mid).json()
    assert est["n"] == int(expected.sum())
    # metrics add up across the workers (multiprocess mode)
    assert metric(live_server, "rldp_batches_deduplicated_total") == before + 160


def test_retire_and_estimate(live_server, mech):
    mid = mech["id"]
    assert_problem(live_server.estimate(mid), 409, "no-reports")
    assert live_server.post_reports(mid, "r0", [0] * 60).status_code == 201
    few = assert_problem(live_server.estimate(mid), 409, "too-few-reports")  # the service's minimum: 100
    assert (few["reports"], few["min_reports"]) == (60, 100) and "40 more needed" in few["detail"]
    assert live_server.post_reports(mid, "r1", list(range(6)) * 40).status_code == 201
    est = live_server.estimate(mid)
    assert est.status_code == 200 and est.json()["n"] == 300 and est.json()["mechanism"] == mid
    assert_problem(requests.get(f"{live_server.url}/v1/mechanisms/{mid}/estimate", timeout=10), 401, "unauthorized")
    resp = requests.post(f"{live_server.url}/v1/mechanisms/{mid}/retire", headers=ADMIN, timeout=10)
    assert resp.status_code == 200 and resp.json()["status"] == "retired"
    assert_problem(live_server.post_reports(mid, "r2", [1]), 409, "mechanism-retired")
    assert live_server.post_reports(mid, "r1", list(range(6)) * 40).status_code == 409  # even a retry
    assert live_server.estimate(mid).json()["n"] == 300  # estimates stay available


def test_design_job_over_http(live_server):
    csv = "sex,colour\n" + "Female,red\n" * 20 + "Male,red\n" * 30 + "Male,blue\n" * 50 + "Female,blue\n" * 10
    resp = requests.post(
        live_server.url + "/v1/designs",
        headers=ADMIN,
        timeout=30,
        json={
            "csv": csv,
            "sensitive": "sex",
            "released": ["colour"],
            "epsilon": 1.0,
            "method": "ir-calibrated",
            "beta": 0.05,
        },
    )
    assert resp.status_code == 202, resp.text
    status_url = live_server.url + resp.json()["status_url"]
    deadline = time.monotonic() + 120
    while (status := requests.get(status_url, headers=ADMIN, timeout=10).json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.25)
    assert status["status"] == "done", status
    listed = {m["id"]: m for m in requests.get(live_server.url + "/v1/mechanisms", timeout=10).json()["mechanisms"]}
    assert listed[status["mechanism"]]["method"] == "ir-calibrated"
    assert listed[status["mechanism"]]["epsilon_audited"] <= 1.0 + 1e-9


def test_health_and_metrics(live_server):
    assert requests.get(live_server.url + "/healthz", timeout=5).json() == {"status": "ok"}
    ready = requests.get(live_server.url + "/readyz", timeout=5).json()
    assert ready["status"] == "ready"
    text = requests.get(live_server.url + "/metrics", timeout=5).text
    assert "rldp_request_duration_seconds_bucket" in text and "rldp_rejections_total" in text


def test_a_running_server_holds_its_store_against_a_restore(live_server, store):
    from rldp.aggregator.storage.serverlock import StoreInUse, exclusive_for_restore

    with pytest.raises(StoreInUse, match="is using"):
        with exclusive_for_restore(store):
            pass
