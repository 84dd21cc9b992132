"""The estimate page of a mechanism: P_X and every marginal with 95 % intervals (charts and tables),
the L1 distance to P̂, identifiability; downloads as CSV and JSON."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from flask import Response, request
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import ESTIMATE_INTERVALS, ESTIMATE_METHODS
from rldp.aggregator.services.dashboard import estimate_view

from ..estimate_csv import estimate_csv, estimate_rows
from ..responses import current_service
from .charts import interval_chart
from .numeric_charts import QUANTILE_LABELS, cdf_chart, histogram_chart
from .pages import blueprint, login_required, page
from .session import User

__all__ = [
    "estimate_rows",
    "estimate_csv",
    "estimate_sections",
    "estimate_args",
    "download",
]  # kept here too: the page's download is the API's text/csv

#: Most rows a chart draws (a larger joint is shown as a table only).
MAX_CHART_ROWS = 60
#: The query parameters the page passes on to the estimate (the API's names).
_PARAMS = ("window", "method", "interval")


def estimate_args() -> dict[str, str]:
    """The page's query parameters an estimate takes (blank ones dropped)."""
    return {k: v for k in _PARAMS if (v := request.args.get(k, "").strip())}


def estimate_sections(est: dict) -> dict[str, Any]:
    """What ``_estimate_sections.html`` draws of an estimate (a mechanism's or a collection's): ``charts`` (per
    marginal: its name, chart or None when too many rows, rows), ``joint`` rows and ``joint_chart``, ``numeric``
    (per numeric released attribute: :func:`_numeric`)."""
    rows = estimate_rows(est)
    charts = []
    for name in est["marginals"]:
        sel = [r for r in rows if r["table"] == "marginal" and r["attribute"] == name]
        public = None if any(r["public"] is None for r in sel) else [r["public"] for r in sel]
        charts.append((name, _chart(sel, public), sel))
    joint = [r for r in rows if r["table"] == "joint"]
    return {
        "charts": charts,
        "joint": joint,
        "joint_chart": _chart(joint, [r["public"] for r in joint]),
        "numeric": [_numeric(name, summary) for name, summary in (est.get("numeric") or {}).items()],
    }


def _chart(rows: list[dict], public: list | None) -> Any:
    """The interval chart of these rows, or None above :data:`MAX_CHART_ROWS`."""
    if len(rows) > MAX_CHART_ROWS:
        return None
    return interval_chart(
        [r["category"] for r in rows],
        [r["estimate"] for r in rows],
        [r["ci95_low"] for r in rows],
        [r["ci95_high"] for r in rows],
        public,
    )


@blueprint.get("/mechanisms/<mechanism_id>/estimate")
@login_required()
def estimate(user: User, mechanism_id: str) -> BaseResponse:
    args = estimate_args()
    est = estimate_view(current_service(), mechanism_id, args)
    return page(
        "estimate.html",
        user=user,
        est=est,
        args=args,
        query=urlencode(args),
        methods=ESTIMATE_METHODS,
        intervals=ESTIMATE_INTERVALS,
        **estimate_sections(est),
    )


def _numeric(name: str, summary: dict) -> dict:
    """A numeric released attribute's section: its histogram and CDF charts, and one table row per figure
    (mean, quantiles, and both per value of S) with its 95 % interval."""
    stats = [("mean", summary["mean"])]
    stats += [(label, summary["quantiles"][p]) for p, label in QUANTILE_LABELS.items() if p in summary["quantiles"]]
    for s_name, by in (summary.get("mean_by") or {}).items():
        stats += [(f"mean | {s_name} = {value}", entry) for value, entry in by.items()]
    for s_name, by in (summary.get("quantiles_by") or {}).items():
        for value, quantiles in by.items():
            stats += [
                (f"{QUANTILE_LABELS[p]} | {s_name} = {value}", e) for p, e in quantiles.items() if p in QUANTILE_LABELS
            ]
    return {
        "name": name,
        "summary": summary,
        "histogram": histogram_chart(name, summary),
        "cdf": cdf_chart(name, summary),
        "stats": stats,
    }


def download(est: dict, name: str, kind: str) -> BaseResponse:
    """An estimate as an attachment ``name.kind``: "csv" (the API's text/csv rows) or "json" (the API's answer)."""
    if kind == "csv":
        body, mimetype = estimate_csv(est), "text/csv"
    else:
        body, mimetype = json.dumps(est, ensure_ascii=False, allow_nan=False, indent=1), "application/json"
    resp = Response(body, mimetype=mimetype)
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}.{kind}"'
    return resp


def _download(mechanism_id: str, kind: str) -> BaseResponse:
    est = estimate_view(current_service(), mechanism_id, estimate_args())
    name = f"rldp-estimate-{est['mechanism'][:12]}" + (f"-{est['window']}" if est.get("window") else "")
    return download(est, name, kind)


@blueprint.get("/mechanisms/<mechanism_id>/estimate.csv")
@login_required()
def estimate_download_csv(user: User, mechanism_id: str) -> BaseResponse:
    return _download(mechanism_id, "csv")


@blueprint.get("/mechanisms/<mechanism_id>/estimate.json")
@login_required()
def estimate_download_json(user: User, mechanism_id: str) -> BaseResponse:
    return _download(mechanism_id, "json")
