"""The JSON Schemas of the API's bodies: the ``components.schemas`` of its OpenAPI document."""

from __future__ import annotations

from typing import Any

from rldp.aggregator.services import (
    DESIGN_NOTIONS,
    DESIGN_REQUEST_FIELDS,
    LABEL_MAX,
    MECHANISM_ID,
    field_kind,
)
from rldp.shared.collection import DEFAULT_WINDOW, NO_WINDOW
from rldp.shared.document import FORMATS, REQUIRED_FIELDS
from rldp.shared.notions import NOTIONS as NOTION_TABLE
from rldp.shared.reports import BATCH_ID

from .estimate_schemas import ESTIMATE_SCHEMAS
from .problems import PROBLEMS

__all__ = ["HEX64", "BATCH", "SCHEMAS"]

#: JSON Schema patterns of a mechanism id and a batch id (the same expressions the services check).
HEX64 = f"^{MECHANISM_ID.pattern}$"
BATCH = f"^{BATCH_ID.pattern}$"

_CLAIM: dict[str, Any] = {
    "type": "object",
    "description": "what the mechanism claims in its notion's terms: ε, with δ (distp) or ε_l and ε_u (alip)",
    "required": ["notion", "epsilon"],
    "properties": {
        "notion": {"type": "string"},
        "epsilon": {"type": "number"},
        "delta": {"type": "number", "description": "distp: the claimed δ"},
        "epsilon_lower": {"type": "number", "description": "alip: the claimed ε_l"},
        "epsilon_upper": {"type": "number", "description": "alip: the claimed ε_u"},
    },
}

#: Descriptions for API readers where the CLI's help says less (the rest: the field's own help).
_DESCRIPTIONS = {
    "epsilon": "the budget in nats; required unless `notion` is alip (then it is optional and must equal "
    "max(epsilon_lower, epsilon_upper))",
    "method": "a method of the notion (README: notions × methods); a 422 lists the allowed ones",
    "notion": "the guarantee: " + "; ".join(f"{name}: {NOTION_TABLE[name].help}" for name in DESIGN_NOTIONS),
    "radius": 'Rényi radius in nats, or "inf" (instead of beta)',
    "target": "method coupling: the common target over U, a rule or |U| probabilities (default best)",
    "cost": "method coupling: the transport cost over U, a rule or a |U|×|U| matrix (default hamming)",
    "latent": "S is not an input of the mechanism (it reads the released attributes only); the CSV still holds "
    "S, which the claim protects",
    "window": f"collect by window of this length (ISO 8601: 'P1D', 'P1W', 'PT6H', 'PT15M'; default "
    f"{DEFAULT_WINDOW}): the document then carries collection.window and each client reports at most once per "
    f"window; '{NO_WINDOW}' (or null) for no windows",
}

#: The schemas of every body the API takes or answers with (``components.schemas``).
SCHEMAS: dict[str, Any] = {
    "Problem": {
        "type": "object",
        "description": "RFC 9457 problem details. `type` is stable per reason: "
        + ", ".join(f"`{r}` ({t.status})" for r, t in PROBLEMS.items())
        + ".",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": {"type": "string", "format": "uri", "enum": [t.uri for t in PROBLEMS.values()] + ["about:blank"]},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string", "description": "What was wrong and what was expected."},
            "reason": {"type": "string", "enum": list(PROBLEMS)},
            "instance": {"type": "string"},
            "request_id": {"type": "string", "description": "The request's id, also its X-Request-Id header."},
        },
        "additionalProperties": True,
    },
    "MechanismDocument": {
        "type": "object",
        "description": f"A mechanism document (format {' or '.join(FORMATS)}; see docs/design.md). The id is the SHA-256 "
        "of the canonical form of every other field.",
        "required": list(REQUIRED_FIELDS),
        "properties": {
            "format": {"type": "string", "enum": list(FORMATS)},
            "id": {"type": "string", "pattern": HEX64},
            "method": {"type": "string"},
            "privacy": {
                "type": "object",
                "required": ["notion", "epsilon"],
                "properties": {
                    "notion": {"type": "string"},
                    "epsilon": {"type": "number"},
                    "uncertainty": {"type": "object"},
                },
            },
            "sensitive": {
                "type": "object",
                "description": "S: one attribute {name, values}, or (format 2) several {attributes: [...]}; "
                "released: false when S is latent (format 2)",
                "anyOf": [{"required": ["name", "values"]}, {"required": ["attributes"]}],
                "properties": {
                    "name": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}},
                    "attributes": {"type": "array", "items": {"type": "object"}},
                    "released": {"type": "boolean"},
                },
            },
            "released": {"type": "array", "items": {"type": "object"}},
            "public_distribution": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "matrix": {
                "description": "matrix[y][x] = Q(y|x); every column sums to 1. Format 3: a compact exact form "
                "object instead (form grr, palette or dense; binary arrays as base64 in JSON, bin in msgpack).",
                "oneOf": [
                    {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
                    {"type": "object", "required": ["form"], "properties": {"form": {"type": "string"}}},
                ],
            },
            "provenance": {
                "type": "object",
                "description": "where P̂ came from (optional; rldp.shared.provenance): the public data's name, its "
                "n, the columns, the SHA-256 of its canonical cell counts over S × U, and how rows became counts",
                "required": ["name", "n", "columns", "counts_sha256", "policy"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "n": {"type": "integer", "minimum": 1},
                    "columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "counts_sha256": {"type": "string", "pattern": HEX64},
                    "policy": {"type": "object"},
                },
            },
        },
        "additionalProperties": True,
    },
    "PublishResult": {
        "type": "object",
        "required": ["id", "method", "epsilon", "epsilon_audited", "status"],
        "properties": {
            "id": {"type": "string", "pattern": HEX64},
            "label": {
                "type": ["string", "null"],
                "maxLength": LABEL_MAX,
                "description": "the operator's name for it (not in the document)",
            },
            "method": {"type": "string"},
            "epsilon": {"type": "number", "description": "claimed ε (nats)"},
            "epsilon_audited": {
                "type": ["number", "null"],
                "description": "ε recomputed by the server's audit (distp: ε at δ = 0; alip: max(ε_l, ε_u))",
            },
            "claim": _CLAIM,
            "status": {"type": "string", "enum": ["active", "retired"]},
        },
    },
    "MechanismSummary": {
        "type": "object",
        "required": ["id", "method", "epsilon", "status", "sensitive", "released", "outputs", "published"],
        "properties": {
            "id": {"type": "string", "pattern": HEX64},
            "label": {
                "type": ["string", "null"],
                "maxLength": LABEL_MAX,
                "description": "the operator's name for it (not in the document)",
            },
            "method": {"type": "string"},
            "epsilon": {"type": "number"},
            "epsilon_audited": {"type": ["number", "null"]},
            "notion": {"type": "string"},
            "claim": _CLAIM,
            "status": {"type": "string", "enum": ["active", "retired"]},
            "sensitive": {"type": "string", "description": "name of the sensitive attribute"},
            "released": {"type": "array", "items": {"type": "string"}},
            "outputs": {
                "type": "integer",
                "description": "|Y'|: reports are integers in [0, outputs) (with a per-report layer, the rows of R; "
                "else of the matrix)",
            },
            "size": {"type": "integer", "description": "|X|"},
            "published": {"type": "string", "format": "date-time"},
            "retired": {"type": ["string", "null"], "format": "date-time"},
        },
    },
    "MechanismUpdate": {
        "type": "object",
        "description": "A mechanism's metadata to change: only its label (null removes it). The document and its "
        "id never change.",
        "required": ["label"],
        "properties": {"label": {"type": ["string", "null"], "minLength": 1, "maxLength": LABEL_MAX}},
        "additionalProperties": False,
    },
    "MechanismList": {
        "type": "object",
        "required": ["mechanisms"],
        "properties": {"mechanisms": {"type": "array", "items": {"$ref": "#/components/schemas/MechanismSummary"}}},
    },
    "Retired": {
        "type": "object",
        "required": ["id", "status"],
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": ["retired"]},
            "retired": {"type": ["string", "null"], "format": "date-time"},
        },
    },
    "ReportBatch": {
        "type": "object",
        "required": ["mechanism", "batch", "reports"],
        "properties": {
            "mechanism": {"type": "string", "pattern": HEX64, "description": "the mechanism id"},
            "batch": {
                "type": "string",
                "pattern": BATCH,
                "description": "client-chosen id, unique per batch (e.g. a UUID); a retry resends the same id "
                "and reports and is stored once",
            },
            "reports": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "integer", "minimum": 0},
                "description": "privatised outputs y, each an integer in [0, outputs)",
            },
            "window": {
                "type": ["string", "null"],
                "description": "required when the mechanism collects by window (its document's "
                "collection.window), refused otherwise (null = absent): the label of the window the reports "
                "belong to — its start in UTC, '2026-11-24' for whole days, '2026-11-24T06:00Z' otherwise; the "
                "current window, a past one, or the next one (clock skew)",
            },
        },
    },
    "BatchReceipt": {
        "type": "object",
        "required": ["batch", "accepted", "duplicate"],
        "properties": {
            "batch": {"type": "string"},
            "accepted": {"type": "integer", "description": "reports in the batch (now stored)"},
            "duplicate": {"type": "boolean", "description": "true when this batch had already been stored"},
            "window": {"type": "string", "description": "the window the batch is counted in (mechanisms with windows)"},
        },
    },
    **ESTIMATE_SCHEMAS,
    "DesignRequest": {
        "type": "object",
        "required": ["csv", "sensitive", "released", "method"],
        "additionalProperties": False,  # the service refuses a field it does not read (services.designs)
        "properties": {
            "csv": {"type": "string", "description": "text of the public CSV (header row unless `names`)"},
            "sensitive": {"type": "string"},
            "released": {"type": "array", "items": {"type": "string"}},
            "names": {"type": "array", "items": {"type": "string"}},
            "numeric": {
                "description": "numeric columns: a list of names (bins at the public quantiles), or "
                "{name: {bins, range: [lo, hi], edges: [...], closed: left|right}}; rows with an empty cell in a "
                "numeric column are dropped",
                "oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}],
            },
            "public_name": {
                "type": "string",
                "minLength": 1,
                "description": "the public data's name in the document's provenance (default 'uploaded CSV')",
            },
            # Every design field the request declares readable from JSON (rldp.aggregator.design.primitives.options).
            **{
                f.name: {**field_kind(f.kind).schema, "description": _DESCRIPTIONS.get(f.name, f.help)}
                for f in DESIGN_REQUEST_FIELDS
                if f.json
            },
        },
    },
    "WindowCount": {
        "type": "object",
        "required": ["window", "reports"],
        "properties": {"window": {"type": "string"}, "reports": {"type": "integer"}},
    },
    "Windows": {
        "type": "object",
        "required": ["mechanism", "collection", "windows"],
        "properties": {
            "mechanism": {"type": "string", "pattern": HEX64},
            "collection": {"type": ["string", "null"], "description": "the window length, null without windows"},
            "windows": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/WindowCount"},
                "description": "the windows with reports, most recent first",
            },
        },
    },
    "DesignAccepted": {
        "type": "object",
        "required": ["job", "status", "status_url"],
        "properties": {"job": {"type": "string"}, "status": {"type": "string"}, "status_url": {"type": "string"}},
    },
    "DesignStatus": {
        "type": "object",
        "required": ["job", "status", "elapsed"],
        "properties": {
            "job": {"type": "string"},
            "status": {"type": "string", "enum": ["queued", "running", "done", "failed"]},
            "mechanism": {"type": "string", "pattern": HEX64},
            "mechanism_url": {"type": "string"},
            "error": {"type": ["string", "null"]},
            "elapsed": {"type": "number", "description": "seconds since submission"},
            "created": {"type": "string", "format": "date-time"},
            "params": {"type": "object"},
        },
    },
    "DesignList": {
        "type": "object",
        "required": ["jobs", "limit"],
        "properties": {
            "jobs": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/DesignStatus"},
                "description": "the most recent jobs, newest first",
            },
            "limit": {"type": "integer", "description": "the most jobs this answer could hold"},
        },
    },
    "Index": {
        "type": "object",
        "required": ["service", "version", "openapi"],
        "properties": {"service": {"type": "string"}, "version": {"type": "string"}, "openapi": {"type": "string"}},
    },
    "Status": {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string"}},
        "additionalProperties": True,
    },
}
