"""The OpenAPI operation of an API route, declared once, next to its handler::

    @blueprint.get("/v1/mechanisms/<mechanism_id>/windows")
    @operation("listWindows", "The collection windows with reports (admin or read token)", auth="read",
               answers={200: json_answer("Windows", "…"), 404: problem("unknown-mechanism")})
    def windows(mechanism_id: str) -> Response: ...

:func:`operation` records a typed :class:`Operation` on the view function; :mod:`.openapi` walks the app's
routes and assembles the document from them (the path, its path parameters and the method come from the
route itself). The answers every route of a kind shares are added here, not repeated by each route: a
401 for the routes behind a token, the body's refusals for the routes that take one, and the 405, 500 and
503 any route can give.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from rldp.aggregator.services import ESTIMATE_INTERVALS, ESTIMATE_METHODS, ESTIMATE_PRIORS

from .bodies import JSON, MSGPACK
from .problems import MEDIA_TYPE

__all__ = [
    "Fragment",
    "Operation",
    "operation",
    "operation_of",
    "problem",
    "json_answer",
    "estimate_answer",
    "LOCATION",
    "ESTIMATE_PARAMETERS",
    "ESTIMATE_PROBLEMS",
]

#: An OpenAPI object (a response, a parameter, a header…), as it appears in the document.
Fragment = dict[str, Any]
View = TypeVar("View", bound=Callable[..., Any])
#: Who may call a route: the admin token, or the admin or a read token (both a bearer token).
Auth = Literal["admin", "read"]

#: The attribute of a view function that holds its :class:`Operation`.
_ATTRIBUTE = "__rldp_operation__"


def problem(description: str) -> Fragment:
    """A problem+json answer; ``description`` names its problem types by their slugs (each gets its example)."""
    return {"description": description, "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


def json_answer(schema: str, description: str, headers: Mapping[str, Any] | None = None) -> Fragment:
    """A JSON answer whose body is the component schema ``schema``."""
    out: Fragment = {
        "description": description,
        "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }
    if headers:
        out["headers"] = dict(headers)
    return out


def estimate_answer(schema: str) -> Fragment:
    """An estimate's 200: JSON, or with ``Accept: text/csv`` the dashboard's estimate.csv rows."""
    out = json_answer(schema, "the estimate with 95 % intervals (CSV with Accept: text/csv; JSON otherwise)")
    out["content"]["text/csv"] = {
        "schema": {"type": "string"},
        "example": "table,attribute,category,estimate,ci95_low,ci95_high,identified,public\n"
        "joint,S × U,Female | red,0.12,0.09,0.15,True,0.1\n",
    }
    return out


#: The header of an answer that created something (201, 202).
LOCATION = {"Location": {"schema": {"type": "string"}}}

#: The query parameters of an estimate (of a mechanism or of a collection), but its window.
ESTIMATE_PARAMETERS: tuple[Fragment, ...] = (
    {"name": "method", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_METHODS)}},
    {"name": "interval", "in": "query", "schema": {"type": "string", "enum": list(ESTIMATE_INTERVALS)}},
    {
        "name": "prior",
        "in": "query",
        "schema": {"type": "string", "enum": list(ESTIMATE_PRIORS)},
        "description": "where EM starts (and what prior_weight regularises towards)",
    },
    {"name": "prior_weight", "in": "query", "schema": {"type": "number", "minimum": 0}},
)
#: The refusals of an estimate's request, besides the unknown mechanism or collection.
ESTIMATE_PROBLEMS: Mapping[int, Fragment] = {
    409: problem("no-reports / too-few-reports"),
    422: problem("invalid-parameter"),
}

#: The answer of a route behind a token to a request without a valid one.
_UNAUTHORIZED = problem("unauthorized: missing or invalid bearer token")
#: The refusals of a request body (:mod:`.bodies`, and the front's size limit and deadline).
_BODY_ERRORS = {
    "400": problem("invalid-json / invalid-msgpack / bad-request (also: an incomplete body)"),
    "408": problem("request-timeout (the body did not arrive within BODY_TIMEOUT)"),
    "413": problem("body-too-large"),
    "415": problem("unsupported-media-type"),
}
#: What any route may answer.
_COMMON = {
    "405": problem("method-not-allowed"),
    "500": problem("internal-error (never for client input)"),
    "503": problem("database-unavailable, store-full or service-unavailable (retry later; nothing stored)"),
}


@dataclass(frozen=True)
class Operation:
    """What the OpenAPI document says of one route's method (see the module docstring).

    ``answers``: the route's own answers by status; ``auth``: the token it requires, if any;
    ``parameters``: its query and header parameters (the path's come from the route);
    ``body``: the component schema of its request body (JSON or msgpack), if it takes one."""

    operation_id: str
    summary: str
    answers: Mapping[int, Fragment]
    description: str | None = None
    auth: Auth | None = None
    parameters: tuple[Fragment, ...] = ()
    body: str | None = None

    def responses(self) -> dict[str, Fragment]:
        """Every answer by status: the route's own, then those of its kind (token, body) and of every route."""
        out = {str(status): answer for status, answer in self.answers.items()}
        if self.auth is not None:
            out.setdefault("401", _UNAUTHORIZED)
        if self.body is not None:
            for status, answer in _BODY_ERRORS.items():
                out.setdefault(status, answer)
        for status, answer in _COMMON.items():
            out.setdefault(status, answer)
        return deepcopy(dict(sorted(out.items())))

    def document(self, path_parameters: list[Fragment]) -> Fragment:
        """The operation object of the document (a fresh dict): ``path_parameters`` are its route's."""
        out: Fragment = {"summary": self.summary, "operationId": self.operation_id}
        if self.description is not None:
            out["description"] = self.description
        if self.auth is not None:
            out["security"] = [{"bearerAuth": []}]
        parameters = [*path_parameters, *self.parameters]
        if parameters:
            out["parameters"] = deepcopy(parameters)
        if self.body is not None:
            ref = {"$ref": f"#/components/schemas/{self.body}"}
            out["requestBody"] = {"required": True, "content": {JSON: {"schema": ref}, MSGPACK: {"schema": dict(ref)}}}
        out["responses"] = self.responses()
        return out


def operation(
    operation_id: str,
    summary: str,
    *,
    answers: Mapping[int, Fragment],
    description: str | None = None,
    auth: Auth | None = None,
    parameters: tuple[Fragment, ...] = (),
    body: str | None = None,
) -> Callable[[View], View]:
    """Declare the OpenAPI operation of the view it decorates (under the blueprint's route decorator)."""
    declared = Operation(operation_id, summary, answers, description, auth, parameters, body)

    def declare(view: View) -> View:
        setattr(view, _ATTRIBUTE, declared)
        return view

    return declare


def operation_of(view: Callable[..., Any]) -> Operation | None:
    """The operation declared on ``view`` by :func:`operation`, or None."""
    declared = getattr(view, _ATTRIBUTE, None)
    return declared if isinstance(declared, Operation) else None
