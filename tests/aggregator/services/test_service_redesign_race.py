"""Two redesigns of one drift (issue 34; the race fixed in 964c25d), driven deterministically.

Two server processes on one store each detect the same drift of a collection under ``drift: redesign``, so
two design jobs start from the drifted mechanism A. The jobs are captured instead of run in threads, and
each is then run to its end on the test's thread, in the order the test chooses, with the design itself
replaced by a canned answer: no sleeps, no clock (each process reads the pauses from the store on every
look), no background watch.

- The first job to end rotates the collection to B; the second ends without rotating (its compare-and-set
  from A is refused): nothing may be paused — B is not the mechanism that drifted — so B takes reports and
  no redesign failure is counted. Before the fix, the second job paused B, saying "the redesign failed".
- The other order: a job that ends without rotating while the collection is still on A keeps A paused,
  saying the redesign failed; the other job then rotates to B, which takes reports.
"""

from __future__ import annotations

import itertools
import uuid

import numpy as np
import pytest
from helpers import population_reports, report_body
from rldp_live import ADMIN, in_process_app

from rldp.aggregator.design import design
from rldp.shared.document import to_msgpack
from rldp.shared.records import Alphabet

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "colour", "values": list("rgb")}]}
)
P_HAT = np.array([[0.05, 0.15, 0.10], [0.30, 0.25, 0.15]])
DRIFTED = np.array([0.60, 0.02, 0.02, 0.16, 0.10, 0.10])  # 60 % in one cell: far outside F
NAME = "watched"


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    """A (the drifted mechanism), B and C (what two redesigns would publish): GRR designs claiming RLDP
    at ε = 1 over different public distributions, so three distinct ids; without windows, so that the
    watch judges every report and no clock decides which window counts."""
    shifted = np.array([[0.10, 0.10, 0.10], [0.30, 0.20, 0.20]])
    other = np.array([[0.15, 0.15, 0.10], [0.20, 0.20, 0.20]])
    return {
        key: design("grr", alphabet=ALPHABET, public_distribution=p, epsilon=1.0, n=50_000, window=None)
        for key, p in (("A", P_HAT), ("B", shifted), ("C", other))
    }


class Jobs:
    """A service's design jobs, recorded as the real runner records them but not started: :meth:`end` runs
    one to its end on the caller's thread with a canned design answer."""

    def __init__(self, service, monkeypatch) -> None:
        self.runner = service.designs
        self.started: list[tuple] = []
        self._monkeypatch = monkeypatch
        monkeypatch.setattr(self.runner, "start", self._start)
        monkeypatch.setattr(service.watch, "observe", lambda mechanism_id, accepted: None)  # no background watch
        ticks = itertools.count(step=service.pauses.TTL)  # every look at the pauses reads the store: no clock
        monkeypatch.setattr(service.pauses, "_clock", lambda: float(next(ticks)))

    def _start(self, payload, summary, then=None, failed=None):
        job = self.runner.storage.create_job(uuid.uuid4().hex, summary)
        self.started.append((job, payload, then, failed))
        return job

    def end(self, index: int, answer: tuple[str, object]) -> None:
        job, payload, then, failed = self.started[index]
        self._monkeypatch.setattr(self.runner, "_design", lambda job_id, payload: answer)
        self.runner._run(job.id, payload, then, failed)


@pytest.fixture(params=["sqlite", "postgresql"])
def processes(request, databases, tmp_path, documents, monkeypatch):
    """Two server processes (two services) on one store; A published and reported to with a drifted
    population, then made the current mechanism of a collection whose drift policy is ``redesign``."""
    url = databases.url(request.param)
    with (
        in_process_app(tmp_path / "a", DATABASE_URL=url) as one,
        in_process_app(tmp_path / "b", DATABASE_URL=url) as two,
    ):
        jobs = [Jobs(app.extensions["rldp"], monkeypatch) for app in (one, two)]
        http = one.test_client()
        doc = documents["A"]
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        body = report_body(doc, population_reports(doc, DRIFTED, 20_000, 9))
        assert http.post("/v1/reports", json=body).status_code == 201
        policy = {"notion": "rldp", "epsilon": 1.0, "drift": "redesign"}
        created = http.post(
            "/v1/collections",
            json={"name": NAME, "policy": policy, "mechanism": doc["id"], "window": "none"},
            headers=ADMIN,
        )
        assert created.status_code == 201, created.json
        yield (one, two), jobs


def _detect_in_both(apps, jobs, a: dict) -> None:
    """Each process detects the drift of A (an estimate runs the watch) and starts its redesign job."""
    for app, started in zip(apps, jobs, strict=True):
        estimate = app.test_client().get(f"/v1/mechanisms/{a['id']}/estimate", headers=ADMIN).json
        assert estimate["drift"]["rejected"], estimate["drift"]
        [(job, _, _, _)] = started.started
        assert job.params["kind"] == "drift-redesign" and job.params["pilot"] == a["id"]


def _upload(app, doc: dict):
    return app.test_client().post("/v1/reports", json=report_body(doc, [0, 1, 2]))


def _failures(app) -> str:
    metrics = app.test_client().get("/metrics").data.decode()
    return next(line for line in metrics.splitlines() if line.startswith("rldp_redesign_failures_total"))


def test_a_second_redesign_that_ends_after_the_rotation_pauses_nothing(processes, documents):
    (one, two), jobs = processes
    a, b, c = documents["A"], documents["B"], documents["C"]
    _detect_in_both((one, two), jobs, a)
    assert _upload(one, a).status_code == 423  # paused while its redesigns run
    jobs[0].end(0, ("ok", to_msgpack(b)))  # the first process's job publishes B and rotates to it
    collection = one.test_client().get(f"/v1/collections/{NAME}").json
    assert collection["current"] == b["id"] and collection["paused"] is None
    jobs[1].end(0, ("ok", to_msgpack(c)))  # the second publishes C, but the collection moved on from A
    job = two.test_client().get(f"/v1/designs/{jobs[1].started[0][0].id}", headers=ADMIN).json
    assert job["status"] == "failed" and c["id"] in job["error"], job
    for app in (one, two):
        collection = app.test_client().get(f"/v1/collections/{NAME}").json
        assert collection["current"] == b["id"] and collection["paused"] is None, collection
        resp = _upload(app, b)
        assert resp.status_code == 201, resp.json  # before the fix: 423 "the redesign failed"
        assert _upload(app, a).status_code == 410  # A left the collection for good
    assert _failures(two).endswith(" 0.0")


def test_a_redesign_that_fails_before_the_rotation_keeps_only_the_drifted_mechanism_paused(processes, documents):
    (one, two), jobs = processes
    a, b = documents["A"], documents["B"]
    _detect_in_both((one, two), jobs, a)
    jobs[1].end(0, ("kept", "the design would not beat the current mechanism"))  # nothing published
    resp = _upload(two, a)
    assert resp.status_code == 423 and "redesign failed" in resp.json["detail"], resp.json
    assert one.test_client().get(f"/v1/collections/{NAME}").json["current"] == a["id"]
    assert _failures(two).endswith(" 1.0")
    jobs[0].end(0, ("ok", to_msgpack(b)))
    for app in (one, two):
        collection = app.test_client().get(f"/v1/collections/{NAME}").json
        assert collection["current"] == b["id"] and collection["paused"] is None, collection
        assert _upload(app, b).status_code == 201
