"""The estimate page of a mechanism: P_X and every marginal with 95 % intervals (charts and tables),
the L1 distance to P̂, identifiability; downloads as CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any
from urllib.parse import urlencode

import numpy as np
from flask import Response, request
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import ESTIMATE_INTERVALS, ESTIMATE_METHODS
from rldp.aggregator.services.dashboard import estimate_view
from rldp.shared.tables import csv_text_cell

from ..responses import current_service
from .charts import interval_chart
from .pages import blueprint, login_required, page
from .session import User

__all__ = ["estimate_rows", "estimate_csv"]

#: Most rows a chart draws (a larger joint is shown as a table only).
MAX_CHART_ROWS = 60
#: The query parameters the page passes on to the estimate (the API's names).
_PARAMS = ("window", "method", "interval")


def _args() -> dict[str, str]:
    return {k: v for k in _PARAMS if (v := request.args.get(k, "").strip())}


def estimate_rows(est: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per marginal category and per joint cell: table, attribute, category, estimate,
    ci95_low, ci95_high, identified, public (the document's P̂ of the same cell or category)."""
    rows: list[dict[str, Any]] = []
    public = np.asarray(est["public"], dtype=float)
    labels = est.get("labels", {})
    s_name = labels.get("sensitive", {}).get("name", "S")
    for name, entry in est["marginals"].items():
        if name == s_name:
            p_marg: list[float] | None = public.sum(axis=1).tolist()
        elif len(est["marginals"]) == 2:  # one released attribute: U is that attribute
            p_marg = public.sum(axis=0).tolist()
        else:
            p_marg = None  # several released attributes: the pages show P̂ of the joint only
        for i, label in enumerate(entry.get("labels", range(len(entry["estimate"])))):
            rows.append(
                {
                    "table": "marginal",
                    "attribute": name,
                    "category": str(label),
                    "estimate": entry["estimate"][i],
                    "ci95_low": entry["ci95_low"][i],
                    "ci95_high": entry["ci95_high"][i],
                    "identified": entry["identified"][i],
                    "public": None if p_marg is None else p_marg[i],
                }
            )
    s_values = labels.get("sensitive", {}).get("values", [])
    u_values = labels.get("released", {}).get("values", [])
    ci = est["ci95"]
    for s, row in enumerate(est["joint"]):
        for u, value in enumerate(row):
            rows.append(
                {
                    "table": "joint",
                    "attribute": "S × U",
                    "category": f"{s_values[s] if s_values else s} | {u_values[u] if u_values else u}",
                    "estimate": value,
                    "ci95_low": ci["low"][s][u],
                    "ci95_high": ci["high"][s][u],
                    "identified": ci["identified"][s][u],
                    "public": float(public[s, u]),
                }
            )
    return rows


def estimate_csv(est: dict[str, Any]) -> str:
    """The rows of :func:`estimate_rows` as CSV text with a header (empty cell: unbounded / none)."""
    out = io.StringIO()
    fields = ["table", "attribute", "category", "estimate", "ci95_low", "ci95_high", "identified", "public"]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in estimate_rows(est):
        cells = {k: "" if row[k] is None else row[k] for k in fields}
        for k in ("table", "attribute", "category"):  # text a public document chose: no formulas
            cells[k] = csv_text_cell(str(cells[k]))
        writer.writerow(cells)
    return out.getvalue()


@blueprint.get("/mechanisms/<mechanism_id>/estimate")
@login_required()
def estimate(user: User, mechanism_id: str) -> BaseResponse:
    args = _args()
    est = estimate_view(current_service(), mechanism_id, args)
    rows = estimate_rows(est)
    charts = []
    for name in est["marginals"]:
        sel = [r for r in rows if r["table"] == "marginal" and r["attribute"] == name]
        public = None if any(r["public"] is None for r in sel) else [r["public"] for r in sel]
        chart = None
        if len(sel) <= MAX_CHART_ROWS:
            chart = interval_chart(
                [r["category"] for r in sel],
                [r["estimate"] for r in sel],
                [r["ci95_low"] for r in sel],
                [r["ci95_high"] for r in sel],
                public,
            )
        charts.append((name, chart, sel))
    joint = [r for r in rows if r["table"] == "joint"]
    joint_chart = None
    if len(joint) <= MAX_CHART_ROWS:
        joint_chart = interval_chart(
            [r["category"] for r in joint],
            [r["estimate"] for r in joint],
            [r["ci95_low"] for r in joint],
            [r["ci95_high"] for r in joint],
            [r["public"] for r in joint],
        )
    query = urlencode(args)
    return page(
        "estimate.html",
        user=user,
        est=est,
        charts=charts,
        joint=joint,
        joint_chart=joint_chart,
        args=args,
        query=query,
        methods=ESTIMATE_METHODS,
        intervals=ESTIMATE_INTERVALS,
    )


def _download(mechanism_id: str, kind: str) -> BaseResponse:
    est = estimate_view(current_service(), mechanism_id, _args())
    name = f"rldp-estimate-{est['mechanism'][:12]}" + (f"-{est['window']}" if est.get("window") else "")
    if kind == "csv":
        body, mimetype = estimate_csv(est), "text/csv"
    else:
        body, mimetype = json.dumps(est, ensure_ascii=False, allow_nan=False, indent=1), "application/json"
    resp = Response(body, mimetype=mimetype)
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}.{kind}"'
    return resp


@blueprint.get("/mechanisms/<mechanism_id>/estimate.csv")
@login_required()
def estimate_download_csv(user: User, mechanism_id: str) -> BaseResponse:
    return _download(mechanism_id, "csv")


@blueprint.get("/mechanisms/<mechanism_id>/estimate.json")
@login_required()
def estimate_download_json(user: User, mechanism_id: str) -> BaseResponse:
    return _download(mechanism_id, "json")
