"""Estimating a mechanism's input distribution P(S, U) from its stored report counts.

For a mechanism that collects by window (:mod:`rldp.shared.collection`) an estimate reads
one window's counts (``window=<label>``) or every window's together; :func:`window_counts`
lists the windows that have reports.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.aggregator.estimate import INTERVALS, METHODS, Estimate, estimate_distribution
from rldp.aggregator.estimate.numeric import numeric_summaries
from rldp.aggregator.storage import MechanismRecord, Storage
from rldp.shared.collection import Window
from rldp.shared.errors import ValidationError, one_line

from .drift import DriftWatch
from .errors import InvalidParameter, NoReports, TooFewReports
from .mechanisms import MechanismCatalog

__all__ = [
    "ESTIMATE_METHODS",
    "ESTIMATE_INTERVALS",
    "ESTIMATE_PRIORS",
    "check_minimum",
    "estimate_parameters",
    "estimate_window",
    "window_counts",
    "estimate",
]

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


def check_minimum(reports: int, minimum: int, what: str, where: str = "", **fields: Any) -> None:
    """Refuse to estimate from ``reports`` reports: NoReports with none, TooFewReports below ``minimum``
    (the service's MIN_REPORTS). ``what`` names the mechanism or collection, ``where`` the window."""
    if reports == 0:
        raise NoReports(
            f"{what} has no reports{where} yet; this service serves an estimate from {minimum:,} reports on",
            reports=0,
            min_reports=minimum,
            **fields,
        )
    if reports < minimum:
        raise TooFewReports.refused(
            f"{what} has {reports:,} report{'s' if reports != 1 else ''}{where}; this service serves an estimate "
            f"from {minimum:,} reports on (MIN_REPORTS), so that it says something and cannot single out the few "
            f"who reported: {minimum - reports:,} more needed",
            reports=reports,
            min_reports=minimum,
            **fields,
        )


def estimate_window(window: Window | None, label: str | None) -> str | None:
    """The ``window`` parameter of an estimate checked against the mechanism's collection
    ``window``: the label (one of its windows), or None for every report (no parameter)."""
    if label is None:
        return None
    if window is None:
        raise InvalidParameter(
            f"window is {label!r} but this mechanism has no collection windows; omit the parameter",
            parameter="window",
        )
    try:
        if window.label_at(window.start_of(label)) == label:
            return label
    except ValidationError:
        pass
    raise InvalidParameter(
        f"window {label!r} is not the label of a window of this mechanism's collection ({window.text}, aligned on "
        f"1970-01-01 UTC); labels look like {window.label_at(time.time())!r} (the current window)",
        parameter="window",
    )


def window_counts(storage: Storage, catalog: MechanismCatalog, record: MechanismRecord) -> list[dict[str, Any]]:
    """``[{"window": label, "reports": n}, …]`` for every window with reports, most recent first
    (empty for a mechanism without windows)."""
    window = catalog.window(record.id)
    if window is None:
        return []
    stored = storage.windows(record.id)
    return [{"window": label, "reports": stored[label]} for label in sorted(stored, key=window.start_of, reverse=True)]


#: The estimate parameters whose estimate the drift watch reuses (its own: EM, delta, from P̂, no prior weight).
_DRIFT_PARAMETERS = {"interval": "delta", "prior": "public", "prior_weight": 0.0}


def estimate(
    storage: Storage,
    catalog: MechanismCatalog,
    mechanism_id: str,
    args: Mapping[str, str],
    drift: DriftWatch | None = None,
    min_reports: int = 1,
) -> dict[str, Any]:
    """The estimate of a published mechanism's P(S, U) as a JSON-ready dict.

    :meth:`rldp.aggregator.estimate.Estimate.to_dict` plus ``mechanism`` and ``status``;
    for a mechanism with windows also ``window`` (the one estimated, or null for all) and
    ``windows`` (:func:`window_counts`). With a drift watch also ``drift`` (the object of
    :meth:`rldp.aggregator.estimate.drift.Drift.to_dict`, on the same reports) or, when it is null,
    ``drift_unavailable`` saying why. Raises UnknownMechanism, InvalidParameter, NoReports when
    nothing was reported yet (in that window), TooFewReports below ``min_reports``.
    """
    record = catalog.get(mechanism_id)
    params = estimate_parameters(args)
    window = catalog.window(record.id)
    label = estimate_window(window, args.get("window"))
    counts = storage.counts(record.id, record.outputs, window=label)
    where = "" if label is None else f" in window {label}"
    check_minimum(int(counts.sum()), min_reports, f"mechanism {record.id}", where, mechanism=record.id)
    matrix, alpha, p_hat = catalog.parsed(record.id)
    # A latent S is not an input: the reports identify at most P(U), estimated as one row.
    shape = (1, alpha.size) if alpha.latent else alpha.shape
    if alpha.latent:
        p_hat = np.asarray(p_hat).sum(axis=0, keepdims=True)
    try:
        est = estimate_distribution(
            matrix,
            counts,
            shape,
            method=params["method"],
            interval=params["interval"],
            prior=p_hat if params["prior"] == "public" else None,
            prior_weight=params["prior_weight"],
            cache_key=record.id,  # the id is a hash of the document's exact content: no digest of Q needed
        )
    except ValueError as exc:
        raise InvalidParameter(one_line(exc)) from None
    out = _estimate_dict(
        est,
        alpha,
        record,
        catalog.input_epsilon(record.id) if any(a.numeric is not None for a in alpha.released) else math.inf,
    )
    if drift is not None:
        own = params["method"] in ("auto", "em") and all(params[k] == v for k, v in _DRIFT_PARAMETERS.items())
        out["drift"], reason = drift.check(record, counts, label, est if own else None)
        if reason is not None:
            out["drift_unavailable"] = reason
    if window is not None:
        out["window"] = label
        out["windows"] = window_counts(storage, catalog, record)
    return out


def _estimate_dict(est: Estimate, alpha: Any, record: Any, input_epsilon: float) -> dict[str, Any]:
    """The estimate as JSON: its numeric summaries, a latent S's labels, the mechanism and its status."""
    # With a latent S the estimate is P(U) alone: no S marginal to name (labels: the U values).
    out = est.to_dict(None) if alpha.latent else est.to_dict(alpha)
    numeric = numeric_summaries(est, alpha, input_epsilon)  # a numeric released attribute's mean, quantiles, CDF
    if numeric:
        out["numeric"] = numeric
    if alpha.latent:
        out["labels"] = {"rows": [], "columns": alpha.labels()}
        out["latent"] = True
    out["mechanism"] = record.id
    out["status"] = record.status
    return out
