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
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rldp.aggregator.design import DesignParameterError, DesignRequest, request_from_json, validate_request
from rldp.shared.collection import drift_contamination
from rldp.shared.document import DocumentView
from rldp.shared.errors import ParameterError, one_line
from rldp.shared.notions import NOTIONS, lookup
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_beta, check_count

from .collections import Collections
from .errors import CollectionRetired, InvalidParameter, RotationRefused, WrongType

__all__ = [
    "DEFAULT_MIN_PILOT_REPORTS",
    "SWITCH_FIELDS",
    "auto_switch_body",
    "pilot_switch",
    "switch_policy",
    "switch_request",
]

#: The fewest pilot reports a switch is designed from unless the request says otherwise.
DEFAULT_MIN_PILOT_REPORTS = 1000


#: The fields of a switch body (and of a collection's automatic ``policy.switch``, with ``after``).
SWITCH_FIELDS = ("method", "epsilon", "beta", "min_reports", "order", "solver", "time_budget")


def switch_request(
    policy: Mapping[str, Any], data: Any, max_beta: float = DEFAULT_MAX_BETA
) -> tuple[DesignRequest, float, int]:
    """(design request, β, fewest reports) of a switch body under a collection's claim ``policy``.

    Every rule but the confidence set's (the pilot's reports give the radius) is checked here, when the
    switch is asked for (or a collection with an automatic switch is created), not in the job."""
    if not isinstance(data, Mapping):
        raise WrongType(f"the body must be an object such as {{'method': 'polyopt'}}; got {type(data).__name__}")
    unknown = sorted(set(data) - set(SWITCH_FIELDS))
    if unknown:
        raise InvalidParameter(
            f"unknown switch field {unknown[0]!r}; the fields are {', '.join(SWITCH_FIELDS)}", parameter=unknown[0]
        )
    try:
        beta = check_beta(data.get("beta", 0.05), "beta", ceiling=max_beta)
        least = check_count(data.get("min_reports", DEFAULT_MIN_PILOT_REPORTS), "min_reports", lowest=2)
        fields = {k: v for k, v in data.items() if k not in ("beta", "min_reports")}
        request = request_from_json({"epsilon": policy.get("epsilon"), **fields, "notion": policy["notion"]})
        validate_request(replace(request, radius=math.inf), released_size=None)
    except (ParameterError, DesignParameterError) as exc:
        raise InvalidParameter(one_line(exc), parameter=exc.parameter) from None
    return request, beta, least


def switch_policy(policy: Mapping[str, Any], max_beta: float = DEFAULT_MAX_BETA) -> int | None:
    """The number of pilot reports after which the collection switches by itself (``policy.switch.after``),
    None without an automatic switch; InvalidParameter naming the field if ``policy.switch`` is not a valid
    switch body plus ``after`` (an integer ≥ 2, at least its ``min_reports``)."""
    if "switch" not in policy:
        return None
    if "after" not in policy["switch"]:
        raise InvalidParameter(
            "policy.switch needs 'after': the number of pilot reports after which the collection switches",
            parameter="policy",
        )
    try:
        after = check_count(policy["switch"]["after"], "policy.switch.after", lowest=2)
    except ParameterError as exc:
        raise InvalidParameter(one_line(exc), parameter="policy") from None
    _, _, least = switch_request(policy, auto_switch_body(policy), max_beta)
    if after < least:
        raise InvalidParameter(f"policy.switch.after = {after} is below its min_reports = {least}", parameter="policy")
    return after


def auto_switch_body(policy: Mapping[str, Any]) -> dict[str, Any]:
    """The switch body of a collection's automatic switch: ``policy.switch`` without ``after``; its method
    defaults to the notion's recommended designer, its ``min_reports`` to min(after, the default)."""
    data = {k: v for k, v in policy["switch"].items() if k != "after"}
    data.setdefault("method", NOTIONS[policy["notion"]].recommended)
    data.setdefault("min_reports", min(int(policy["switch"]["after"]), DEFAULT_MIN_PILOT_REPORTS))
    return data


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
    pilot = collections.document(record.current)
    view = DocumentView.of(pilot)
    bounded = view.uncertainty is not None and view.uncertainty.bounded
    if not redesign and (not lookup(view.notion).pilots or bounded):
        raise RotationRefused(
            f"collection {record.name!r} is not in a pilot phase: its current mechanism {record.current} claims "
            f"{view.notion} over a bounded set, not RLDP over every distribution",
            mechanism=record.current,
        )
    request, beta, least = switch_request(record.policy, data, max_beta)
    outputs = view.outputs
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
        "pilot": {
            "document": pilot,
            "counts": [int(c) for c in counts],
            "beta": beta,
            "collection": record.name,
            "redesign": redesign,
            "contamination": drift_contamination(record.policy),
        },
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
