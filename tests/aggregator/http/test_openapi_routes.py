"""The OpenAPI document is built from the routes: every route declares its operation (or its blueprint is
explicitly not in the API), every documented path is a real route with the same methods, and a route
planted without a declaration is refused."""

from __future__ import annotations

import re

import pytest
from flask import Blueprint
from rldp_live import in_process_app

from rldp.aggregator.http import front
from rldp.aggregator.http.openapi import NOT_IN_API, build_openapi, openapi_path
from rldp.aggregator.http.operations import json_answer, operation, operation_of
from rldp.aggregator.http.routes import api_app
from rldp.aggregator.http.upload import wsgi as upload_wsgi

METHODS = {"get", "put", "post", "delete", "patch"}
SAMPLE = {"mechanism_id": "0" * 64, "job_id": "0" * 32, "name": "sign-ups"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The whole service: the API, the dashboard and the Swagger UI."""
    with in_process_app(tmp_path_factory.mktemp("openapi-routes")) as app:
        yield app


def _blueprint(endpoint: str) -> str:
    return endpoint.rpartition(".")[0] or endpoint


def test_every_route_declares_its_operation_or_is_marked_not_in_the_api(app) -> None:
    documented, marked = set(), set()
    for rule in app.url_map.iter_rules():
        view = app.view_functions[rule.endpoint]
        if operation_of(view) is not None:
            methods = {m.lower() for m in rule.methods or ()} & METHODS
            documented |= {(openapi_path(rule.rule), m) for m in methods}
        else:
            assert _blueprint(rule.endpoint) in NOT_IN_API, f"{rule.rule} ({rule.endpoint}) is undeclared"
            marked.add(_blueprint(rule.endpoint))
    assert marked == set(NOT_IN_API), f"stale NOT_IN_API entries: {set(NOT_IN_API) - marked}"
    doc = build_openapi(app)
    in_doc = {(path, m) for path, item in doc["paths"].items() for m in item if m in METHODS}
    assert in_doc == documented
    # the dashboard and the Swagger UI are there, and not in the document
    assert any(r.rule.startswith("/ui/") for r in app.url_map.iter_rules())
    assert not any(path.startswith(("/ui", "/docs", "/static")) for path in doc["paths"])


def test_every_documented_path_is_a_route_with_the_same_methods(app) -> None:
    adapter = app.url_map.bind("localhost")
    for path, item in build_openapi(app)["paths"].items():
        url = re.sub(r"\{([^}]+)\}", lambda m: SAMPLE[m.group(1)], path)
        methods = {m for m in item if m in METHODS}
        for method in methods:
            endpoint, _ = adapter.match(url, method=method.upper())
            assert operation_of(app.view_functions[endpoint]).operation_id == item[method]["operationId"]
        # no method the route answers is missing from the document
        answered = {m.lower() for m in adapter.allowed_methods(url)} & METHODS
        assert answered == methods, (path, answered, methods)


def test_every_operation_id_is_unique() -> None:
    ids = [op["operationId"] for item in build_openapi()["paths"].values() for m, op in item.items() if m in METHODS]
    assert ids and len(ids) == len(set(ids))


def test_the_served_document_is_the_one_built_from_the_api_routes(app) -> None:
    assert app.test_client().get("/openapi.json").get_json() == build_openapi() == build_openapi(api_app())


def test_the_rsgi_upload_route_is_documented_by_the_flask_route_it_mirrors() -> None:
    post = build_openapi()["paths"][front.UPLOAD_PATH]["post"]
    assert post["operationId"] == operation_of(upload_wsgi.reports).operation_id == "submitReports"
    assert post["requestBody"]["content"].keys() == {"application/json", "application/msgpack"}


def test_a_route_planted_without_an_operation_is_refused() -> None:
    app = api_app()
    app.add_url_rule("/v1/mechanisms/<mechanism_id>/planted", "planted", lambda mechanism_id: "")
    with pytest.raises(LookupError, match=r"/v1/mechanisms/<mechanism_id>/planted \(planted\) declares no"):
        build_openapi(app)
    planted = Blueprint("planted", __name__)
    planted.add_url_rule("/v1/planted", "view", lambda: "")
    app = api_app()
    app.register_blueprint(planted)
    with pytest.raises(LookupError, match="planted.view"):
        build_openapi(app)


def test_a_declared_route_joins_the_document_with_its_path_parameters() -> None:
    app = api_app()

    @operation("plantedOp", "A planted route", auth="read", answers={200: json_answer("Status", "fine")})
    def planted(mechanism_id: str) -> str:
        return ""

    app.add_url_rule("/v1/mechanisms/<mechanism_id>/planted", view_func=planted, methods=["PUT"])
    item = build_openapi(app)["paths"]["/v1/mechanisms/{mechanism_id}/planted"]
    assert list(item) == ["put"]
    op = item["put"]
    assert op["operationId"] == "plantedOp" and op["tags"] == ["mechanisms"]
    assert [p["name"] for p in op["parameters"]] == ["mechanism_id"] and op["security"] == [{"bearerAuth": []}]
    # the answers of its kind are added: a token's 401, and the 405, 500, 503 of every route; no body, no 415
    assert set(op["responses"]) == {"200", "401", "405", "500", "503"}


def test_a_declared_route_with_an_undeclared_path_parameter_or_two_methods_is_refused() -> None:
    declare = operation("plantedOp", "A planted route", answers={200: json_answer("Status", "fine")})
    app = api_app()
    app.add_url_rule("/v1/things/<thing>", view_func=declare(lambda thing: ""))
    with pytest.raises(LookupError, match=r"path parameter\(s\) \['thing'\]"):
        build_openapi(app)
    app = api_app()
    app.add_url_rule("/v1/mechanisms/both", view_func=declare(lambda: ""), methods=["GET", "POST"])
    with pytest.raises(LookupError, match="answers one method"):
        build_openapi(app)


def test_both_estimates_document_the_same_query_parameters() -> None:
    paths = build_openapi()["paths"]
    mechanism = paths["/v1/mechanisms/{mechanism_id}/estimate"]["get"]["parameters"]
    collection = paths["/v1/collections/{name}/estimate"]["get"]["parameters"]
    assert [p["name"] for p in mechanism[1:]] == [p["name"] for p in collection[1:]]
    described = {p["name"] for p in collection if p.get("description")}
    assert {"prior", "window"} <= described  # the collection's estimate did not describe them before
    assert [p for p in mechanism if p["name"] == "prior"] == [p for p in collection if p["name"] == "prior"]
