"""/v1/collections: create, rotate, retire (admin); list and look up (public: apps follow them); estimate
(admin or read token). The operations are :class:`rldp.aggregator.services.Collections`'."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, request

from rldp.aggregator.services import CollectionRecord
from rldp.aggregator.services.dashboard import collection_estimate_view

from .auth import authorize
from .bodies import body_kind, decode, read_body
from .estimate_csv import csv_answer, wants_csv
from .responses import current_service, iso, respond

__all__ = ["blueprint", "collection_json"]

blueprint = Blueprint("collections", __name__)


def collection_json(record: CollectionRecord, tokens: frozenset[str] | None = None) -> dict[str, Any]:
    """A collection as the API shows it (the Collection schema): its current mechanism and the history, oldest
    first; ``paused``: why its current mechanism takes no reports (its drift policy paused it), else null;
    ``upload_token_required``: whether its report uploads must carry its upload token (never the token itself;
    ``tokens``: the collections that require one, when the caller already read them)."""
    service = current_service()
    pause = service.pauses.get(record.current)
    if tokens is None:
        tokens = service.upload_credentials.collections()
    return {
        "name": record.name,
        "description": record.description,
        "policy": record.policy,
        "window": record.window,
        "status": record.status,
        "created": iso(record.created),
        "retired": iso(record.retired),
        "current": record.current,
        "paused": None if pause is None else {"since": iso(pause.since), "reason": pause.reason},
        "upload_token_required": record.name in tokens,
        "mechanisms": [
            {"mechanism": e.mechanism, "since": iso(e.since), "until": iso(e.until), "current": e.until is None}
            for e in record.mechanisms
        ],
    }


def _body() -> Any:
    service = current_service()
    return decode(read_body(service.config["MAX_BODY_BYTES"]), body_kind())


@blueprint.post("/v1/collections")
def create() -> Response:
    service = current_service()
    authorize(service.config)
    record, created = service.create_collection(_body())
    location = {"Location": f"/v1/collections/{quote(record.name, safe='')}"}
    return respond(collection_json(record), 201 if created else 200, location)


@blueprint.get("/v1/collections")
def list_collections() -> Response:
    service = current_service()
    tokens = service.upload_credentials.collections()
    return respond({"collections": [collection_json(r, tokens) for r in service.collections.list()]})


@blueprint.get("/v1/collections/<name>")
def get_collection(name: str) -> Response:
    return respond(collection_json(current_service().collections.get(name)))


@blueprint.post("/v1/collections/<name>/rotate")
def rotate(name: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.collections.rotate(name, _body())))


@blueprint.post("/v1/collections/<name>/switch")
def switch(name: str) -> Response:
    """End the pilot: a design job over the pilot's confidence set (202; the job rotates the collection)."""
    service = current_service()
    authorize(service.config)
    job = service.switch_collection(name, _body())
    url = f"/v1/designs/{job.id}"
    return respond({"job": job.id, "status": job.status, "status_url": url}, 202, {"Location": url})


@blueprint.post("/v1/collections/<name>/resume")
def resume(name: str) -> Response:
    """Lift the pause the drift policy set: the current mechanism takes reports again (idempotent)."""
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.resume_collection(name)))


@blueprint.post("/v1/collections/<name>/upload-token")
def rotate_upload_token(name: str) -> Response:
    """Create or rotate the collection's upload token: returned once (only its hash is stored)."""
    service = current_service()
    authorize(service.config)
    token, previous = service.rotate_upload_token(name)
    return respond({"token": token, "previous_valid": previous}, headers={"Cache-Control": "no-store"})


@blueprint.delete("/v1/collections/<name>/upload-token")
def revoke_upload_token(name: str) -> Response:
    """Revoke the collection's upload token: its uploads need none again (idempotent)."""
    service = current_service()
    authorize(service.config)
    return respond({"collection": name, "revoked": service.revoke_upload_token(name)})


@blueprint.post("/v1/collections/<name>/retire")
def retire(name: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.collections.retire(name)))


@blueprint.get("/v1/collections/<name>/estimate")
def estimate(name: str) -> Response:
    service = current_service()
    authorize(service.config, read=True)
    if wants_csv():  # Accept: text/csv: the rows of a mechanism's estimate.csv
        est = collection_estimate_view(service, name, request.args)
        return csv_answer(est, f"rldp-estimate-{est['collection']}")
    return respond(service.estimate_collection(name, request.args), headers={"Vary": "Accept"})
