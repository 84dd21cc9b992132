"""The JSON Schemas of the collections' bodies (merged into ``components.schemas`` by :mod:`.openapi`)."""

from __future__ import annotations

from typing import Any

from rldp.aggregator.services import (
    COLLECTION_NAME,
    DRIFT_POLICIES,
)

from .schemas import HEX64

__all__ = ["COLLECTION_SCHEMAS"]

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
