"""Checking a design request (POST /v1/designs): the public CSV, the attributes, the parameters.

Everything that can be checked before a design process starts is checked here, so a bad
request is refused at once (422) instead of becoming a failed job.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any

from rldp.aggregator.design import METHODS, DesignError, validate_parameters
from rldp.shared.errors import one_line
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value, json_type
from rldp.shared.tables import read_csv

from .errors import InvalidParameter, MissingField, WrongType

__all__ = ["DEFAULT_BETA", "DEFAULT_ORDER", "design_request"]

DEFAULT_BETA = 0.05  # significance level of the confidence set when neither beta nor radius is given
DEFAULT_ORDER = 2.0  # Rényi order α of the uncertainty set
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
                '"beta" or "radius", "order", "names"',
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
    # read_csv reads files (plain or gzip); the request's text goes through a private temporary one.
    with tempfile.TemporaryDirectory(prefix="rldp-design-") as tmp:
        path = os.path.join(tmp, "public.csv")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(csv_text)
        try:
            table = read_csv(path, names=names)
            alpha = Alphabet.from_table(table, sensitive, released)
            p_hat = alpha.empirical_distribution(table)
        except ValueError as exc:
            raise _bad(one_line(exc).replace(path, "csv"), "csv") from None
    try:
        validate_parameters(method, epsilon, radius=radius, beta=beta, n=table.n_rows, order=order)
    except DesignError as exc:
        raise _bad(one_line(exc), "parameters") from None
    payload = {
        "method": method,
        "alphabet": alpha.to_dict(),
        "p_hat": p_hat.tolist(),
        "epsilon": epsilon,
        "radius": radius,
        "beta": beta,
        "n": table.n_rows,
        "order": order,
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
    }
    return payload, summary
