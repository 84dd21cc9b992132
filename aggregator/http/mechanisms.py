"""/v1/mechanisms: publish (admin), list, download, label and retire (admin), estimate and windows (admin or read)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from rldp.aggregator.services import LABEL_MAX, MechanismRecord, MissingField, WrongType
from rldp.aggregator.services.dashboard import estimate_view

from .auth import authorize
from .bodies import JSON, MSGPACK, MSGPACK_TYPES, body_kind, decode, read_body
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

__all__ = ["blueprint"]

blueprint = Blueprint("mechanisms", __name__)

#: A document never changes under its id: clients and proxies may cache it for good.
IMMUTABLE = "public, max-age=31536000, immutable"
_UNKNOWN = problem("unknown-mechanism")


def _summary(r: MechanismRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "label": r.label,
        "method": r.method,
        "epsilon": r.epsilon,
        "epsilon_audited": r.epsilon_audited,
        "notion": r.notion,
        # The claim in its notion's terms: epsilon is not the whole of it for distp (δ) and alip (ε_l, ε_u).
        "claim": current_service().catalog.claim(r.id),
        "status": r.status,
        "sensitive": r.sensitive,
        "released": list(r.released),
        "outputs": r.outputs,
        "size": r.size,
        "published": iso(r.published),
        "retired": iso(r.retired),
    }


@blueprint.post("/v1/mechanisms")
@operation(
    "publishMechanism",
    "Publish a mechanism document (admin)",
    description="The server recomputes the id and the privacy audit and refuses a document "
    "whose id does not match (id-mismatch) or whose audit fails (audit-failed). A document whose "
    "provenance contradicts its own P̂ and n, or (when the service is configured with public data, "
    "RLDP_PUBLIC_DATA) whose P̂, n, radius or counts hash differ from that data, is refused "
    "(public-data-mismatch; the detail names what differs). "
    "Idempotent: 201 the first time, 200 when the id is already published.",
    auth="admin",
    parameters=(
        {
            "name": "label",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "minLength": 1, "maxLength": LABEL_MAX},
            "description": "the mechanism's label (not part of the document or its id; set even when "
            "the document was published before)",
        },
    ),
    body="MechanismDocument",
    answers={
        200: json_answer("PublishResult", "already published (unchanged)"),
        201: json_answer("PublishResult", "published", LOCATION),
        422: problem("invalid-document / id-mismatch / audit-failed / public-data-mismatch / invalid-parameter"),
    },
)
def publish() -> Response:
    service = current_service()
    authorize(service.config)
    kind = body_kind()
    # The label travels beside the document (a query parameter): the body is the document, hashed as sent.
    label = request.args.get("label")
    record, created = service.publish_bytes(read_body(service.config["MAX_BODY_BYTES"]), kind, label)
    payload = {
        "id": record.id,
        "label": record.label,
        "method": record.method,
        "epsilon": record.epsilon,
        "epsilon_audited": record.epsilon_audited,
        "claim": service.catalog.claim(record.id),
        "status": record.status,
    }
    return respond(payload, 201 if created else 200, {"Location": f"/v1/mechanisms/{record.id}"})


@blueprint.get("/v1/mechanisms")
@operation(
    "listMechanisms",
    "List published mechanisms",
    answers={200: json_answer("MechanismList", "every mechanism, oldest first")},
)
def list_mechanisms() -> Response:
    return respond({"mechanisms": [_summary(r) for r in current_service().catalog.list()]})


@blueprint.get("/v1/mechanisms/<mechanism_id>")
@operation(
    "getMechanism",
    "Download a mechanism document",
    description="JSON by default, msgpack with `Accept: application/msgpack`. Immutable: "
    '`ETag: "<id>"`, cacheable for a year; 304 on a matching If-None-Match.',
    parameters=({"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}},),
    answers={
        200: {
            "description": "the document",
            "headers": {"ETag": {"schema": {"type": "string"}}, "Cache-Control": {"schema": {"type": "string"}}},
            "content": {
                JSON: {"schema": {"$ref": "#/components/schemas/MechanismDocument"}},
                MSGPACK: {"schema": {"$ref": "#/components/schemas/MechanismDocument"}},
            },
        },
        304: {"description": "not modified (If-None-Match matched)"},
        404: _UNKNOWN,
    },
)
def get_mechanism(mechanism_id: str) -> Response:
    catalog = current_service().catalog
    best = request.accept_mimetypes.best_match([JSON, MSGPACK, "application/x-msgpack"], default=JSON)
    kind = "msgpack" if best in MSGPACK_TYPES else "json"
    headers = {"ETag": f'"{mechanism_id}"', "Cache-Control": IMMUTABLE, "Vary": "Accept"}
    if request.if_none_match and request.if_none_match.contains(mechanism_id) and catalog.is_published(mechanism_id):
        return Response(status=304, headers=headers)
    data = catalog.document(mechanism_id, kind)
    return Response(data, status=200, content_type=MSGPACK if kind == "msgpack" else JSON, headers=headers)


@blueprint.patch("/v1/mechanisms/<mechanism_id>")
@operation(
    "updateMechanism",
    "Change a mechanism's label (admin)",
    description="The label is the service's metadata: the document, its id and what clients verify "
    "stay the same. null removes it.",
    auth="admin",
    body="MechanismUpdate",
    answers={
        200: json_answer("MechanismSummary", "the mechanism with its new label"),
        404: _UNKNOWN,
        422: problem("missing-field / wrong-type / invalid-parameter"),
    },
)
def update(mechanism_id: str) -> Response:
    """Change a mechanism's metadata (admin): ``{"label": text | null}``; the document and its id never change."""
    service = current_service()
    authorize(service.config)
    data = decode(read_body(service.config["MAX_BODY_BYTES"]), body_kind())
    if not isinstance(data, dict):
        raise WrongType('the body must be an object such as {"label": "Sign-ups by region"}', field="")
    if "label" not in data:
        raise MissingField('the body needs "label": a text, or null to remove the label', field="label")
    unknown = sorted(str(k) for k in data if k != "label")
    if unknown:
        raise WrongType(f"unknown field(s) {', '.join(unknown)}: only label can change", field=unknown[0])
    return respond(_summary(service.catalog.set_label(mechanism_id, data["label"])))


@blueprint.post("/v1/mechanisms/<mechanism_id>/retire")
@operation(
    "retireMechanism",
    "Retire a mechanism (admin)",
    description="Reports for a retired mechanism are refused (mechanism-retired); its document "
    "stays downloadable. Idempotent.",
    auth="admin",
    answers={200: json_answer("Retired", "retired"), 404: _UNKNOWN},
)
def retire(mechanism_id: str) -> Response:
    service = current_service()
    authorize(service.config)
    record = service.catalog.retire(mechanism_id)
    return respond({"id": record.id, "status": record.status, "retired": iso(record.retired)})


@blueprint.get("/v1/mechanisms/<mechanism_id>/estimate")
@operation(
    "estimate",
    "Estimate P(S, U) from the reports (admin or read token)",
    description="Served from MIN_REPORTS reports on (RLDP_MIN_REPORTS, default 100): below, "
    "409 too-few-reports with `reports` and `min_reports` (no-reports when there is none).",
    auth="read",
    parameters=(
        *ESTIMATE_PARAMETERS,
        {
            "name": "window",
            "in": "query",
            "schema": {"type": "string"},
            "description": "mechanisms with windows only: estimate from this window's reports alone "
            "(its label, e.g. 2026-11-24); without it, from every report",
        },
    ),
    answers={200: estimate_answer("Estimate"), 404: _UNKNOWN, **ESTIMATE_PROBLEMS},
)
def estimate(mechanism_id: str) -> Response:
    service = current_service()
    authorize(service.config, read=True)
    if wants_csv():  # Accept: text/csv: the dashboard's estimate.csv (with the document's P̂ as `public`)
        est = estimate_view(service, mechanism_id, request.args)
        return csv_answer(est, f"rldp-estimate-{est['mechanism'][:12]}")
    return respond(service.estimate(mechanism_id, request.args), headers={"Vary": "Accept"})


@blueprint.get("/v1/mechanisms/<mechanism_id>/windows")
@operation(
    "listWindows",
    "The collection windows with reports (admin or read token)",
    auth="read",
    answers={
        200: json_answer("Windows", "the window length and the windows with reports, most recent first"),
        404: _UNKNOWN,
    },
)
def windows(mechanism_id: str) -> Response:
    service = current_service()
    authorize(service.config, read=True)
    return respond(service.windows(mechanism_id))
