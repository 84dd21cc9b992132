"""A collection's pilot phase through the service: a pilot private for every distribution, its reports,
POST /v1/collections/{name}/switch, the design over the pilot's confidence set and the rotation."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import population_reports, report_body
from rldp_live import ADMIN, finished_job, in_process_app, wait_until

from rldp.aggregator.design.orchestration.pilot import design_pilot
from rldp.shared.audit import audit_document
from rldp.shared.collection import Window
from rldp.shared.document import report_matrix
from rldp.shared.records import Alphabet

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "colour", "values": list("rgb")}]}
)
TRUTH = np.array([0.05, 0.15, 0.10, 0.30, 0.25, 0.15])
POLICY = {"notion": "rldp", "epsilon": 1.0}


@pytest.fixture(scope="module")
def pilot() -> dict:
    return design_pilot(ALPHABET, 1.0, planned_reports=100_000, time_budget=5.0).document


@pytest.fixture
def http(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app.test_client()


def _start(http, pilot: dict, name: str = "app-usage") -> None:
    assert http.post("/v1/mechanisms", json=pilot, headers=ADMIN).status_code in (200, 201)
    body = {"name": name, "policy": POLICY, "mechanism": pilot["id"]}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201


def _report(http, pilot: dict, n: int, seed: int, truth: np.ndarray = TRUTH) -> None:
    ys = population_reports(pilot, truth, n, seed)
    for start in range(0, n, 200_000):
        body = report_body(pilot, ys[start : start + 200_000])
        assert http.post("/v1/reports", json=body).status_code == 201


@pytest.mark.slow
def test_a_large_pilot_switches_the_collection_to_a_design_over_its_confidence_set(http, pilot):
    _start(http, pilot)
    refused = http.post("/v1/collections/app-usage/switch", json={"method": "polyopt"}, headers=ADMIN)
    assert refused.status_code == 422 and refused.json["reason"] == "rotation-refused"
    assert "has 0 reports" in refused.json["detail"]
    _report(http, pilot, 1_000_000, seed=5)
    resp = http.post("/v1/collections/app-usage/switch", json={"method": "polyopt", "time_budget": 5}, headers=ADMIN)
    assert resp.status_code == 202, resp.json
    job = finished_job(http, resp.json["status_url"], timeout=300)
    assert job["status"] == "done", job
    collection = http.get("/v1/collections/app-usage").json
    assert collection["current"] == job["mechanism"] and len(collection["mechanisms"]) == 2
    doc = http.get(f"/v1/mechanisms/{job['mechanism']}").json
    assert doc["provenance"]["source"] == "pilot" and doc["provenance"]["pilot_mechanism"] == pilot["id"]
    assert doc["provenance"]["n"] == 1_000_000 and audit_document(doc).passed
    # Both phases are estimated together.
    estimate = http.get("/v1/collections/app-usage/estimate", headers=ADMIN)
    assert estimate.status_code == 200, estimate.json
    # A second switch: the current mechanism is no pilot any more.
    again = http.post("/v1/collections/app-usage/switch", json={"method": "polyopt"}, headers=ADMIN)
    assert again.status_code == 422 and "not in a pilot phase" in again.json["detail"]


@pytest.mark.slow
def test_a_design_with_less_utility_keeps_the_pilot_and_the_job_says_why(http, pilot):
    _start(http, pilot, "small")
    _report(http, pilot, 3_000, seed=6)
    resp = http.post("/v1/collections/small/switch", json={"method": "grr", "min_reports": 2_000}, headers=ADMIN)
    assert resp.status_code == 202, resp.json
    job = finished_job(http, resp.json["status_url"], timeout=300)
    assert job["status"] == "failed" and job["error"].startswith("not switched: kept the pilot"), job
    assert http.get("/v1/collections/small").json["current"] == pilot["id"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"method": "polyopt", "beta": 0.5}, "beta"),
        ({"method": "simplex"}, "method"),
        ({"method": "grr", "min_reports": 1}, "min_reports"),
    ],
)
def test_bad_switch_requests_are_refused_naming_the_field(http, pilot, body, parameter):
    _start(http, pilot, "bad")
    resp = http.post("/v1/collections/bad/switch", json=body, headers=ADMIN)
    assert resp.status_code == 422 and resp.json.get("parameter") == parameter, resp.json


@pytest.mark.slow
def test_a_drifted_collection_with_the_redesign_policy_is_redesigned_over_its_live_reports(http):
    """Policy drift=redesign: once the drift watch rejects H0 for the current mechanism, the service designs
    over the confidence set of the live reports (as after a pilot) and rotates; clients follow."""
    from rldp.aggregator.design import design

    p_hat = np.array([[0.05, 0.15, 0.10], [0.30, 0.25, 0.15]])
    doc = design("grr", alphabet=ALPHABET, public_distribution=p_hat, epsilon=1.0, n=50_000)
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    policy = {**POLICY, "drift": "redesign"}
    assert (
        http.post(
            "/v1/collections", json={"name": "watched", "policy": policy, "mechanism": doc["id"]}, headers=ADMIN
        ).status_code
        == 201
    )
    drifted = np.array([0.60, 0.02, 0.02, 0.16, 0.10, 0.10])  # 60 % in one cell: far outside F
    _report(http, doc, 200_000, seed=9, truth=drifted)
    estimate = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=ADMIN).json
    assert estimate["drift"]["rejected"], estimate["drift"]
    # The collection watch may have seen the drift first, in the background: the job appears within moments.
    [job] = wait_until(
        lambda: [
            j
            for j in http.get("/v1/designs", headers=ADMIN).json["jobs"]
            if j["params"].get("kind") == "drift-redesign"
        ]
    )
    job = finished_job(http, f"/v1/designs/{job['job']}", timeout=300)
    assert job["status"] == "done", job
    collection = http.get("/v1/collections/watched").json
    assert collection["current"] == job["mechanism"] and len(collection["mechanisms"]) == 2
    new = http.get(f"/v1/mechanisms/{job['mechanism']}").json
    assert new["provenance"]["pilot_mechanism"] == doc["id"] and audit_document(new).passed


def test_an_unknown_drift_policy_is_refused(http, pilot):
    assert http.post("/v1/mechanisms", json=pilot, headers=ADMIN).status_code in (200, 201)
    body = {"name": "p", "policy": {**POLICY, "drift": "stop"}, "mechanism": pilot["id"]}
    resp = http.post("/v1/collections", json=body, headers=ADMIN)
    assert resp.status_code == 422 and "warn, pause, redesign" in resp.json["detail"]


def _post(http, doc: dict, ys) -> object:
    return http.post("/v1/reports", json=report_body(doc, list(ys)))


@pytest.mark.slow
def test_a_drifted_collection_with_the_pause_policy_refuses_reports_until_resumed(http):
    """Policy drift=pause: the watch notices the drift as reports arrive (nobody asks for an estimate), the
    current mechanism's batches are refused as collection-paused (423, kept by clients) until the operator
    resumes; after a rotation away from it they are refused for good (410 mechanism-withdrawn)."""
    from rldp.aggregator.design import design

    p_hat = np.array([[0.05, 0.15, 0.10], [0.30, 0.25, 0.15]])
    doc = design("grr", alphabet=ALPHABET, public_distribution=p_hat, epsilon=1.0, n=50_000)
    other = design("grr", alphabet=ALPHABET, public_distribution=p_hat, epsilon=0.9, n=50_000)
    for d in (doc, other):
        assert http.post("/v1/mechanisms", json=d, headers=ADMIN).status_code == 201
    body = {"name": "paused", "policy": {**POLICY, "drift": "pause"}, "mechanism": doc["id"]}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    _report(http, doc, 50_000, seed=3)  # from P̂'s neighbourhood: no pause
    time.sleep(1.5)
    assert _post(http, doc, [0, 1]).status_code == 201
    assert http.get("/v1/collections/paused").json["paused"] is None
    drifted = np.array([0.60, 0.02, 0.02, 0.16, 0.10, 0.10])
    _report(http, doc, 200_000, seed=9, truth=drifted)

    def refused():
        resp = _post(http, doc, [0, 1])
        return resp if resp.status_code != 201 else None

    resp = wait_until(refused)
    assert resp.status_code == 423 and resp.json["reason"] == "collection-paused", resp.json
    assert resp.headers["Retry-After"] == "300" and "no longer looks like P̂" in resp.json["detail"]
    paused = http.get("/v1/collections/paused").json["paused"]
    assert paused is not None and "may not hold" in paused["reason"]
    # A rotation away from the paused mechanism withdraws it: what was drawn under it is never taken.
    assert http.post("/v1/collections/paused/rotate", json={"mechanism": other["id"]}, headers=ADMIN).status_code == 200
    gone = _post(http, doc, [0])
    assert gone.status_code == 410 and gone.json["reason"] == "mechanism-withdrawn", gone.json
    assert _post(http, other, [0]).status_code == 201
    # Resuming (admin only) lifts the pause: the batches clients kept are taken when they send them again.
    assert http.post("/v1/collections/paused/resume").status_code == 401
    resumed = http.post("/v1/collections/paused/resume", headers=ADMIN)
    assert resumed.status_code == 200 and resumed.json["paused"] is None
    kept = report_body(doc, [0, 1, 2])
    assert http.post("/v1/reports", json=kept).status_code == 201
    # The operator's resume stands: the same drift does not pause it again at once.
    _report(http, doc, 20_000, seed=11, truth=drifted)
    time.sleep(1.5)
    assert _post(http, doc, [0]).status_code == 201


@pytest.mark.parametrize(
    ("switch", "says"),
    [
        ({"method": "polyopt"}, "needs 'after'"),
        ({"after": 1, "method": "polyopt"}, "policy.switch.after"),
        ({"after": 5000, "method": "polyopt", "beta": 0.5}, "beta"),
        ({"after": 5000, "method": "simplex"}, "method"),
        ({"after": 5000, "method": "polyopt", "colour": "red"}, "unknown switch field 'colour'"),
        ({"after": 500, "method": "polyopt", "min_reports": 900}, "below its min_reports"),
    ],
)
def test_an_automatic_switch_is_checked_when_the_collection_is_created(http, pilot, switch, says):
    assert http.post("/v1/mechanisms", json=pilot, headers=ADMIN).status_code in (200, 201)
    body = {"name": "auto", "policy": {**POLICY, "switch": switch}, "mechanism": pilot["id"]}
    resp = http.post("/v1/collections", json=body, headers=ADMIN)
    assert resp.status_code == 422 and says in resp.json["detail"], resp.json
    assert http.get("/v1/collections/auto").status_code == 404


@pytest.mark.slow
def test_a_pilot_with_an_automatic_switch_switches_once_it_has_its_reports(http, pilot):
    switch = {"after": 1_000_000, "method": "polyopt", "time_budget": 5}
    body = {"name": "auto", "policy": {**POLICY, "switch": switch}, "mechanism": pilot["id"]}
    assert http.post("/v1/mechanisms", json=pilot, headers=ADMIN).status_code in (200, 201)
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    _report(http, pilot, 999_000, seed=5)
    time.sleep(1.5)
    jobs = http.get("/v1/designs", headers=ADMIN).json["jobs"]
    assert not [j for j in jobs if j["params"].get("kind") == "pilot-switch"]  # not yet: 999,000 < 1,000,000
    _report(http, pilot, 1_000, seed=6)  # the batch that reaches n₁ starts the switch
    [job] = [
        j for j in http.get("/v1/designs", headers=ADMIN).json["jobs"] if j["params"].get("kind") == "pilot-switch"
    ]
    job = finished_job(http, f"/v1/designs/{job['job']}", timeout=300)
    assert job["status"] == "done", job
    collection = http.get("/v1/collections/auto").json
    assert collection["current"] == job["mechanism"] and len(collection["mechanisms"]) == 2
    doc = http.get(f"/v1/mechanisms/{job['mechanism']}").json
    assert doc["provenance"]["pilot_mechanism"] == pilot["id"] and doc["provenance"]["n"] == 1_000_000
    _report(http, pilot, 1_000, seed=7)  # later pilot batches start nothing more
    jobs = http.get("/v1/designs", headers=ADMIN).json["jobs"]
    assert len([j for j in jobs if j["params"].get("kind") == "pilot-switch"]) == 1


def test_a_pilot_designed_document_is_checked_against_the_pilots_stored_counts(tmp_path, pilot):
    """The publish check recomputes P̂ and F from the provenance's counts and the stored pilot's matrix, and
    refuses counts the service never received, or a pilot it does not have (as rldp audit --pilot does)."""
    from rldp.aggregator.design import DesignRequest, PilotData, design_from
    from rldp.shared.document import to_msgpack

    def derived(counts):
        return design_from(PilotData(pilot, counts, 0.05), DesignRequest(method="srr", epsilon=1.0), ALPHABET)

    with in_process_app(tmp_path / "a") as app:
        http = app.test_client()
        _start(http, pilot)
        _report(http, pilot, 20_000, seed=21)
        stored = http.get("/v1/mechanisms/" + pilot["id"] + "/estimate", headers=ADMIN)
        assert stored.status_code == 200
        service = app.extensions["rldp"]
        counts = service.storage.counts(pilot["id"], report_matrix(pilot).shape[0]).tolist()
        honest = derived(counts)
        assert http.post("/v1/mechanisms", json=honest, headers=ADMIN).status_code == 201
        inflated = derived([2 * c for c in counts])  # a narrower F from reports that never came
        resp = http.post("/v1/mechanisms", json=inflated, headers=ADMIN)
        assert resp.status_code == 422 and resp.json["reason"] == "public-data-mismatch", resp.json
        assert "counts it never received" in resp.json["detail"]
    with in_process_app(tmp_path / "b") as app:  # a service that never had the pilot
        resp = app.test_client().post(
            "/v1/mechanisms", data=to_msgpack(honest), headers={**ADMIN, "Content-Type": "application/msgpack"}
        )
        assert resp.status_code == 422 and "not published here" in resp.json["detail"], resp.json


def _rank_deficient(http, notion: str, name: str) -> dict:
    """Publish a mechanism whose matrix has rank < |X| (two GRR outputs merged: 5 outputs for 6 inputs,
    still private by post-processing) claiming ``notion`` over a small F, and a collection of it that
    redesigns on a drift; return the document."""
    from rldp.shared.document import build_document

    p_hat = np.array([[0.05, 0.15, 0.10], [0.30, 0.25, 0.15]])
    k = ALPHABET.size
    e = np.exp(1.0)
    grr = np.full((k, k), 1.0 / (e + k - 1)) + np.eye(k) * (e - 1) / (e + k - 1)
    merged = np.vstack([grr[:-2], grr[-2:].sum(axis=0)])
    assert np.linalg.matrix_rank(merged) < k
    doc = build_document(
        method="grr",
        matrix=merged,
        alphabet=ALPHABET,
        public_distribution=p_hat,
        privacy={"notion": notion, "epsilon": 1.0, "uncertainty": {"order": 2, "radius": 0.01}},
        extra={"collection": {"window": "P1D"}},
    )
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    policy = {"notion": notion, "epsilon": 1.0, "drift": "redesign"}
    body = {"name": name, "policy": policy, "mechanism": doc["id"]}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    return doc


def _drift_and_its_job(http, doc: dict) -> dict:
    drifted = np.array([0.60, 0.02, 0.02, 0.16, 0.10, 0.10])
    ys = population_reports(doc, drifted, 20_000, 9)
    body = report_body(doc, ys)
    body["window"] = Window.parse("P1D").label_at(time.time())
    assert http.post("/v1/reports", json=body).status_code == 201
    [job] = wait_until(
        lambda: [
            j
            for j in http.get("/v1/designs", headers=ADMIN).json["jobs"]
            if j["params"].get("kind") == "drift-redesign"
        ]
    )
    return finished_job(http, f"/v1/designs/{job['job']}", timeout=300)


@pytest.mark.slow
def test_a_drifted_mechanism_of_rank_below_x_is_redesigned_back_to_a_pilot(http):
    """[issue 34, point 3] drift=redesign where the current mechanism's reports cannot identify P (rank < |X|):
    the redesign rotates the collection back to a pilot private for every distribution (a claim no drift
    can void), certified like any design; the drifted mechanism's reports are refused for good."""
    doc = _rank_deficient(http, "rldp", "rankless")
    job = _drift_and_its_job(http, doc)
    assert job["status"] == "done", job
    current = http.get("/v1/collections/rankless").json["current"]
    assert current == job["mechanism"] != doc["id"]
    pilot = http.get(f"/v1/mechanisms/{current}").json
    assert pilot["privacy"]["uncertainty"]["radius"] is None and audit_document(pilot).passed
    assert pilot["collection"]["window"] == "P1D"
    late = report_body(doc, [0, 1, 2])
    late["window"] = Window.parse("P1D").label_at(time.time())
    assert http.post("/v1/reports", json=late).status_code == 410


@pytest.mark.slow
def test_a_redesign_that_cannot_be_certified_pauses_the_collection_and_says_why(http, caplog):
    """[issue 34, point 3] The same under notion ldp, for which no pilot is designed: the drift pauses the
    collection at once, the redesign job fails, the pause stays and says the redesign failed (the 423
    problem), the failure is counted, and "is redesigned" is never logged."""
    import logging

    caplog.set_level(logging.WARNING, logger="rldp.aggregator")
    doc = _rank_deficient(http, "ldp", "unredesignable")
    job = _drift_and_its_job(http, doc)
    assert job["status"] == "failed" and "rank" in job["error"], job

    def refused_saying_the_redesign_failed():
        body = report_body(doc, [0, 1, 2])
        body["window"] = Window.parse("P1D").label_at(time.time())
        resp = http.post("/v1/reports", json=body)
        return resp.status_code == 423 and "redesign failed" in resp.json["detail"] and resp.json

    problem = wait_until(refused_saying_the_redesign_failed)
    assert problem["reason"] == "collection-paused"
    assert http.get("/v1/collections/unredesignable").json["current"] == doc["id"]
    assert "rldp_redesign_failures_total 1.0" in http.get("/metrics").data.decode()
    assert not any("is redesigned" in r.getMessage() for r in caplog.records)
