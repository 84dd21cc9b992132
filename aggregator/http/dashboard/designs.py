"""Design jobs (admin): submit a design from an uploaded public CSV, watch its progress, open the result.

A design job publishes its mechanism itself when it succeeds (the same checks as an uploaded
document, :mod:`rldp.aggregator.services.jobs`); the job page then links to it.
"""

from __future__ import annotations

import math
import time
from typing import Any

from flask import redirect, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import InvalidParameter, ServiceError, job_list_limit
from rldp.aggregator.services.dashboard import COUPLING_COSTS, COUPLING_TARGETS, NOTION_CHOICES
from rldp.shared.notions import lookup

from ..responses import current_service
from .pages import blueprint, checked_form, login_required, page
from .session import User

__all__ = ["design_request_from_form"]

#: Seconds between refreshes of a job page while the job is queued or running.
REFRESH_SECONDS = 2


def _number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InvalidParameter(f"{name} must be a number; got {text!r}", parameter=name)
    return value


def design_request_from_form() -> dict[str, Any]:
    """The POST /v1/designs request the submitted form stands for (InvalidParameter naming the field)."""
    form = request.form
    upload = request.files.get("csv")
    if upload is None or not upload.filename:
        raise InvalidParameter("choose the public CSV file to design from (with a header row)", parameter="csv")
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidParameter(
            f"the CSV file is not UTF-8 text (byte {exc.start} cannot be decoded); save it as UTF-8", parameter="csv"
        ) from None
    notion = form.get("notion", "rldp")
    data: dict[str, Any] = {
        "csv": text,
        "sensitive": form.get("sensitive", "").strip(),
        "released": [name.strip() for name in form.get("released", "").split(",") if name.strip()],
        # The form has one method list per notion (method_<notion>); "method" itself is accepted too.
        "method": form.get("method") or form.get(f"method_{notion}", ""),
        "notion": notion,
        "latent": form.get("latent") == "on",
        "public_name": upload.filename,
    }
    # The notion's claim fields (alip: ε_l and ε_u, ε is their max; the others ε); δ below, optional.
    entry = lookup(notion)
    for name in entry.form_fields:
        data[name] = _number(name, form.get(name, "").strip())
    radius = form.get("radius", "").strip()
    if radius:
        data["radius"] = "inf" if radius.lower() in ("inf", "infinity", "unbounded") else _number("radius", radius)
    beta = form.get("beta", "").strip()
    if beta:
        data["beta"] = _number("beta", beta)
    window = form.get("window", "").strip()
    if window:
        data["window"] = window
    delta = form.get("delta", "").strip()
    if delta and entry.judged_by_delta:  # the other notions have no δ; the field is ignored for them
        data["delta"] = _number("delta", delta)
    if data["method"] == "coupling":  # the coupling's target and cost (named rules; defaults when left empty)
        data.update({name: form[name] for name in ("target", "cost") if form.get(name)})
    return data


@blueprint.route("/designs", methods=["GET", "POST"])
@login_required(admin=True)
def designs(user: User) -> BaseResponse:
    service = current_service()
    error = None
    if request.method == "POST":
        refused = checked_form(user)
        if refused is not None:
            return refused
        try:
            job = service.submit_design(design_request_from_form())
        except ServiceError as exc:  # a refused request: shown above the form, which keeps its values
            error = exc.detail
        else:
            return redirect(url_for("dashboard.design", job_id=job.id), 303)
    jobs = service.designs.recent(job_list_limit(None))
    status = 422 if error else 200
    return page(
        "designs.html",
        status,
        user=user,
        jobs=jobs,
        notion_choices=NOTION_CHOICES,
        targets=COUPLING_TARGETS,
        costs=COUPLING_COSTS,
        error=error,
        form=request.form,
    )


@blueprint.get("/designs/<job_id>")
@login_required(admin=True)
def design(user: User, job_id: str) -> BaseResponse:
    job = current_service().design_status(job_id)
    refresh = REFRESH_SECONDS if job.status in ("queued", "running") else None
    elapsed = (job.finished if job.finished is not None else time.time()) - job.created
    return page("design.html", user=user, job=job, refresh=refresh, elapsed=elapsed)
