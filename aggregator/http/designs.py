"""/v1/designs: design and publish a mechanism from a public CSV, asynchronously (admin)."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response

from .auth import authorize
from .bodies import body_kind, decode, read_body
from .responses import current_service, iso, respond

__all__ = ["blueprint"]

blueprint = Blueprint("designs", __name__)


@blueprint.post("/v1/designs")
def create_design() -> Response:
    service = current_service()
    authorize(service.config)
    kind = body_kind()
    job = service.submit_design(decode(read_body(service.config["MAX_BODY_BYTES"]), kind))
    url = f"/v1/designs/{job.id}"
    return respond({"job": job.id, "status": job.status, "status_url": url}, 202, {"Location": url})


@blueprint.get("/v1/designs/<job_id>")
def get_design(job_id: str) -> Response:
    service = current_service()
    authorize(service.config)
    job = service.design_status(job_id)
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
    return respond(out)
