"""The aggregator's HTTP service (Flask): publish mechanisms, ingest reports, estimate.

    app = create_app({"DATABASE_URL": "sqlite:////var/lib/rldp/rldp.sqlite3", "ADMIN_TOKEN": "…"})

``rldp serve`` runs it under Granian (``--dev``: Werkzeug's server). The HTTP contract
(v1) is described by ``/openapi.json`` (:mod:`.openapi`); errors are RFC 9457 problems
(:mod:`.problems`). The configuration keys are those of
:mod:`rldp.aggregator.services.config`. This layer only decodes requests and encodes
answers; the operations are :class:`rldp.aggregator.services.AggregatorService`'s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from rldp.aggregator.services import AggregatorService, load_config, open_service_storage

from .access import AccessLog, enable_json_log
from .cors import CorsMiddleware
from .dashboard import init_dashboard
from .dashboard.pages import too_large_page
from .front_keys import BODY_REFUSED_KEY
from .health import OPENAPI_EXTENSION
from .metrics import OTHER, Metrics
from .openapi import build_openapi
from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import PROBLEMS, Problem, answer
from .responses import EXTENSION, METRICS_EXTENSION
from .routes import API_BLUEPRINTS

__all__ = ["create_app"]

#: The problem reason of each HTTP error Werkzeug raises (routing, framing).
_HTTP_REASONS = {
    400: "bad-request",
    401: "unauthorized",
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    413: "body-too-large",
    415: "unsupported-media-type",
    429: "too-many-requests",
}


def _http_problem(exc: HTTPException, limit: int) -> Problem:
    code = exc.code or 500
    reason = _HTTP_REASONS.get(code)
    if reason is None:
        reason = "internal-error" if code >= 500 else "bad-request"
    detail = exc.description or PROBLEMS[reason].description
    if code == 404:
        detail = f"no endpoint {request.path}; see /openapi.json for the API"
    elif code == 405:
        allowed = ", ".join(sorted(m for m in (getattr(exc, "valid_methods", None) or []) if m != "OPTIONS"))
        detail = f"{request.method} is not allowed on {request.path}" + (f"; allowed: {allowed}" if allowed else "")
    elif code == 413:
        detail = f"the body exceeds the limit of {limit} bytes (MAX_BODY_BYTES)"
    original = dict(exc.get_headers())
    headers = {key: original[key] for key in ("Allow", "Retry-After", "WWW-Authenticate") if original.get(key)}
    return Problem(reason, detail, headers=headers)


def _add_routes(app: Flask) -> None:
    """The API's routes, the dashboard's pages and the Swagger UI, then the OpenAPI document of the routes
    (served at /openapi.json; :func:`.openapi.build_openapi` refuses a route that declares no operation)."""
    for blueprint in API_BLUEPRINTS:
        app.register_blueprint(blueprint)
    init_dashboard(app)  # the web pages (/ui/) and the Swagger UI (/docs)
    app.extensions[OPENAPI_EXTENSION] = build_openapi(app)


def _problem_response(app: Flask, problem: Problem, body: bytes, status: int | None = None) -> Response:
    resp = app.response_class(body, status=status or problem.status, mimetype=PROBLEM_MEDIA_TYPE)
    for key, value in problem.headers.items():
        resp.headers[key] = value
    return resp


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app. ``config`` overrides the environment (see rldp.aggregator.services.config);
    ``config["STORAGE"]`` may pass an open storage to use instead of opening DATABASE_URL."""
    cfg = load_config({k: v for k, v in (config or {}).items() if k != "STORAGE"})
    storage = (config or {}).get("STORAGE") or open_service_storage(cfg["DATABASE_URL"], cfg.get("WRITER_SOCKET"))
    metrics = Metrics()
    metrics.build_info(storage.dialect)
    service = AggregatorService(cfg, storage, metrics)
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = cfg["MAX_BODY_BYTES"]
    app.config["RLDP"] = {k: v for k, v in cfg.items() if not k.endswith("_HASHES")}
    app.extensions[EXTENSION] = service
    app.extensions[METRICS_EXTENSION] = metrics
    _add_routes(app)
    if cfg.get("CORS_ORIGIN"):  # every answer
        app.wsgi_app = CorsMiddleware(app.wsgi_app, cfg["CORS_ORIGIN"])  # type: ignore[method-assign]
    if cfg["ACCESS_LOG"] == "json":
        enable_json_log()
    # outermost: every answer gets its X-Request-Id, every problem its request_id, every request its log line
    app.wsgi_app = AccessLog(app.wsgi_app, cfg["ACCESS_LOG"] == "json")  # type: ignore[method-assign]

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        if exc.code == 413 and request.path.startswith("/ui/"):  # a person's form: a page, not JSON
            metrics.rejected("body-too-large")
            return too_large_page(cfg["MAX_BODY_BYTES"])  # type: ignore[return-value]
        problem = _http_problem(exc, cfg["MAX_BODY_BYTES"])
        _, body = answer(problem, request.method, request.path, metrics.rejected)
        return _problem_response(app, problem, body, exc.code or problem.status)

    @app.errorhandler(Exception)  # Flask sends HTTPExceptions to the more specific handler above
    def _refused(exc: Exception) -> Response:
        problem, body = answer(exc, request.method, request.path, metrics.rejected)
        return _problem_response(app, problem, body)

    @app.before_request
    def _start_timer() -> None:
        g.rldp_start = time.perf_counter()
        if request.environ.get(BODY_REFUSED_KEY):  # the front refused this dashboard form's body
            raise RequestEntityTooLarge()
        try:  # Werkzeug decodes the query string lazily and strictly: refuse bad bytes here, not as a 500
            request.query_string.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Problem("bad-request", f"the query string is not valid UTF-8 (byte {exc.start})") from None

    @app.after_request
    def _observe(resp: Response) -> Response:
        start = g.get("rldp_start")
        if start is not None:
            rule = request.url_rule.rule if request.url_rule is not None else OTHER  # a closed set
            metrics.observe(request.method, rule, resp.status_code, time.perf_counter() - start)
        return resp

    return app
