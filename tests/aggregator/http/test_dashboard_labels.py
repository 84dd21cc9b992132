"""A mechanism's label through the dashboard's form: admin only, CSRF-checked, the API's validator
(its refusals shown on the page, which keeps what was typed), and never a change to the document."""

from __future__ import annotations

import hashlib
import re

import pytest
from rldp_live import ADMIN, ADMIN_TOKEN, READ_TOKEN, csrf_nonce, in_process_app, login, make_document

from rldp.aggregator.services import LABEL_MAX


@pytest.fixture
def http(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app.test_client()


@pytest.fixture
def mechanism(http) -> str:
    doc = make_document()
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    return doc["id"]


def _label(http, mid: str) -> str | None:
    return next(m for m in http.get("/v1/mechanisms").json["mechanisms"] if m["id"] == mid)["label"]


def _post(http, mid: str, **form: str):
    return http.post(f"/ui/mechanisms/{mid}/label", data=form)


def test_an_admin_sets_changes_and_removes_a_label(http, mechanism) -> None:
    url = f"/v1/mechanisms/{mechanism}"
    digest = hashlib.sha256(http.get(url).data).hexdigest()
    login(http, ADMIN_TOKEN)
    page = http.get(f"/ui/mechanisms/{mechanism}")
    assert 'action="/ui/mechanisms/' in page.get_data(as_text=True) and "Save label" in page.get_data(as_text=True)
    token = csrf_nonce(page)
    resp = _post(http, mechanism, csrf_token=token, label="  Sign-ups by region, 2026 ", action="save")
    assert resp.status_code == 303 and resp.headers["Location"].endswith(f"/ui/mechanisms/{mechanism}?labelled=saved")
    assert _label(http, mechanism) == "Sign-ups by region, 2026"
    shown = http.get(resp.headers["Location"]).get_data(as_text=True)
    assert "Label saved." in shown and 'value="Sign-ups by region, 2026"' in shown and "Remove label" in shown
    assert _post(http, mechanism, csrf_token=token, label="Renamed").status_code == 303  # Enter: no action field
    assert _label(http, mechanism) == "Renamed"
    resp = _post(http, mechanism, csrf_token=token, label="Renamed", action="remove")
    assert resp.status_code == 303 and _label(http, mechanism) is None
    assert "Label removed." in http.get(resp.headers["Location"]).get_data(as_text=True)
    assert hashlib.sha256(http.get(url).data).hexdigest() == digest  # the document never changes


@pytest.mark.parametrize(
    ("typed", "needle"),
    [
        ("", "non-empty text"),
        ("   ", "non-empty text"),
        ("a" * (LABEL_MAX + 1), f"at most {LABEL_MAX}"),
        ("two\nlines", "U+000A"),
        ("abc\u202egnp.exe", "U+202E"),
    ],
)
def test_a_refused_label_is_shown_on_the_page_with_the_apis_words(http, mechanism, typed, needle) -> None:
    http.patch(f"/v1/mechanisms/{mechanism}", json={"label": "Kept"}, headers=ADMIN)
    api = http.patch(f"/v1/mechanisms/{mechanism}", json={"label": typed}, headers=ADMIN)
    login(http, ADMIN_TOKEN)
    resp = _post(http, mechanism, csrf_token=csrf_nonce(http.get("/ui/")), label=typed, action="save")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 422 == api.status_code
    alert = re.search(r'<p class="alert" id="label-error" role="alert">([^<]*)</p>', html)
    assert alert and needle in alert.group(1) and api.json["detail"] in alert.group(1).replace("&#39;", "'")
    assert "Mechanism matrix Q(y | x)" in html  # the whole mechanism page, not a bare error page
    assert _label(http, mechanism) == "Kept"


def test_the_form_keeps_what_was_typed_escaped(http, mechanism) -> None:
    login(http, ADMIN_TOKEN)
    typed = '"><script>x</script>' + "a" * LABEL_MAX
    html = _post(http, mechanism, csrf_token=csrf_nonce(http.get("/ui/")), label=typed).get_data(as_text=True)
    assert "<script>x" not in html and 'value="&#34;&gt;&lt;script&gt;x&lt;/script&gt;' in html


def test_read_token_csrf_and_unknown_mechanism_are_refused(http, mechanism) -> None:
    assert _post(http, mechanism, label="x").status_code == 302  # no session: to the login page
    login(http, READ_TOKEN)
    page = http.get(f"/ui/mechanisms/{mechanism}")
    assert page.status_code == 200 and "Save label" not in page.get_data(as_text=True)
    assert _post(http, mechanism, csrf_token=csrf_nonce(page), label="x").status_code == 403
    http.post("/ui/logout", data={"csrf_token": csrf_nonce(page)})
    login(http, ADMIN_TOKEN)
    for form in ({}, {"csrf_token": ""}, {"csrf_token": "forged"}):
        resp = _post(http, mechanism, label="x", **form)
        assert resp.status_code == 403 and "Form refused" in resp.get_data(as_text=True)
    token = csrf_nonce(http.get("/ui/"))
    assert _post(http, "0" * 64, csrf_token=token, label="x").status_code == 404
    assert _post(http, "not-an-id", csrf_token=token, label="x").status_code < 500
    assert _label(http, mechanism) is None
