"""Operational endpoints: index, liveness, readiness, metrics, the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from rldp import __version__

from .front_keys import DRAINING_KEY
from .openapi import build_openapi
from .problems import Problem
from .responses import METRICS_EXTENSION, current_service, respond

__all__ = ["blueprint"]

blueprint = Blueprint("health", __name__)


@blueprint.get("/")
def index() -> BaseResponse:
    # A browser (which prefers HTML) is sent to the dashboard; API clients get the JSON index.
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return redirect("/ui/")
    return respond({"service": "rldp aggregator", "version": __version__, "openapi": "/openapi.json"})


@blueprint.get("/healthz")
def healthz() -> Response:
    return respond({"status": "ok"})


@blueprint.get("/readyz")
def readyz() -> Response:
    draining = request.environ.get(DRAINING_KEY)
    if draining is not None and draining.is_set():  # stopping: take no new traffic
        raise Problem("service-unavailable", "the server is stopping; it answers what it holds, then exits")
    return respond({"status": "ready", "database": current_service().ready()})


@blueprint.get("/metrics")
def metrics() -> Response:
    metrics = current_app.extensions[METRICS_EXTENSION]
    current_service().refresh_drift()  # the drift gauges: recomputed only for mechanisms with new reports
    return Response(metrics.render(), mimetype=None, content_type=metrics.content_type)


@blueprint.get("/openapi.json")
def openapi() -> Response:
    return respond(build_openapi())
