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
from .operations import (
    ESTIMATE_PARAMETERS,
    ESTIMATE_PROBLEMS,
    LOCATION,
    estimate_answer,
    json_answer,
    operation,
    problem,
)
from .responses import current_service, iso, respond

__all__ = ["blueprint", "collection_json"]

blueprint = Blueprint("collections", __name__)

_UNKNOWN = problem("unknown-collection")
#: Why a mechanism cannot join a collection (created with it, or rotated to it).
_JOINS = "unknown-mechanism (404), mechanism-retired (409), claim-policy-violated / rotation-refused (422)"


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
@operation(
    "createCollection",
    "Create a collection (admin)",
    description="A stable name an app subscribes to: a claim policy, a window and a first mechanism, "
    f"which must be active, in no collection and satisfy the policy ({_JOINS}). 201 the first "
    "time, 200 when the same collection exists, 409 collection-exists when one with other settings does.",
    auth="admin",
    body="CollectionCreate",
    answers={
        200: json_answer("Collection", "already exists (unchanged)"),
        201: json_answer("Collection", "created", LOCATION),
        404: problem("unknown-mechanism"),
        409: problem("collection-exists / mechanism-retired"),
        422: problem("missing-field / wrong-type / invalid-parameter / claim-policy-violated / rotation-refused"),
    },
)
def create() -> Response:
    service = current_service()
    authorize(service.config)
    record, created = service.create_collection(_body())
    location = {"Location": f"/v1/collections/{quote(record.name, safe='')}"}
    return respond(collection_json(record), 201 if created else 200, location)


@blueprint.get("/v1/collections")
@operation(
    "listCollections",
    "List collections",
    answers={200: json_answer("CollectionList", "every collection, oldest first")},
)
def list_collections() -> Response:
    service = current_service()
    tokens = service.upload_credentials.collections()
    return respond({"collections": [collection_json(r, tokens) for r in service.collections.list()]})


@blueprint.get("/v1/collections/<name>")
@operation(
    "getCollection",
    "A collection: its current mechanism and the history",
    answers={200: json_answer("Collection", "the collection"), 404: _UNKNOWN},
)
def get_collection(name: str) -> Response:
    return respond(collection_json(current_service().collections.get(name)))


@blueprint.post("/v1/collections/<name>/rotate")
@operation(
    "rotateCollection",
    "Make another published mechanism the collection's current one (admin)",
    description="The mechanism must be active, over the same X and window, new to every collection and "
    f"satisfy the claim policy ({_JOINS}). Clients following the collection draw afresh under it.",
    auth="admin",
    body="CollectionRotate",
    answers={
        200: json_answer("Collection", "rotated"),
        404: problem("unknown-collection / unknown-mechanism"),
        409: problem("collection-retired / collection-conflict / mechanism-retired"),
        422: problem("missing-field / wrong-type / claim-policy-violated / rotation-refused"),
    },
)
def rotate(name: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.collections.rotate(name, _body())))


@blueprint.post("/v1/collections/<name>/switch")
@operation(
    "switchCollection",
    "End the collection's pilot: design over the pilot's confidence set, then rotate (admin)",
    description="The current mechanism must be a pilot (RLDP over every distribution) with at least "
    "`min_reports` reports. The design job publishes the new mechanism and rotates the collection to it "
    "only if it has more utility at P̂ than the pilot; otherwise the job fails saying why.",
    auth="admin",
    body="CollectionSwitch",
    answers={
        202: json_answer("DesignAccepted", "the design job"),
        404: _UNKNOWN,
        409: problem("collection-retired"),
        422: problem("invalid-parameter / rotation-refused"),
    },
)
def switch(name: str) -> Response:
    """End the pilot: a design job over the pilot's confidence set (202; the job rotates the collection)."""
    service = current_service()
    authorize(service.config)
    job = service.switch_collection(name, _body())
    url = f"/v1/designs/{job.id}"
    return respond({"job": job.id, "status": job.status, "status_url": url}, 202, {"Location": url})


@blueprint.post("/v1/collections/<name>/resume")
@operation(
    "resumeCollection",
    "Lift the pause the drift policy set: the current mechanism takes reports again (admin)",
    description="Idempotent. Batches that clients kept while the collection was paused are taken "
    "when they send them again.",
    auth="admin",
    answers={200: json_answer("Collection", "resumed"), 404: _UNKNOWN},
)
def resume(name: str) -> Response:
    """Lift the pause the drift policy set: the current mechanism takes reports again (idempotent)."""
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.resume_collection(name)))


@blueprint.post("/v1/collections/<name>/upload-token")
@operation(
    "rotateUploadToken",
    "Create or rotate the collection's upload token (admin); returned once",
    description="From now on the collection's report uploads (every mechanism of it) must carry "
    "'Authorization: Bearer <token>' with this token or the previous one (still accepted until the next "
    "rotation or a revoke, so installs can pick up the new one); others are refused as "
    "upload-credential (401). Every install of the app holds the same token: it links a report to 'an "
    "install of this app', nothing finer. Never hand out a token per install.",
    auth="admin",
    answers={200: json_answer("UploadToken", "the new token (shown once)"), 404: _UNKNOWN},
)
def rotate_upload_token(name: str) -> Response:
    """Create or rotate the collection's upload token: returned once (only its hash is stored)."""
    service = current_service()
    authorize(service.config)
    token, previous = service.rotate_upload_token(name)
    return respond({"token": token, "previous_valid": previous}, headers={"Cache-Control": "no-store"})


@blueprint.delete("/v1/collections/<name>/upload-token")
@operation(
    "revokeUploadToken",
    "Revoke the collection's upload token: its uploads need none again (admin; idempotent)",
    auth="admin",
    answers={200: json_answer("UploadTokenRevoked", "revoked"), 404: _UNKNOWN},
)
def revoke_upload_token(name: str) -> Response:
    """Revoke the collection's upload token: its uploads need none again (idempotent)."""
    service = current_service()
    authorize(service.config)
    return respond({"collection": name, "revoked": service.revoke_upload_token(name)})


@blueprint.post("/v1/collections/<name>/retire")
@operation(
    "retireCollection",
    "Retire a collection (admin; idempotent)",
    auth="admin",
    answers={200: json_answer("Collection", "retired"), 404: _UNKNOWN},
)
def retire(name: str) -> Response:
    service = current_service()
    authorize(service.config)
    return respond(collection_json(service.collections.retire(name)))


@blueprint.get("/v1/collections/<name>/estimate")
@operation(
    "estimateCollection",
    "Estimate P(S, U) from every mechanism's reports in one likelihood (admin or read token)",
    auth="read",
    parameters=(
        *ESTIMATE_PARAMETERS,
        {
            "name": "window",
            "in": "query",
            "schema": {"type": "string"},
            "description": "collections with a window only: estimate from this window's reports alone, of every "
            "mechanism (its label, e.g. 2026-11-24); without it, from every report",
        },
    ),
    answers={200: estimate_answer("CollectionEstimate"), 404: _UNKNOWN, **ESTIMATE_PROBLEMS},
)
def estimate(name: str) -> Response:
    service = current_service()
    authorize(service.config, read=True)
    if wants_csv():  # Accept: text/csv: the rows of a mechanism's estimate.csv
        est = collection_estimate_view(service, name, request.args)
        return csv_answer(est, f"rldp-estimate-{est['collection']}")
    return respond(service.estimate_collection(name, request.args), headers={"Vary": "Accept"})
