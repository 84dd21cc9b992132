"""The OpenAPI 3.1 description of the aggregator's HTTP API (served at /openapi.json).

Kept next to the service and checked against it by the schemathesis fuzz test
(tests/integration/test_fuzz.py), which sends requests generated from this document and checks that every
answer is documented here (status, media type, schema) and never a 5xx.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from rldp import __version__
from rldp.aggregator.services import (
    ESTIMATE_INTERVALS,
    ESTIMATE_METHODS,
    ESTIMATE_PRIORS,
    JOB_LIST_DEFAULT,
    JOB_LIST_MAX,
    LABEL_MAX,
)

from .collection_openapi import COLLECTION_SCHEMAS, collection_paths
from .openapi_tags import add_tags_and_examples
from .problems import MEDIA_TYPE
from .schemas import SCHEMAS

__all__ = ["build_openapi"]


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


def _json(schema: str, description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }
    if headers:
        out["headers"] = headers
    return out


def _estimate_answer(schema: str) -> dict[str, Any]:
    """An estimate's 200: JSON, or with ``Accept: text/csv`` the dashboard's estimate.csv rows."""
    out = _json(schema, "the estimate with 95 % intervals (CSV with Accept: text/csv; JSON otherwise)")
    out["content"]["text/csv"] = {
        "schema": {"type": "string"},
        "example": "table,attribute,category,estimate,ci95_low,ci95_high,identified,public\n"
        "joint,S × U,Female | red,0.12,0.09,0.15,True,0.1\n",
    }
    return out


def _body(schema: str, msgpack: bool = True) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    content: dict[str, Any] = {"application/json": {"schema": ref}}
    if msgpack:
        content["application/msgpack"] = {"schema": ref}
    return {"required": True, "content": content}


_ADMIN: list[dict[str, list[str]]] = [{"bearerAuth": []}]
_MECH_ID = {
    "name": "mechanism_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "mechanism id (64 lowercase hex characters)",
}
_LOCATION = {"Location": {"schema": {"type": "string"}}}
_BODY_ERRORS = {
    "400": _problem("invalid-json / invalid-msgpack / bad-request (also: an incomplete body)"),
    "408": _problem("request-timeout (the body did not arrive within BODY_TIMEOUT)"),
    "413": _problem("body-too-large"),
    "415": _problem("unsupported-media-type"),
}
_COMMON = {
    "405": _problem("method-not-allowed"),
    "500": _problem("internal-error (never for client input)"),
    "503": _problem("database-unavailable, store-full or service-unavailable (retry later; nothing stored)"),
}


def _responses(*, body: bool = False, **codes: Any) -> dict[str, Any]:
    """The responses by status (``_200=…``), then the request body's own refusals (``body``), then
    those every endpoint can give."""
    out = {k.lstrip("_"): v for k, v in codes.items()}
    if body:
        out.update(_BODY_ERRORS)
    for k, v in _COMMON.items():
        out.setdefault(k, v)
    return out


def _paths() -> dict[str, Any]:
    unauthorized = _problem("unauthorized: missing or invalid bearer token")
    return {
        "/": {
            "get": {
                "summary": "Service index",
                "operationId": "index",
                "responses": _responses(_200=_json("Index", "name and version of the service")),
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness",
                "operationId": "healthz",
                "responses": _responses(_200=_json("Status", "the process is alive")),
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness (the database answers and can take writes; 503 while the server stops)",
                "operationId": "readyz",
                "responses": _responses(_200=_json("Status", "ready")),
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "operationId": "metrics",
                "responses": _responses(
                    _200={
                        "description": "Prometheus text format",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                ),
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "operationId": "openapi",
                "responses": _responses(
                    _200={"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}
                ),
            }
        },
        "/v1/mechanisms": {
            "get": {
                "summary": "List published mechanisms",
                "operationId": "listMechanisms",
                "responses": _responses(_200=_json("MechanismList", "every mechanism, oldest first")),
            },
            "post": {
                "summary": "Publish a mechanism document (admin)",
                "operationId": "publishMechanism",
                "description": "The server recomputes the id and the privacy audit and refuses a document "
                "whose id does not match (id-mismatch) or whose audit fails (audit-failed). A document whose "
                "provenance contradicts its own P̂ and n, or (when the service is configured with public data, "
                "RLDP_PUBLIC_DATA) whose P̂, n, radius or counts hash differ from that data, is refused "
                "(public-data-mismatch; the detail names what differs). "
                "Idempotent: 201 the first time, 200 when the id is already published.",
                "security": _ADMIN,
                "parameters": [
                    {
                        "name": "label",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "minLength": 1, "maxLength": LABEL_MAX},
                        "description": "the mechanism's label (not part of the document or its id; set even when "
                        "the document was published before)",
                    }
                ],
                "requestBody": _body("MechanismDocument"),
                "responses": _responses(
                    _200=_json("PublishResult", "already published (unchanged)"),
                    _201=_json("PublishResult", "published", _LOCATION),
                    _401=unauthorized,
                    _422=_problem(
                        "invalid-document / id-mismatch / audit-failed / public-data-mismatch / invalid-parameter"
                    ),
                    body=True,
                ),
            },
        },
        "/v1/mechanisms/{mechanism_id}": {
            "get": {
                "summary": "Download a mechanism document",
                "operationId": "getMechanism",
                "description": "JSON by default, msgpack with `Accept: application/msgpack`. Immutable: "
                '`ETag: "<id>"`, cacheable for a year; 304 on a matching If-None-Match.',
                "parameters": [
                    _MECH_ID,
                    {"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}},
                ],
                "responses": _responses(
                    _200={
                        "description": "the document",
                        "headers": {
                            "ETag": {"schema": {"type": "string"}},
                            "Cache-Control": {"schema": {"type": "string"}},
                        },
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/MechanismDocument"}},
                            "application/msgpack": {"schema": {"$ref": "#/components/schemas/MechanismDocument"}},
                        },
                    },
                    _304={"description": "not modified (If-None-Match matched)"},
                    _404=_problem("unknown-mechanism"),
                ),
            },
            "patch": {
                "summary": "Change a mechanism's label (admin)",
                "operationId": "updateMechanism",
                "description": "The label is the service's metadata: the document, its id and what clients verify "
                "stay the same. null removes it.",
                "security": _ADMIN,
                "parameters": [_MECH_ID],
                "requestBody": _body("MechanismUpdate"),
                "responses": _responses(
                    _200=_json("MechanismSummary", "the mechanism with its new label"),
                    _401=unauthorized,
                    _404=_problem("unknown-mechanism"),
                    _422=_problem("missing-field / wrong-type / invalid-parameter"),
                    body=True,
                ),
            },
        },
        "/v1/mechanisms/{mechanism_id}/retire": {
            "post": {
                "summary": "Retire a mechanism (admin)",
                "operationId": "retireMechanism",
                "description": "Reports for a retired mechanism are refused (mechanism-retired); its document "
                "stays downloadable. Idempotent.",
                "security": _ADMIN,
                "parameters": [_MECH_ID],
                "responses": _responses(
                    _200=_json("Retired", "retired"), _401=unauthorized, _404=_problem("unknown-mechanism")
                ),
            },
        },
        "/v1/mechanisms/{mechanism_id}/estimate": {
            "get": {
                "summary": "Estimate P(S, U) from the reports (admin or read token)",
                "operationId": "estimate",
                "security": [{"bearerAuth": []}],
                "parameters": [
                    _MECH_ID,
                    {"name": "method", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_METHODS)}},
                    {"name": "interval", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_INTERVALS)}},
                    {
                        "name": "prior",
                        "in": "query",
                        "schema": {"type": "string", "enum": list(ESTIMATE_PRIORS)},
                        "description": "where EM starts (and what prior_weight regularises towards)",
                    },
                    {"name": "prior_weight", "in": "query", "schema": {"type": "number", "minimum": 0}},
                    {
                        "name": "window",
                        "in": "query",
                        "schema": {"type": "string"},
                        "description": "mechanisms with windows only: estimate from this window's reports alone "
                        "(its label, e.g. 2026-11-24); without it, from every report",
                    },
                ],
                "description": "Served from MIN_REPORTS reports on (RLDP_MIN_REPORTS, default 100): below, "
                "409 too-few-reports with `reports` and `min_reports` (no-reports when there is none).",
                "responses": _responses(
                    _200=_estimate_answer("Estimate"),
                    _401=unauthorized,
                    _404=_problem("unknown-mechanism"),
                    _409=_problem("no-reports / too-few-reports"),
                    _422=_problem("invalid-parameter"),
                ),
            },
        },
        "/v1/mechanisms/{mechanism_id}/windows": {
            "get": {
                "summary": "The collection windows with reports (admin or read token)",
                "operationId": "listWindows",
                "security": [{"bearerAuth": []}],
                "parameters": [_MECH_ID],
                "responses": _responses(
                    _200=_json("Windows", "the window length and the windows with reports, most recent first"),
                    _401=unauthorized,
                    _404=_problem("unknown-mechanism"),
                ),
            },
        },
        "/v1/reports": {
            "post": {
                "summary": "Upload a batch of privatised reports",
                "operationId": "submitReports",
                "description": "Idempotent by (mechanism, batch): a retried identical batch is stored once and "
                "answered 200 with duplicate=true. A 2xx means the batch is committed "
                "(durable). Anything invalid refuses the whole batch; nothing is stored. A batch of a mechanism "
                "that collects by window carries its window's label and is counted in that window; a retry under "
                "another window is a batch-conflict. Uploads are anonymous unless the mechanism's collection requires "
                "an upload token (POST /v1/collections/{name}/upload-token): then 'Authorization: Bearer <token>'.",
                "requestBody": _body("ReportBatch"),
                "responses": _responses(
                    _200=_json("BatchReceipt", "duplicate of a stored batch (stored once)"),
                    _201=_json("BatchReceipt", "stored"),
                    _401=_problem(
                        "upload-credential: the mechanism's collection requires its upload token "
                        "(Authorization: Bearer), which the app gives its installs"
                    ),
                    _404=_problem("unknown-mechanism"),
                    _409=_problem("batch-conflict / mechanism-retired"),
                    _410=_problem("mechanism-withdrawn: paused by its collection, which has moved on"),
                    _422=_problem(
                        "missing-field / wrong-type / report-out-of-range / empty-batch / window-required / "
                        "unexpected-window / invalid-window / future-window"
                    ),
                    _423=_problem("collection-paused: keep the batch and send it again later (Retry-After)"),
                    body=True,
                ),
            },
        },
        "/v1/designs": {
            "get": {
                "summary": "List design jobs (admin), newest first",
                "operationId": "listDesigns",
                "security": _ADMIN,
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": JOB_LIST_MAX},
                        "description": f"at most this many jobs, the most recent (default {JOB_LIST_DEFAULT})",
                    }
                ],
                "responses": _responses(
                    _200=_json("DesignList", "the most recent jobs, newest first"),
                    _401=unauthorized,
                    _422=_problem("invalid-parameter"),
                ),
            },
            "post": {
                "summary": "Design and publish a mechanism from a public CSV (admin; asynchronous)",
                "operationId": "createDesign",
                "security": _ADMIN,
                "requestBody": _body("DesignRequest"),
                "responses": _responses(
                    _202=_json("DesignAccepted", "job queued", _LOCATION),
                    _401=unauthorized,
                    _422=_problem("missing-field / wrong-type / invalid-parameter"),
                    body=True,
                ),
            },
        },
        "/v1/designs/{job_id}": {
            "get": {
                "summary": "Status of a design job (admin)",
                "operationId": "getDesign",
                "security": _ADMIN,
                "parameters": [{"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": _responses(
                    _200=_json("DesignStatus", "job status"), _401=unauthorized, _404=_problem("unknown-job")
                ),
            },
        },
        **collection_paths(_responses, _json, _body, _problem, _ADMIN),
    }


def build_openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh dict each call): every operation tagged with its resource, every
    problem type with an example (:mod:`.openapi_tags`)."""
    paths = _paths()
    paths["/v1/collections/{name}/estimate"]["get"]["responses"]["200"] = _estimate_answer("CollectionEstimate")
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "rldp aggregator",
            "version": __version__,
            "description": "Publish robust-LDP mechanisms, collect privatised reports, estimate distributions. "
            "Errors are RFC 9457 problem+json documents with a stable `type` per reason.",
        },
        "paths": paths,
        "components": {
            "schemas": deepcopy({**SCHEMAS, **COLLECTION_SCHEMAS}),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "admin token (or a read token for estimates)",
                }
            },
        },
    }
    return add_tags_and_examples(document)
