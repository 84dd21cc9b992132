"""/v1/designs: design and publish a mechanism from a public CSV, asynchronously (admin); list and poll jobs."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, request

from rldp.aggregator.services import JOB_LIST_DEFAULT, JOB_LIST_MAX, JobRecord, job_list_limit

from .auth import authorize
from .bodies import body_kind, decode, read_body
from .operations import LOCATION, json_answer, operation, problem
from .responses import current_service, iso, respond

__all__ = ["blueprint"]

blueprint = Blueprint("designs", __name__)


def _job(job: JobRecord) -> dict[str, Any]:
    """A job as the API shows it (the DesignStatus schema): elapsed counts to now until it finishes."""
    end = job.finished if job.finished is not None else time.time()
    out: dict[str, Any] = {
        "job": job.id,
        "status": job.status,
        "elapsed": round(end - job.created, 3),
        "created": iso(job.created),
        "params": job.params,
    }
    if job.status == "done":
        out["mechanism"] = job.mechanism
        out["mechanism_url"] = f"/v1/mechanisms/{job.mechanism}"
    if job.status == "failed":
        out["error"] = job.error
    return out


@blueprint.post("/v1/designs")
@operation(
    "createDesign",
    "Design and publish a mechanism from a public CSV (admin; asynchronous)",
    auth="admin",
    body="DesignRequest",
    answers={
        202: json_answer("DesignAccepted", "job queued", LOCATION),
        422: problem("missing-field / wrong-type / invalid-parameter"),
    },
)
def create_design() -> Response:
    service = current_service()
    authorize(service.config)
    kind = body_kind()
    job = service.submit_design(decode(read_body(service.config["MAX_BODY_BYTES"]), kind))
    url = f"/v1/designs/{job.id}"
    return respond({"job": job.id, "status": job.status, "status_url": url}, 202, {"Location": url})


@blueprint.get("/v1/designs")
@operation(
    "listDesigns",
    "List design jobs (admin), newest first",
    auth="admin",
    parameters=(
        {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": JOB_LIST_MAX},
            "description": f"at most this many jobs, the most recent (default {JOB_LIST_DEFAULT})",
        },
    ),
    answers={
        200: json_answer("DesignList", "the most recent jobs, newest first"),
        422: problem("invalid-parameter"),
    },
)
def list_designs() -> Response:
    service = current_service()
    authorize(service.config)
    limit = job_list_limit(request.args.get("limit"))
    return respond({"jobs": [_job(job) for job in service.designs.recent(limit)], "limit": limit})


@blueprint.get("/v1/designs/<job_id>")
@operation(
    "getDesign",
    "Status of a design job (admin)",
    auth="admin",
    answers={200: json_answer("DesignStatus", "job status"), 404: problem("unknown-job")},
)
def get_design(job_id: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(_job(service.design_status(job_id)))
