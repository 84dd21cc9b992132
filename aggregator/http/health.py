"""Operational endpoints: index, liveness, readiness, metrics, the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from rldp import __version__

from .front_keys import DRAINING_KEY
from .operations import json_answer, operation
from .problems import Problem
from .responses import METRICS_EXTENSION, current_service, respond

__all__ = ["OPENAPI_EXTENSION", "blueprint"]

blueprint = Blueprint("health", __name__)
#: The app's extension that holds its OpenAPI document (:func:`.openapi.build_openapi`, built by
#: :func:`.app.create_app` once every route is registered: the routes never change while it serves).
OPENAPI_EXTENSION = "rldp.openapi"


@blueprint.get("/")
@operation("index", "Service index", answers={200: json_answer("Index", "name and version of the service")})
def index() -> BaseResponse:
    # A browser (which prefers HTML) is sent to the dashboard; API clients get the JSON index.
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return redirect("/ui/")
    return respond({"service": "rldp aggregator", "version": __version__, "openapi": "/openapi.json"})


@blueprint.get("/healthz")
@operation("healthz", "Liveness", answers={200: json_answer("Status", "the process is alive")})
def healthz() -> Response:
    return respond({"status": "ok"})


@blueprint.get("/readyz")
@operation(
    "readyz",
    "Readiness (the database answers and can take writes; 503 while the server stops)",
    answers={200: json_answer("Status", "ready")},
)
def readyz() -> Response:
    draining = request.environ.get(DRAINING_KEY)
    if draining is not None and draining.is_set():  # stopping: take no new traffic
        raise Problem("service-unavailable", "the server is stopping; it answers what it holds, then exits")
    return respond({"status": "ready", "database": current_service().ready()})


@blueprint.get("/metrics")
@operation(
    "metrics",
    "Prometheus metrics",
    answers={200: {"description": "Prometheus text format", "content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics() -> Response:
    metrics = current_app.extensions[METRICS_EXTENSION]
    current_service().refresh_drift()  # the drift gauges: recomputed only for mechanisms with new reports
    return Response(metrics.render(), mimetype=None, content_type=metrics.content_type)


@blueprint.get("/openapi.json")
@operation(
    "openapi",
    "This document",
    answers={200: {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}},
)
def openapi() -> Response:
    return respond(current_app.extensions[OPENAPI_EXTENSION])
