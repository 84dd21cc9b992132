"""RFC 9457 problem details: one stable ``type`` per reason the service refuses a request.

Every error the HTTP service returns is ``application/problem+json``::

    {"type": "https://rldp.dev/problems/report-out-of-range", "title": "Report out of range",
     "status": 422, "detail": "reports[3] is 12; every report must be an integer output index in [0, 10)",
     "reason": "report-out-of-range", ...extension members...}

Every problem also carries ``request_id``, the request's ``X-Request-Id`` (:mod:`.access`).
``type`` is the stable identifier clients switch on (``reason`` repeats its last path
segment for convenience; it is also the label of the rejection counter on /metrics).
Each type always comes with the same HTTP status. The reason of a refusal is chosen by
the *type* of the exception the services raised (:data:`REASONS`), never by its message;
the message becomes ``detail``. This module has no Flask dependency.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rldp.aggregator.services import (
    AuditFailed,
    BatchConflict,
    BatchError,
    BatchFieldType,
    BodySyntaxError,
    BodyTooLarge,
    DatabaseUnavailable,
    DocumentIdMismatch,
    EmptyBatch,
    FutureWindow,
    InvalidDocument,
    InvalidParameter,
    InvalidWindow,
    MechanismRetired,
    MissingBatchField,
    MissingField,
    NoReports,
    PublicDataMismatch,
    ReportOutOfRange,
    ServiceError,
    StorageError,
    TooFewReports,
    TooManyReports,
    Unauthorized,
    UnexpectedWindow,
    UnknownJob,
    UnknownMechanism,
    UnsupportedMediaType,
    WindowRequired,
    WrongType,
)

from .access import REQUEST_ID
from .collection_problems import COLLECTION_HEADERS, COLLECTION_PROBLEMS, COLLECTION_REASONS
from .storage_problems import STORAGE_PROBLEMS, storage_problem

__all__ = [
    "PROBLEM_BASE",
    "MEDIA_TYPE",
    "ProblemType",
    "PROBLEMS",
    "REASONS",
    "Problem",
    "problem_type_uri",
    "problem_for",
    "reason_of",
    "answer",
]

log = logging.getLogger("rldp.service")

PROBLEM_BASE = "https://rldp.dev/problems/"
MEDIA_TYPE = "application/problem+json"


@dataclass(frozen=True)
class ProblemType:
    """A reason for refusing a request: its slug, HTTP status and short human title."""

    reason: str
    status: int
    title: str
    description: str

    @property
    def uri(self) -> str:
        return PROBLEM_BASE + self.reason


_TYPES = [
    # -- request framing
    ProblemType(
        "invalid-json",
        400,
        "Body is not valid JSON",
        "The body was declared application/json but could not be parsed (syntax, encoding, NaN/Infinity).",
    ),
    ProblemType(
        "invalid-msgpack",
        400,
        "Body is not valid msgpack",
        "The body was declared application/msgpack but could not be decoded.",
    ),
    ProblemType("bad-request", 400, "Bad request", "The HTTP request itself was malformed."),
    ProblemType(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "The body's Content-Type is neither application/json nor application/msgpack.",
    ),
    ProblemType(
        "body-too-large",
        413,
        "Request body too large",
        "The body (or the number of reports in one batch) exceeds the server's limit; split the batch.",
    ),
    ProblemType(
        "request-timeout",
        408,
        "Request body too slow",
        "The body did not arrive within the server's deadline; nothing was stored. Send it again.",
    ),
    # -- reports
    ProblemType("missing-field", 422, "Missing field", "A required field of the request body is absent."),
    ProblemType(
        "wrong-type",
        422,
        "Field has the wrong type",
        "A field has the wrong JSON/msgpack type or format (e.g. a float or boolean where an integer "
        "report is expected, or a batch id that is not 1-128 characters of [A-Za-z0-9._:-]).",
    ),
    ProblemType(
        "report-out-of-range",
        422,
        "Report out of range",
        "A report is not an output index of the mechanism: every y must satisfy 0 <= y < outputs.",
    ),
    ProblemType("empty-batch", 422, "Empty batch", "A batch must hold at least one report."),
    ProblemType(
        "window-required",
        422,
        "Batch has no window",
        "The mechanism collects reports by window (its document's collection.window): every batch needs "
        "'window', the label of the window its reports belong to (the detail gives an example).",
    ),
    ProblemType(
        "unexpected-window",
        422,
        "Mechanism has no windows",
        "The batch carries a 'window' but its mechanism has no collection windows: send it without one.",
    ),
    ProblemType(
        "invalid-window",
        422,
        "Not a window of the mechanism",
        "The batch's 'window' is not the label of one of its mechanism's windows (aligned on 1970-01-01 UTC; "
        "'2026-11-24' for whole days, '2026-11-24T06:00Z' otherwise).",
    ),
    ProblemType(
        "future-window",
        422,
        "Window has not begun",
        "The batch's 'window' starts after the next window (one window of clock skew is allowed): the "
        "client's clock is wrong.",
    ),
    ProblemType(
        "batch-conflict",
        409,
        "Batch id already used with different reports",
        "A batch with this id was already stored for this mechanism with different content; "
        "batch ids must be unique per batch (retries must resend identical reports).",
    ),
    ProblemType("unknown-mechanism", 404, "Unknown mechanism", "No mechanism with this id is published here."),
    ProblemType(
        "mechanism-retired",
        409,
        "Mechanism retired",
        "The mechanism was retired: its document stays downloadable but it accepts no more reports.",
    ),
    # -- mechanisms and designs
    ProblemType(
        "invalid-document",
        422,
        "Invalid mechanism document",
        "The mechanism document is malformed (see rldp.shared.document).",
    ),
    ProblemType(
        "id-mismatch",
        422,
        "Mechanism id does not match its content",
        "The document's id is not the sha256 of its canonical content: it was altered after hashing.",
    ),
    ProblemType(
        "audit-failed",
        422,
        "Mechanism failed its privacy audit",
        "Recomputing the privacy audit from the matrix gives a larger epsilon than the document claims.",
    ),
    ProblemType(
        "public-data-mismatch",
        422,
        "Mechanism does not match the public data",
        "The document's public distribution, n, radius or counts hash differ from the public data the "
        "service checks against (PUBLIC_DATA), or its provenance contradicts its own P̂ and n; the "
        "detail names what differs.",
    ),
    ProblemType(
        "invalid-parameter",
        422,
        "Invalid parameter",
        "A design or estimate parameter is invalid (the detail names it and the accepted values).",
    ),
    ProblemType("unknown-job", 404, "Unknown design job", "No design job with this id exists."),
    ProblemType(
        "no-reports", 409, "No reports yet", "The mechanism has received no reports, so there is nothing to estimate."
    ),
    # 409 like no-reports: the request is right, the resource is not ready yet (ask again after more reports).
    ProblemType(
        "too-few-reports",
        409,
        "Too few reports to estimate",
        "The mechanism (or collection) has fewer reports than the service's minimum (MIN_REPORTS); "
        "'reports' says how many it has, 'min_reports' how many an estimate needs.",
    ),
    # -- HTTP level
    ProblemType(
        "unauthorized",
        401,
        "Unauthorized",
        "This endpoint needs 'Authorization: Bearer <token>' with a valid admin (or read) token.",
    ),
    ProblemType("not-found", 404, "Not found", "No such endpoint."),
    ProblemType("method-not-allowed", 405, "Method not allowed", "The endpoint does not support this HTTP method."),
    ProblemType("not-acceptable", 406, "Not acceptable", "None of the media types in Accept can be produced."),
    ProblemType("too-many-requests", 429, "Too many requests", "Slow down; retry after the Retry-After delay."),
    ProblemType(
        "service-unavailable",
        503,
        "Service unavailable",
        "The server is stopping, or its store cannot take writes; nothing was stored. Retry later.",
    ),
    ProblemType(
        "internal-error", 500, "Internal server error", "An unexpected error; nothing was stored. Please report it."
    ),
]

_TYPES += [ProblemType(*problem) for problem in (*COLLECTION_PROBLEMS, *STORAGE_PROBLEMS)]
PROBLEMS: dict[str, ProblemType] = {t.reason: t for t in _TYPES}

#: The problem reason of each refusal type (the most specific class in an exception's MRO wins).
REASONS: dict[type[BaseException], str] = {
    Unauthorized: "unauthorized",
    UnsupportedMediaType: "unsupported-media-type",
    BodyTooLarge: "body-too-large",
    TooManyReports: "body-too-large",
    MissingField: "missing-field",
    MissingBatchField: "missing-field",
    WrongType: "wrong-type",
    BatchFieldType: "wrong-type",
    ReportOutOfRange: "report-out-of-range",
    EmptyBatch: "empty-batch",
    WindowRequired: "window-required",
    UnexpectedWindow: "unexpected-window",
    InvalidWindow: "invalid-window",
    FutureWindow: "future-window",
    BatchConflict: "batch-conflict",
    UnknownMechanism: "unknown-mechanism",
    MechanismRetired: "mechanism-retired",
    InvalidDocument: "invalid-document",
    DocumentIdMismatch: "id-mismatch",
    AuditFailed: "audit-failed",
    PublicDataMismatch: "public-data-mismatch",
    InvalidParameter: "invalid-parameter",
    UnknownJob: "unknown-job",
    NoReports: "no-reports",
    TooFewReports: "too-few-reports",
    DatabaseUnavailable: "database-unavailable",
    **COLLECTION_REASONS,
}
#: A syntax error's reason follows the encoding the body was declared in.
_SYNTAX_REASONS = {"json": "invalid-json", "msgpack": "invalid-msgpack"}
#: Headers that always come with a reason.
_HEADERS = {
    "unauthorized": {"WWW-Authenticate": 'Bearer realm="rldp"'},
    "unsupported-media-type": {"Accept-Post": "application/json, application/msgpack"},
    "database-unavailable": {"Retry-After": "1"},
    "service-unavailable": {"Retry-After": "1"},
    **COLLECTION_HEADERS,
}


def problem_type_uri(reason: str) -> str:
    """The ``type`` URI of a reason, e.g. ``https://rldp.dev/problems/empty-batch``."""
    return PROBLEMS[reason].uri


class Problem(Exception):
    """An RFC 9457 problem to answer with. ``extra`` members are added to the body.

    ``Problem("report-out-of-range", "reports[3] is 12; ...", index=3, value=12, allowed=[0, 9])``
    """

    def __init__(self, reason: str, detail: str, *, headers: dict[str, str] | None = None, **extra: Any) -> None:
        if reason not in PROBLEMS:
            raise KeyError(f"unknown problem reason {reason!r}")
        super().__init__(detail)
        self.reason = reason
        self.type = PROBLEMS[reason]
        self.detail = detail
        self.headers = {**_HEADERS.get(reason, {}), **(headers or {})}
        self.extra = extra

    @property
    def status(self) -> int:
        return self.type.status

    def to_dict(self, instance: str | None = None) -> dict[str, Any]:
        """The problem+json body."""
        body: dict[str, Any] = {
            "type": self.type.uri,
            "title": self.type.title,
            "status": self.type.status,
            "detail": self.detail,
            "reason": self.reason,
        }
        if instance:
            body["instance"] = instance
        request_id = REQUEST_ID.get()
        if request_id:  # the id of the request answered (X-Request-Id): what to quote to an operator
            body["request_id"] = request_id
        for key, value in self.extra.items():
            if key not in body:
                body[key] = value
        return body

    def encode(self, instance: str | None = None) -> bytes:
        """The problem+json body as UTF-8 bytes."""
        return json.dumps(self.to_dict(instance), ensure_ascii=False, default=str).encode("utf-8")

    def __repr__(self) -> str:
        return f"Problem({self.reason!r}, {self.detail!r})"


def reason_of(exc: BaseException) -> str | None:
    """The problem reason of a refusal the services raised, or None (not a refusal)."""
    return _reason(exc)


def _reason(exc: BaseException) -> str | None:
    if isinstance(exc, BodySyntaxError):
        return _SYNTAX_REASONS[exc.encoding]
    for cls in type(exc).__mro__:
        if cls in REASONS:
            return REASONS[cls]
    return None


def problem_for(exc: BaseException, method: str, path: str) -> Problem:
    """The problem answering an exception raised while serving ``method path``.

    A refusal (:class:`ServiceError`, :class:`BatchError`) keeps its message as ``detail``
    and its ``fields`` as extension members; a storage failure is database-unavailable;
    anything else is an internal error (logged with its traceback, never shown).
    """
    if isinstance(exc, Problem):
        return exc
    reason = _reason(exc)
    if reason is not None and isinstance(exc, (ServiceError, BatchError)):
        detail = exc.detail if isinstance(exc, ServiceError) else str(exc)
        return Problem(reason, detail, **exc.fields)
    if isinstance(exc, StorageError):
        log.error("storage unavailable: %s", exc)
        return Problem(*storage_problem(exc))
    log.error("internal error on %s %s", method, path, exc_info=exc)
    return Problem("internal-error", f"unexpected {type(exc).__name__}; nothing was stored by this request")


def answer(exc: BaseException, method: str, path: str, count: Callable[[str], None]) -> tuple[Problem, bytes]:
    """(problem, encoded body) for an exception; ``count`` is told the reason (the rejection counter)."""
    problem = problem_for(exc, method, path)
    count(problem.reason)
    return problem, problem.encode(path)
