"""Request ids, the JSON access log and the operational metrics (per mechanism, build, storage)."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from rldp_live import ADMIN, in_process_app, make_document

from rldp import __version__
from rldp.aggregator.http.access import request_id_from
from rldp.aggregator.services import ConfigError, load_config
from rldp.aggregator.storage import StorageError, open_storage
from rldp.aggregator.storage import telemetry as store_telemetry


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, ACCESS_LOG="json") as app:
        yield app


@pytest.fixture
def mech(http):
    doc = make_document()
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    return doc["id"]


def samples(http) -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics: (name, sorted labels) → value."""
    text = http.get("/metrics").data.decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_request_id_is_kept_when_safe_and_made_otherwise():
    assert request_id_from("abc-123_x.y:z") == "abc-123_x.y:z"
    for bad in (None, "", "a b", "x\ny", 'a"b', "é", "a" * 129, "<script>"):
        made = request_id_from(bad)
        assert re.fullmatch(r"[0-9a-f]{32}", made), bad
    assert request_id_from(None) != request_id_from(None)


def test_every_answer_and_problem_carries_the_request_id(http, mech):
    resp = http.get("/healthz")
    assert re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-Id"])
    given = {"X-Request-Id": "client-42"}
    for resp in (
        http.get("/v1/nowhere", headers=given),  # Flask's 404
        http.post("/v1/reports", json={"mechanism": mech, "batch": "b", "reports": [99]}, headers=given),
        http.post("/v1/mechanisms", json={}, headers=given),  # unauthorised, through a blueprint
    ):
        assert resp.status_code >= 400 and resp.mimetype == "application/problem+json"
        assert resp.headers["X-Request-Id"] == "client-42" and resp.json["request_id"] == "client-42"
    resp = http.get("/v1/nowhere", headers={"X-Request-Id": 'bad "id"'})
    assert resp.headers["X-Request-Id"] == resp.json["request_id"] != 'bad "id"'
    ok = http.post("/v1/reports", json={"mechanism": mech, "batch": "ok", "reports": [1]}, headers=given)
    assert ok.status_code == 201 and ok.headers["X-Request-Id"] == "client-42"


def test_json_access_log_one_object_per_request(http, mech, caplog):
    caplog.set_level(logging.INFO, logger="rldp.access")
    http.post("/v1/reports", json={"mechanism": mech, "batch": "b1", "reports": [1, 2]}, headers={"X-Request-Id": "r1"})
    http.get("/v1/no%22where%0A", headers={"X-Request-Id": "r2"}).close()  # a quote and a newline in the path
    lines = [r.getMessage() for r in caplog.records if r.name == "rldp.access"]
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    first, second = (json.loads(line) for line in lines)
    assert set(first) == {"time", "method", "path", "status", "duration", "bytes", "request_id", "remote"}
    assert (first["method"], first["path"], first["status"], first["request_id"]) == ("POST", "/v1/reports", 201, "r1")
    assert first["bytes"] > 0 and 0 <= first["duration"] < 10 and first["time"].endswith("Z")
    assert (second["status"], second["request_id"], second["path"]) == (404, "r2", '/v1/no"where\n')


def test_no_access_log_unless_asked(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="rldp.access")
    with in_process_app(tmp_path) as app:
        resp = app.test_client().get("/healthz")
    assert resp.headers["X-Request-Id"] and not [r for r in caplog.records if r.name == "rldp.access"]
    with pytest.raises(ConfigError, match="ACCESS_LOG"):
        load_config({"ACCESS_LOG": "xml"})


def test_per_mechanism_series_only_for_published_mechanisms(http, mech):
    before = time.time()
    for i, reports in enumerate(([0, 1, 1], [2] * 5)):
        assert (
            http.post("/v1/reports", json={"mechanism": mech, "batch": f"b{i}", "reports": reports}).status_code == 201
        )
    assert http.post("/v1/reports", json={"mechanism": mech, "batch": "x", "reports": [99]}).status_code == 422
    assert http.post("/v1/reports", json={"mechanism": mech, "batch": "b0", "reports": [0]}).status_code == 409
    made_up = "0" * 64
    assert http.post("/v1/reports", json={"mechanism": made_up, "batch": "x", "reports": [0]}).status_code == 404
    got = samples(http)
    key = (("mechanism", mech),)
    assert got[("rldp_mechanism_reports_accepted_total", key)] == 8
    assert before <= got[("rldp_mechanism_last_report_timestamp_seconds", key)] <= time.time()
    refused = (("mechanism", mech), ("reason", "report-out-of-range"))
    assert got[("rldp_mechanism_batches_refused_total", refused)] == 1
    assert got[("rldp_mechanism_batches_refused_total", (("mechanism", mech), ("reason", "batch-conflict")))] == 1
    assert not [k for k in got if dict(k[1]).get("mechanism") == made_up]  # no series for an unpublished id
    assert got[("rldp_rejections_total", (("reason", "unknown-mechanism"),))] == 1  # counted globally only


def test_each_mechanism_and_status_counts_in_its_own_series(http, mech):
    # Metrics caches the labelled children it updates per request: each label set must keep its own.
    other = make_document()
    assert http.post("/v1/mechanisms", json=other, headers=ADMIN).status_code == 201
    for i, (mid, reports) in enumerate(((mech, [0, 1]), (other["id"], [1] * 4), (mech, [2]), (other["id"], [0]))):
        assert (
            http.post("/v1/reports", json={"mechanism": mid, "batch": f"b{i}", "reports": reports}).status_code == 201
        )
    assert http.post("/v1/reports", json={"mechanism": mech, "batch": "b0", "reports": [0, 1]}).status_code == 200
    got = samples(http)
    assert got[("rldp_mechanism_reports_accepted_total", (("mechanism", mech),))] == 3
    assert got[("rldp_mechanism_reports_accepted_total", (("mechanism", other["id"]),))] == 5
    latency = "rldp_request_duration_seconds_count"
    assert got[(latency, (("endpoint", "/v1/reports"), ("method", "POST"), ("status", "201")))] == 4
    assert got[(latency, (("endpoint", "/v1/reports"), ("method", "POST"), ("status", "200")))] == 1


def test_build_info_and_storage_metrics(http, mech):
    assert http.post("/v1/reports", json={"mechanism": mech, "batch": "c", "reports": [1]}).status_code == 201
    got = samples(http)
    build = [dict(k[1]) for k in got if k[0] == "rldp_build_info"]
    assert len(build) == 1 and build[0]["version"] == __version__ and build[0]["storage"] == "sqlite"
    assert re.fullmatch(r"3\.\d+\.\d+.*", build[0]["python"])
    assert got[("rldp_commit_duration_seconds_count", (("backend", "sqlite"),))] >= 1
    assert got[("rldp_commit_batches_total", (("backend", "sqlite"),))] >= 1
    assert ("rldp_writer_queue_depth", ()) in got


def test_database_errors_are_counted(tmp_path):
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    store_telemetry.install(registry)
    store = open_storage(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    try:
        with sqlite3.connect(tmp_path / "x.sqlite3") as conn:
            conn.execute("DROP TABLE rldp_mechanisms")
        with pytest.raises(StorageError):
            store.get_mechanism("a" * 64)
    finally:
        store.close()
    assert 'rldp_database_errors_total{backend="sqlite"} 1.0' in generate_latest(registry).decode()


@pytest.mark.live
def test_live_server_logs_json_and_counts_the_writer_process(tmp_path):
    import requests
    from rldp_live import LiveServer

    (tmp_path / "db").mkdir()  # rldp serve refuses a missing folder
    server = LiveServer(
        f"sqlite:///{tmp_path / 'db' / 'rldp.sqlite3'}",
        tmp_path / "log",
        workers=1,
        env={"RLDP_MAX_BODY_BYTES": "100000"},
        extra_args=("--access-log",),
    ).start()
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        resp = server.post_reports(doc["id"], "b1", [0, 1, 1], headers={"X-Request-Id": "live-1"})
        assert resp.status_code == 201 and resp.headers["X-Request-Id"] == "live-1"
        big = requests.post(  # refused by the buffering front, before the app
            server.url + "/v1/reports",
            data=b"x" * 200_000,
            headers={"Content-Type": "application/json", "X-Request-Id": "live-2"},
            timeout=30,
        )
        assert big.status_code == 413 and big.headers["X-Request-Id"] == "live-2" == big.json()["request_id"]
        text = requests.get(server.url + "/metrics", timeout=10).text
        got = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }
        # committed by the writer process: its samples reach /metrics through the multiprocess directory
        assert got[("rldp_commit_duration_seconds_count", (("backend", "sqlite"),))] >= 1
        assert got[("rldp_mechanism_reports_accepted_total", (("mechanism", doc["id"]),))] == 3
        assert [k for k in got if k[0] == "rldp_build_info"]
    finally:
        server.stop()
    log = Path(server._log.name).read_text(errors="replace")  # type: ignore[union-attr]
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    ids = {line["request_id"]: line for line in lines}
    assert ids["live-1"]["status"] == 201 and ids["live-1"]["path"] == "/v1/reports"
    assert ids["live-2"]["status"] == 413


@pytest.mark.live
def test_serve_prints_its_default_store(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "RLDP_DATABASE_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rldp.cli", "serve", "--port", "0", "--workers", "1"],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(20)
    assert str(tmp_path / "xdg" / "rldp" / "rldp.sqlite3") in line and "default" in line
    assert not (tmp_path / "rldp-data").exists()


def test_browsers_may_send_and_read_the_request_id(tmp_path):
    with in_process_app(tmp_path, CORS_ORIGIN="https://app.example") as app:
        http = app.test_client()
        origin = {"Origin": "https://app.example"}
        pre = http.options(
            "/v1/reports",
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-request-id",
            },
        )
        assert "X-Request-Id" in pre.headers["Access-Control-Allow-Headers"]
        resp = http.get("/healthz", headers={**origin, "X-Request-Id": "web-1"})
        assert (
            resp.headers["X-Request-Id"] == "web-1" and "X-Request-Id" in resp.headers["Access-Control-Expose-Headers"]
        )


@pytest.mark.slow
def test_a_dead_process_queue_depth_is_forgotten(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}  # rldp serve's multiprocess mode
    writer = "from rldp.aggregator.storage import telemetry\ntelemetry.install()\ntelemetry.queue_depth(7)\n"
    subprocess.run([sys.executable, "-c", writer], check=True, env=env, timeout=60)  # then it exits
    scrape = (
        "from rldp.aggregator.http.metrics import Metrics\nfrom rldp.aggregator.storage import telemetry\n"
        "m = Metrics()\ntelemetry.queue_depth(2)\nprint(m.render().decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", scrape], env=env, capture_output=True, text=True, timeout=60).stdout
    assert "rldp_writer_queue_depth 2.0" in out.splitlines()  # the live process's 2, not 2 + the dead one's 7
