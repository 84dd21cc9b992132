"""The refusals that cross the wire: the service raises one, answers it as an RFC 9457 problem, and the
client raises the same class again from that answer. One class each, here, for both sides.

* :class:`ServiceError`: the root of the service's refusals (``detail``: what was wrong; ``fields``: the
  problem's extension members that locate it). The service's other refusals are in
  :mod:`rldp.aggregator.services.errors`.
* :class:`ProblemError`: what the client raises for a permanent refusal (4xx other than 429);
  :class:`ServiceUnavailable` for a transient one (unreachable, 429, 5xx).
* :class:`TooFewReports` (409 too-few-reports / no-reports), :class:`CollectionPaused` (423
  collection-paused, transient) and :class:`CollectionRetired` (409 collection-retired; the client also
  raises it for a collection it sees retired): raised by the service and by the client.

Which problem type each class is, and which class each problem type is on the client (Python and
TypeScript), is checked against ``conformance/problems.json``.
"""

from __future__ import annotations

from typing import Any

from .errors import RldpError

__all__ = [
    "PROBLEM_MEMBERS",
    "ServiceError",
    "ProblemError",
    "TooFewReports",
    "ServiceUnavailable",
    "CollectionPaused",
    "CollectionRetired",
]

#: The members every problem carries (RFC 9457 and the service's own); the others are extension members.
PROBLEM_MEMBERS = frozenset({"type", "title", "status", "detail", "reason", "instance", "request_id"})


class ServiceError(RldpError):
    """A refused request. ``detail`` says what was wrong; ``fields`` locate it."""

    def __init__(self, detail: str, **fields: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fields = fields


class ProblemError(RldpError, ValueError):
    """The service refused a request permanently (4xx other than 429); retrying will not help.

    ``reason`` is the problem type's slug (e.g. ``"report-out-of-range"``), ``type`` its URI,
    ``detail`` the server's explanation, ``problem`` the whole RFC 9457 body, ``fields`` its extension
    members.
    """

    def __init__(self, status: int, problem: dict[str, Any], receipt: Any = None) -> None:
        kind = str(problem.get("type", "about:blank"))
        reason = str(problem.get("reason") or kind.rstrip("/").rsplit("/", 1)[-1])
        title, detail = str(problem.get("title", "")), str(problem.get("detail", ""))
        super().__init__(f"{int(status)} {reason}: {detail or title}")  # first: a ServiceError base sets detail too
        self.status = int(status)
        self.problem = dict(problem)
        self.type = kind
        self.reason = reason
        self.title = title
        self.detail = detail
        self.fields = {k: v for k, v in self.problem.items() if k not in PROBLEM_MEMBERS}
        self.receipt = receipt


class TooFewReports(ProblemError, ServiceError):
    """The server refused an estimate because the mechanism or collection has fewer reports than its minimum:
    409 too-few-reports, or 409 no-reports (none at all). ``reports``: how many it has (0 for no-reports);
    ``min_reports``: how many an estimate needs (None from a server that does not say).

    The service raises it with :meth:`refused`; the client builds it from the answer."""

    def __init__(self, status: int, problem: dict[str, Any], receipt: Any = None) -> None:
        super().__init__(status, problem, receipt)
        self.reports = _int_or_none(problem.get("reports"))
        if self.reports is None and self.reason == "no-reports":
            self.reports = 0
        self.min_reports = _int_or_none(problem.get("min_reports"))

    @classmethod
    def refused(cls, detail: str, **fields: Any) -> TooFewReports:
        """The service's refusal: 409 too-few-reports, ``fields`` (``reports``, ``min_reports``, …) as members."""
        return cls(409, {"reason": "too-few-reports", "detail": detail, **fields})


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ServiceUnavailable(RldpError, OSError):
    """The service could not be reached, or kept answering 429/5xx, after every retry.

    Transient: the same request (same batch ids) can be sent again later; an offline
    queue (``Client(queue_path=...)``) does that automatically on :meth:`Client.flush`.
    ``status`` is the last HTTP status (None for connection errors).
    """

    def __init__(self, message: str, status: int | None = None, receipt: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.receipt = receipt


class CollectionPaused(ServiceUnavailable, ServiceError):
    """The collection's drift policy paused its current mechanism (problem ``collection-paused``).

    Transient, like :class:`ServiceUnavailable`: nothing was stored; the client keeps the batch
    (offline queue, or the state file's outbox for windowed batches) and sends it again with the
    same id on :meth:`Client.flush` once the operator resumes the collection. ``detail``: why.
    The service raises it with :meth:`refused` (``fields``: the mechanism and the collection)."""

    def __init__(self, message: str, detail: str = "", receipt: Any = None, **fields: Any) -> None:
        super().__init__(message, status=423, receipt=receipt)
        self.detail = detail
        self.fields = fields

    @classmethod
    def refused(cls, detail: str, **fields: Any) -> CollectionPaused:
        """The service's refusal (423 collection-paused), ``fields`` as the problem's members."""
        return cls(detail, detail, **fields)


class CollectionRetired(ServiceError):
    """The collection was retired by its operator: it takes no more reports and cannot rotate (its history and
    estimates stay). The service answers it 409 collection-retired; the client raises it for a collection it
    follows (``Client.collection(name)``) once it sees it retired."""
