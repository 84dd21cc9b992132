"""The OpenAPI schemas of an estimate's answer (JSON; with ``Accept: text/csv`` the rows of
:mod:`.estimate_csv`) and of its drift watch (kept apart from :mod:`.schemas` by size)."""

from __future__ import annotations

from typing import Any

from rldp.aggregator.services import MECHANISM_ID

__all__ = ["ESTIMATE_SCHEMAS"]

HEX64 = f"^{MECHANISM_ID.pattern}$"

ESTIMATE_SCHEMAS: dict[str, Any] = {
    "Estimate": {
        "type": "object",
        "description": "Estimate of P_X = P(S, U) from the reports (rldp.aggregator.estimate.Estimate.to_dict) "
        "plus the mechanism id.",
        "required": ["mechanism", "n", "joint", "marginals", "ci95", "method", "identifiable"],
        "properties": {
            "mechanism": {"type": "string", "pattern": HEX64},
            "status": {"type": "string"},
            "n": {"type": "integer"},
            "joint": {
                "type": "array",
                "items": {"type": "array", "items": {"type": ["number", "null"]}},
                "description": "joint[s][u], s-major like the document",
            },
            "marginals": {"type": "object"},
            "ci95": {
                "type": "object",
                "properties": {
                    "low": {"type": "array"},
                    "high": {"type": "array"},
                    "level": {"type": "number"},
                    "method": {"type": "string"},
                },
            },
            "method": {"type": "string", "enum": ["em", "inverse"]},
            "identifiable": {"type": "boolean"},
            "window": {
                "type": ["string", "null"],
                "description": "mechanisms with windows: the window estimated, null for every report",
            },
            "windows": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/WindowCount"},
                "description": "mechanisms with windows: the windows with reports, most recent first",
            },
            "drift": {
                "oneOf": [{"$ref": "#/components/schemas/Drift"}, {"type": "null"}],
                "description": "the drift watch on the same reports: is the reporting population still in the "
                "uncertainty set F the claim rests on? null for a claim that rests on no F (drift_unavailable says why)",
            },
            "drift_unavailable": {"type": "string", "description": "why drift is null"},
        },
        "additionalProperties": True,
    },
    "Drift": {
        "type": "object",
        "description": "H0: the reporting population lies in F = {P : D_α(P̂‖P) ≤ B}, within the pilot's box when the document states one (docs/design.md, Drift watch)",
        "required": ["realised_epsilon", "realised_epsilon_upper", "p_value", "rejected", "alpha", "statement"],
        "properties": {
            "notion": {"type": "string"},
            "claimed_epsilon": {"type": "number"},
            "claim": {"type": "string", "description": "the claim with its notion's parameters, e.g. 'ε = 1.5'"},
            "realised_epsilon": {
                "type": ["number", "null"],
                "description": "realised ε* [LZG24, Sec 8.3], a calibrated estimate: ε* at the maximum a-posteriori "
                "P (100 pseudo-reports from P̂), within [realised_epsilon_lower, realised_epsilon_upper]; null "
                "when not identified by the reports (S latent, or a mechanism of rank < |X|: then the interval only)",
            },
            "scope": {
                "type": "string",
                "enum": ["all-windows"],
                "description": "present on an estimate over every window of a mechanism that collects by window: "
                "an owner's report repeats in each, so the test is descriptive there (the watch judges one window "
                "at a time)",
            },
            "realised_epsilon_lower": {
                "type": ["number", "null"],
                "description": "the 95 % interval's low end: a lower bound of ε* over the estimate's simultaneous "
                "95 % confidence box (null: infinite or not identified)",
            },
            "realised_epsilon_upper": {
                "type": ["number", "null"],
                "description": "the 95 % interval's high end: an upper bound of ε* over the same box (null: "
                "infinite or not identified); wide when rare cells are unresolved",
            },
            "statistic": {"type": "number", "description": "the likelihood-ratio statistic T of H0"},
            "dof": {"type": "integer", "description": "degrees of freedom of T's χ² reference"},
            "p_value": {"type": "number", "minimum": 0, "maximum": 1},
            "rejected": {
                "type": "boolean",
                "description": "p_value < alpha: the claim may not hold for this population",
            },
            "alpha": {"type": "number", "description": "the test's significance level (its false-alarm rate)"},
            "n": {"type": "integer"},
            "statement": {"type": "string", "description": "one plain line saying what the numbers mean"},
        },
    },
}
