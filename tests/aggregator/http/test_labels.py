"""Mechanism labels: set at publish or by PATCH (admin), validated, stored beside the document (never in it)."""

from __future__ import annotations

import hashlib

import pytest
from rldp_live import ADMIN, READ, READ_TOKEN, in_process_app, make_document

from rldp.aggregator.services import LABEL_MAX, InvalidParameter, check_label


@pytest.fixture
def http(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app.test_client()


def _listed(http, mid: str) -> dict:
    return next(m for m in http.get("/v1/mechanisms").json["mechanisms"] if m["id"] == mid)


def test_a_label_set_at_publish_is_listed_and_leaves_the_document_alone(http) -> None:
    doc = make_document()
    resp = http.post("/v1/mechanisms?label=Sign-ups%20by%20region%2C%202026", json=doc, headers=ADMIN)
    assert resp.status_code == 201 and resp.json["label"] == "Sign-ups by region, 2026" and resp.json["id"] == doc["id"]
    assert _listed(http, doc["id"])["label"] == "Sign-ups by region, 2026"
    served = http.get(f"/v1/mechanisms/{doc['id']}")
    assert b"Sign-ups" not in served.data and served.json == doc  # the document is what was published
    assert served.headers["ETag"] == f'"{doc["id"]}"'
    # publishing the same document again keeps its id; a new label replaces the old one
    again = http.post("/v1/mechanisms?label=Renamed", json=doc, headers=ADMIN)
    assert again.status_code == 200 and again.json["id"] == doc["id"] and again.json["label"] == "Renamed"
    unlabelled = make_document()
    assert http.post("/v1/mechanisms", json=unlabelled, headers=ADMIN).json["label"] is None


def test_patch_changes_and_removes_the_label_with_the_admin_token_only(http) -> None:
    doc = make_document()
    http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    url = f"/v1/mechanisms/{doc['id']}"
    digest = hashlib.sha256(http.get(url).data).hexdigest()
    assert http.patch(url, json={"label": "x"}).status_code == 401
    assert http.patch(url, json={"label": "x"}, headers=READ).status_code == 401
    resp = http.patch(url, json={"label": "  Daily app usage  "}, headers=ADMIN)
    assert resp.status_code == 200 and resp.json["label"] == "Daily app usage" and resp.json["id"] == doc["id"]
    assert _listed(http, doc["id"])["label"] == "Daily app usage"
    assert hashlib.sha256(http.get(url).data).hexdigest() == digest  # the document did not change
    assert http.patch(url, json={"label": None}, headers=ADMIN).json["label"] is None
    assert _listed(http, doc["id"])["label"] is None
    assert http.patch("/v1/mechanisms/" + "0" * 64, json={"label": "x"}, headers=ADMIN).json["reason"] == (
        "unknown-mechanism"
    )


@pytest.mark.parametrize(
    ("body", "reason", "needle"),
    [
        ({"label": ""}, "invalid-parameter", "non-empty text"),
        ({"label": "   "}, "invalid-parameter", "non-empty text"),
        ({"label": 7}, "invalid-parameter", "non-empty text"),
        ({"label": "a" * (LABEL_MAX + 1)}, "invalid-parameter", f"at most {LABEL_MAX}"),
        ({"label": "two\nlines"}, "invalid-parameter", "U+000A"),
        ({"label": "bell\x07"}, "invalid-parameter", "U+0007"),
        ({"label": "abc\u202egnp.exe"}, "invalid-parameter", "U+202E"),
        ({}, "missing-field", '"label"'),
        ({"label": "x", "id": "y"}, "wrong-type", "only label can change"),
        (["label"], "wrong-type", "must be an object"),
    ],
)
def test_bad_labels_are_refused_naming_what_is_wrong(http, body, reason, needle) -> None:
    doc = make_document()
    http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    resp = http.patch(f"/v1/mechanisms/{doc['id']}", json=body, headers=ADMIN)
    assert resp.status_code == 422 and resp.json["reason"] == reason and needle in resp.json["detail"], resp.json
    assert _listed(http, doc["id"])["label"] is None


def test_a_lone_surrogate_is_refused_at_patch_and_at_publish(http) -> None:
    doc = make_document()
    raw = b'{"label": "bad \\ud800 label"}'
    http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    patch = http.patch(f"/v1/mechanisms/{doc['id']}", data=raw, headers={**ADMIN, "Content-Type": "application/json"})
    assert patch.status_code == 422 and "U+D800 (a lone surrogate)" in patch.json["detail"]
    other = make_document()
    resp = http.post("/v1/mechanisms?label=a%0Aevil", json=other, headers=ADMIN)
    assert resp.status_code == 422 and resp.json["parameter"] == "label"
    assert all(m["id"] != other["id"] for m in http.get("/v1/mechanisms").json["mechanisms"])  # nothing published


def test_check_label() -> None:
    assert check_label(None) is None and check_label(" ok ") == "ok" and check_label("Ünïcode ✓") == "Ünïcode ✓"
    with pytest.raises(InvalidParameter, match="label"):
        check_label("\ud800")


def test_the_dashboard_shows_labels_escaped(http) -> None:
    from rldp_live import login

    doc = make_document()
    http.post("/v1/mechanisms?label=%3Cb%3EAdult%20survey%3C%2Fb%3E", json=doc, headers=ADMIN)
    login(http, READ_TOKEN)
    listing = http.get("/ui/").get_data(as_text=True)
    page = http.get(f"/ui/mechanisms/{doc['id']}").get_data(as_text=True)
    for html in (listing, page):
        assert "&lt;b&gt;Adult survey&lt;/b&gt;" in html and "<b>Adult survey" not in html
