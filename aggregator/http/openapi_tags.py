"""What the OpenAPI document adds to its paths: a tag per resource on every operation, and one example
per problem type, generated from the problem table (:data:`.problems.PROBLEMS`), never written by hand."""

from __future__ import annotations

import re
from typing import Any

from .problems import MEDIA_TYPE, PROBLEMS

__all__ = ["TAGS", "tag_of", "problem_examples", "add_tags_and_examples"]

#: The request id the examples show (every problem carries the id of the request it answers).
EXAMPLE_REQUEST_ID = "5c1f0e6a9b2d4c7e"
#: The tags, in the order the documentation lists them.
TAGS = [
    {"name": "mechanisms", "description": "Publish, list, download, label and retire mechanism documents."},
    {"name": "reports", "description": "Upload privatised reports; a mechanism's collection windows."},
    {"name": "estimates", "description": "Estimates of P(S, U) from the reports (JSON, or CSV with Accept: text/csv)."},
    {"name": "designs", "description": "Design jobs: a mechanism designed and published from a public CSV."},
    {"name": "collections", "description": "Stable names whose mechanism the operator rotates."},
    {"name": "service", "description": "The index, health, readiness, metrics and this document."},
]

#: (path pattern, tag): the first that matches a path names its resource.
_RULES = [
    (re.compile(r"/v1/(mechanisms|collections)/\{[^}]+\}/estimate$"), "estimates"),
    (re.compile(r"/v1/mechanisms/\{[^}]+\}/windows$"), "reports"),
    (re.compile(r"/v1/reports"), "reports"),
    (re.compile(r"/v1/mechanisms"), "mechanisms"),
    (re.compile(r"/v1/designs"), "designs"),
    (re.compile(r"/v1/collections"), "collections"),
    (re.compile(r"/(healthz|readyz|metrics|openapi\.json)?$"), "service"),
]
_REASON = re.compile(r"[a-z]+(?:-[a-z]+)*")


def tag_of(path: str) -> str:
    """The tag of the operations on ``path`` (KeyError for a path no rule covers: a new resource needs one)."""
    for pattern, tag in _RULES:
        if pattern.match(path):
            return tag
    raise KeyError(f"no OpenAPI tag for {path}: add a rule to rldp.aggregator.http.openapi_tags")


def problem_examples() -> dict[str, Any]:
    """``components.examples``: one problem+json body per problem type, from its title and description."""
    return {
        reason: {
            "summary": f"{kind.status} {reason}: {kind.title}",
            # Built here, not by Problem.to_dict: that adds the id of the request being answered.
            "value": {
                "type": kind.uri,
                "title": kind.title,
                "status": kind.status,
                "detail": kind.description,
                "reason": reason,
                "request_id": EXAMPLE_REQUEST_ID,
            },
        }
        for reason, kind in PROBLEMS.items()
    }


def _examples_for(response: dict[str, Any], status: str) -> None:
    """Reference the example of every problem type a problem response's description names (by its slug)
    and whose status it is: each error answer shows its own types, not the schema's first enum value."""
    content = response.get("content", {}).get(MEDIA_TYPE)
    if content is None:
        return
    named = [r for r in _REASON.findall(response.get("description", "")) if r in PROBLEMS]
    reasons = [r for r in dict.fromkeys(named) if str(PROBLEMS[r].status) == status]
    if reasons:
        content["examples"] = {r: {"$ref": f"#/components/examples/{r}"} for r in reasons}


def add_tags_and_examples(document: dict[str, Any]) -> dict[str, Any]:
    """Tag every operation of ``document`` and give its problem responses their examples (in place; returned)."""
    for path, item in document["paths"].items():
        for operation in item.values():
            operation.setdefault("tags", [tag_of(path)])
            for status, response in operation.get("responses", {}).items():
                _examples_for(response, status)
    document["tags"] = [dict(t) for t in TAGS]
    document.setdefault("components", {})["examples"] = problem_examples()
    return document
