"""Issue 34: an optional upload credential per collection. A collection whose operator made an upload token
refuses report batches without it (401 upload-credential, nothing stored) on both backends and through both
entry points of POST /v1/reports; the previous token stays valid until the next rotation; a revoke lifts the
requirement; only the admin token manages it; the token is never in a problem, the access log or the store."""

from __future__ import annotations

import json
import logging

import pytest
from helpers import report_body
from rldp_live import ADMIN, READ, call, front_upload, in_process_app, make_document

from rldp.shared.tokens import hash_token


@pytest.fixture(params=["sqlite", "postgresql"])
def app(request, databases, tmp_path):
    with in_process_app(tmp_path, DATABASE_URL=databases.url(request.param), ACCESS_LOG="json") as app:
        yield app


def _collection(http, name: str = "app-usage") -> dict:
    doc = make_document(window="P1D")
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    body = {"name": name, "policy": {"notion": "rldp", "epsilon": 1}, "mechanism": doc["id"]}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    return doc


def _upload(http, doc: dict, token: str | None = None, header: str | None = None):
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if header is not None:
        headers = {"Authorization": header}
    return http.post("/v1/reports", json=report_body(doc, [0, 1, 2]), headers=headers)


def _refused(resp, *secrets: str) -> dict:
    assert resp.status_code == 401, resp.json
    problem = resp.json
    assert problem["reason"] == "upload-credential", problem
    assert problem["type"].endswith("/upload-credential")
    assert "requires an upload token" in problem["detail"] and "'app-usage'" in problem["detail"]
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    for secret in secrets:
        assert secret not in json.dumps(problem)
    return problem


def _stored(app, doc: dict) -> int:
    return int(app.extensions["rldp"].storage.batch_totals(doc["id"])[1])


def test_uploads_need_the_current_or_previous_token_until_revoked(app, caplog):
    caplog.set_level(logging.INFO, logger="rldp.access")
    http = app.test_client()
    doc = _collection(http)
    other = make_document(window="P1D")  # a mechanism in no collection: never needs a token
    assert http.post("/v1/mechanisms", json=other, headers=ADMIN).status_code == 201
    assert _upload(http, doc).status_code == 201  # no credential yet: anonymous uploads
    first = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN)
    assert first.status_code == 200 and first.json["previous_valid"] is False, first.json
    assert first.headers["Cache-Control"] == "no-store"
    token1 = first.json["token"]
    assert len(token1) >= 40
    _refused(_upload(http, doc))  # none
    assert "none was sent" in _refused(_upload(http, doc)).get("detail")
    _refused(_upload(http, doc, "not-the-token"), "not-the-token")  # a wrong one
    _refused(_upload(http, doc, header=f"Basic {token1}"), token1)  # not the Bearer scheme
    _refused(_upload(http, doc, ADMIN["Authorization"].split()[1]))  # the admin token is no upload token
    assert _stored(app, doc) == 3
    assert _upload(http, doc, token1).status_code == 201  # the current one
    assert _upload(http, other).status_code == 201
    second = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN)
    assert second.json["previous_valid"] is True
    token2 = second.json["token"]
    assert token2 != token1
    assert _upload(http, doc, token2).status_code == 201  # the new one
    assert _upload(http, doc, token1).status_code == 201  # the previous one, until the next rotation
    token3 = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN).json["token"]
    _refused(_upload(http, doc, token1), token1)  # two rotations ago: refused
    assert _upload(http, doc, token2).status_code == 201
    assert _upload(http, doc, token3).status_code == 201
    assert _stored(app, doc) == 3 * 6
    revoked = http.delete("/v1/collections/app-usage/upload-token", headers=ADMIN)
    assert revoked.status_code == 200 and revoked.json["revoked"] is True
    assert _upload(http, doc).status_code == 201  # no token required again
    assert http.delete("/v1/collections/app-usage/upload-token", headers=ADMIN).json["revoked"] is False
    assert _stored(app, doc) == 3 * 7
    # The tokens are in no access-log line, and the store holds their hashes only.
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "rldp.access")
    assert "/v1/reports" in logged
    for token in (token1, token2, token3):
        assert token not in logged
    storage = app.extensions["rldp"].storage
    storage.rotate_upload_credential("app-usage", hash_token(token3))
    assert storage.upload_credentials()[doc["id"]].current_sha256 == hash_token(token3)


def test_a_rotated_collection_s_new_mechanism_needs_the_token_too(app):
    http = app.test_client()
    doc = _collection(http)
    token = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN).json["token"]
    nxt = make_document(window="P1D")
    assert http.post("/v1/mechanisms", json=nxt, headers=ADMIN).status_code == 201
    assert (
        http.post("/v1/collections/app-usage/rotate", json={"mechanism": nxt["id"]}, headers=ADMIN).status_code == 200
    )
    app.extensions["rldp"].upload_credentials._forget()  # the cache is read again at most every second
    _refused(_upload(http, nxt))
    assert _upload(http, nxt, token).status_code == 201
    _refused(_upload(http, doc))


def test_both_upload_entries_check_the_token(app):
    """The Flask route (WSGI) and the front's upload coroutine (rldp serve) refuse alike."""
    http = app.test_client()
    doc = _collection(http)
    token = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN).json["token"]
    post = front_upload(app)

    def front(body: bytes, authorization: str | None = None) -> tuple[int, dict, dict]:
        extra = {} if authorization is None else {"HTTP_AUTHORIZATION": authorization}
        status, headers, answer = post(body, "application/json", **extra)
        return int(status[:3]), headers, answer

    def flask(body: bytes, authorization: str | None = None) -> tuple[int, dict, dict]:
        extra = {} if authorization is None else {"HTTP_AUTHORIZATION": authorization}
        status, headers, answer = call(app.wsgi_app, body, "application/json", **extra)
        return int(status[:3]), headers, answer

    for entry in (front, flask):
        body = json.dumps(report_body(doc, [1])).encode()
        status, headers, answer = entry(body)
        assert status == 401 and answer["reason"] == "upload-credential", answer
        assert headers["WWW-Authenticate"].startswith("Bearer")
        body = json.dumps(report_body(doc, [1])).encode()
        status, _, answer = entry(body, f"Bearer {token}")
        assert status == 201, answer
    # A chunked upload (no Content-Length) is checked too.
    body = json.dumps(report_body(doc, [2])).encode()
    status, _, answer = call(
        app.wsgi_app,
        body,
        "application/json",
        length="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input_terminated": True},
    )
    assert status.startswith("401") and answer["reason"] == "upload-credential", answer


def test_only_the_admin_token_manages_upload_tokens(app):
    http = app.test_client()
    _collection(http)
    for headers in ({}, READ, {"Authorization": "Bearer nope"}):
        assert http.post("/v1/collections/app-usage/upload-token", headers=headers).status_code == 401
        assert http.delete("/v1/collections/app-usage/upload-token", headers=headers).status_code == 401
    unknown = http.post("/v1/collections/nope/upload-token", headers=ADMIN)
    assert unknown.status_code == 404 and unknown.json["reason"] == "unknown-collection"
    assert http.delete("/v1/collections/nope/upload-token", headers=ADMIN).status_code == 404


def test_openapi_documents_the_upload_token_and_its_refusal(app):
    spec = app.test_client().get("/openapi.json").json
    path = spec["paths"]["/v1/collections/{name}/upload-token"]
    assert set(path) >= {"post", "delete"} and path["post"]["security"] == path["delete"]["security"]
    assert "previous_valid" in spec["components"]["schemas"]["UploadToken"]["properties"]
    assert "upload-credential" in spec["paths"]["/v1/reports"]["post"]["responses"]["401"]["description"]


def test_the_collection_says_whether_uploads_need_a_token_never_the_token(app):
    """GET /v1/collections/{name}, the list and the dashboard's collections page say whether report uploads
    need the upload token (and the OpenAPI schema documents it); the token itself is never shown."""
    import re

    http = app.test_client()
    _collection(http)

    def required() -> list[bool]:
        one = http.get("/v1/collections/app-usage").json
        listed = http.get("/v1/collections").json["collections"]
        return [one["upload_token_required"], *(c["upload_token_required"] for c in listed)]

    def page() -> str:
        return http.get("/ui/collections").get_data(as_text=True)

    login = http.get("/ui/login")
    nonce = re.search(r'name="csrf_token" value="([^"]+)"', login.get_data(as_text=True)).group(1)
    assert (
        http.post("/ui/login", data={"token": READ["Authorization"].split()[1], "csrf_token": nonce}).status_code == 303
    )
    assert required() == [False, False]
    assert "uploads need no token" in page()
    token = http.post("/v1/collections/app-usage/upload-token", headers=ADMIN).json["token"]
    assert required() == [True, True]
    shown = page()
    assert "uploads need the collection's upload token" in shown and token not in shown
    for path in ("/v1/collections/app-usage", "/v1/collections"):
        assert token not in http.get(path).get_data(as_text=True)
    assert http.delete("/v1/collections/app-usage/upload-token", headers=ADMIN).json["revoked"]
    assert required() == [False, False]
    schema = http.get("/openapi.json").json["components"]["schemas"]["Collection"]["properties"]
    assert schema["upload_token_required"]["type"] == "boolean"
