"""The service's minimum number of reports per estimate (MIN_REPORTS) and the estimate as CSV (Accept: text/csv)."""

from __future__ import annotations

import csv
import io

import pytest
from rldp_live import ADMIN, READ, READ_TOKEN, in_process_app, make_document

from rldp.aggregator.http.serve import add_parser
from rldp.aggregator.services import ConfigError, load_config


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:  # the default minimum: 100
        yield app


def _publish(http, **kwargs) -> str:
    doc = make_document(**kwargs)
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    return str(doc["id"])


def _report(http, mid: str, batch: str, n: int) -> None:
    resp = http.post("/v1/reports", json={"mechanism": mid, "batch": batch, "reports": [i % 6 for i in range(n)]})
    assert resp.status_code == 201, resp.json


def test_the_default_minimum_is_100_and_is_validated() -> None:
    assert load_config(environ={})["MIN_REPORTS"] == 100
    assert load_config(environ={"RLDP_MIN_REPORTS": "7"})["MIN_REPORTS"] == 7
    assert load_config({"MIN_REPORTS": 1}, environ={})["MIN_REPORTS"] == 1
    for bad in ("0", "-5", "abc", "2.5", "1e3"):
        with pytest.raises(ConfigError, match=r"MIN_REPORTS \(RLDP_MIN_REPORTS\) must be a whole number"):
            load_config(environ={"RLDP_MIN_REPORTS": bad})
    for bad in (0, True, 2.5, "x"):
        with pytest.raises(ConfigError, match="MIN_REPORTS"):
            load_config({"MIN_REPORTS": bad}, environ={})


def test_serve_takes_min_reports() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    assert parser.parse_args(["serve", "--min-reports", "20"]).min_reports == 20
    assert parser.parse_args(["serve"]).min_reports is None
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--min-reports", "0"])


def test_below_the_minimum_the_estimate_says_why(app) -> None:
    http = app.test_client()
    mid = _publish(http)
    url = f"/v1/mechanisms/{mid}/estimate"
    assert http.get(url, headers=READ).json["reason"] == "no-reports"
    _report(http, mid, "a", 99)
    resp = http.get(url, headers=READ)
    body = resp.json
    assert resp.status_code == 409 and resp.mimetype == "application/problem+json"
    assert body["type"] == "https://rldp.dev/problems/too-few-reports" and body["reason"] == "too-few-reports"
    assert (body["reports"], body["min_reports"], body["mechanism"]) == (99, 100, mid)
    assert f"mechanism {mid} has 99 reports" in body["detail"] and "from 100 reports on" in body["detail"]
    assert "1 more needed" in body["detail"]
    # the CSV form is refused the same way (a problem document, not an empty CSV)
    assert http.get(url, headers={**READ, "Accept": "text/csv"}).json["reason"] == "too-few-reports"
    _report(http, mid, "b", 1)
    est = http.get(url, headers=READ)
    assert est.status_code == 200 and est.json["n"] == 100


def test_the_minimum_counts_the_window_asked_for(tmp_path) -> None:
    import time

    from rldp.shared.collection import Window

    with in_process_app(tmp_path, MIN_REPORTS=50) as app:
        http = app.test_client()
        mid = _publish(http, window="P1D")
        day = Window.parse("P1D")
        today, yesterday = day.label_at(time.time()), day.label_at(time.time() - 86_400)
        for label, n in ((yesterday, 40), (today, 60)):
            body = {"mechanism": mid, "batch": label, "reports": [0] * n, "window": label}
            assert http.post("/v1/reports", json=body).status_code == 201
        url = f"/v1/mechanisms/{mid}/estimate"
        assert http.get(url, headers=READ).json["n"] == 100  # every window: 100 ≥ 50
        assert http.get(f"{url}?window={today}", headers=READ).json["n"] == 60
        few = http.get(f"{url}?window={yesterday}", headers=READ).json
        assert few["reason"] == "too-few-reports" and few["reports"] == 40 and f"in window {yesterday}" in few["detail"]


def test_a_collection_needs_the_minimum_over_all_its_mechanisms(app) -> None:
    http = app.test_client()
    m0, m1 = _publish(http), _publish(http, epsilon=0.9)
    body = {"name": "usage", "mechanism": m0, "policy": {"notion": "rldp", "epsilon": 2.0}, "window": "none"}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    _report(http, m0, "a", 70)
    few = http.get("/v1/collections/usage/estimate", headers=READ).json
    assert few["reason"] == "too-few-reports" and (few["reports"], few["min_reports"]) == (70, 100)
    assert few["collection"] == "usage" and "collection 'usage' has 70 reports" in few["detail"]
    assert http.post("/v1/collections/usage/rotate", json={"mechanism": m1}, headers=ADMIN).status_code == 200
    _report(http, m1, "b", 30)
    est = http.get("/v1/collections/usage/estimate", headers=READ)
    assert est.status_code == 200 and est.json["n"] == 100


def test_the_dashboard_shows_the_same_sentence(app) -> None:
    from rldp_live import login

    http = app.test_client()
    mid = _publish(http)
    _report(http, mid, "a", 12)
    login(http, READ_TOKEN)
    for suffix in ("", ".csv", ".json"):
        resp = http.get(f"/ui/mechanisms/{mid}/estimate{suffix}")
        page = resp.get_data(as_text=True)
        assert resp.status_code == 409 and "has 12 reports" in page and "88 more needed" in page, suffix


def test_accept_text_csv_answers_the_dashboard_csv(app) -> None:
    from rldp_live import login

    http = app.test_client()
    mid = _publish(http)
    _report(http, mid, "a", 300)
    url = f"/v1/mechanisms/{mid}/estimate"
    default = http.get(url, headers=READ)
    assert default.mimetype == "application/json" and default.json["n"] == 300
    for accept in ("application/xml", "*/*", "application/json, text/csv;q=0.5"):
        assert http.get(url, headers={**READ, "Accept": accept}).mimetype == "application/json", accept
    resp = http.get(f"{url}?interval=bootstrap&method=em", headers={**READ, "Accept": "text/csv"})
    assert resp.status_code == 200 and resp.mimetype == "text/csv" and resp.headers["Vary"] == "Accept"
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert list(rows[0]) == [
        "table",
        "attribute",
        "category",
        "estimate",
        "ci95_low",
        "ci95_high",
        "identified",
        "public",
    ]
    joint = [r for r in rows if r["table"] == "joint"]
    assert len(joint) == 6 and abs(sum(float(r["estimate"]) for r in joint) - 1) < 1e-9
    login(http, READ_TOKEN)
    page_csv = http.get(f"/ui/mechanisms/{mid}/estimate.csv?interval=bootstrap&method=em").get_data(as_text=True)
    assert [r["category"] for r in csv.DictReader(io.StringIO(page_csv))] == [r["category"] for r in rows]
    assert http.get(url, headers={"Accept": "text/csv"}).status_code == 401  # the token is still needed


def test_csv_cells_from_the_document_cannot_be_formulas(app) -> None:
    """D10's escaping applies to the API's CSV too: values a publisher chose are never read as formulas."""
    from rldp.shared.records import Alphabet, Attribute

    http = app.test_client()
    doc = make_document(alphabet=Alphabet(Attribute("sex", ("=1+1", "@SUM(1)")), [Attribute("colour", ("+2", "-3+4"))]))
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": [i % 4 for i in range(200)]})
    assert resp.status_code == 201
    text = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers={**READ, "Accept": "text/csv"}).get_data(
        as_text=True
    )
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row[:3]]
    assert not any(c[:1] in ("=", "+", "-", "@") for c in cells), cells
    assert any("=1+1" in c for c in cells)


def test_collection_estimate_as_csv(app) -> None:
    http = app.test_client()
    m0 = _publish(http)
    body = {"name": "usage", "mechanism": m0, "policy": {"notion": "rldp", "epsilon": 2.0}, "window": "none"}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    _report(http, m0, "a", 150)
    resp = http.get("/v1/collections/usage/estimate", headers={**READ, "Accept": "text/csv"})
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert [r["table"] for r in rows].count("joint") == 6 and all(r["public"] for r in rows if r["table"] == "joint")


def test_the_clients_estimate_choices_are_the_services() -> None:
    from rldp.aggregator.services import ESTIMATE_INTERVALS, ESTIMATE_METHODS
    from rldp.client.estimate import ESTIMATE_INTERVALS as CLIENT_INTERVALS
    from rldp.client.estimate import ESTIMATE_METHODS as CLIENT_METHODS

    assert tuple(CLIENT_METHODS) == tuple(ESTIMATE_METHODS) and tuple(CLIENT_INTERVALS) == tuple(ESTIMATE_INTERVALS)
