"""/v1/designs: design and publish a mechanism from a public CSV, asynchronously (admin); list and poll jobs."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, request

from rldp.aggregator.services import JobRecord, job_list_limit

from .auth import authorize
from .bodies import body_kind, decode, read_body
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
def create_design() -> Response:
    service = current_service()
    authorize(service.config)
    kind = body_kind()
    job = service.submit_design(decode(read_body(service.config["MAX_BODY_BYTES"]), kind))
    url = f"/v1/designs/{job.id}"
    return respond({"job": job.id, "status": job.status, "status_url": url}, 202, {"Location": url})


@blueprint.get("/v1/designs")
def list_designs() -> Response:
    service = current_service()
    authorize(service.config)
    limit = job_list_limit(request.args.get("limit"))
    return respond({"jobs": [_job(job) for job in service.designs.recent(limit)], "limit": limit})


@blueprint.get("/v1/designs/<job_id>")
def get_design(job_id: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(_job(service.design_status(job_id)))
