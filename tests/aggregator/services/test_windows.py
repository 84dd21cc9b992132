"""Collection windows on the service side: ingest labelled batches, count them per window,
estimate per window, migrate older stores, carry the window through the writer process."""

from __future__ import annotations

import json
import socket
import time

import msgpack
import numpy as np
import pytest
import requests
from rldp_live import (
    ADMIN,
    READ,
    assert_problem,
    call,
    finished_job,
    front_upload,
    in_process_app,
    make_document,
    record,
)

from rldp.aggregator.storage import SCHEMA_VERSION, BatchItem, StorageError, open_storage
from rldp.aggregator.writer import WriterClient, WriterProcess
from rldp.shared.collection import Window
from rldp.shared.reports import (
    FutureWindow,
    InvalidWindow,
    UnexpectedWindow,
    WindowRequired,
    check_window,
    encode_batch,
)

T = 1_795_500_000  # 2026-11-24T06:00:00Z: the service's clock in these tests
TODAY, YESTERDAY, TOMORROW, LATER = "2026-11-24", "2026-11-23", "2026-11-25", "2026-11-26"
DAY = Window.parse("P1D")
MID = "a" * 64


# --------------------------------------------------------------------------- the rule itself


def test_check_window_takes_the_current_past_and_next_windows_only():
    for now in (T, DAY.start_of(TODAY), DAY.start_of(TOMORROW) - 1):  # anywhere in today's window
        for label in (TODAY, YESTERDAY, "2020-02-29", "1969-12-31", TOMORROW):
            assert check_window({"window": label}, DAY, now) == label
        with pytest.raises(FutureWindow, match=r"has not begun.*'2026-11-24'.*'2026-11-25'"):
            check_window({"window": LATER}, DAY, now)
    assert check_window({}, None, T) == check_window({"window": None}, None, T) == ""
    with pytest.raises(UnexpectedWindow, match="no collection windows"):
        check_window({"window": TODAY}, None, T)
    with pytest.raises(WindowRequired, match=r"by window \(P1D\).*e\.g\. '2026-11-24'"):
        check_window({"reports": [1]}, DAY, T)
    for label in ("2026-1-5", " 2026-11-24", "2026-11-24T00:00Z", "24/11/2026", "", 20261124, ["2026-11-24"]):
        with pytest.raises(InvalidWindow, match=r"labels look like '2026-11-24'"):
            check_window({"window": label}, DAY, T)
    six_hours = Window.parse("PT6H")
    assert check_window({"window": "2026-11-24T06:00Z"}, six_hours, T) == "2026-11-24T06:00Z"
    assert check_window({"window": "2026-11-24T12:00Z"}, six_hours, T) == "2026-11-24T12:00Z"  # the next one
    with pytest.raises(InvalidWindow):  # 05:00 is not a multiple of 6 h
        check_window({"window": "2026-11-24T05:00Z"}, six_hours, T)
    with pytest.raises(FutureWindow):
        check_window({"window": "2026-11-24T18:00Z"}, six_hours, T)


# --------------------------------------------------------------------------- the app in-process


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, MAX_BODY_BYTES=200_000, MAX_BATCH_REPORTS=5_000) as app:
        app.extensions["rldp"].ingest.clock = lambda: T
        yield app


def publish(http, **kwargs) -> str:
    doc = make_document(**kwargs)
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 201, resp.json
    return doc["id"]


def post(http, payload, kind="json"):
    if kind == "json":
        return http.post("/v1/reports", json=payload)
    return http.post("/v1/reports", data=msgpack.packb(payload), headers={"Content-Type": "application/msgpack"})


def problem(resp, status: int, reason: str) -> dict:
    assert resp.status_code == status, (resp.status_code, resp.data[:300])
    body = resp.json
    assert resp.mimetype == "application/problem+json" and body["reason"] == reason and body["detail"]
    return body


@pytest.mark.parametrize("kind", ["json", "msgpack"])
def test_batches_are_counted_in_the_window_they_claim(http, app, kind):
    mid = publish(http, window="P1D")
    rng = np.random.default_rng(21)
    sent = {label: rng.integers(0, 6, int(rng.integers(50, 300))).tolist() for label in (YESTERDAY, TODAY, TOMORROW)}
    for label, ys in sent.items():
        resp = post(http, {"mechanism": mid, "batch": f"b-{label}", "reports": ys, "window": label}, kind)
        assert resp.status_code == 201 and resp.json == {
            "batch": f"b-{label}",
            "accepted": len(ys),
            "duplicate": False,
            "window": label,
        }
    storage = app.extensions["rldp"].storage
    for label, ys in sent.items():
        np.testing.assert_array_equal(storage.counts(mid, 6, window=label), np.bincount(ys, minlength=6))
        np.testing.assert_array_equal(storage.recount(mid, 6, window=label), np.bincount(ys, minlength=6))
        assert storage.batch_totals(mid, window=label) == (1, len(ys))
    everything = np.bincount(sum(sent.values(), []), minlength=6)
    np.testing.assert_array_equal(storage.counts(mid, 6), everything)
    assert storage.counts(mid, 6, window="").sum() == 0
    listed = http.get(f"/v1/mechanisms/{mid}/windows", headers=READ).json
    assert listed == {
        "mechanism": mid,
        "collection": "P1D",
        "windows": [{"window": label, "reports": len(sent[label])} for label in (TOMORROW, TODAY, YESTERDAY)],
    }


def test_a_mechanism_without_windows_takes_batches_as_before(http, app):
    mid = publish(http)
    resp = post(http, {"mechanism": mid, "batch": "plain", "reports": [1, 2]})
    assert resp.status_code == 201 and resp.json == {"batch": "plain", "accepted": 2, "duplicate": False}
    assert post(http, {"mechanism": mid, "batch": "null", "reports": [3], "window": None}).status_code == 201
    storage = app.extensions["rldp"].storage
    np.testing.assert_array_equal(storage.counts(mid, 6, window=""), [0, 1, 1, 1, 0, 0])
    assert http.get(f"/v1/mechanisms/{mid}/windows", headers=READ).json == {
        "mechanism": mid,
        "collection": None,
        "windows": [],
    }
    problem(http.get(f"/v1/mechanisms/{mid}/windows"), 401, "unauthorized")
    problem(http.get(f"/v1/mechanisms/{'0' * 64}/windows", headers=READ), 404, "unknown-mechanism")


# (mechanism: "day" | "6h" | "plain", window field (absent if missing), status, reason)
MISSING = object()
REFUSALS = [
    ("day", MISSING, 422, "window-required"),
    ("day", None, 422, "window-required"),
    ("day", LATER, 422, "future-window"),
    ("day", "2027-01-01", 422, "future-window"),
    ("day", "2026-11-24T00:00Z", 422, "invalid-window"),
    ("day", "2026-1-5", 422, "invalid-window"),
    ("day", "yesterday", 422, "invalid-window"),
    ("day", 20261124, 422, "invalid-window"),
    ("6h", "2026-11-24T05:00Z", 422, "invalid-window"),
    ("6h", TODAY, 422, "invalid-window"),
    ("plain", TODAY, 422, "unexpected-window"),
    ("plain", 7, 422, "unexpected-window"),
]


@pytest.fixture
def mechanisms(http):
    return {"day": publish(http, window="P1D"), "6h": publish(http, window="PT6H"), "plain": publish(http)}


def refused_payload(mechanisms, which, window):
    payload = {"mechanism": mechanisms[which], "batch": "refused", "reports": [1, 2, 3]}
    if window is not MISSING:
        payload["window"] = window
    return payload


@pytest.mark.parametrize("kind", ["json", "msgpack"])
@pytest.mark.parametrize("which, window, status, reason", REFUSALS)
def test_each_window_refusal_is_its_own_problem_and_stores_nothing(
    http, app, mechanisms, which, window, status, reason, kind
):
    body = problem(post(http, refused_payload(mechanisms, which, window), kind), status, reason)
    assert body["field"] == "window" and "'window'" in body["detail"]
    if which == "day":  # the detail shows what a label looks like: the current window's
        assert body["example"] == TODAY and repr(TODAY) in body["detail"]
    assert app.extensions["rldp"].storage.batch_totals(mechanisms[which]) == (0, 0)


@pytest.mark.parametrize("kind", ["json", "msgpack"])
def test_the_front_upload_refuses_windows_as_the_flask_route_does(app, mechanisms, kind):
    post = front_upload(app)  # rldp serve's upload coroutine

    def fast(body: bytes, ctype: str) -> tuple[str, dict, dict]:
        status, headers, answer = post(body, ctype)
        answer.pop("request_id", None)
        return status, headers, answer

    def flask(body: bytes, ctype: str) -> tuple[str, dict, dict]:
        status, headers, answer = call(app.wsgi_app, body, ctype)
        answer.pop("request_id", None)
        return status, headers, answer

    ctype = "application/json" if kind == "json" else "application/msgpack"
    encode = (lambda p: json.dumps(p).encode()) if kind == "json" else msgpack.packb
    for which, window, _, reason in REFUSALS:
        data = encode(refused_payload(mechanisms, which, window))
        a, b = fast(data, ctype), flask(data, ctype)
        assert a[0][:3] == b[0][:3] and a[2] == b[2] and a[2]["reason"] == reason, (which, window, a, b)
    good = {"mechanism": mechanisms["day"], "batch": "fast", "reports": [1, 1, 4], "window": YESTERDAY}
    status, _, body = fast(encode(good), ctype)
    assert status.startswith("201") and body == {
        "batch": "fast",
        "accepted": 3,
        "duplicate": False,
        "window": YESTERDAY,
    }
    assert flask(encode(good), ctype)[2] == {**body, "duplicate": True}
    moved = {**good, "window": TODAY}
    assert fast(encode(moved), ctype)[2] == flask(encode(moved), ctype)[2]
    assert fast(encode(moved), ctype)[2]["reason"] == "batch-conflict"


def test_a_batch_id_is_one_batch_whatever_its_window(http, app):
    mid = publish(http, window="P1D")
    batch = {"mechanism": mid, "batch": "once", "reports": [0, 5, 5], "window": YESTERDAY}
    assert post(http, batch).status_code == 201
    again = post(http, batch)
    assert again.status_code == 200 and again.json["duplicate"] is True and again.json["window"] == YESTERDAY
    body = problem(post(http, {**batch, "window": TODAY}), 409, "batch-conflict")
    assert "another window" in body["detail"]
    problem(post(http, {**batch, "reports": [0, 5, 4]}), 409, "batch-conflict")
    storage = app.extensions["rldp"].storage
    assert storage.batch_totals(mid) == (1, 3) and storage.windows(mid) == {YESTERDAY: 3}


def test_estimates_per_window_equal_estimates_from_those_reports_alone(http):
    both, alone = publish(http, window="P1D"), publish(http, window="P1D")
    rng = np.random.default_rng(5)
    first = rng.choice(6, 4000, p=[0.3, 0.1, 0.1, 0.2, 0.2, 0.1]).tolist()
    second = rng.choice(6, 2500, p=[0.05, 0.25, 0.2, 0.1, 0.1, 0.3]).tolist()
    for mid, label, ys, name in [(both, YESTERDAY, first, "a"), (both, TODAY, second, "b"), (alone, TODAY, first, "a")]:
        assert post(http, {"mechanism": mid, "batch": name, "reports": ys, "window": label}).status_code == 201
    one = http.get(f"/v1/mechanisms/{both}/estimate?window={YESTERDAY}", headers=READ).json
    reference = http.get(f"/v1/mechanisms/{alone}/estimate", headers=READ).json
    assert one["n"] == len(first) and one["window"] == YESTERDAY
    ignore = {"mechanism", "window", "windows"}
    assert {k: v for k, v in one.items() if k not in ignore} == {k: v for k, v in reference.items() if k not in ignore}
    assert one["windows"] == [{"window": TODAY, "reports": len(second)}, {"window": YESTERDAY, "reports": len(first)}]
    total = http.get(f"/v1/mechanisms/{both}/estimate", headers=READ).json
    assert total["n"] == len(first) + len(second) and total["window"] is None
    assert total["joint"] != one["joint"]
    url = f"/v1/mechanisms/{both}/estimate"
    body = problem(http.get(f"{url}?window={LATER}", headers=READ), 409, "no-reports")
    assert LATER in body["detail"]
    for bad in ("2026-11-24T00:00Z", "2026-1-5", "today"):
        body = problem(http.get(f"{url}?window={bad}", headers=READ), 422, "invalid-parameter")
        assert body["parameter"] == "window" and "labels look like" in body["detail"]
    plain = publish(http)
    assert post(http, {"mechanism": plain, "batch": "p", "reports": [1]}).status_code == 201
    body = problem(http.get(f"/v1/mechanisms/{plain}/estimate?window={TODAY}", headers=READ), 422, "invalid-parameter")
    assert body["parameter"] == "window" and "no collection windows" in body["detail"]
    assert "window" not in http.get(f"/v1/mechanisms/{plain}/estimate", headers=READ).json


@pytest.mark.slow
def test_a_design_job_can_collect_by_window(http):
    csv = "sex,colour\n" + "\n".join(["Female,red"] * 30 + ["Male,red"] * 40 + ["Male,blue"] * 30) + "\n"
    request = {"csv": csv, "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "srr", "beta": 0.05}
    body = problem(http.post("/v1/designs", json={**request, "window": "P1X"}, headers=ADMIN), 422, "invalid-parameter")
    assert body["parameter"] == "window" and "'P1D'" in body["detail"]
    resp = http.post("/v1/designs", json={**request, "window": "PT6H"}, headers=ADMIN)
    assert resp.status_code == 202, resp.json
    status = finished_job(http, resp.json["status_url"])
    assert status["status"] == "done" and status["params"]["window"] == "PT6H", status
    doc = http.get(f"/v1/mechanisms/{status['mechanism']}").json
    assert doc["collection"] == {"window": "PT6H"}
    mid = status["mechanism"]
    problem(post(http, {"mechanism": mid, "batch": "x", "reports": [0]}), 422, "window-required")
    assert (
        post(http, {"mechanism": mid, "batch": "x", "reports": [0], "window": "2026-11-24T06:00Z"}).status_code == 201
    )


def test_openapi_documents_windows(http):
    spec = http.get("/openapi.json").json
    assert "window" in spec["components"]["schemas"]["ReportBatch"]["properties"]
    assert "window" in spec["components"]["schemas"]["DesignRequest"]["properties"]
    estimate = spec["paths"]["/v1/mechanisms/{mechanism_id}/estimate"]["get"]
    assert "window" in {p["name"] for p in estimate["parameters"]}
    assert "/v1/mechanisms/{mechanism_id}/windows" in spec["paths"]


# --------------------------------------------------------------------------- storage


@pytest.fixture
def store(backend, databases):
    s = open_storage(databases.url(backend))
    yield s
    s.close()


def item(batch: str, ys: list[int], window: str) -> BatchItem:
    return BatchItem.encode(MID, batch, np.array(ys), 6, window)


def test_one_group_counts_each_batch_in_its_window(store):
    store.publish(record(MID), b"doc")
    group = [
        item("a", [0, 1], TODAY),
        item("b", [5], YESTERDAY),
        item("a", [0, 1], TODAY),  # a second copy in the group: duplicate
        item("a", [0, 1], YESTERDAY),  # the same id in another window: conflict
        item("c", [2, 2], ""),
    ]
    with store.write_transaction() as conn:
        results = store.ingest_group(conn, group)
    assert [r.status for r in results] == ["accepted", "accepted", "duplicate", "conflict", "accepted"]
    np.testing.assert_array_equal(store.counts(MID, 6, window=TODAY), [1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(store.counts(MID, 6, window=YESTERDAY), [0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(store.counts(MID, 6, window=""), [0, 0, 2, 0, 0, 0])
    np.testing.assert_array_equal(store.counts(MID, 6), [1, 1, 2, 0, 0, 1])
    np.testing.assert_array_equal(store.recount(MID, 6), [1, 1, 2, 0, 0, 1])
    assert store.windows(MID) == {TODAY: 2, YESTERDAY: 1}
    assert store.ingest(MID, "b", np.array([5]), 6, YESTERDAY).status == "duplicate"
    assert store.ingest(MID, "b", np.array([5]), 6).status == "conflict"  # no window ≠ a window


# The version-1 schema (before windows), as `git show <v1>:aggregator/storage/schema.py` creates it.
SCHEMA_1 = [
    "CREATE TABLE IF NOT EXISTS rldp_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS rldp_mechanisms ("
    " id TEXT PRIMARY KEY, method TEXT NOT NULL, notion TEXT NOT NULL,"
    " epsilon DOUBLE PRECISION NOT NULL, epsilon_audited DOUBLE PRECISION,"
    " sensitive TEXT NOT NULL, released TEXT NOT NULL, outputs INTEGER NOT NULL, size INTEGER NOT NULL,"
    " status TEXT NOT NULL, published DOUBLE PRECISION NOT NULL, retired DOUBLE PRECISION,"
    " document {blob} NOT NULL)",
    "CREATE TABLE IF NOT EXISTS rldp_batches ("
    " mechanism TEXT NOT NULL, batch TEXT NOT NULL, n INTEGER NOT NULL, digest"
    " {blob} NOT NULL, encoding TEXT NOT NULL, payload {blob} NOT NULL, received DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (mechanism, batch))",
    "CREATE TABLE IF NOT EXISTS rldp_counts ("
    " mechanism TEXT NOT NULL, shard INTEGER NOT NULL, y INTEGER NOT NULL, n BIGINT NOT NULL,"
    " PRIMARY KEY (mechanism, shard, y))",
    "CREATE TABLE IF NOT EXISTS rldp_jobs ("
    " id TEXT PRIMARY KEY, status TEXT NOT NULL, params TEXT NOT NULL, mechanism TEXT, error TEXT,"
    " created DOUBLE PRECISION NOT NULL, started DOUBLE PRECISION, finished DOUBLE PRECISION,"
    " heartbeat DOUBLE PRECISION NOT NULL)",
]


def schema_version(store) -> str:
    with store.write_transaction() as conn:
        return conn.execute("SELECT value FROM rldp_meta WHERE key = 'schema'").fetchone()[0]


def test_a_store_of_schema_1_is_migrated_when_opened(backend, databases):
    url = databases.url(backend)
    old = open_storage(url, init=False)
    ys = np.array([0, 1, 1, 5, 5, 5])
    digest, encoding, payload, _ = encode_batch(ys, 6)
    with old.write_transaction() as conn:  # a version-1 store with one batch, counted over two shards
        for stmt in SCHEMA_1:
            conn.execute(stmt.format(blob=old.blob_type))
        conn.execute(old._sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", "1"))
        conn.execute(
            old._sql("INSERT INTO rldp_batches VALUES (?, ?, ?, ?, ?, ?, ?)"),
            (MID, "old", 6, digest, encoding, payload, 1.0),
        )
        for shard, y, n in [(0, 0, 1), (0, 1, 2), (3, 5, 1), (0, 5, 2)]:
            conn.execute(old._sql("INSERT INTO rldp_counts VALUES (?, ?, ?, ?)"), (MID, shard, y, n))
        conn.execute(  # a version-1 mechanism row: no label (schema 5)
            old._sql(
                "INSERT INTO rldp_mechanisms (id, method, notion, epsilon, epsilon_audited, sensitive, released,"
                " outputs, size, status, published, retired, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            (MID, "grr", "rldp", 1.0, 0.99, "sex", '["colour"]', 6, 6, "active", 1.0, None, b"doc"),
        )
    old.create_job("j" * 32, {"method": "grr"})
    old.close()

    store = open_storage(url)  # migrates
    try:
        assert SCHEMA_VERSION == "5" and schema_version(store) == "5"
        assert store.get_mechanism(MID).label is None and store.get_document(MID) == b"doc"
        for window in (None, ""):
            np.testing.assert_array_equal(store.counts(MID, 6, window=window), [1, 2, 0, 0, 0, 3])
            np.testing.assert_array_equal(store.recount(MID, 6, window=window), [1, 2, 0, 0, 0, 3])
        assert store.windows(MID) == {} and store.batch_ids(MID) == {"old"}
        assert store.get_job("j" * 32).params == {"method": "grr"}
        assert store.ingest(MID, "old", ys, 6).status == "duplicate"
        assert store.ingest(MID, "old", ys, 6, TODAY).status == "conflict"
        assert store.ingest(MID, "new", np.array([2]), 6, TODAY).status == "accepted"
        assert store.ingest(MID, "plain", np.array([2]), 6).status == "accepted"
        np.testing.assert_array_equal(store.counts(MID, 6), [1, 2, 2, 0, 0, 3])
        assert store.windows(MID) == {TODAY: 1}
    finally:
        store.close()
    again = open_storage(url)  # opening a migrated store changes nothing
    np.testing.assert_array_equal(again.counts(MID, 6, window=""), [1, 2, 1, 0, 0, 3])
    with again.write_transaction() as conn:
        conn.execute("UPDATE rldp_meta SET value = '9' WHERE key = 'schema'")
    again.close()
    with pytest.raises(StorageError, match="schema version 9 is unknown.*upgrade rldp"):
        open_storage(url)


# --------------------------------------------------------------------------- the writer process


@pytest.mark.live
def test_the_writer_process_carries_each_batch_window(tmp_path):
    url = f"sqlite:///{tmp_path}/w.sqlite3"
    setup = open_storage(url)
    setup.publish(record(MID), b"doc")
    setup.close()
    writer = WriterProcess(url).start()
    store = open_storage(url, sink=WriterClient(writer.path))
    try:
        ys = np.array([0, 4, 4])
        assert store.ingest(MID, "w1", ys, 6, TODAY).status == "accepted"
        assert store.ingest(MID, "w1", ys, 6, TODAY).status == "duplicate"
        assert store.ingest(MID, "w1", ys, 6, YESTERDAY).status == "conflict"
        assert store.ingest(MID, "w2", np.array([1]), 6, YESTERDAY).status == "accepted"
        np.testing.assert_array_equal(store.counts(MID, 6, window=TODAY), [1, 0, 0, 0, 2, 0])
        np.testing.assert_array_equal(store.counts(MID, 6, window=YESTERDAY), [0, 1, 0, 0, 0, 0])
        assert store.windows(MID) == {TODAY: 3, YESTERDAY: 1}
        with socket.socket(socket.AF_UNIX) as sock:  # a request without the window is refused
            sock.settimeout(10)
            sock.connect(writer.path)
            digest, encoding, payload, counts = encode_batch(ys, 6)
            sock.sendall(
                msgpack.packb(["ingest", MID, "w3", 3, digest, encoding, payload, counts.astype("<i8").tobytes()])
            )
            answer = msgpack.Unpacker(raw=False)
            answer.feed(sock.recv(4096))
            reply = answer.unpack()
            assert reply[0] == "error" and "malformed" in reply[1]
        assert store.batch_ids(MID) == {"w1", "w2"}
    finally:
        store.close()
        writer.stop()


# --------------------------------------------------------------------------- the live service


def test_windows_through_the_live_service(live_server):
    mid = make_document(window="P1D")
    assert live_server.publish(mid).status_code == 201
    mid = mid["id"]
    now = time.time()
    today, earlier, future = DAY.label_at(now), DAY.label_at(now - 3 * 86_400), DAY.label_at(now + 3 * 86_400)
    url = live_server.url + "/v1/reports"
    for name, label, ys in [("t", today, [0, 1, 2] * 40), ("e", earlier, [5] * 130)]:  # each ≥ the minimum
        resp = requests.post(url, json={"mechanism": mid, "batch": name, "reports": ys, "window": label}, timeout=30)
        assert resp.status_code == 201 and resp.json()["window"] == label, resp.text
    assert_problem(live_server.post_reports(mid, "x", [1]), 422, "window-required")
    late = {"mechanism": mid, "batch": "f", "reports": [1], "window": future}
    assert_problem(requests.post(url, json=late, timeout=30), 422, "future-window")
    assert live_server.estimate(mid, window=earlier).json()["n"] == 130
    whole = live_server.estimate(mid).json()
    assert whole["n"] == 250 and whole["windows"] == [
        {"window": today, "reports": 120},
        {"window": earlier, "reports": 130},
    ]
    listed = requests.get(f"{live_server.url}/v1/mechanisms/{mid}/windows", headers=READ, timeout=10).json()
    assert listed["windows"] == whole["windows"] and listed["collection"] == "P1D"
