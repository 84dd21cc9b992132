"""The drift watch through the service: the estimate's ``drift`` object, /metrics gauges, the event, the dashboard.

The example: the sex/race PolyOpt document at ε = 1.5 from Adult; 1,000 reports drawn from
a skewed population (60 % Female|Amer-Indian-Eskimo) are flagged, 5,000 from P̂ are not.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import adult_sex_race_polyopt, report_body, skewed_population
from rldp_live import ADMIN, READ, READ_TOKEN, in_process_app, login, make_document

from rldp.shared.collection import DRIFT_MIN_REPORTS, Window
from rldp.shared.document import content_id, public_distribution, report_matrix


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def _upload(http, doc, population, n, seed, batch="b", window=None):
    rng = np.random.default_rng(seed)
    q = report_matrix(doc)
    reports = rng.choice(q.shape[0], size=n, p=q @ np.asarray(population).ravel()).tolist()
    body = report_body(doc, reports, batch)
    if window is not None:
        body["window"] = window
    resp = http.post("/v1/reports", json=body)
    assert resp.status_code == 201, resp.json


def _publish(http, doc):
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code in (200, 201), resp.json


def test_skewed_population_is_flagged_in_the_estimate_metrics_and_events(http, app):
    doc = adult_sex_race_polyopt(1.5)
    _publish(http, doc)
    alarm = f'rldp_drift_detected_total{{mechanism="{doc["id"]}"}}'
    _upload(http, doc, skewed_population(public_distribution(doc)), 1000, seed=1)
    est = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json
    drift = est["drift"]
    assert drift["rejected"] is True and drift["p_value"] < 0.001 and drift["alpha"] == 0.05
    assert drift["realised_epsilon_upper"] >= drift["realised_epsilon"] > 3.0
    assert 1.5 < drift["realised_epsilon_lower"] <= drift["realised_epsilon"]  # above the claim at 95 %
    assert drift["statement"].startswith("the reporting population no longer looks like P̂")
    assert "the claim ε = 1.5 may not hold" in drift["statement"] and "drift_unavailable" not in est
    assert f"{alarm} 1.0" in http.get("/metrics").data.decode()  # the event (counted by /metrics)
    # a second look at the same reports is the cached answer: no second event
    again = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json
    assert again["drift"] == drift
    # another estimator's parameters: the drift object is still the watch's own (EM, delta)
    boot = http.get(f"/v1/mechanisms/{doc['id']}/estimate?method=inverse", headers=READ).json
    assert boot["drift"]["p_value"] == drift["p_value"]
    _upload(http, doc, skewed_population(public_distribution(doc)), 10, seed=2, batch="c")  # a new count
    metrics = http.get("/metrics").data.decode()
    assert _gauge(metrics, "rldp_drift_p_value", doc["id"]) < 0.001
    assert f'rldp_realised_epsilon{{mechanism="{doc["id"]}"}}' in metrics
    assert (
        1.5
        < _gauge(metrics, "rldp_realised_epsilon_lower", doc["id"])
        <= _gauge(metrics, "rldp_realised_epsilon", doc["id"])
    )
    assert f"{alarm} 1.0" in metrics  # still rejected: no new alarm


def test_reports_from_p_hat_raise_no_alarm(http, app):
    doc = adult_sex_race_polyopt(1.5)
    _publish(http, doc)
    _upload(http, doc, public_distribution(doc), 5000, seed=3)
    drift = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json["drift"]
    assert drift["rejected"] is False and drift["p_value"] >= 0.05
    assert drift["statement"].startswith("no evidence")
    metrics = http.get("/metrics").data.decode()
    assert f'rldp_drift_detected_total{{mechanism="{doc["id"]}"}}' not in metrics


def test_a_claim_without_an_uncertainty_set_has_no_drift_and_says_why(http, app):
    doc = make_document()  # GRR claiming RLDP over every distribution (radius null)
    _publish(http, doc)
    resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "x", "reports": [0, 1, 2, 3] * 25})
    assert resp.status_code == 201
    est = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json
    assert est["drift"] is None and "every distribution" in est["drift_unavailable"]
    metrics = http.get("/metrics").data.decode()
    assert f'rldp_drift_p_value{{mechanism="{doc["id"]}"}}' not in metrics


def test_dashboard_shows_a_plain_banner_only_when_rejected(http, app):
    doc = adult_sex_race_polyopt(1.5)
    _publish(http, doc)
    assert login(http, READ_TOKEN).status_code in (302, 303)
    _upload(http, doc, public_distribution(doc), 2000, seed=4)
    page = http.get(f"/ui/mechanisms/{doc['id']}/estimate").data.decode()
    assert "no longer looks like P̂" not in page
    _upload(http, doc, skewed_population(public_distribution(doc)), 3000, seed=5, batch="skew")
    page = http.get(f"/ui/mechanisms/{doc['id']}/estimate").data.decode()
    assert "the reporting population no longer looks like P̂: the claim ε = 1.5 may not hold for it" in page
    assert "realised ε* ≈ " in page and "(95 % interval [" in page


def _gauge(metrics: str, name: str, mechanism: str) -> float | None:
    """The gauge's value, None when the mechanism has none."""
    line = next((x for x in metrics.splitlines() if x.startswith(f'{name}{{mechanism="{mechanism}"}}')), None)
    return None if line is None else float(line.split()[-1])


def test_with_windows_the_gauges_follow_the_current_window_once_it_holds_enough_reports(http, app):
    """A day of reports from P̂, then a drifted day: the gauges follow the window that is current by the
    server's clock, judge it once it holds DRIFT_MIN_REPORTS reports (300 drifted ones are not judged yet),
    then flag it; yesterday's estimate does not."""
    doc = {k: v for k, v in adult_sex_race_polyopt(1.5).items() if k != "id"}
    doc["collection"] = {"window": "P1D"}
    doc["id"] = content_id(doc)
    _publish(http, doc)
    day = Window.parse("P1D")
    today, yesterday = day.label_at(time.time()), day.label_at(time.time() - 86_400)
    p_hat = public_distribution(doc)
    _upload(http, doc, p_hat, 20_000, seed=6, batch="y", window=yesterday)
    assert _gauge(http.get("/metrics").data.decode(), "rldp_drift_p_value", doc["id"]) is None  # today: none yet
    _upload(http, doc, skewed_population(p_hat), 300, seed=7, batch="t", window=today)
    assert _gauge(http.get("/metrics").data.decode(), "rldp_drift_p_value", doc["id"]) == 1.0  # not judged yet
    _upload(http, doc, skewed_population(p_hat), DRIFT_MIN_REPORTS, seed=8, batch="t2", window=today)
    assert _gauge(http.get("/metrics").data.decode(), "rldp_drift_p_value", doc["id"]) < 0.001
    old = http.get(f"/v1/mechanisms/{doc['id']}/estimate?window={yesterday}", headers=READ).json["drift"]
    new = http.get(f"/v1/mechanisms/{doc['id']}/estimate?window={today}", headers=READ).json["drift"]
    assert not old["rejected"] and new["rejected"] and new["n"] == 300 + DRIFT_MIN_REPORTS


def test_a_label_ahead_of_the_clock_never_decides(http, app):
    """[issue 34, attack 1] Crafted reports labelled with the next window (accepted for clients' clock skew)
    do not move the gauges or the alarm: the watch judges the window current by the server's clock."""
    doc = {k: v for k, v in adult_sex_race_polyopt(1.5).items() if k != "id"}
    doc["collection"] = {"window": "P1D"}
    doc["id"] = content_id(doc)
    _publish(http, doc)
    day = Window.parse("P1D")
    today, tomorrow = day.label_at(time.time()), day.label_at(time.time() + 86_400)
    p_hat = public_distribution(doc)
    _upload(http, doc, p_hat, 3000, seed=6, batch="honest", window=today)
    q = report_matrix(doc)
    rare = int(np.argmin(q @ p_hat.ravel()))  # the output P̂ makes rarest: the forger's best choice
    forged = report_body(doc, [rare] * 2000, "forged")
    forged["window"] = tomorrow
    assert http.post("/v1/reports", json=forged).status_code == 201
    metrics = http.get("/metrics").data.decode()
    assert _gauge(metrics, "rldp_drift_p_value", doc["id"]) >= 0.05
    assert f'rldp_drift_detected_total{{mechanism="{doc["id"]}"}} 1.0' not in metrics


def test_an_estimate_over_every_window_says_its_drift_is_descriptive_only(http, app):
    """Over every window of a windowed mechanism an owner's memoised report repeats: the drift object says
    the test's guarantee is the per-window one, and does not present its p-value as the watch's."""
    doc = {k: v for k, v in adult_sex_race_polyopt(1.5).items() if k != "id"}
    doc["collection"] = {"window": "P1D"}
    doc["id"] = content_id(doc)
    _publish(http, doc)
    today = Window.parse("P1D").label_at(time.time())
    _upload(http, doc, public_distribution(doc), 2000, seed=3, batch="a", window=today)
    every = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json["drift"]
    assert every["scope"] == "all-windows" and "descriptive only" in every["statement"]
    one = http.get(f"/v1/mechanisms/{doc['id']}/estimate?window={today}", headers=READ).json["drift"]
    assert "scope" not in one and "descriptive only" not in one["statement"]
