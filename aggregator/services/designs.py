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

import numpy as np

from rldp.aggregator.design import (
    COST_RULES,
    SOLVERS,
    TARGET_RULES,
    TASKS,
    DesignParameterError,
    bind_public_rows,
    check_design_size,
    field_kind,
    request_fields,
    request_from_json,
    validate_request,
)
from rldp.aggregator.design.orchestration.bins import DEFAULT_PLANNED_REPORTS
from rldp.aggregator.design.orchestration.sources import few_public_rows
from rldp.aggregator.design.orchestration.table_bins import rule_applies
from rldp.shared.errors import ParameterError, one_line
from rldp.shared.notions import DEFAULT_NOTION, DESIGN_NOTIONS, NOTIONS
from rldp.shared.numeric import NumericSpec, spec_from_cells
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_text
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value, json_type
from rldp.shared.tables import Table, read_csv

from .errors import InvalidParameter, MissingField, WrongType

__all__ = [
    "COUPLING_COSTS",
    "COUPLING_TARGETS",
    "DEFAULT_MAX_BETA",
    "DEFAULT_PUBLIC_NAME",
    "DESIGN_NOTIONS",
    "DESIGN_REQUEST_FIELDS",
    "PUBLIC_DATA_FIELDS",
    "design_body_fields",
    "DESIGN_SOLVERS",
    "DESIGN_TASKS",
    "design_request",
    "field_kind",
]

DEFAULT_PUBLIC_NAME = "uploaded CSV"  # the provenance name of the public data when the request gives none
_FIELDS = ("csv", "sensitive", "released", "method")
#: The public data's fields of a design request (the design fields are the request's JSON fields).
PUBLIC_DATA_FIELDS = ("csv", "sensitive", "released", "names", "numeric", "public_name")
#: The fields of a design request (for the API's schema) and the solvers it may name.
DESIGN_REQUEST_FIELDS, DESIGN_SOLVERS, DESIGN_TASKS = request_fields(), SOLVERS, TASKS
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
    _check_required(data)
    try:
        csv_text = data["csv"]
        if not isinstance(csv_text, str) or not csv_text.strip():
            raise _bad(
                "'csv' must be the text of the public CSV file (with a header row unless 'names' is given)", "csv"
            )
        sensitive, released, names, public_name = _public_fields(data)
        # Every rule that needs no data, before the CSV is read; n is the CSV's row count, counted below
        # (1 stands in for it here: no rule but the radius's depends on its value).
        request = validate_request(request_from_json(data, n=1), beta_ceiling=max_beta, released_size=None)
    except (ParameterError, DesignParameterError) as exc:
        raise _invalid(exc) from None
    table, alpha, public = _read_public(csv_text, names, data, sensitive, released, request.latent, public_name)
    try:  # validated once (above); what needs the data: n, and the coupling's target and cost against |U|
        request = bind_public_rows(request, table.n_rows, alpha)
    except (ParameterError, DesignParameterError) as exc:
        raise _invalid(exc) from None
    payload = {
        "request": request.to_wire(),
        "alphabet": alpha.to_dict(),
        "p_hat": public.distribution.tolist(),
        "provenance": public.provenance(),
    }
    summary = _summary(request, sensitive, released, alpha, public)
    if _bins_by_rule(data.get("numeric"), request, alpha):  # chosen in the job's process: it takes seconds
        payload["rule_table"] = {
            "columns": [sensitive, *released],
            "data": [table.column(name).tolist() for name in (sensitive, *released)],
            "public_name": public_name,
        }
        planned = request.planned_reports or DEFAULT_PLANNED_REPORTS
        summary["bins"] = (
            f"{released[0]}: chosen in the design job by the rule (the least predicted error at {planned:,} planned "
            "reports); the mechanism's binning field says the choice (no binning field: no candidate could be "
            "designed, the default bins were kept)"
        )
    few = few_public_rows(table.n_rows, alpha.size, request)
    if few:  # kept with the job: the API's params and the dashboard's job page show it
        summary["warnings"] = [few]
    return payload, summary


def design_body_fields() -> tuple[str, ...]:
    """Every field a design request's body may hold: the public data's and the design's JSON fields."""
    return (*PUBLIC_DATA_FIELDS, *(f.name for f in DESIGN_REQUEST_FIELDS if f.json))


def _check_required(data: Any) -> None:
    """The body is an object holding every required field and the fields of its notion's claim (δ defaults to 0),
    and no field the service does not read (a misspelt field would otherwise be silently ignored)."""
    if not isinstance(data, dict):
        raise WrongType(f"the body must be an object; got {json_type(data)}")
    known = design_body_fields()
    for name in data:
        if name not in known:
            raise _bad(
                f"the design request has an unknown field {str(name)[:64]!r}; expected only: {', '.join(known)}",
                str(name)[:64],
            )
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


def _public_fields(data: dict[str, Any]) -> tuple[str, list[str], list[str] | None, str]:
    """(sensitive, released, names, public_name) of the request, each checked as text."""
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
    return sensitive, released, names, public_name


def _read_public(
    csv_text: str,
    names: list[str] | None,
    data: dict[str, Any],
    sensitive: str,
    released: list[str],
    latent: bool,
    public_name: str,
) -> tuple[Table, Alphabet, PublicCounts]:
    """The uploaded CSV read (its numeric columns binned), its alphabet checked for size, and its counts."""
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
            table, numeric = _numeric(data.get("numeric"), table, [sensitive, *released])
            alpha = Alphabet.from_table(table, sensitive, released, latent=latent, numeric=numeric)
            check_design_size(alpha, "csv")
            public = PublicCounts.from_table(table, alpha, name=public_name)
        except DesignParameterError as exc:
            raise _invalid(exc) from None
        except InvalidParameter:  # numeric's own refusals, already naming their field
            raise
        except ValueError as exc:
            raise _bad(one_line(exc).replace(path, "csv"), "csv") from None
    return table, alpha, public


_NUMERIC_KEYS = ("bins", "range", "edges", "closed")


def _bins_by_rule(numeric: Any, request: Any, alpha: Alphabet) -> bool:
    """Whether the job chooses U's bins by the rule, as ``rldp design`` does without ``--bins``/``--edges``:
    :func:`~rldp.aggregator.design.orchestration.table_bins.rule_applies` and ``numeric`` gives U no
    ``bins`` and no ``edges`` (``numeric`` is valid here: :func:`_numeric` read it)."""
    if not rule_applies(request, alpha):
        return False
    opts = numeric.get(alpha.released[0].name, {}) if isinstance(numeric, dict) else {}
    return opts.get("bins") is None and opts.get("edges") is None


def _numeric(value: Any, table: Table, columns: list[str]) -> tuple[Table, dict[str, NumericSpec]]:
    """The request's ``numeric`` columns: a list of names, or {name: {bins, range, edges, closed}}; their
    bins (:func:`rldp.shared.numeric.spec_from_cells`), and the table without rows that have an empty cell
    in one of them (an empty cell is no number)."""
    if value is None:
        return table, {}
    if isinstance(value, list):
        value = {name: {} for name in value}
    if not isinstance(value, dict):
        raise _bad(f"'numeric' must be a list of column names or an object; got {describe_value(value)}", "numeric")
    specs = {}
    for name, opts in value.items():
        if name not in columns or name not in table.columns:
            raise _bad(f"numeric column {name!r} is not one of the request's columns {', '.join(columns)}", "numeric")
        if not isinstance(opts, dict) or set(opts) - set(_NUMERIC_KEYS):
            raise _bad(f"numeric.{name} must be an object with keys among {', '.join(_NUMERIC_KEYS)}", "numeric")
        span = opts.get("range", [None, None])
        if not isinstance(span, list) or len(span) != 2:
            raise _bad(f"numeric.{name}.range must be [lo, hi]; got {describe_value(span)}", "numeric")
        cells = table.column(name)
        try:
            specs[name] = spec_from_cells(
                cells[cells != ""],
                name,
                bins=opts.get("bins"),
                lo=span[0],
                hi=span[1],
                edges=opts.get("edges"),
                closed=opts.get("closed", "left"),
            )
        except (ValueError, TypeError) as exc:
            raise _bad(f"numeric.{name}: {one_line(exc)}", "numeric") from None
    keep = np.ones(table.n_rows, dtype=bool)
    for name in specs:
        keep &= table.column(name) != ""
    return Table(table.columns, tuple(col[keep] for col in table.data)), specs


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
