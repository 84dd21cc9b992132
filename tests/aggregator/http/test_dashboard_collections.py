"""The dashboard's collections page: everyone logged in sees the list; the admin creates, rotates and retires."""

from __future__ import annotations

import re
import time

import pytest
from rldp_live import ADMIN, ADMIN_TOKEN, READ_TOKEN, in_process_app, make_document

from rldp.aggregator.http.responses import EXTENSION
from rldp.shared.collection import DEFAULT_WINDOW, Window


def today() -> str:
    """The label of the current day's window (the test documents collect by day)."""
    return Window.parse(DEFAULT_WINDOW).label_at(time.time())


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def _nonce(resp) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', resp.get_data(as_text=True))
    assert match, resp.get_data(as_text=True)[:500]
    return match.group(1)


def login(http, token: str) -> None:
    page = http.get("/ui/login")
    assert http.post("/ui/login", data={"token": token, "csrf_token": _nonce(page), "next": ""}).status_code == 303


def publish(http, **kwargs) -> str:
    """A small GRR document that collects by day, like a default design."""
    doc = make_document(**{"window": DEFAULT_WINDOW, **kwargs})
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    return doc["id"]


def form(http, **fields):
    return {"csrf_token": _nonce(http.get("/ui/collections")), **fields}


def test_an_admin_creates_rotates_and_retires_a_collection(http):
    m1, m2, loud = publish(http), publish(http), publish(http, epsilon=3.0)
    assert http.get("/ui/collections").status_code == 302  # a login first
    login(http, ADMIN_TOKEN)
    empty = http.get("/ui/collections").get_data(as_text=True)
    assert "No collection yet" in empty and "Create a collection" in empty
    created = http.post(
        "/ui/collections",
        data=form(http, name="app-usage", description="daily use", mechanism=m1, notion="rldp", epsilon="1"),
    )
    assert created.status_code == 303
    page = http.get(created.headers["Location"]).get_data(as_text=True)
    assert "created app-usage" in page and "daily use" in page and m1[:12] in page and "rldp, epsilon ≤ 1" in page
    refused = http.post("/ui/collections/app-usage/rotate", data=form(http, mechanism=loud))
    assert refused.status_code == 422 and "claims epsilon = 3 &gt; 1" in refused.get_data(as_text=True)
    rotated = http.post("/ui/collections/app-usage/rotate", data=form(http, mechanism=m2))
    assert rotated.status_code == 303
    assert http.get("/v1/collections/app-usage").get_json()["current"] == m2
    bad = http.post("/ui/collections", data=form(http, name="x", mechanism=m1, notion="rldp", epsilon="lots"))
    assert bad.status_code == 422 and "policy.epsilon must be a finite number" in bad.get_data(as_text=True)
    assert 'value="lots"' in bad.get_data(as_text=True)  # the form keeps what was typed
    no_csrf = http.post("/ui/collections/app-usage/retire", data={})
    assert no_csrf.status_code == 403 and http.get("/v1/collections/app-usage").get_json()["status"] == "active"
    retired = http.post("/ui/collections/app-usage/retire", data=form(http))
    assert retired.status_code == 303
    assert http.get("/v1/collections/app-usage").get_json()["status"] == "retired"
    assert "retired app-usage" in http.get(retired.headers["Location"]).get_data(as_text=True)


def test_a_read_token_sees_collections_but_changes_none(http):
    m1, m2 = publish(http), publish(http)
    body = {"name": "seen", "policy": {"notion": "rldp", "epsilon": 1}, "mechanism": m1}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    login(http, READ_TOKEN)
    page = http.get("/ui/collections").get_data(as_text=True)
    assert "seen" in page and "Create a collection" not in page and "Rotate" not in page
    token = _nonce(http.get("/ui/collections"))
    assert http.post("/ui/collections/seen/rotate", data={"csrf_token": token, "mechanism": m2}).status_code == 403
    assert http.post("/ui/collections/seen/retire", data={"csrf_token": token}).status_code == 403
    create = http.post("/ui/collections", data={"csrf_token": token, "name": "y", "mechanism": m2, "notion": "rldp"})
    assert create.status_code == 422 and "needs the admin token" in create.get_data(as_text=True)
    assert http.get("/v1/collections/seen").get_json()["current"] == m1


def test_a_paused_collection_shows_a_banner_and_the_admin_resumes_it(app):
    http = app.test_client()
    m1 = publish(http)
    login(http, ADMIN_TOKEN)
    created = http.post(
        "/ui/collections",
        data=form(http, name="watched", mechanism=m1, notion="rldp", epsilon="1", drift="pause", switch_after="2000"),
    )
    assert created.status_code == 303, created.get_data(as_text=True)[:2000]
    policy = http.get("/v1/collections/watched").get_json()["policy"]
    assert policy["drift"] == "pause" and policy["switch"] == {"after": 2000}
    page = http.get("/ui/collections").get_data(as_text=True)
    assert (
        "on drift: pause; up to 0.001 of a window's reports may be forged; pilot switches after 2,000 reports" in page
    )
    assert "is paused" not in page
    service = app.extensions[EXTENSION]
    service.pauses.pause("watched", m1, "the reporting population no longer looks like P̂")  # as the drift watch does
    page = http.get("/ui/collections").get_data(as_text=True)
    assert "Collection <strong>watched</strong> is paused by its drift policy" in page and ">Resume</button>" in page
    assert (
        http.post(
            "/v1/reports", json={"mechanism": m1, "batch": "b" * 32, "reports": [0], "window": today()}
        ).status_code
        == 423
    )
    resumed = http.post("/ui/collections/watched/resume", data=form(http))
    assert resumed.status_code == 303 and "resumed watched" in http.get(resumed.headers["Location"]).get_data(
        as_text=True
    )
    assert (
        http.post(
            "/v1/reports", json={"mechanism": m1, "batch": "b" * 32, "reports": [0], "window": today()}
        ).status_code
        == 201
    )


def test_the_contamination_budget_is_set_in_the_form_and_shown(http):
    """The collection form takes the forged share tolerated; the table shows it (the default too)."""
    m1, m2 = publish(http), publish(http)
    login(http, ADMIN_TOKEN)
    created = http.post(
        "/ui/collections",
        data=form(http, name="forged", mechanism=m1, notion="rldp", epsilon="1", contamination="0.02"),
    )
    assert created.status_code == 303, created.get_data(as_text=True)[:800]
    assert http.get("/v1/collections/forged").get_json()["policy"]["contamination"] == 0.02
    body = {"name": "plain", "policy": {"notion": "rldp", "epsilon": 1}, "mechanism": m2}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    page = http.get("/ui/collections").get_data(as_text=True)
    assert "up to 0.02 of a window" in page and "up to 0.001 of a window" in page
    bad = http.post(
        "/ui/collections", data=form(http, name="x", mechanism=m1, notion="rldp", epsilon="1", contamination="0.7")
    )
    assert bad.status_code == 422 and "policy.contamination must be in [0, 0.5)" in bad.get_data(as_text=True)
