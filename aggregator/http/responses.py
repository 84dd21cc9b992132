"""What the request handlers share: the app's service, JSON answers, timestamps."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Response, current_app

from rldp.aggregator.services import AggregatorService

from .bodies import JSON

__all__ = ["EXTENSION", "METRICS_EXTENSION", "current_service", "respond", "iso"]

#: The key of the app's :class:`AggregatorService` in ``app.extensions``.
EXTENSION = "rldp"
#: The key of the app's :class:`~rldp.aggregator.http.metrics.Metrics` in ``app.extensions``.
METRICS_EXTENSION = "rldp.metrics"


def current_service() -> AggregatorService:
    """The service of the app handling the current request."""
    return current_app.extensions[EXTENSION]


def respond(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """A compact JSON answer (NaN/Infinity refused: they are not JSON)."""
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return current_app.response_class(data, status=status, mimetype=JSON, headers=dict(headers or {}))


def iso(ts: float | None) -> str | None:
    """A Unix time as ISO 8601 UTC with milliseconds ("2024-05-01T12:00:00.000Z"), or None."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
