"""A collection's estimate page on the dashboard (issues 38, 34): the estimate over every mechanism's reports drawn
as a mechanism's is (numeric histogram, CDF and quantiles too), the window covered, the collection's state (status,
pause, drift policy, contamination γ, the drift watch's verdict), links between the collections list, its mechanisms
and this page; refusals (no or too few reports, a bad window, an unknown collection) shown as a page, never a 5xx;
hostile names and labels escaped."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from rldp_live import (
    ADMIN,
    ADMIN_TOKEN,
    AGE_ALPHABET,
    AGE_P_HAT,
    READ_TOKEN,
    grr_age_document,
    in_process_app,
    login,
    wait_until,
)

from rldp.aggregator.design import DesignRequest, design_document
from rldp.aggregator.http.responses import EXTENSION
from rldp.shared.attributes import Attribute
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def _publish(http, doc: dict) -> str:
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    return str(doc["id"])


def _report(http, doc: dict, n: int, seed: int, batch: str) -> None:
    """``n`` reports of inputs drawn uniformly, privatised with the document's Q."""
    rng = np.random.default_rng(seed)
    q = np.asarray(doc["matrix"])
    x = rng.integers(0, q.shape[1], n)
    reports = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1).clip(max=q.shape[0] - 1)
    resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": batch, "reports": reports.tolist()})
    assert resp.status_code == 201, resp.json


def _collection(http, name: str, mechanism: str, window: str = "none", **policy) -> None:
    body = {"name": name, "policy": {"notion": "rldp", "epsilon": 2, **policy}, "mechanism": mechanism}
    body["window"] = window
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201


def _age_design(epsilon: float, alphabet: Alphabet = AGE_ALPHABET) -> dict:
    request = DesignRequest(method="grr", epsilon=epsilon, radius=0.01, window=None)
    return design_document(request, alphabet=alphabet, public_distribution=AGE_P_HAT)


def test_a_collection_estimate_page_draws_numeric_age_over_its_mechanisms(app) -> None:
    http = app.test_client()
    first, second = grr_age_document(), _age_design(1.5)
    m1, m2 = _publish(http, first), _publish(http, second)
    _collection(http, "ages", m1, contamination=0.01)
    _report(http, first, 1500, 1, "a")
    assert http.post("/v1/collections/ages/rotate", json={"mechanism": m2}, headers=ADMIN).status_code == 200
    _report(http, second, 1000, 2, "b")
    assert login(http, READ_TOKEN).status_code == 303
    resp = http.get("/ui/collections/ages/estimate")
    page = resp.get_data(as_text=True)
    assert resp.status_code == 200
    # The same sections as a mechanism's estimate: numeric charts, the note from the service, the table.
    assert page.count('class="chart numeric"') == 2
    assert "histogram of age with 95% intervals" in page and "CDF of age with 95% band" in page
    api = http.get("/v1/collections/ages/estimate", headers={"Authorization": f"Bearer {READ_TOKEN}"}).get_json()
    assert html.escape(api["numeric"]["age"]["note"], quote=False) in page  # the note as the API gives it
    rows = dict(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">([^<]+)</td>", page))
    for label in ("mean", "median", "p90", "p99", "mean | sex = Male", "median | sex = Female"):
        assert label in rows, label
    assert float(rows["mean"]) == pytest.approx(api["numeric"]["age"]["mean"]["estimate"], abs=5e-3)
    assert "Marginal of sex" in page and "Joint distribution P(S, U)" in page
    # The reports of both mechanisms, in one likelihood; each mechanism listed with its claim and links.
    assert api["n"] == 2500 and "2,500" in page and "from 2 mechanism(s)" in page
    for mid, n in ((m1, "1,500"), (m2, "1,000")):
        assert f'href="/ui/mechanisms/{mid}"' in page and f'href="/ui/mechanisms/{mid}/estimate"' in page
        assert f'<td class="num">{n}</td>' in page
    assert "<td>ε = 2<br>" in page and "<td>ε = 1.5<br>" in page and "Rényi ball of order 2, radius 0.01 nats" in page
    # The state: status, the drift policy and γ, the drift watch's verdict on the current mechanism.
    assert 'status status-active">active' in page and "is paused" not in page
    assert re.search(r"Contamination γ</span><span class=\"value\">0.01<", page)
    assert re.search(r"On drift</span><span class=\"value\">warn<", page)
    assert "Drift watch: " in page and "current mechanism's reports (every report)" in page
    # Links both ways: the collections list and the mechanism page lead here; downloads answer the estimate.
    assert 'href="/ui/collections#collection-ages"' in page
    assert 'href="/ui/collections/ages/estimate"' in http.get("/ui/collections").get_data(as_text=True)
    assert 'href="/ui/collections/ages/estimate"' in http.get(f"/ui/mechanisms/{m1}").get_data(as_text=True)
    csv = http.get("/ui/collections/ages/estimate.csv")
    assert csv.status_code == 200 and csv.mimetype == "text/csv" and "ages" in csv.headers["Content-Disposition"]
    assert http.get("/ui/collections/ages/estimate.json").get_json()["n"] == 2500


def test_a_windowed_collection_offers_its_windows_and_estimates_one(app) -> None:
    from rldp_live import make_document

    http = app.test_client()
    doc = make_document(window="P1D")
    _publish(http, doc)
    _collection(http, "daily", doc["id"], "P1D", epsilon=1)
    rng = np.random.default_rng(5)
    for batch, label in (("a", "2026-12-05"), ("b", "2026-12-06")):
        body = {"mechanism": doc["id"], "batch": batch * 32, "reports": rng.integers(0, 6, 300).tolist()}
        assert http.post("/v1/reports", json={**body, "window": label}).status_code == 201
    assert login(http, READ_TOKEN).status_code == 303
    page = http.get("/ui/collections/daily/estimate?window=2026-12-05").get_data(as_text=True)
    assert '<option value="2026-12-06" >2026-12-06 (300 reports)</option>' in page
    assert '<option value="2026-12-05" selected>2026-12-05 (300 reports)</option>' in page
    assert re.search(r"Window</span><span class=\"value\">2026-12-05<", page)
    assert "estimate.csv?window=2026-12-05" in page
    everything = http.get("/ui/collections/daily/estimate").get_data(as_text=True)
    assert re.search(r"Window</span><span class=\"value\">all<", everything) and "600" in everything
    # Its claim holds over every distribution: no F, so no drift watch, and the page says why.
    assert "Drift watch: none (" in everything


def test_refusals_are_pages_with_the_problem(app) -> None:
    http = app.test_client()
    first = grr_age_document()
    _publish(http, first)
    _collection(http, "empty", first["id"], drift="pause")
    assert login(http, READ_TOKEN).status_code == 303
    resp = http.get("/ui/collections/empty/estimate")
    page = resp.get_data(as_text=True)
    assert resp.status_code == 409 and "collection &#39;empty&#39; has no reports yet" in page
    assert 'id="problem"' in page and "Contamination γ" in page and "chart numeric" not in page  # the state stays
    _report(http, first, 40, 7, "a")
    resp = http.get("/ui/collections/empty/estimate")
    assert resp.status_code == 409 and "has 40 reports; this service serves an estimate from 100" in resp.get_data(
        as_text=True
    )
    resp = http.get("/ui/collections/empty/estimate?window=2026-12-05")
    assert resp.status_code == 422 and "this mechanism has no collection windows" in resp.get_data(as_text=True)
    resp = http.get("/ui/collections/empty/estimate?method=guess")
    assert resp.status_code == 422 and "method must be one of" in resp.get_data(as_text=True)
    resp = http.get("/ui/collections/nowhere/estimate")
    assert resp.status_code == 404 and "nowhere" in resp.get_data(as_text=True)
    assert "Traceback" not in resp.get_data(as_text=True)
    # Paused by its drift policy: the banner with the reason, and the estimate of what was stored.
    _report(http, first, 500, 8, "b")
    app.extensions[EXTENSION].pauses.pause("empty", first["id"], "the reporting population no longer looks like P̂")
    page = http.get("/ui/collections/empty/estimate").get_data(as_text=True)
    assert 'id="paused"' in page and "no longer looks like P̂" in page and "status-paused" in page
    assert page.count('class="chart numeric"') == 2


HOSTILE = "\"><script>alert(1)</script><b title='"


def test_hostile_names_and_labels_are_escaped(app) -> None:
    http = app.test_client()
    age = NumericSpec((17, 25, 35, 50, 90))
    alphabet = Alphabet(Attribute("s" + HOSTILE, (HOSTILE, "plain")), [Attribute.binned("age" + HOSTILE, age)])
    doc = _age_design(2.0, alphabet)
    mid = _publish(http, doc)
    resp = http.patch(f"/v1/mechanisms/{mid}", json={"label": "label" + HOSTILE}, headers=ADMIN)
    assert resp.status_code == 200, resp.json
    body = {"name": "hostile", "description": "about" + HOSTILE, "policy": {"notion": "rldp", "epsilon": 2}}
    assert (
        http.post("/v1/collections", json={**body, "window": "none", "mechanism": mid}, headers=ADMIN).status_code
        == 201
    )
    _report(http, doc, 800, 9, "a")
    app.extensions[EXTENSION].pauses.pause("hostile", mid, "reason" + HOSTILE)
    assert login(http, ADMIN_TOKEN).status_code == 303
    resp = http.get("/ui/collections/hostile/estimate")
    page = resp.get_data(as_text=True)
    assert resp.status_code == 200 and page.count('class="chart numeric"') == 2
    assert "<script>" not in page and "<b title=" not in page
    escaped = "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;b title=&#39;"
    for text in ("about", "label", "reason", "age", "s"):
        assert text + escaped in page, text
    assert f'id="numeric-age{escaped}"' in page  # an attribute value stays one attribute


def test_a_drifted_collection_shows_the_verdict_and_its_pause(app) -> None:
    """Every report from one cell, far from P̂: the watch rejects on the current mechanism, the ``pause`` policy
    pauses the collection, and the page says both, ε* with its interval (its upper end labelled as such)."""
    http = app.test_client()
    doc = grr_age_document()
    _publish(http, doc)
    _collection(http, "drifted", doc["id"], drift="pause")
    q = np.asarray(doc["matrix"])
    rng = np.random.default_rng(11)
    reports = (rng.random(3000)[:, None] > q.cumsum(axis=0)[:, 0][None, :]).sum(axis=1).clip(max=q.shape[0] - 1)
    body = {"mechanism": doc["id"], "batch": "d" * 32, "reports": reports.tolist()}
    assert http.post("/v1/reports", json=body).status_code == 201
    service = app.extensions[EXTENSION]
    # The collection watch checks in a background thread after the batch; the page shows the pause it sets.
    wait_until(lambda: service.pauses.get(doc["id"]) is not None, what="the drift policy's pause")
    assert login(http, READ_TOKEN).status_code == 303
    page = http.get("/ui/collections/drifted/estimate").get_data(as_text=True)
    drift = re.search(r'<div id="drift">(.*?)</div>', page, re.S)
    assert drift is not None and "Drift: the reporting population no longer looks like P̂" in drift.group(1)
    assert re.search(r"realised ε\* (≈ [\d.]+ \(95 % interval|not identified)", drift.group(1))
    assert 'id="paused"' in page and "status-paused" in page  # the policy acted on the verdict the page shows
    resp = http.post("/v1/reports", json={**body, "batch": "e" * 32})
    assert resp.status_code == 423
