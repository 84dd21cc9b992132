"""An estimate as CSV: the dashboard's estimate.csv download and the API's answer to ``Accept: text/csv``.

One row per marginal category and per joint cell (:data:`CSV_FIELDS`). The text cells come from the
published document (attribute names, values), which anyone may have written: each goes through
:func:`rldp.shared.tables.csv_text_cell` (by :func:`~rldp.shared.tables.csv_document`, the one CSV writer),
so a spreadsheet never reads one as a formula, and a line break inside a cell is quoted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from flask import Response, request

from rldp.shared.tables import csv_document

from .bodies import JSON

__all__ = ["CSV", "CSV_FIELDS", "estimate_rows", "estimate_csv", "wants_csv", "csv_answer"]

CSV = "text/csv"
#: The columns of the CSV.
CSV_FIELDS = ("table", "attribute", "category", "estimate", "ci95_low", "ci95_high", "identified", "public")


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
    """The rows of :func:`estimate_rows` as CSV text with a header (empty cell: unbounded / none), written by
    :func:`rldp.shared.tables.csv_document` (CRLF, quoted line breaks, no formula cells)."""
    rows = estimate_rows(est)
    for row in rows:  # text a public document chose: csv_document guards every str cell
        for k in ("table", "attribute", "category"):
            row[k] = str(row[k])
    return csv_document(CSV_FIELDS, ([row[k] for k in CSV_FIELDS] for row in rows))


def wants_csv() -> bool:
    """Whether the request's Accept prefers text/csv to JSON (JSON is the default, also for types neither
    answers: like the document download, the estimate falls back to JSON rather than answer 406)."""
    return request.accept_mimetypes.best_match([JSON, CSV], default=JSON) == CSV


def csv_answer(est: dict[str, Any], name: str) -> Response:
    """The estimate as a text/csv answer (UTF-8, ``name`` for a browser's download)."""
    resp = Response(estimate_csv(est), mimetype=CSV, headers={"Vary": "Accept"})
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return resp
