"""Checking a design request (POST /v1/designs): the public CSV, the attributes, the parameters.

Everything that can be checked before a design process starts is checked here, so a bad
request is refused at once (422) instead of becoming a failed job. The counts of the uploaded
CSV become the document's provenance (named by the request's ``public_name``, default
:data:`DEFAULT_PUBLIC_NAME`; :mod:`rldp.shared.provenance`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from rldp.aggregator.design import (
    COST_RULES,
    SOLVERS,
    TARGET_RULES,
    DesignParameterError,
    check_design_size,
    request_fields,
    request_from_json,
    validate_request,
)
from rldp.aggregator.design.orchestration.sources import few_public_rows
from rldp.shared.errors import ParameterError, one_line
from rldp.shared.notions import DEFAULT_NOTION, DESIGN_NOTIONS, NOTIONS
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_text
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value, json_type
from rldp.shared.tables import read_csv

from .errors import InvalidParameter, MissingField, WrongType

__all__ = [
    "COUPLING_COSTS",
    "COUPLING_TARGETS",
    "DEFAULT_MAX_BETA",
    "DEFAULT_PUBLIC_NAME",
    "DESIGN_NOTIONS",
    "DESIGN_REQUEST_FIELDS",
    "DESIGN_SOLVERS",
    "design_request",
]

DEFAULT_PUBLIC_NAME = "uploaded CSV"  # the provenance name of the public data when the request gives none
_FIELDS = ("csv", "sensitive", "released", "method")
#: The fields of a design request (for the API's schema) and the solvers it may name.
DESIGN_REQUEST_FIELDS, DESIGN_SOLVERS = request_fields(), SOLVERS
#: The named targets and transport costs of the coupling mechanism (method coupling, notion distp).
COUPLING_TARGETS, COUPLING_COSTS = TARGET_RULES, COST_RULES


def _invalid(exc: ParameterError | DesignParameterError) -> InvalidParameter:
    return InvalidParameter(one_line(exc), parameter=exc.parameter)


def _bad(detail: str, parameter: str) -> InvalidParameter:
    return InvalidParameter(detail, parameter=parameter)


def design_request(data: Any, *, max_beta: float | None = DEFAULT_MAX_BETA) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a decoded design request; (payload for the design process, summary to store with the job).

    The design fields are those :class:`~rldp.aggregator.design.DesignRequest` declares readable from
    JSON, checked by :func:`~rldp.aggregator.design.validate_request` (the rules ``rldp design`` uses);
    here only the public data's fields (``csv``, ``sensitive``, ``released``, ``names``,
    ``public_name``) are read, and n is the CSV's row count, never the caller's word."""
    if not isinstance(data, dict):
        raise WrongType(f"the body must be an object; got {json_type(data)}")
    for name in _FIELDS:
        if name not in data:
            raise MissingField(
                f"the design request has no {name!r} field; expected "
                '{"csv", "sensitive", "released", "epsilon", "method"} and optionally "notion" (with '
                '"epsilon_lower" and "epsilon_upper" instead of "epsilon" for alip; "delta", "target", "cost" for '
                'distp), "latent", '
                '"beta" or "radius", "order", "names", "window", "per_report_epsilon", "public_name", "solver", '
                '"time_budget"',
                field=name,
            )
    notion = data.get("notion", DEFAULT_NOTION)
    if isinstance(notion, str) and notion in NOTIONS:  # the claim's fields must be there (δ defaults to 0)
        for name in NOTIONS[notion].claim:
            if name != "delta" and data.get(name) is None:
                raise MissingField(
                    f"the design request has no {name!r} field (notion {notion} claims "
                    f"{' and '.join(NOTIONS[notion].claim)})",
                    field=name,
                )
    try:
        csv_text = data["csv"]
        if not isinstance(csv_text, str) or not csv_text.strip():
            raise _bad(
                "'csv' must be the text of the public CSV file (with a header row unless 'names' is given)", "csv"
            )
        sensitive = check_text(data["sensitive"], "sensitive")
        released = data["released"]
        if isinstance(released, str):
            released = [released]
        if not isinstance(released, list) or not released:
            raise _bad(f"'released' must be a list of column names; got {describe_value(data['released'])}", "released")
        released = [check_text(r, "released") for r in released]
        names = data.get("names")
        if names is not None:
            if not isinstance(names, list):
                raise _bad(
                    f"'names' must be a list of column names (for a CSV without a header); got {describe_value(names)}",
                    "names",
                )
            names = [check_text(n, "names") for n in names]
        public_name = check_text(data.get("public_name", DEFAULT_PUBLIC_NAME), "public_name")
        # Every rule that needs no data, before the CSV is read; n is the CSV's row count, counted below
        # (1 stands in for it here: no rule but the radius's depends on its value).
        request = validate_request(request_from_json(data, n=1), beta_ceiling=max_beta, released_size=None)
    except (ParameterError, DesignParameterError) as exc:
        raise _invalid(exc) from None
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
            alpha = Alphabet.from_table(table, sensitive, released, latent=request.latent)
            check_design_size(alpha, "csv")
            public = PublicCounts.from_table(table, alpha, name=public_name)
        except DesignParameterError as exc:
            raise _invalid(exc) from None
        except ValueError as exc:
            raise _bad(one_line(exc).replace(path, "csv"), "csv") from None
    try:
        request = validate_request(
            request_from_json(data, n=table.n_rows, latent=request.latent),
            beta_ceiling=max_beta,
            released_size=alpha.n_released,
        )
    except (ParameterError, DesignParameterError) as exc:
        raise _invalid(exc) from None
    payload = {
        "request": request.to_wire(),
        "alphabet": alpha.to_dict(),
        "p_hat": public.distribution.tolist(),
        "provenance": public.provenance(),
    }
    summary = _summary(request, sensitive, released, alpha, public)
    few = few_public_rows(table.n_rows, alpha.size, request)
    if few:  # kept with the job: the API's params and the dashboard's job page show it
        summary["warnings"] = [few]
    return payload, summary


def _summary(
    request: Any, sensitive: str, released: list[str], alpha: Alphabet, public: PublicCounts
) -> dict[str, Any]:
    """What the job list shows of a request: its fields, the public data's name and hash, |X|."""
    wire = request.to_wire()
    radius = request.radius
    summary = {
        "method": request.method,
        "notion": request.notion,
        "latent": request.latent,
        "sensitive": sensitive,
        "released": released,
        "epsilon": request.epsilon,
        "radius": None if radius is None or radius == float("inf") else radius,
        "unbounded": radius is not None and radius == float("inf"),
        "beta": request.beta,
        "order": request.order,
        "n": request.n,
        "size": alpha.size,
        "window": request.window,
        "per_report_epsilon": request.per_report_epsilon,
        "public_name": public.name,
        "counts_sha256": public.sha256,
    }
    claim = NOTIONS[request.notion].claim  # the notion's claim fields (δ of distp defaults to 0)
    summary.update({name: getattr(request, name) or 0.0 for name in claim if name != "epsilon"})
    summary.update({name: wire[name] for name in ("target", "cost") if wire[name] is not None})
    return summary
