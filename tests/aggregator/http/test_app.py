"""The Flask app in-process (test client): contract, validation, auth, problems, config."""

from __future__ import annotations

import json

import msgpack
import numpy as np
import pytest
from rldp_live import (
    ADMIN,
    ADMIN_TOKEN,
    READ,
    call,
    finished_job,
    front_upload,
    in_process_app,
    make_document,
    tampered,
)

from rldp.aggregator.http import create_app
from rldp.aggregator.http.problems import PROBLEMS, REASONS, problem_for
from rldp.aggregator.services import BatchError, BodySyntaxError, ServiceError, StorageError, hash_token, load_config
from rldp.aggregator.services import publish as publish_module
from rldp.shared.audit import audit_document
from rldp.shared.document import content_id, to_msgpack
from rldp.shared.errors import AuditError


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, MAX_BODY_BYTES=200_000, MAX_BATCH_REPORTS=5_000) as app:
        yield app


@pytest.fixture
def mech(http):
    doc = make_document()
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 201, resp.json
    return doc


JSON = "application/json"


def problem(resp, status: int, reason: str) -> dict:
    assert resp.status_code == status, (resp.status_code, resp.data[:300])
    assert resp.mimetype == "application/problem+json"
    body = resp.json
    assert body["type"] == f"https://rldp.dev/problems/{reason}" and body["status"] == status
    assert body["title"] and body["detail"]
    return body


def stored(app, mid: str) -> tuple[int, int]:
    return app.extensions["rldp"].storage.batch_totals(mid)


# -- publishing


def test_publish_201_then_200_and_response_fields(http):
    doc = make_document()
    first = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert first.status_code == 201 and first.headers["Location"] == f"/v1/mechanisms/{doc['id']}"
    assert first.json == {
        "id": doc["id"],
        "label": None,  # none given
        "method": "grr",
        "epsilon": 1.0,
        "epsilon_audited": pytest.approx(1.0),
        "claim": {"notion": "rldp", "epsilon": 1.0},  # in the notion's terms (issue 27 D13)
        "status": "active",
    }
    again = http.post("/v1/mechanisms", data=to_msgpack(doc), headers={**ADMIN, "Content-Type": "application/msgpack"})
    assert again.status_code == 200 and again.json["id"] == doc["id"]


def test_publish_refuses_tampered_leaky_and_invalid_documents(http, app):
    doc = make_document()
    body = problem(http.post("/v1/mechanisms", json=tampered(doc), headers=ADMIN), 422, "id-mismatch")
    assert "id mismatch" in body["detail"]
    leaky = make_document(leak=2.0)
    body = problem(http.post("/v1/mechanisms", json=leaky, headers=ADMIN), 422, "audit-failed")
    assert body["epsilon_audited"] == pytest.approx(2.0) and "exceeds the claimed 1" in body["detail"]
    broken = dict(doc)
    del broken["matrix"]
    body = problem(http.post("/v1/mechanisms", json=broken, headers=ADMIN), 422, "invalid-document")
    assert "matrix" in body["detail"]
    problem(
        http.post("/v1/mechanisms", data=b"{", headers={**ADMIN, "Content-Type": "application/json"}),
        400,
        "invalid-json",
    )
    problem(
        http.post("/v1/mechanisms", data=b"\xc1", headers={**ADMIN, "Content-Type": "application/msgpack"}),
        400,
        "invalid-msgpack",
    )
    problem(
        http.post("/v1/mechanisms", data=b"[]", headers={**ADMIN, "Content-Type": "application/json"}),
        422,
        "invalid-document",
    )
    assert app.extensions["rldp"].storage.list_mechanisms() == []


def test_publish_nan_is_invalid_json(http):
    """NaN is not JSON: the body is refused as invalid JSON, and the detail says so (never "valid JSON")."""
    body = problem(
        http.post("/v1/mechanisms", data=b'{"id": NaN}', headers={**ADMIN, "Content-Type": JSON}), 400, "invalid-json"
    )
    assert "NaN" in body["detail"] and "not valid JSON" in body["detail"] and "is valid JSON" not in body["detail"]
    body = problem(
        http.post("/v1/mechanisms", data=b'{"a": Infinity}', headers={**ADMIN, "Content-Type": JSON}),
        400,
        "invalid-json",
    )
    assert "Infinity" in body["detail"]


def test_publish_refusal_details(http, app):
    """Each refusal of a document has its own problem type, and the detail says what was wrong."""
    doc = make_document()
    body = problem(http.post("/v1/mechanisms", json=tampered(doc), headers=ADMIN), 422, "id-mismatch")
    assert doc["id"] in body["detail"] and "content hashes to" in body["detail"]
    body = problem(
        http.post("/v1/mechanisms", data=b"\xc1", headers={**ADMIN, "Content-Type": "application/msgpack"}),
        400,
        "invalid-msgpack",
    )
    assert "msgpack" in body["detail"]
    magic = {k: v for k, v in doc.items() if k != "id"}
    magic["privacy"] = {"notion": "magic", "epsilon": 1.0}
    magic["id"] = content_id(magic)
    body = problem(http.post("/v1/mechanisms", json=magic, headers=ADMIN), 422, "invalid-document")
    assert "magic" in body["detail"]
    resp = http.post("/v1/mechanisms", data=b"{}", headers={**ADMIN, "Content-Type": "text/csv"})
    problem(resp, 415, "unsupported-media-type")
    assert "application/msgpack" in resp.headers["Accept-Post"]
    problem(
        http.post("/v1/mechanisms", data=b"0" * 200_001, headers={**ADMIN, "Content-Type": JSON}), 413, "body-too-large"
    )
    assert app.extensions["rldp"].storage.list_mechanisms() == []


def test_a_document_that_cannot_be_audited_is_audit_failed(http, app, monkeypatch):
    def refuse(doc):
        raise AuditError("the radius does not admit the audit")

    monkeypatch.setattr(publish_module, "audit_document", refuse)
    body = problem(http.post("/v1/mechanisms", json=make_document(), headers=ADMIN), 422, "audit-failed")
    assert body["detail"] == "the document cannot be audited: the radius does not admit the audit"
    assert app.extensions["rldp"].storage.list_mechanisms() == []


def test_every_refusal_type_has_one_problem_type():
    """The problem type is chosen by the exception's type: every refusal type the services raise is mapped."""

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    refusals = [*subclasses(ServiceError), *subclasses(BatchError)]
    unmapped = [c.__name__ for c in refusals if c is not BodySyntaxError and c not in REASONS]
    assert not unmapped, unmapped
    assert set(REASONS.values()) <= set(PROBLEMS)
    assert problem_for(BodySyntaxError("x", "json"), "POST", "/").reason == "invalid-json"
    assert problem_for(BodySyntaxError("x", "msgpack"), "POST", "/").reason == "invalid-msgpack"
    assert problem_for(StorageError("gone"), "POST", "/").reason == "database-unavailable"
    assert problem_for(RuntimeError("bug"), "POST", "/").reason == "internal-error"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-wrong-token"},
        {"Authorization": f"Basic {ADMIN_TOKEN}"},
        READ,
        {"Authorization": "Bearer "},
    ],
)
def test_admin_endpoints_need_the_admin_token(http, headers):
    resp = http.post("/v1/mechanisms", json=make_document(), headers=headers)
    body = problem(resp, 401, "unauthorized")
    assert ADMIN_TOKEN not in json.dumps(body) and resp.headers["WWW-Authenticate"].startswith("Bearer")
    problem(http.post("/v1/designs", json={}, headers=headers), 401, "unauthorized")
    problem(http.post(f"/v1/mechanisms/{'a' * 64}/retire", headers=headers), 401, "unauthorized")


def test_no_admin_token_configured_refuses_everyone(tmp_path):
    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path}/x.sqlite3"})
    body = problem(app.test_client().post("/v1/mechanisms", json=make_document(), headers=ADMIN), 401, "unauthorized")
    assert "none is configured" in body["detail"]


def test_hashed_tokens_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RLDP_ADMIN_TOKEN_SHA256", f"{'0' * 64}, {hash_token(ADMIN_TOKEN)}")
    monkeypatch.setenv("RLDP_DATABASE_URL", f"sqlite:///{tmp_path}/env.sqlite3")
    app = create_app()
    assert app.test_client().post("/v1/mechanisms", json=make_document(), headers=ADMIN).status_code == 201
    assert (tmp_path / "env.sqlite3").exists()
    assert ADMIN_TOKEN not in json.dumps(app.config["RLDP"], default=str)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"ADMIN_TOKEN": "short"}, "too short"),
        ({"ADMIN_TOKEN_SHA256": "abc"}, "SHA-256 hex"),
        ({"MAX_BODY_BYTES": "lots"}, "must be an integer"),
        ({"MAX_BODY_BYTES": 0}, "must be ≥ 1"),
        ({"DESIGN_TIMEOUT": -1}, "must be > 0"),
        # Issue 27 rough edge: a read token equal to the admin token made "read-only" mean admin.
        ({"ADMIN_TOKEN": "same-token-0123456789abcdef", "READ_TOKEN": "same-token-0123456789abcdef"}, "READ_TOKEN"),
        (
            {
                "ADMIN_TOKEN": "same-token-0123456789abcdef",
                "READ_TOKEN_SHA256": hash_token("same-token-0123456789abcdef"),
            },
            "the admin token",
        ),
    ],
)
def test_bad_configuration_is_a_clear_error(config, message):
    with pytest.raises(ValueError, match=message):
        load_config(config, environ={})


# -- documents


def test_document_download_json_msgpack_etag(http, mech):
    url = f"/v1/mechanisms/{mech['id']}"
    resp = http.get(url)
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    assert resp.headers["ETag"] == f'"{mech["id"]}"'
    assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert resp.json["id"] == mech["id"] and resp.json["matrix"] == mech["matrix"]
    packed = http.get(url, headers={"Accept": "application/msgpack"})
    assert packed.mimetype == "application/msgpack" and msgpack.unpackb(packed.data)["id"] == mech["id"]
    assert http.get(url, headers={"If-None-Match": f'"{mech["id"]}"'}).status_code == 304
    assert http.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    problem(http.get(f"/v1/mechanisms/{'0' * 64}"), 404, "unknown-mechanism")
    problem(http.get("/v1/mechanisms/not-an-id"), 404, "unknown-mechanism")


def test_list_mechanisms(http, mech):
    items = http.get("/v1/mechanisms").json["mechanisms"]
    assert len(items) == 1
    item = items[0]
    assert {k: item[k] for k in ("id", "method", "epsilon", "status", "sensitive", "released", "outputs")} == {
        "id": mech["id"],
        "method": "grr",
        "epsilon": 1.0,
        "status": "active",
        "sensitive": "sex",
        "released": ["colour"],
        "outputs": 6,
    }
    assert item["published"].endswith("Z")


# -- reports


def post(http, payload, kind="json"):
    if kind == "json":
        return http.post("/v1/reports", json=payload)
    return http.post("/v1/reports", data=msgpack.packb(payload), headers={"Content-Type": "application/msgpack"})


@pytest.mark.parametrize("kind", ["json", "msgpack"])
def test_reports_idempotent(http, app, mech, kind):
    payload = {"mechanism": mech["id"], "batch": "b-1", "reports": [0, 5, 5, 2]}
    first = post(http, payload, kind)
    assert first.status_code == 201 and first.json == {"batch": "b-1", "accepted": 4, "duplicate": False}
    again = post(http, payload, kind)
    assert again.status_code == 200 and again.json == {"batch": "b-1", "accepted": 4, "duplicate": True}
    problem(post(http, {**payload, "reports": [0, 5, 5, 1]}, kind), 409, "batch-conflict")
    assert stored(app, mech["id"]) == (1, 4)


BAD = [
    ({"batch": "b", "reports": [1]}, 422, "missing-field"),
    ({"mechanism": None, "batch": "b", "reports": [1]}, 422, "wrong-type"),
    ({"mechanism": "ID", "reports": [1]}, 422, "missing-field"),
    ({"mechanism": "ID", "batch": "", "reports": [1]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "has space", "reports": [1]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "x" * 129, "reports": [1]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": 7, "reports": [1]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b"}, 422, "missing-field"),
    ({"mechanism": "ID", "batch": "b", "reports": 3}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": {"0": 1}}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": []}, 422, "empty-batch"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, 2.0]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, 2.5]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, True]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [False]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, "2"]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, None]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [[1]]}, 422, "wrong-type"),
    ({"mechanism": "ID", "batch": "b", "reports": [1, 6]}, 422, "report-out-of-range"),
    ({"mechanism": "ID", "batch": "b", "reports": [-1]}, 422, "report-out-of-range"),
    ({"mechanism": "ID", "batch": "b", "reports": [2**64]}, 422, "report-out-of-range"),
    ({"mechanism": "0" * 64, "batch": "b", "reports": [1]}, 404, "unknown-mechanism"),
    ({"mechanism": "not hex", "batch": "b", "reports": [1]}, 404, "unknown-mechanism"),
    ({"mechanism": "ID", "batch": "b", "reports": [0] * 5001}, 413, "body-too-large"),
    ([1, 2, 3], 422, "wrong-type"),
    ("text", 422, "wrong-type"),
]


@pytest.mark.parametrize("kind", ["json", "msgpack"])
@pytest.mark.parametrize("payload, status, reason", BAD)
def test_bad_batches_are_refused_whole(http, app, mech, payload, status, reason, kind):
    if isinstance(payload, dict):
        payload = {k: (mech["id"] if v == "ID" else v) for k, v in payload.items()}
    if kind == "msgpack" and payload == {"mechanism": mech["id"], "batch": "b", "reports": [2**64]}:
        payload["reports"] = [2**64 - 1]  # msgpack's largest integer; still out of range
    body = problem(post(http, payload, kind), status, reason)
    if "index" in body:  # a bad element: the detail names it
        assert body["detail"].startswith(f"reports[{body['index']}] is ")
    assert stored(app, mech["id"]) == (0, 0)


def test_bad_bodies(http, app, mech):
    for data, ctype, status, reason in [
        (b"{not json", "application/json", 400, "invalid-json"),
        (b'{"mechanism": NaN}', "application/json", 400, "invalid-json"),
        (b"\xff\xfe{}", "application/json", 400, "invalid-json"),
        (b"[" * 100_000, "application/json", 400, "invalid-json"),
        (b"\xc1\x00", "application/msgpack", 400, "invalid-msgpack"),
        (msgpack.packb({"a": 1}) + b"extra", "application/msgpack", 400, "invalid-msgpack"),
        (msgpack.packb({1: 2}), "application/msgpack", 400, "invalid-msgpack"),
        (b"\x91" * 100_000, "application/msgpack", 400, "invalid-msgpack"),
        (b"", "application/json", 400, "invalid-json"),
        (b"{}", "text/plain", 415, "unsupported-media-type"),
        (b"{}", None, 415, "unsupported-media-type"),
        (b"0" * 200_001, "application/json", 413, "body-too-large"),
    ]:
        headers = {"Content-Type": ctype} if ctype else {}
        problem(http.post("/v1/reports", data=data, headers=headers), status, reason)
    assert stored(app, mech["id"]) == (0, 0)


@pytest.mark.slow
def test_msgpack_bool_scan_is_not_fooled(http, app):
    """Outputs ≥ 194 put the byte 0xc2/0xc3 in the body: the full type check must still pass them."""
    from rldp.shared.records import Alphabet, Attribute

    alpha = Alphabet(Attribute("s", ("a", "b")), [Attribute("u", tuple(f"v{i:03d}" for i in range(150)))])
    doc = make_document(alphabet=alpha)  # larger than this app's body limit: publish in-process
    assert app.extensions["rldp"].publish_bytes(to_msgpack(doc), "msgpack")[1] is True
    ok = post(http, {"mechanism": doc["id"], "batch": "hi", "reports": [194, 195, 299]}, "msgpack")
    assert ok.status_code == 201, ok.json
    problem(post(http, {"mechanism": doc["id"], "batch": "hi2", "reports": [194, True]}, "msgpack"), 422, "wrong-type")


def test_retired_mechanism(http, app, mech):
    assert post(http, {"mechanism": mech["id"], "batch": "a", "reports": [1]}).status_code == 201
    resp = http.post(f"/v1/mechanisms/{mech['id']}/retire", headers=ADMIN)
    assert resp.status_code == 200 and resp.json["status"] == "retired"
    problem(post(http, {"mechanism": mech["id"], "batch": "b", "reports": [1]}), 409, "mechanism-retired")
    assert http.get(f"/v1/mechanisms/{mech['id']}").status_code == 200  # still downloadable
    assert http.get("/v1/mechanisms").json["mechanisms"][0]["status"] == "retired"
    assert http.post("/v1/mechanisms", json=mech, headers=ADMIN).json["status"] == "retired"  # no silent revival
    problem(http.post(f"/v1/mechanisms/{'0' * 64}/retire", headers=ADMIN), 404, "unknown-mechanism")
    assert stored(app, mech["id"]) == (1, 1)


# -- estimates


def test_estimate(http, mech):
    url = f"/v1/mechanisms/{mech['id']}/estimate"
    problem(http.get(url), 401, "unauthorized")
    problem(http.get(url, headers=READ), 409, "no-reports")
    rng = np.random.default_rng(3)
    ys = rng.integers(0, 6, 3000).tolist()
    assert post(http, {"mechanism": mech["id"], "batch": "e", "reports": ys}).status_code == 201
    for headers in (READ, ADMIN):
        est = http.get(url, headers=headers)
        assert est.status_code == 200
    body = est.json
    assert body["mechanism"] == mech["id"] and body["n"] == 3000 and body["identifiable"] is True
    assert np.array(body["joint"]).shape == (2, 3) and abs(np.sum(body["joint"]) - 1) < 1e-9
    assert set(body["marginals"]) == {"sex", "colour"} and body["ci95"]["level"] == 0.95
    assert http.get(url + "?method=inverse", headers=READ).json["method"] == "inverse"
    for query in (
        "method=magic",
        "interval=wide",
        "prior=guess",
        "prior_weight=-1",
        "prior_weight=x",
        "prior=uniform&prior_weight=3",
    ):
        problem(http.get(f"{url}?{query}", headers=READ), 422, "invalid-parameter")
    problem(http.get(f"/v1/mechanisms/{'0' * 64}/estimate", headers=READ), 404, "unknown-mechanism")


# -- designs


@pytest.mark.slow
def test_design_job_publishes_an_audited_mechanism(http, app):
    csv = "sex,colour\n" + "\n".join(["Female,red"] * 30 + ["Male,red"] * 40 + ["Male,blue"] * 30) + "\n"
    resp = http.post(
        "/v1/designs",
        json={"csv": csv, "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "srr", "beta": 0.05},
        headers=ADMIN,
    )
    assert resp.status_code == 202, resp.json
    job = resp.json
    assert job["status_url"] == f"/v1/designs/{job['job']}"
    status = finished_job(http, job["status_url"])
    assert status["status"] == "done", status
    assert status["elapsed"] > 0 and status["params"]["n"] == 100
    doc = http.get(f"/v1/mechanisms/{status['mechanism']}").json
    assert doc["method"] == "srr" and doc["sensitive"]["values"] == ["Female", "Male"]


@pytest.mark.parametrize(
    "change, reason, needle",
    [
        ({"method": "magic"}, "invalid-parameter", "method"),
        ({"epsilon": -1}, "invalid-parameter", "epsilon"),
        ({"epsilon": "1"}, "invalid-parameter", "epsilon"),
        ({"sensitive": "age"}, "invalid-parameter", "age"),
        ({"released": ["sex"]}, "invalid-parameter", "sex"),
        ({"csv": ""}, "invalid-parameter", "csv"),
        ({"csv": "sex,colour\n"}, "invalid-parameter", "no data rows"),
        ({"beta": 2}, "invalid-parameter", "beta"),
        ({"beta": 0.1, "radius": 0.1}, "invalid-parameter", "not both"),
        ({"csv": None}, "invalid-parameter", "csv"),
        ({"csv": "sex,colour\nFemale,r\ud800d\nMale,blue\n"}, "invalid-parameter", "not encodable"),
        ({"per_report_epsilon": 1.0}, "invalid-parameter", "per_report_epsilon"),
        ({"per_report_epsilon": "0.5"}, "invalid-parameter", "per_report_epsilon"),
    ],
)
def test_bad_design_requests(http, change, reason, needle):
    body = {
        "csv": "sex,colour\nFemale,red\nMale,blue\n",
        "sensitive": "sex",
        "released": ["colour"],
        "epsilon": 1.0,
        "method": "srr",
        **change,
    }
    detail = problem(http.post("/v1/designs", json=body, headers=ADMIN), 422, reason)["detail"]
    assert needle in detail


@pytest.mark.slow
def test_a_design_job_can_add_a_per_report_layer(http):
    csv = "sex,colour\n" + "\n".join(["Female,red"] * 30 + ["Male,red"] * 40 + ["Male,blue"] * 30) + "\n"
    body = {"csv": csv, "sensitive": "sex", "released": ["colour"], "epsilon": 2.0, "method": "srr", "beta": 0.05}
    resp = http.post("/v1/designs", json={**body, "per_report_epsilon": 1.0}, headers=ADMIN)
    assert resp.status_code == 202, resp.json
    status = finished_job(http, resp.json["status_url"])
    assert status["status"] == "done" and status["params"]["per_report_epsilon"] == 1.0, status
    doc = http.get(f"/v1/mechanisms/{status['mechanism']}").json
    assert doc["collection"]["per_report"]["epsilon"] == 1.0
    assert audit_document(doc).passed


def test_design_missing_field_and_unknown_job(http):
    problem(http.post("/v1/designs", json={"csv": "a"}, headers=ADMIN), 422, "missing-field")
    problem(http.get(f"/v1/designs/{'0' * 32}", headers=ADMIN), 404, "unknown-job")
    problem(http.get("/v1/designs/xyz", headers=ADMIN), 404, "unknown-job")


# -- operational


def test_health_ready_metrics_openapi(http, mech):
    assert http.get("/healthz").json == {"status": "ok"}
    assert http.get("/readyz").json["status"] == "ready"
    post(http, {"mechanism": mech["id"], "batch": "m", "reports": [1, 2]})
    post(http, {"mechanism": mech["id"], "batch": "m", "reports": [1, 2]})
    post(http, {"mechanism": mech["id"], "batch": "n", "reports": [99]})
    text = http.get("/metrics").data.decode()
    assert "rldp_reports_accepted_total 2.0" in text
    assert "rldp_batches_accepted_total 1.0" in text
    assert "rldp_batches_deduplicated_total 1.0" in text
    assert 'rldp_rejections_total{reason="report-out-of-range"} 1.0' in text
    for reason in PROBLEMS:
        assert f'rldp_rejections_total{{reason="{reason}"}}' in text
    assert 'rldp_request_duration_seconds_count{endpoint="/v1/reports",method="POST",status="201"} 1.0' in text
    spec = http.get("/openapi.json").json
    assert spec["openapi"].startswith("3.1")
    # The API's routes; the web pages (the dashboard under /ui/, the Swagger UI under /docs) are not API.
    pages = {"dashboard", "bp_docs"}
    routes = {
        rule.rule.replace("<", "{").replace(">", "}")
        for rule in http.application.url_map.iter_rules()
        if rule.endpoint != "static" and rule.endpoint.split(".")[0] not in pages
    }
    assert routes == set(spec["paths"])
    assert {r.rule for r in http.application.url_map.iter_rules() if r.endpoint.startswith("bp_docs.")} >= {"/docs/"}


def test_unknown_paths_and_methods_are_problems(http):
    problem(http.get("/v2/nothing"), 404, "not-found")
    resp = http.delete("/v1/reports")
    problem(resp, 405, "method-not-allowed")
    assert "POST" in resp.headers["Allow"]


def test_readyz_503_when_the_database_is_gone(tmp_path):
    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path}/r.sqlite3"})
    storage = app.extensions["rldp"].storage

    def broken() -> None:
        raise StorageError("gone")

    storage.ping = broken
    problem(app.test_client().get("/readyz"), 503, "database-unavailable")


# -- POST /v1/reports: the front's upload coroutine answers exactly as the Flask route


@pytest.mark.parametrize("kind", ["json", "msgpack"])
def test_front_upload_and_flask_route_answer_alike(app, mech, kind):
    front = front_upload(app)

    def flask(body: bytes, ctype: str | None) -> tuple[str, dict, dict]:
        return call(app.wsgi_app, body, ctype or "")

    ctype = "application/json" if kind == "json" else "application/msgpack"
    encode = (lambda p: json.dumps(p).encode()) if kind == "json" else msgpack.packb
    for payload, _, reason in BAD:  # refusals: same status, problem type and detail; nothing stored
        if isinstance(payload, dict):
            payload = {k: (mech["id"] if v == "ID" else v) for k, v in payload.items()}
            if kind == "msgpack" and payload.get("reports") == [2**64]:
                payload["reports"] = [2**64 - 1]
        a, b = front(encode(payload), ctype), flask(encode(payload), ctype)
        a[2].pop("request_id"), b[2].pop("request_id")
        assert a[0][:3] == b[0][:3] and a[2] == b[2] and a[2]["reason"] == reason, (payload, a, b)
        assert a[1]["Content-Type"].startswith("application/problem+json")
    for body, media in [(b"{", ctype), (b"{}", "text/plain"), (b"{}", None), (b"", ctype)]:
        a, b = front(body, media), flask(body, media)
        a[2].pop("request_id"), b[2].pop("request_id")
        assert a[0][:3] == b[0][:3] in ("400", "415", "422") and a[2] == b[2], (body, media, a, b)
    good = {"mechanism": mech["id"], "batch": "same", "reports": [1, 1, 4]}
    status, headers, body = front(encode(good), ctype)
    assert status == "201 Created" and body == {"batch": "same", "accepted": 3, "duplicate": False}
    assert headers["Content-Type"] == "application/json" and int(headers["Content-Length"]) > 0
    assert flask(encode(good), ctype)[2] == {"batch": "same", "accepted": 3, "duplicate": True}
    assert front(encode(good), ctype)[2] == {"batch": "same", "accepted": 3, "duplicate": True}
    conflict = {**good, "reports": [0]}
    a, b = front(encode(conflict), ctype), flask(encode(conflict), ctype)
    a[2].pop("request_id"), b[2].pop("request_id")
    assert a[0][:3] == b[0][:3] == "409" and a[2] == b[2]
    assert stored(app, mech["id"]) == (1, 3)


def test_upload_framing(app, mech):
    body = json.dumps({"mechanism": mech["id"], "batch": "framed", "reports": [2]}).encode()
    status, _, problem_body = call(app.wsgi_app, body[:-3], "application/json", length=str(len(body)))
    assert status.startswith("400") and problem_body["reason"] == "bad-request"  # shorter than announced
    status, _, problem_body = call(app.wsgi_app, body, "application/json", length="999999999")
    assert status.startswith("413") and problem_body["reason"] == "body-too-large"  # refused unread
    # Parameters of the media type, and bodies without Content-Length are served.
    assert call(app.wsgi_app, body, "application/json; charset=utf-8")[0].startswith("201")
    plus_json = json.dumps({"mechanism": mech["id"], "batch": "plus", "reports": [1]}).encode()
    assert call(app.wsgi_app, plus_json, "application/vnd.rldp+json")[0].startswith("201")
    chunked = json.dumps({"mechanism": mech["id"], "batch": "chunked", "reports": [3]}).encode()
    # A chunked upload, as a server hands it over: no Content-Length, the stream ends with the body.
    status, _, answer = call(
        app.wsgi_app,
        chunked,
        "application/json",
        length="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input_terminated": True},
    )
    assert status.startswith("201") and answer["accepted"] == 1, answer
    assert stored(app, mech["id"]) == (3, 3)
    metrics = app.test_client().get("/metrics").data.decode()
    assert 'rldp_rejections_total{reason="bad-request"} 1.0' in metrics
    assert 'endpoint="/v1/reports",method="POST",status="413"' in metrics
