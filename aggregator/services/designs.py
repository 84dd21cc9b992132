"""Checking a design request (POST /v1/designs): the public CSV, the attributes, the parameters.

Everything that can be checked before a design process starts is checked here, so a bad
request is refused at once (422) instead of becoming a failed job. The counts of the uploaded
CSV become the document's provenance (named by the request's ``public_name``, default
:data:`DEFAULT_PUBLIC_NAME`; :mod:`rldp.shared.provenance`).
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any

from rldp.aggregator.design import (
    COST_RULES,
    TARGET_RULES,
    DesignError,
    check_transport,
    methods_for,
    validate_parameters,
)
from rldp.shared.collection import Window
from rldp.shared.errors import ValidationError, one_line
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value, json_type
from rldp.shared.tables import read_csv

from .errors import InvalidParameter, MissingField, WrongType

__all__ = [
    "COUPLING_COSTS",
    "COUPLING_TARGETS",
    "DEFAULT_BETA",
    "DEFAULT_ORDER",
    "DEFAULT_PUBLIC_NAME",
    "DESIGN_NOTIONS",
    "design_request",
]

DEFAULT_BETA = 0.05  # significance level of the confidence set when neither beta nor radius is given
DEFAULT_ORDER = 2.0  # Rényi order α of the uncertainty set
DEFAULT_PUBLIC_NAME = "uploaded CSV"  # the provenance name of the public data when the request gives none
_FIELDS = ("csv", "sensitive", "released", "epsilon", "method")
#: The privacy notions a design job can claim: RLDP (default), ε-LDP w.r.t. S, ε-LIP, (ε_l, ε_u)-ALIP,
#: (ε, δ)-distribution privacy.
DESIGN_NOTIONS = ("rldp", "ldp", "lip", "alip", "distp")
#: The named targets and transport costs of the coupling mechanism (method coupling, notion distp).
COUPLING_TARGETS, COUPLING_COSTS = TARGET_RULES, COST_RULES


def _bad(detail: str, parameter: str) -> InvalidParameter:
    return InvalidParameter(detail, parameter=parameter)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"{name!r} must be a number; got {describe_value(value)}", name)
    return float(value)


def _positive(name: str, value: Any) -> float:
    number = _number(name, value)
    if not math.isfinite(number) or number <= 0:
        raise _bad(f"{name!r} must be a finite number > 0 (nats); got {describe_value(value)}", name)
    return number


def _notion(data: dict[str, Any]) -> dict[str, Any]:
    """notion, method, epsilon (ε_l, ε_u for alip) and latent of a request, each checked by name."""
    notion = data.get("notion", "rldp")
    if not isinstance(notion, str) or notion not in DESIGN_NOTIONS:
        raise _bad(f"'notion' must be one of {', '.join(DESIGN_NOTIONS)}; got {describe_value(notion)}", "notion")
    methods = methods_for(notion)
    method = data.get("method")
    if not isinstance(method, str) or method not in methods:
        raise _bad(
            f"'method' must be one of {', '.join(methods)} (notion {notion}); got {describe_value(method)}", "method"
        )
    latent = data.get("latent", False)
    if not isinstance(latent, bool):
        raise _bad(f"'latent' must be true or false; got {describe_value(latent)}", "latent")
    if latent and not methods[method].supports_latent:
        allowed = ", ".join(name for name, d in methods.items() if d.supports_latent)
        raise _bad(f"method {method!r} reads S, so S cannot be latent; with 'latent' use one of {allowed}", "latent")
    bounds: dict[str, float | None] = {"epsilon_lower": None, "epsilon_upper": None}
    if notion != "alip":
        for name in bounds:
            if data.get(name) is not None:
                raise _bad(f"{name!r} applies to notion alip only; notion {notion} takes 'epsilon'", name)
        if "epsilon" not in data:
            raise MissingField(f"the design request has no 'epsilon' field (notion {notion})", field="epsilon")
        epsilon = _number("epsilon", data["epsilon"])
    else:
        for name in bounds:
            if data.get(name) is None:
                raise MissingField(f"notion alip needs {name!r} (a finite number > 0, nats)", field=name)
        lower, upper = (
            _positive("epsilon_lower", data["epsilon_lower"]),
            _positive("epsilon_upper", data["epsilon_upper"]),
        )
        bounds = {"epsilon_lower": lower, "epsilon_upper": upper}
        epsilon = max(lower, upper)
        # The same tolerance as the designers' check of ε = max(ε_l, ε_u).
        if data.get("epsilon") is not None and abs(_number("epsilon", data["epsilon"]) - epsilon) > 1e-12:
            raise _bad(
                f"'epsilon' for notion alip is max(epsilon_lower, epsilon_upper) = {epsilon:g} (or leave it out); "
                f"got {describe_value(data['epsilon'])}",
                "epsilon",
            )
    return {"notion": notion, "method": method, "epsilon": epsilon, "latent": latent, **bounds, **_distp(data, notion)}


def _distp(data: dict[str, Any], notion: str) -> dict[str, Any]:
    """delta (distp only, in [0, 1)), and the coupling's target and cost by their JSON types; their
    values are checked against the released alphabet once the CSV is read (:func:`check_transport`)."""
    delta = data.get("delta")
    if delta is not None:
        if notion != "distp":
            raise _bad(f"'delta' applies to notion distp only; notion {notion} has no delta", "delta")
        delta = _number("delta", delta)
        if not 0 <= delta < 1:
            raise _bad(f"'delta' must be a number in [0, 1); got {describe_value(data['delta'])}", "delta")
    target, cost = data.get("target"), data.get("cost")
    if target is not None and not (isinstance(target, str) or _numbers(target)):
        raise _bad(f"'target' must be a rule name or a list of probabilities; got {describe_value(target)}", "target")
    if cost is not None and not (
        isinstance(cost, str) or (isinstance(cost, list) and all(_numbers(row) for row in cost))
    ):
        raise _bad(
            f"'cost' must be a rule name or a square list of lists of numbers; got {describe_value(cost)}", "cost"
        )
    return {"delta": delta, "target": target, "cost": cost}


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
    )


def design_request(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a decoded design request; (payload for the design process, summary to store with the job)."""
    if not isinstance(data, dict):
        raise WrongType(f"the body must be an object; got {json_type(data)}")
    for name in _FIELDS:
        if name not in data and not (name == "epsilon" and data.get("notion") == "alip"):
            raise MissingField(
                f"the design request has no {name!r} field; expected "
                '{"csv", "sensitive", "released", "epsilon", "method"} and optionally "notion" (with '
                '"epsilon_lower" and "epsilon_upper" instead of "epsilon" for alip; "delta", "target", "cost" for '
                'distp), "latent", '
                '"beta" or "radius", "order", "names", "window", "per_report_epsilon", "public_name"',
                field=name,
            )
    csv_text, sensitive, released = data["csv"], data["sensitive"], data["released"]
    if not isinstance(csv_text, str) or not csv_text.strip():
        raise _bad("'csv' must be the text of the public CSV file (with a header row unless 'names' is given)", "csv")
    if not isinstance(sensitive, str) or not sensitive:
        raise _bad(f"'sensitive' must be a column name; got {describe_value(sensitive)}", "sensitive")
    if isinstance(released, str):
        released = [released]
    if not isinstance(released, list) or not all(isinstance(r, str) and r for r in released):
        raise _bad(f"'released' must be a list of column names; got {describe_value(data['released'])}", "released")
    claim = _notion(data)
    method, epsilon = claim["method"], claim["epsilon"]
    order = _number("order", data.get("order", DEFAULT_ORDER))
    radius = data.get("radius")
    if radius is not None:
        radius = math.inf if radius in ("inf", "Infinity") else _number("radius", radius)
    beta = data.get("beta")
    if beta is not None:
        beta = _number("beta", beta)
        if radius is not None:
            raise _bad("give either 'beta' or 'radius', not both", "radius")
    elif radius is None:
        beta = DEFAULT_BETA
    names = data.get("names")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
        raise _bad(
            f"'names' must be a list of column names (for a CSV without a header); got {describe_value(names)}", "names"
        )
    window = data.get("window")
    if window is not None:  # the document will carry collection.window (rldp.shared.collection)
        try:
            window = Window.parse(window).text
        except ValidationError as exc:
            raise _bad(f"'window': {one_line(exc)}", "window") from None
    per_report = data.get("per_report_epsilon")
    if per_report is not None and (
        isinstance(per_report, bool)
        or not isinstance(per_report, (int, float))
        or not math.isfinite(per_report)
        or not 0 < per_report < epsilon
    ):
        raise _bad(
            f"'per_report_epsilon' must be a number in (0, epsilon = {epsilon:g}); got {describe_value(per_report)}",
            "per_report_epsilon",
        )
    public_name = data.get("public_name", DEFAULT_PUBLIC_NAME)
    if not isinstance(public_name, str) or not public_name.strip():
        raise _bad(f"'public_name' must be a non-empty text; got {describe_value(public_name)}", "public_name")
    # read_csv reads files (plain or gzip); the request's text goes through a private temporary one.
    with tempfile.TemporaryDirectory(prefix="rldp-design-") as tmp:
        path = os.path.join(tmp, "public.csv")
        try:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(csv_text)
        except UnicodeEncodeError as exc:  # e.g. a lone surrogate escaped in the JSON string
            raise _bad(
                f"'csv' is not encodable text: {exc.reason} at character {exc.start}; send UTF-8 text", "csv"
            ) from None
        try:
            table = read_csv(path, names=names)
            alpha = Alphabet.from_table(table, sensitive, released, latent=claim["latent"])
            public = PublicCounts.from_table(table, alpha, name=public_name)
        except ValueError as exc:
            raise _bad(one_line(exc).replace(path, "csv"), "csv") from None
    try:
        validate_parameters(
            method,
            epsilon,
            radius=radius,
            beta=beta,
            n=table.n_rows,
            order=order,
            notion=claim["notion"],
            epsilon_lower=claim["epsilon_lower"],
            epsilon_upper=claim["epsilon_upper"],
            delta=claim["delta"],
        )
    except DesignError as exc:
        raise _bad(one_line(exc), "parameters") from None
    try:
        check_transport(method, claim["target"], claim["cost"], alpha.n_released)
    except DesignError as exc:
        raise _bad(one_line(exc), "target" if claim["target"] is not None else "cost") from None
    payload = {
        "method": method,
        "alphabet": alpha.to_dict(),
        "p_hat": public.distribution.tolist(),
        "provenance": public.provenance(),
        "epsilon": epsilon,
        "radius": radius,
        "beta": beta,
        "n": table.n_rows,
        "order": order,
        "collection": None if window is None else {"window": window},
        "per_report_epsilon": per_report,
        "notion": claim["notion"],
        "epsilon_lower": claim["epsilon_lower"],
        "epsilon_upper": claim["epsilon_upper"],
        "delta": claim["delta"],
        "target": claim["target"],
        "cost": claim["cost"],
    }
    summary = {
        "method": method,
        "notion": claim["notion"],
        "latent": claim["latent"],
        "sensitive": sensitive,
        "released": released,
        "epsilon": epsilon,
        "radius": None if radius is None or math.isinf(radius) else radius,
        "unbounded": radius is not None and math.isinf(radius),
        "beta": beta,
        "order": order,
        "n": table.n_rows,
        "size": alpha.size,
        "window": window,
        "per_report_epsilon": per_report,
        "public_name": public.name,
        "counts_sha256": public.sha256,
    }
    if claim["notion"] == "alip":
        summary.update(epsilon_lower=claim["epsilon_lower"], epsilon_upper=claim["epsilon_upper"])
    if claim["notion"] == "distp":
        summary.update(delta=claim["delta"] or 0.0)
        summary.update({name: claim[name] for name in ("target", "cost") if claim[name] is not None})
    return payload, summary
