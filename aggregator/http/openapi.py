"""The OpenAPI 3.1 description of the aggregator's HTTP API (served at /openapi.json), built from its routes.

Each API route declares its operation next to its handler (:func:`.operations.operation`);
:func:`build_openapi` walks the app's routes (``<name>`` becomes ``{name}``, with its parameter from
:data:`PATH_PARAMETERS`) and assembles the document. A route that declares no operation is refused
(LookupError) unless its blueprint is one of :data:`NOT_IN_API`: no route is left out silently.
The schemathesis fuzz test (tests/integration/test_fuzz.py) sends requests generated from this
document and checks that every answer is documented here (status, media type, schema) and never a 5xx.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

from flask import Flask
from werkzeug.routing import Rule

from rldp import __version__

from .collection_schemas import COLLECTION_SCHEMAS
from .openapi_tags import add_tags_and_examples
from .operations import Fragment, Operation, operation_of
from .routes import api_app
from .schemas import SCHEMAS

__all__ = ["NOT_IN_API", "PATH_PARAMETERS", "api_operations", "build_openapi", "openapi_path"]

#: The blueprints (or app-level endpoints) whose routes are not part of the API, and why.
NOT_IN_API = {
    "static": "Flask's static files: the API serves none",
    "dashboard": "the dashboard's HTML pages and forms for people (/ui/)",
    "bp_docs": "the Swagger UI of this document (/docs; swagger-ui-py names its blueprint after its prefix)",
}
#: The path parameters of the API's routes, by name.
PATH_PARAMETERS: dict[str, Fragment] = {
    "mechanism_id": {
        "name": "mechanism_id",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": "mechanism id (64 lowercase hex characters)",
    },
    "job_id": {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}},
    "name": {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}, "description": "collection"},
}
#: The methods in the order of OpenAPI's path item (HEAD and OPTIONS: Flask answers them itself).
_METHODS = ("GET", "PUT", "POST", "DELETE", "PATCH")
#: A variable of a Werkzeug rule: ``<name>`` or ``<converter:name>``.
_VARIABLE = re.compile(r"<(?:[^<>:]+:)?([^<>:]+)>")


def openapi_path(rule: str) -> str:
    """A Werkzeug rule as an OpenAPI path: ``/v1/mechanisms/<mechanism_id>`` → ``/v1/mechanisms/{mechanism_id}``."""
    return _VARIABLE.sub(r"{\1}", rule)


def _path_parameters(rule: Rule) -> list[Fragment]:
    names = _VARIABLE.findall(rule.rule)
    unknown = [name for name in names if name not in PATH_PARAMETERS]
    if unknown:
        raise LookupError(f"the route {rule.rule} has path parameter(s) {unknown}: declare them in PATH_PARAMETERS")
    return [PATH_PARAMETERS[name] for name in names]


def api_operations(app: Flask) -> Iterator[tuple[Rule, str, Operation]]:
    """(route, method, operation) of every route of ``app`` in the API, in the order they were registered.

    LookupError names a route that declares no operation and whose blueprint is not in :data:`NOT_IN_API`,
    or a documented route that answers more than one method (one handler, one operation)."""
    for rule in app.url_map.iter_rules():
        declared = operation_of(app.view_functions[rule.endpoint])
        if declared is None:
            if (rule.endpoint.rpartition(".")[0] or rule.endpoint) in NOT_IN_API:
                continue
            raise LookupError(
                f"the route {rule.rule} ({rule.endpoint}) declares no OpenAPI operation: add "
                "@operation(...) (rldp.aggregator.http.operations) under its route, or list its blueprint in NOT_IN_API"
            )
        methods = [m for m in _METHODS if m in (rule.methods or ())]
        if len(methods) != 1 or set(rule.methods or ()) - {*methods, "HEAD", "OPTIONS"}:
            raise LookupError(
                f"the route {rule.rule} ({rule.endpoint}) answers {sorted(rule.methods or ())}: "
                "a documented route answers one method"
            )
        yield rule, methods[0], declared


def _paths(app: Flask) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for rule, method, declared in api_operations(app):
        item = paths.setdefault(openapi_path(rule.rule), {})
        item[method.lower()] = declared.document(_path_parameters(rule))
    order = [m.lower() for m in _METHODS]
    return {path: dict(sorted(item.items(), key=lambda kv: order.index(kv[0]))) for path, item in paths.items()}


def build_openapi(app: Flask | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``'s routes (default: the API's, :func:`.routes.api_app`), a fresh
    dict each call: every operation tagged with its resource, every problem type with an example
    (:mod:`.openapi_tags`)."""
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "rldp aggregator",
            "version": __version__,
            "description": "Publish robust-LDP mechanisms, collect privatised reports, estimate distributions. "
            "Errors are RFC 9457 problem+json documents with a stable `type` per reason.",
        },
        "paths": _paths(app if app is not None else api_app()),
        "components": {
            "schemas": deepcopy({**SCHEMAS, **COLLECTION_SCHEMAS}),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "admin token (or a read token for estimates)",
                }
            },
        },
    }
    return add_tags_and_examples(document)
