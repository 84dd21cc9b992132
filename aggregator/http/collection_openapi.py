"""The collections' part of the OpenAPI document: their paths and body schemas (merged by :mod:`.openapi`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rldp.aggregator.services import (
    COLLECTION_NAME,
    DRIFT_POLICIES,
    ESTIMATE_INTERVALS,
    ESTIMATE_METHODS,
    ESTIMATE_PRIORS,
)

from .schemas import HEX64

__all__ = ["COLLECTION_SCHEMAS", "collection_paths"]

_NAME = f"^{COLLECTION_NAME.pattern}$"
_TIME = {"type": ["string", "null"], "format": "date-time"}

#: The schemas of the collections' bodies (``components.schemas``).
COLLECTION_SCHEMAS: dict[str, Any] = {
    "ClaimPolicy": {
        "type": "object",
        "description": "The largest claim a collection's mechanisms may make: the notion and its parameters "
        "(epsilon; distp: epsilon and delta; alip: epsilon_lower and epsilon_upper).",
        "required": ["notion"],
        "properties": {
            "notion": {"type": "string"},
            "epsilon": {"type": "number"},
            "delta": {"type": "number"},
            "epsilon_lower": {"type": "number"},
            "epsilon_upper": {"type": "number"},
            "drift": {
                "type": "string",
                "enum": list(DRIFT_POLICIES),
                "description": "what a detected drift does (default warn)",
            },
            "contamination": {
                "type": "number",
                "minimum": 0,
                "exclusiveMaximum": 0.5,
                "description": "the share of a window's reports that may be forged without the drift watch "
                "acting on them, nor a pilot's or a redesign's confidence set leaving the honest population "
                "(default 0.001)",
            },
            "switch": {
                "type": "object",
                "description": "end the pilot by itself: a switch body (see CollectionSwitch) plus 'after', the "
                "number of pilot reports after which the switch starts",
                "required": ["after"],
                "properties": {"after": {"type": "integer", "minimum": 2}},
            },
        },
    },
    "CollectionCreate": {
        "type": "object",
        "required": ["name", "policy", "mechanism"],
        "properties": {
            "name": {"type": "string", "pattern": _NAME},
            "description": {"type": "string", "maxLength": 1000},
            "policy": {"$ref": "#/components/schemas/ClaimPolicy"},
            "window": {
                "type": ["string", "null"],
                "description": "must be the mechanism's window (default: it, and "
                "the mechanism must have one); 'none' (or null) for a mechanism without windows",
            },
            "mechanism": {"type": "string", "pattern": HEX64, "description": "the first (current) mechanism"},
        },
    },
    "CollectionRotate": {
        "type": "object",
        "required": ["mechanism"],
        "properties": {"mechanism": {"type": "string", "pattern": HEX64}},
    },
    "CollectionSwitch": {
        "type": "object",
        "required": ["method"],
        "properties": {
            "method": {"type": "string", "description": "the design method for the next mechanism, e.g. polyopt"},
            "epsilon": {"type": "number", "exclusiveMinimum": 0, "description": "default: the claim policy's"},
            "beta": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 0.05,
                "description": "1 − the confidence of the pilot's set F (default 0.05; at most MAX_BETA)",
            },
            "min_reports": {"type": "integer", "minimum": 2, "description": "the fewest pilot reports (default 1000)"},
            "time_budget": {"type": "number", "exclusiveMinimum": 0},
            "solver": {"type": "string", "enum": ["auto", "exact", "cg"]},
        },
    },
    "UploadToken": {
        "type": "object",
        "required": ["token", "previous_valid"],
        "properties": {
            "token": {
                "type": "string",
                "description": "the new upload token, shown this once (the service keeps its SHA-256 only): the "
                "app's backend hands it to every install, which sends it as 'Authorization: Bearer <token>' on "
                "report uploads",
            },
            "previous_valid": {
                "type": "boolean",
                "description": "whether the previous token is still accepted (until the next rotation or a revoke)",
            },
        },
    },
    "UploadTokenRevoked": {
        "type": "object",
        "required": ["collection", "revoked"],
        "properties": {
            "collection": {"type": "string"},
            "revoked": {"type": "boolean", "description": "false: the collection had no upload token"},
        },
    },
    "Collection": {
        "type": "object",
        "required": ["name", "policy", "status", "current", "mechanisms"],
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "policy": {"$ref": "#/components/schemas/ClaimPolicy"},
            "window": {"type": ["string", "null"]},
            "status": {"type": "string", "enum": ["active", "retired"]},
            "created": _TIME,
            "retired": _TIME,
            "current": {"type": "string", "pattern": HEX64, "description": "the id of the current mechanism"},
            "paused": {
                "type": ["object", "null"],
                "description": "set while the drift policy 'pause' has stopped the current mechanism's reports",
                "properties": {"since": _TIME, "reason": {"type": "string"}},
            },
            "upload_token_required": {
                "type": "boolean",
                "description": "whether report uploads for its mechanisms must carry the collection's upload token "
                "('Authorization: Bearer <token>'; POST /v1/collections/{name}/upload-token). The token itself is "
                "never shown here",
            },
            "mechanisms": {
                "type": "array",
                "description": "every mechanism, oldest first; exactly one is current",
                "items": {
                    "type": "object",
                    "required": ["mechanism", "since", "current"],
                    "properties": {
                        "mechanism": {"type": "string", "pattern": HEX64},
                        "since": _TIME,
                        "until": _TIME,
                        "current": {"type": "boolean"},
                    },
                },
            },
        },
    },
    "CollectionList": {
        "type": "object",
        "required": ["collections"],
        "properties": {"collections": {"type": "array", "items": {"$ref": "#/components/schemas/Collection"}}},
    },
    "CollectionEstimate": {
        "type": "object",
        "description": "Estimate of P_X from the reports of every mechanism of the collection in one likelihood "
        "(the Estimate's fields without mechanism), plus each mechanism's reports.",
        "required": ["collection", "n", "joint", "ci95", "method", "identifiable", "mechanisms"],
        "properties": {
            "collection": {"type": "string"},
            "n": {"type": "integer"},
            "joint": {"type": "array", "items": {"type": "array", "items": {"type": ["number", "null"]}}},
            "ci95": {"type": "object"},
            "method": {"type": "string", "enum": ["em", "inverse"]},
            "identifiable": {"type": "boolean"},
            "window": {"type": ["string", "null"]},
            "mechanisms": {"type": "array", "items": {"type": "object"}},
        },
        "additionalProperties": True,
    },
}


def collection_paths(
    responses: Callable[..., dict[str, Any]],
    json_answer: Callable[..., dict[str, Any]],
    body: Callable[..., dict[str, Any]],
    problem: Callable[[str], dict[str, Any]],
    admin: list[dict[str, list[str]]],
) -> dict[str, Any]:
    """The /v1/collections paths, built with :mod:`.openapi`'s helpers (passed in: no import cycle)."""
    unauthorized = problem("unauthorized: missing or invalid bearer token")
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}, "description": "collection"}
    location = {"Location": {"schema": {"type": "string"}}}
    joins = "unknown-mechanism (404), mechanism-retired (409), claim-policy-violated / rotation-refused (422)"
    return {
        "/v1/collections": {
            "get": {
                "summary": "List collections",
                "operationId": "listCollections",
                "responses": responses(_200=json_answer("CollectionList", "every collection, oldest first")),
            },
            "post": {
                "summary": "Create a collection (admin)",
                "operationId": "createCollection",
                "description": "A stable name an app subscribes to: a claim policy, a window and a first mechanism, "
                "which must be active, in no collection and satisfy the policy (" + joins + "). 201 the first "
                "time, 200 when the same collection exists, 409 collection-exists when one with other settings does.",
                "security": admin,
                "requestBody": body("CollectionCreate"),
                "responses": responses(
                    _200=json_answer("Collection", "already exists (unchanged)"),
                    _201=json_answer("Collection", "created", location),
                    _401=unauthorized,
                    _404=problem("unknown-mechanism"),
                    _409=problem("collection-exists / mechanism-retired"),
                    _422=problem(
                        "missing-field / wrong-type / invalid-parameter / claim-policy-violated / rotation-refused"
                    ),
                    body=True,
                ),
            },
        },
        "/v1/collections/{name}": {
            "get": {
                "summary": "A collection: its current mechanism and the history",
                "operationId": "getCollection",
                "parameters": [name],
                "responses": responses(
                    _200=json_answer("Collection", "the collection"), _404=problem("unknown-collection")
                ),
            }
        },
        "/v1/collections/{name}/rotate": {
            "post": {
                "summary": "Make another published mechanism the collection's current one (admin)",
                "operationId": "rotateCollection",
                "description": "The mechanism must be active, over the same X and window, new to every collection and "
                "satisfy the claim policy (" + joins + "). Clients following the collection draw afresh under it.",
                "security": admin,
                "parameters": [name],
                "requestBody": body("CollectionRotate"),
                "responses": responses(
                    _200=json_answer("Collection", "rotated"),
                    _401=unauthorized,
                    _404=problem("unknown-collection / unknown-mechanism"),
                    _409=problem("collection-retired / collection-conflict / mechanism-retired"),
                    _422=problem("missing-field / wrong-type / claim-policy-violated / rotation-refused"),
                    body=True,
                ),
            }
        },
        "/v1/collections/{name}/switch": {
            "post": {
                "summary": "End the collection's pilot: design over the pilot's confidence set, then rotate (admin)",
                "operationId": "switchCollection",
                "description": "The current mechanism must be a pilot (RLDP over every distribution) with at least "
                "`min_reports` reports. The design job publishes the new mechanism and rotates the collection to it "
                "only if it has more utility at P̂ than the pilot; otherwise the job fails saying why.",
                "security": admin,
                "parameters": [name],
                "requestBody": body("CollectionSwitch"),
                "responses": responses(
                    _202=json_answer("DesignAccepted", "the design job"),
                    _401=unauthorized,
                    _404=problem("unknown-collection"),
                    _409=problem("collection-retired"),
                    _422=problem("invalid-parameter / rotation-refused"),
                    body=True,
                ),
            }
        },
        "/v1/collections/{name}/resume": {
            "post": {
                "summary": "Lift the pause the drift policy set: the current mechanism takes reports again (admin)",
                "operationId": "resumeCollection",
                "description": "Idempotent. Batches that clients kept while the collection was paused are taken "
                "when they send them again.",
                "security": admin,
                "parameters": [name],
                "responses": responses(
                    _200=json_answer("Collection", "resumed"), _401=unauthorized, _404=problem("unknown-collection")
                ),
            }
        },
        "/v1/collections/{name}/upload-token": {
            "post": {
                "summary": "Create or rotate the collection's upload token (admin); returned once",
                "operationId": "rotateUploadToken",
                "description": "From now on the collection's report uploads (every mechanism of it) must carry "
                "'Authorization: Bearer <token>' with this token or the previous one (still accepted until the next "
                "rotation or a revoke, so installs can pick up the new one); others are refused as "
                "upload-credential (401). Every install of the app holds the same token: it links a report to 'an "
                "install of this app', nothing finer. Never hand out a token per install.",
                "security": admin,
                "parameters": [name],
                "responses": responses(
                    _200=json_answer("UploadToken", "the new token (shown once)"),
                    _401=unauthorized,
                    _404=problem("unknown-collection"),
                ),
            },
            "delete": {
                "summary": "Revoke the collection's upload token: its uploads need none again (admin; idempotent)",
                "operationId": "revokeUploadToken",
                "security": admin,
                "parameters": [name],
                "responses": responses(
                    _200=json_answer("UploadTokenRevoked", "revoked"),
                    _401=unauthorized,
                    _404=problem("unknown-collection"),
                ),
            },
        },
        "/v1/collections/{name}/retire": {
            "post": {
                "summary": "Retire a collection (admin; idempotent)",
                "operationId": "retireCollection",
                "security": admin,
                "parameters": [name],
                "responses": responses(
                    _200=json_answer("Collection", "retired"), _401=unauthorized, _404=problem("unknown-collection")
                ),
            }
        },
        "/v1/collections/{name}/estimate": {
            "get": {
                "summary": "Estimate P(S, U) from every mechanism's reports in one likelihood (admin or read token)",
                "operationId": "estimateCollection",
                "security": [{"bearerAuth": []}],
                "parameters": [
                    name,
                    {"name": "method", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_METHODS)}},
                    {"name": "interval", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_INTERVALS)}},
                    {"name": "prior", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_PRIORS)}},
                    {"name": "prior_weight", "in": "query", "schema": {"type": "number", "minimum": 0}},
                    {"name": "window", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": responses(
                    _200=json_answer("CollectionEstimate", "the estimate with 95 % intervals"),
                    _401=unauthorized,
                    _404=problem("unknown-collection"),
                    _409=problem("no-reports / too-few-reports"),
                    _422=problem("invalid-parameter"),
                ),
            }
        },
    }
