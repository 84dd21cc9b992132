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

from rldp.aggregator.design import METHODS, DesignError, validate_parameters
from rldp.shared.collection import Window
from rldp.shared.errors import ValidationError, one_line
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value, json_type
from rldp.shared.tables import read_csv

from .errors import InvalidParameter, MissingField, WrongType

__all__ = ["DEFAULT_BETA", "DEFAULT_ORDER", "DEFAULT_PUBLIC_NAME", "design_request"]

DEFAULT_BETA = 0.05  # significance level of the confidence set when neither beta nor radius is given
DEFAULT_ORDER = 2.0  # Rényi order α of the uncertainty set
DEFAULT_PUBLIC_NAME = "uploaded CSV"  # the provenance name of the public data when the request gives none
_FIELDS = ("csv", "sensitive", "released", "epsilon", "method")


def _bad(detail: str, parameter: str) -> InvalidParameter:
    return InvalidParameter(detail, parameter=parameter)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"{name!r} must be a number; got {describe_value(value)}", name)
    return float(value)


def design_request(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a decoded design request; (payload for the design process, summary to store with the job)."""
    if not isinstance(data, dict):
        raise WrongType(f"the body must be an object; got {json_type(data)}")
    for name in _FIELDS:
        if name not in data:
            raise MissingField(
                f"the design request has no {name!r} field; expected "
                '{"csv", "sensitive", "released", "epsilon", "method"} and optionally '
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
    method = data["method"]
    if not isinstance(method, str) or method not in METHODS:
        raise _bad(f"'method' must be one of {', '.join(METHODS)}; got {describe_value(method)}", "method")
    epsilon = _number("epsilon", data["epsilon"])
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
            alpha = Alphabet.from_table(table, sensitive, released)
            public = PublicCounts.from_table(table, alpha, name=public_name)
        except ValueError as exc:
            raise _bad(one_line(exc).replace(path, "csv"), "csv") from None
    try:
        validate_parameters(method, epsilon, radius=radius, beta=beta, n=table.n_rows, order=order)
    except DesignError as exc:
        raise _bad(one_line(exc), "parameters") from None
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
    }
    summary = {
        "method": method,
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
    return payload, summary
