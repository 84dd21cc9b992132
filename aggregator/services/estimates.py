"""Estimating a mechanism's input distribution P(S, U) from its stored report counts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rldp.aggregator.estimate import INTERVALS, METHODS, estimate_distribution
from rldp.aggregator.storage import Storage
from rldp.shared.errors import one_line

from .errors import InvalidParameter, NoReports
from .mechanisms import MechanismCatalog

__all__ = ["ESTIMATE_METHODS", "ESTIMATE_INTERVALS", "ESTIMATE_PRIORS", "estimate_parameters", "estimate"]

#: The estimators and interval methods an estimate may ask for.
ESTIMATE_METHODS = METHODS
ESTIMATE_INTERVALS = INTERVALS
#: Where EM starts: the document's public distribution, or the uniform distribution.
ESTIMATE_PRIORS = ("public", "uniform")


def estimate_parameters(args: Mapping[str, str]) -> dict[str, Any]:
    """Validate the query parameters of an estimate (method, interval, prior, prior_weight)."""
    method = args.get("method", "auto")
    interval = args.get("interval", "delta")
    prior = args.get("prior", "public")
    if method not in ESTIMATE_METHODS:
        raise InvalidParameter(
            f"method must be one of {', '.join(ESTIMATE_METHODS)}; got {method!r}", parameter="method"
        )
    if interval not in ESTIMATE_INTERVALS:
        raise InvalidParameter(
            f"interval must be one of {', '.join(ESTIMATE_INTERVALS)}; got {interval!r}", parameter="interval"
        )
    if prior not in ESTIMATE_PRIORS:
        raise InvalidParameter(
            f"prior must be 'public' (start EM from the document's public distribution) or 'uniform'; got {prior!r}",
            parameter="prior",
        )
    try:
        prior_weight = float(args.get("prior_weight", "0"))
    except ValueError:
        prior_weight = math.nan
    if not (math.isfinite(prior_weight) and prior_weight >= 0):
        raise InvalidParameter(
            f"prior_weight must be a number ≥ 0 (pseudo-reports); got {args.get('prior_weight')!r}",
            parameter="prior_weight",
        )
    if prior_weight > 0 and prior != "public":
        raise InvalidParameter("prior_weight > 0 needs prior=public", parameter="prior_weight")
    return {"method": method, "interval": interval, "prior": prior, "prior_weight": prior_weight}


def estimate(storage: Storage, catalog: MechanismCatalog, mechanism_id: str, args: Mapping[str, str]) -> dict[str, Any]:
    """The estimate of a published mechanism's P(S, U) as a JSON-ready dict.

    :meth:`rldp.aggregator.estimate.Estimate.to_dict` plus ``mechanism`` and ``status``.
    Raises UnknownMechanism, InvalidParameter, or NoReports when nothing was reported yet.
    """
    record = catalog.get(mechanism_id)
    params = estimate_parameters(args)
    counts = storage.counts(record.id, record.outputs)
    if int(counts.sum()) == 0:
        raise NoReports(
            f"mechanism {record.id} has no reports yet; an estimate needs at least one", mechanism=record.id
        )
    matrix, alpha, p_hat = catalog.parsed(record.id)
    try:
        est = estimate_distribution(
            matrix,
            counts,
            alpha.shape,
            method=params["method"],
            interval=params["interval"],
            prior=p_hat if params["prior"] == "public" else None,
            prior_weight=params["prior_weight"],
        )
    except ValueError as exc:
        raise InvalidParameter(one_line(exc)) from None
    out = est.to_dict(alpha)
    out["mechanism"] = record.id
    out["status"] = record.status
    return out
