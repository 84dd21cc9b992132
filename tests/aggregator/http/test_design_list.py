"""Listing design jobs: ``Storage.list_jobs`` (SQLite and PostgreSQL) and ``GET /v1/designs`` (admin;
newest first, bounded by ``?limit=``), documented in the OpenAPI description."""

from __future__ import annotations

import time

import pytest
from rldp_live import ADMIN, READ, in_process_app

from rldp.aggregator.http.openapi import build_openapi
from rldp.aggregator.services import JOB_LIST_DEFAULT, JOB_LIST_MAX
from rldp.aggregator.storage import open_storage
from rldp.shared.errors import ValidationError

PARAMS = {"method": "srr", "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "n": 100}


def make_jobs(storage, count: int) -> list[str]:
    """``count`` queued jobs created one after another (distinct creation times); their ids, oldest first."""
    ids = []
    for i in range(count):
        job_id = f"{i:032x}"[::-1]  # ids not in creation order: the listing must sort by time, not id
        storage.create_job(job_id, {**PARAMS, "epsilon": float(i + 1)})
        ids.append(job_id)
        time.sleep(0.002)
    return ids


# --------------------------------------------------------------------------- storage


@pytest.fixture
def store(backend, databases):
    s = open_storage(databases.url(backend))
    yield s
    s.close()


def test_list_jobs_newest_first_and_bounded(store):
    assert store.list_jobs(10) == []
    ids = make_jobs(store, 5)
    store.update_job(ids[1], status="done", mechanism="a" * 64, finished=time.time())
    listed = store.list_jobs(10)
    assert [j.id for j in listed] == ids[::-1]
    assert [j.created for j in listed] == sorted((j.created for j in listed), reverse=True)
    assert listed[3] == store.get_job(ids[1]) and listed[3].status == "done" and listed[3].mechanism == "a" * 64
    assert listed[0].params == {**PARAMS, "epsilon": 5.0}
    assert [j.id for j in store.list_jobs(2)] == [ids[4], ids[3]]


@pytest.mark.parametrize("limit", [0, -1, 1.5, "3", True, None])
def test_list_jobs_refuses_a_limit_that_is_not_a_positive_integer(store, limit):
    with pytest.raises(ValidationError, match="limit"):
        store.list_jobs(limit)


# --------------------------------------------------------------------------- the endpoint


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, JOB_STALE_SECONDS=60.0) as app:
        yield app


def problem(resp, status: int, reason: str) -> dict:
    assert resp.status_code == status, (resp.status_code, resp.data[:300])
    assert resp.mimetype == "application/problem+json"
    body = resp.json
    assert body["type"] == f"https://rldp.dev/problems/{reason}" and body["status"] == status
    return body


def test_the_listing_needs_the_admin_token(http):
    problem(http.get("/v1/designs"), 401, "unauthorized")
    problem(http.get("/v1/designs", headers=READ), 401, "unauthorized")  # a read token reads estimates only
    assert http.get("/v1/designs", headers=ADMIN).json == {"jobs": [], "limit": JOB_LIST_DEFAULT}


def test_jobs_are_listed_newest_first_as_their_status_shows_them(http, app):
    storage = app.extensions["rldp"].storage
    ids = make_jobs(storage, 4)
    storage.update_job(ids[0], status="done", mechanism="b" * 64, finished=time.time())
    storage.update_job(ids[1], status="failed", error="the designed mechanism was refused", finished=time.time())
    body = http.get("/v1/designs", headers=ADMIN).json
    assert [j["job"] for j in body["jobs"]] == ids[::-1] and body["limit"] == JOB_LIST_DEFAULT
    for job in body["jobs"]:  # each entry is what GET /v1/designs/{job} answers (but for the elapsed time)
        single = http.get(f"/v1/designs/{job['job']}", headers=ADMIN).json
        assert {k: v for k, v in job.items() if k != "elapsed"} == {k: v for k, v in single.items() if k != "elapsed"}
    by_id = {j["job"]: j for j in body["jobs"]}
    assert by_id[ids[0]]["mechanism_url"] == f"/v1/mechanisms/{'b' * 64}"
    assert by_id[ids[1]]["error"] == "the designed mechanism was refused"
    assert by_id[ids[3]]["status"] == "queued" and by_id[ids[3]]["params"] == {**PARAMS, "epsilon": 4.0}
    limited = http.get("/v1/designs?limit=2", headers=ADMIN).json
    assert [j["job"] for j in limited["jobs"]] == [ids[3], ids[2]] and limited["limit"] == 2


def test_a_job_whose_server_died_is_listed_as_failed(http, app):
    storage = app.extensions["rldp"].storage
    (job_id,) = make_jobs(storage, 1)
    storage.update_job(job_id, status="running", heartbeat=time.time() - 3600)  # no heartbeat for an hour
    (job,) = http.get("/v1/designs", headers=ADMIN).json["jobs"]
    assert job["status"] == "failed" and "no heartbeat" in job["error"]
    assert storage.get_job(job_id).status == "failed"  # recorded, as GET /v1/designs/{job} does


@pytest.mark.parametrize("limit", ["0", "-1", "1.5", "abc", "", str(JOB_LIST_MAX + 1), "9" * 5000, "٣"])
def test_a_bad_limit_is_an_invalid_parameter(http, limit):
    body = problem(http.get("/v1/designs", query_string={"limit": limit}, headers=ADMIN), 422, "invalid-parameter")
    assert f"from 1 to {JOB_LIST_MAX}" in body["detail"]


def test_the_largest_limit_is_accepted(http, app):
    make_jobs(app.extensions["rldp"].storage, 3)
    body = http.get(f"/v1/designs?limit={JOB_LIST_MAX}", headers=ADMIN).json
    assert len(body["jobs"]) == 3 and body["limit"] == JOB_LIST_MAX


def test_the_listing_is_in_the_openapi_description():
    spec = build_openapi()
    op = spec["paths"]["/v1/designs"]["get"]
    assert op["security"] == [{"bearerAuth": []}]
    (limit,) = op["parameters"]
    assert limit["name"] == "limit" and limit["schema"] == {"type": "integer", "minimum": 1, "maximum": JOB_LIST_MAX}
    assert set(op["responses"]) >= {"200", "401", "422"}
    listing = spec["components"]["schemas"]["DesignList"]
    assert listing["properties"]["jobs"]["items"] == {"$ref": "#/components/schemas/DesignStatus"}
