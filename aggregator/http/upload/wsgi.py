"""``POST /v1/reports`` under WSGI (``rldp serve --dev`` or ``--unbuffered``, Flask's test client).

The Flask route runs the upload's steps (:mod:`rldp.aggregator.http.upload`) blocking on the
storage's commit; Flask adds the request id, CORS, the access log and the metrics, as for every route.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from ..bodies import body_kind, decode, maybe_booleans, read_body
from ..responses import current_service, respond
from .answers import PATH, receipt_answer

__all__ = ["blueprint"]

blueprint = Blueprint("reports", __name__)


@blueprint.post(PATH)
def reports() -> Response:
    service = current_service()
    kind = body_kind()
    body = read_body(service.config["MAX_BODY_BYTES"])
    receipt = service.submit_reports(
        decode(body, kind), maybe_bool=maybe_booleans(body, kind), authorization=request.headers.get("Authorization")
    )
    status, payload = receipt_answer(receipt)
    return respond(payload, status)
