"""The estimate page of a collection: its state (status, pause, claim policy, contamination budget γ, the drift
watch's verdict on its current mechanism), its mechanisms with their claims, and the estimate over their reports
(``GET /v1/collections/<name>/estimate``) drawn as a mechanism's estimate is (:func:`.estimates.estimate_sections`);
downloads as CSV and JSON.

A refusal of the estimate (no or too few reports, a bad window) is shown on the page, above the collection's
state, with the problem's status; an unknown collection is the dashboard's error page (404)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from flask import request
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import ESTIMATE_INTERVALS, ESTIMATE_METHODS, ServiceError
from rldp.aggregator.services.dashboard import collection_estimate_view, collection_view

from ..problems import problem_for
from ..responses import current_service
from .estimates import download, estimate_args, estimate_sections
from .pages import blueprint, login_required, page
from .session import User

__all__: list[str] = []


@blueprint.get("/collections/<name>/estimate")
@login_required()
def collection_estimate(user: User, name: str) -> BaseResponse:
    service = current_service()
    state = collection_view(service, name)  # UnknownCollection: the error page
    args = estimate_args()
    context: dict[str, Any] = {"est": None, "problem": None}
    status = 200
    try:
        est = collection_estimate_view(service, state["record"].name, args)
    except ServiceError as exc:  # no or too few reports, a bad window or method: said on the page
        problem = problem_for(exc, request.method, request.path)
        context["problem"], status = problem, problem.type.status
    else:
        counted = {m["mechanism"]: m["reports"] for m in est["mechanisms"]}
        context.update(est=est, counted=counted, **estimate_sections(est))
    return page(
        "collection_estimate.html",
        status,
        user=user,
        state=state,
        args=args,
        query=urlencode(args),
        methods=ESTIMATE_METHODS,
        intervals=ESTIMATE_INTERVALS,
        **context,
    )


def _download(name: str, kind: str) -> BaseResponse:
    est = collection_estimate_view(current_service(), name, estimate_args())
    return download(
        est, f"rldp-estimate-{est['collection']}" + (f"-{est['window']}" if est.get("window") else ""), kind
    )


@blueprint.get("/collections/<name>/estimate.csv")
@login_required()
def collection_estimate_csv(user: User, name: str) -> BaseResponse:
    return _download(name, "csv")


@blueprint.get("/collections/<name>/estimate.json")
@login_required()
def collection_estimate_json(user: User, name: str) -> BaseResponse:
    return _download(name, "json")
