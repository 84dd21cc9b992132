"""The OpenAPI document: a resource tag on every operation, one example per problem type (from the problem
table), and a document that validates (openapi-spec-validator where installed; a structural check always)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from rldp.aggregator.http.openapi import build_openapi
from rldp.aggregator.http.openapi_tags import TAGS, tag_of
from rldp.aggregator.http.problems import MEDIA_TYPE, PROBLEMS

METHODS = {"get", "post", "put", "patch", "delete"}


def _operations(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def test_every_operation_has_one_declared_resource_tag() -> None:
    doc = build_openapi()
    declared = [t["name"] for t in doc["tags"]]
    assert declared == [t["name"] for t in TAGS] and len(set(declared)) == len(declared)
    used = set()
    for path, method, op in _operations(doc):
        assert len(op.get("tags", [])) == 1 and op["tags"][0] in declared, (path, method, op.get("tags"))
        used.add(op["tags"][0])
    assert used == set(declared), f"tags without operations: {set(declared) - used}"
    assert tag_of("/v1/mechanisms/{mechanism_id}/estimate") == "estimates"
    assert tag_of("/v1/collections/{name}/estimate") == "estimates"
    assert tag_of("/v1/reports") == "reports" and tag_of("/healthz") == "service"
    with pytest.raises(KeyError, match="no OpenAPI tag"):
        tag_of("/v2/other")


def test_every_problem_type_has_its_own_example() -> None:
    doc = build_openapi()
    examples = doc["components"]["examples"]
    assert set(examples) == set(PROBLEMS)
    for reason, kind in PROBLEMS.items():
        value = examples[reason]["value"]
        assert value["type"] == kind.uri and value["reason"] == reason and value["status"] == kind.status
        assert value["title"] == kind.title and value["detail"]
    # each problem response shows the examples of the types it names, at its own status
    shown = set()
    for path, method, op in _operations(doc):
        for status, response in op["responses"].items():
            content = response.get("content", {}).get(MEDIA_TYPE)
            if content is None:
                continue
            refs = content.get("examples", {})
            assert refs, (path, method, status, response["description"])
            for reason, ref in refs.items():
                assert ref == {"$ref": f"#/components/examples/{reason}"}
                assert str(PROBLEMS[reason].status) == status, (path, method, status, reason)
                shown.add(reason)
    # the estimate's refusals include the minimum's; only framework-level types stay unnamed
    assert "too-few-reports" in shown and "invalid-json" in shown and "unknown-collection" in shown
    assert set(PROBLEMS) - shown <= {"not-found", "not-acceptable", "too-many-requests"}


def _resolve(doc, ref: str):
    assert ref.startswith("#/"), ref
    node = doc
    for part in ref[2:].split("/"):
        assert part in node, f"dangling $ref {ref}"
        node = node[part]
    return node


def test_the_document_is_structurally_valid() -> None:
    doc = build_openapi()
    json.dumps(doc, allow_nan=False)  # plain JSON
    assert doc["openapi"].startswith("3.1") and doc["info"]["title"] and doc["info"]["version"]
    ids = [op["operationId"] for _, _, op in _operations(doc)]
    assert len(ids) == len(set(ids)), "duplicate operationId"

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node:
                _resolve(doc, node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    for path, method, op in _operations(doc):
        assert op["responses"] and all(str(s).isdigit() for s in op["responses"]), (path, method)
        for param in op.get("parameters", []):
            if param.get("in") == "path":
                assert "{" + param["name"] + "}" in path and param["required"] is True, (path, param)


@pytest.mark.slow
def test_the_document_validates_against_the_openapi_schema(tmp_path) -> None:
    """openapi-spec-validator where it is installed: in this interpreter, or else in the system's python3."""
    try:
        import openapi_spec_validator
    except ImportError:
        python = shutil.which("python3")
        check = "import json, sys, openapi_spec_validator as v; v.validate(json.load(open(sys.argv[1])))"
        if python is None or subprocess.run([python, "-c", "import openapi_spec_validator"]).returncode != 0:
            pytest.skip("openapi-spec-validator is not installed")
        path = tmp_path / "openapi.json"
        path.write_text(json.dumps(build_openapi()), encoding="utf-8")
        proc = subprocess.run([python, "-c", check, str(path)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
    else:
        openapi_spec_validator.validate(build_openapi())


def test_the_estimates_document_csv_and_the_minimum() -> None:
    doc = build_openapi()
    for path in ("/v1/mechanisms/{mechanism_id}/estimate", "/v1/collections/{name}/estimate"):
        responses = doc["paths"][path]["get"]["responses"]
        assert {"application/json", "text/csv"} <= set(responses["200"]["content"])
        assert set(responses["409"]["content"][MEDIA_TYPE]["examples"]) == {"no-reports", "too-few-reports"}
