"""A collection's pilot phase: from its pilot's reports to the next mechanism (docs/design.md, "P̂ from a
private pilot").

A collection without public data starts with a pilot mechanism private for every distribution
(``rldp design … --radius inf``, or :func:`rldp.aggregator.design.orchestration.pilot.design_pilot`). Once the pilot
has enough reports, :func:`pilot_switch` prepares a design job over the pilot's confidence set
(:class:`rldp.aggregator.design.orchestration.sources.PilotData`): the job designs, and the service publishes the
result and rotates the collection to it only if it has more utility at P̂ than the pilot
(:func:`rldp.aggregator.design.orchestration.pilot.switch_after_pilot`); otherwise the job ends saying why. Estimates
of the collection keep every phase's reports (one likelihood).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from rldp.aggregator.design import DesignParameterError, request_from_json, validate_request
from rldp.shared.document import report_matrix
from rldp.shared.errors import ParameterError, one_line
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_beta, check_count

from .collections import Collections
from .errors import CollectionRetired, InvalidParameter, RotationRefused, WrongType

__all__ = ["DEFAULT_MIN_PILOT_REPORTS", "pilot_switch"]

#: The fewest pilot reports a switch is designed from unless the request says otherwise.
DEFAULT_MIN_PILOT_REPORTS = 1000


def pilot_switch(
    collections: Collections, name: Any, data: Any, *, max_beta: float = DEFAULT_MAX_BETA, redesign: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(payload, summary) of the design job that ends the pilot of collection ``name``.

    ``data``: ``{"method": "polyopt", "epsilon"?: the policy's, "beta"?: 0.05, "min_reports"?: 1000,
    "order"?, "solver"?, "time_budget"?}``. Refused: a retired collection, a current mechanism that is
    not a pilot (its claim is not over every distribution), fewer reports than ``min_reports``.

    ``redesign`` (a collection's drift policy): the current mechanism need not be a pilot — its live
    reports give the confidence set the same way, so the next design is over where the population is now."""
    record = collections.get(name)
    if record.status != "active":
        raise CollectionRetired(f"collection {record.name!r} is retired", collection=record.name)
    if not isinstance(data, dict):
        raise WrongType(f"the body must be an object such as {{'method': 'polyopt'}}; got {type(data).__name__}")
    pilot = collections.document(record.current)
    uncertainty = pilot["privacy"].get("uncertainty") or {}
    if not redesign and (pilot["privacy"]["notion"] != "rldp" or uncertainty.get("radius") is not None):
        raise RotationRefused(
            f"collection {record.name!r} is not in a pilot phase: its current mechanism {record.current} claims "
            f"{pilot['privacy']['notion']} over a bounded set, not RLDP over every distribution",
            mechanism=record.current,
        )
    try:
        beta = check_beta(data.get("beta", 0.05), "beta", ceiling=max_beta)
        least = check_count(data.get("min_reports", DEFAULT_MIN_PILOT_REPORTS), "min_reports", lowest=2)
        fields = {k: v for k, v in data.items() if k not in ("beta", "min_reports")}
        request = request_from_json(
            {"epsilon": record.policy.get("epsilon"), **fields, "notion": record.policy["notion"]}
        )
        # Every rule but the set's (the pilot gives the radius): checked now, not in the job.
        validate_request(replace(request, radius=math.inf), released_size=None)
    except (ParameterError, DesignParameterError) as exc:
        raise InvalidParameter(one_line(exc), parameter=exc.parameter) from None
    outputs = int(report_matrix(pilot).shape[0])
    counts = collections.storage.counts(record.current, outputs)
    reports = int(counts.sum())
    if reports < least:
        raise RotationRefused(
            f"the pilot of collection {record.name!r} has {reports} reports; the switch needs at least {least} "
            "(min_reports): wait for more",
            mechanism=record.current,
        )
    payload = {
        "request": request.to_wire(),
        "pilot": {"document": pilot, "counts": [int(c) for c in counts], "beta": beta, "collection": record.name},
    }
    summary = {
        "kind": "drift-redesign" if redesign else "pilot-switch",
        "collection": record.name,
        "pilot": record.current,
        "pilot_reports": reports,
        "method": request.method,
        "notion": request.notion,
        "epsilon": request.epsilon,
        "beta": beta,
    }
    return payload, summary
