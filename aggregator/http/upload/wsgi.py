"""``POST /v1/reports`` under WSGI (``rldp serve --dev`` or ``--unbuffered``, Flask's test client).

The Flask route runs the upload's steps (:mod:`rldp.aggregator.http.upload`) blocking on the
storage's commit; Flask adds the request id, CORS, the access log and the metrics, as for every route.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from ..bodies import body_kind, decode, maybe_booleans, read_body
from ..operations import json_answer, operation, problem
from ..responses import current_service, respond
from .answers import PATH, receipt_answer

__all__ = ["blueprint"]

blueprint = Blueprint("reports", __name__)


@blueprint.post(PATH)
@operation(  # also the operation of the RSGI entry (:mod:`.rsgi`), which serves the same route
    "submitReports",
    "Upload a batch of privatised reports",
    description="Idempotent by (mechanism, batch): a retried identical batch is stored once and "
    "answered 200 with duplicate=true. A 2xx means the batch is committed "
    "(durable). Anything invalid refuses the whole batch; nothing is stored. A batch of a mechanism "
    "that collects by window carries its window's label and is counted in that window; a retry under "
    "another window is a batch-conflict. Uploads are anonymous unless the mechanism's collection requires "
    "an upload token (POST /v1/collections/{name}/upload-token): then 'Authorization: Bearer <token>'.",
    body="ReportBatch",
    answers={
        200: json_answer("BatchReceipt", "duplicate of a stored batch (stored once)"),
        201: json_answer("BatchReceipt", "stored"),
        401: problem(
            "upload-credential: the mechanism's collection requires its upload token "
            "(Authorization: Bearer), which the app gives its installs"
        ),
        404: problem("unknown-mechanism"),
        409: problem("batch-conflict / mechanism-retired"),
        410: problem("mechanism-withdrawn: paused by its collection, which has moved on"),
        422: problem(
            "missing-field / wrong-type / report-out-of-range / empty-batch / window-required / "
            "unexpected-window / invalid-window / future-window"
        ),
        423: problem("collection-paused: keep the batch and send it again later (Retry-After)"),
    },
)
def reports() -> Response:
    service = current_service()
    kind = body_kind()
    body = read_body(service.config["MAX_BODY_BYTES"])
    receipt = service.submit_reports(
        decode(body, kind), maybe_bool=maybe_booleans(body, kind), authorization=request.headers.get("Authorization")
    )
    status, payload = receipt_answer(receipt)
    return respond(payload, status)
