"""POST /v1/reports through Flask: the uncommon cases (chunked bodies, odd media types).

Nearly every upload is answered by :mod:`.fastpath` before Flask sees it; both call
:func:`submit`, so their answers are the same.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from rldp.aggregator.services import AggregatorService, Receipt

from .bodies import body_kind, decode, maybe_booleans, read_body
from .responses import current_service, respond

__all__ = ["blueprint", "receipt_answer", "submit"]

blueprint = Blueprint("reports", __name__)


def submit(
    service: AggregatorService, body: bytes, kind: str, authorization: str | None = None
) -> tuple[int, dict[str, Any]]:
    """Decode and store one batch; (HTTP status, receipt): 201 when stored now, 200 for a duplicate.
    ``authorization``: the request's Authorization header (a collection may require an upload token)."""
    receipt = service.submit_reports(
        decode(body, kind), maybe_bool=maybe_booleans(body, kind), authorization=authorization
    )
    return receipt_answer(receipt)


def receipt_answer(receipt: Receipt) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of a stored batch's receipt."""
    return (200 if receipt.duplicate else 201), receipt.to_dict()


@blueprint.post("/v1/reports")
def reports() -> Response:
    service = current_service()
    kind = body_kind()
    body = read_body(service.config["MAX_BODY_BYTES"])
    status, payload = submit(service, body, kind, request.headers.get("Authorization"))
    return respond(payload, status)
