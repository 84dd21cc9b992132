"""The report batch: what a client uploads and what the aggregator stores.

A batch is ``{"mechanism": <id>, "batch": <client-chosen id>, "reports": [y, ...]}`` with
each y an output index in ``[0, |Y|)`` of that mechanism, and ``"window": <label>`` when the
mechanism collects by window (:mod:`rldp.shared.collection`). :func:`parse_batch` checks its
form, :func:`check_reports` its reports and :func:`check_window` its window against the
mechanism; each refusal is its own :class:`~rldp.shared.errors.ReportError` subclass (the
service answers each with its own problem type) and names the offending field or report.

Stored and hashed in one exact binary form: the reports as little-endian unsigned integers
of the smallest width that holds ``|Y| - 1`` (:func:`pack_reports`). The SHA-256 of that
form tells a retried batch from a different batch sent under the same id.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

import array
import hashlib
import re
from typing import Any

import numpy as np

from .collection import Window
from .errors import ReportError, ValidationError

__all__ = [
    "BATCH_ID",
    "BatchError",
    "MissingBatchField",
    "BatchFieldType",
    "EmptyBatch",
    "TooManyReports",
    "ReportOutOfRange",
    "WindowRequired",
    "UnexpectedWindow",
    "InvalidWindow",
    "FutureWindow",
    "NO_WINDOW",
    "json_type",
    "describe_value",
    "batch_body",
    "parse_batch",
    "check_reports",
    "check_window",
    "report_dtype",
    "pack_reports",
    "unpack_reports",
    "encode_batch",
    "batch_counts",
]

#: A batch id: 1-128 characters of [A-Za-z0-9._:-] (e.g. a UUID), chosen by the client.
BATCH_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_SHAPE = (
    '{"mechanism": "<id>", "batch": "<batch id>", "reports": [y, ...]} (plus "window" if the mechanism has windows)'
)
#: The window label of a batch of a mechanism without collection windows.
NO_WINDOW = ""


# --------------------------------------------------------------------------- refusals


class BatchError(ReportError):
    """A refused batch; ``fields`` says where (``field``, ``index``, ``allowed``, ``limit``...)."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.fields = fields


class MissingBatchField(BatchError):
    """The batch has no ``mechanism``, ``batch`` or ``reports`` field."""


class BatchFieldType(BatchError):
    """A field (or a report) has the wrong type or format: a float or boolean report, a bad batch id..."""


class EmptyBatch(BatchError):
    """``reports`` is empty."""


class TooManyReports(BatchError):
    """The batch holds more reports than the server accepts in one batch."""


class ReportOutOfRange(BatchError):
    """A report is an integer but not an output index of the mechanism."""


class WindowRequired(BatchError):
    """The mechanism collects by window and the batch has no ``window`` label."""


class UnexpectedWindow(BatchError):
    """The batch has a ``window`` label but its mechanism has no collection windows."""


class InvalidWindow(BatchError):
    """The ``window`` is not the label of one of the mechanism's windows (type, format, alignment)."""


class FutureWindow(BatchError):
    """The ``window`` starts after the next window: beyond one window of clock skew."""


# --------------------------------------------------------------------------- validation


def json_type(value: Any) -> str:
    """The JSON/msgpack name of a decoded value's type ("integer", "array", "binary"...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (bytes, bytearray)):
        return "binary"
    return type(value).__name__


def describe_value(value: Any) -> str:
    """A short description of a decoded value for messages: its repr (cut at 60 characters) and type."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({json_type(value)})"


def batch_body(mechanism: str, batch: str, reports: np.ndarray | list[int], window: str | None) -> dict[str, Any]:
    """The upload body of one batch, as :func:`parse_batch` reads it (the client packs it as msgpack):
    ``{"mechanism": id, "batch": batch id, "reports": [y, …]}`` plus ``"window": label`` when the
    mechanism collects by window."""
    if not BATCH_ID.fullmatch(batch):
        raise ValidationError(f"batch id {batch!r} must be 1-128 characters of [A-Za-z0-9._:-]")
    values = reports.tolist() if isinstance(reports, np.ndarray) else list(reports)
    body: dict[str, Any] = {"mechanism": mechanism, "batch": batch, "reports": values}
    if window is not None:
        body["window"] = window
    return body


def parse_batch(data: Any, max_reports: int) -> tuple[Any, str, list[Any]]:
    """Check the form of a decoded batch; (mechanism, batch id, reports).

    The mechanism id is only checked to be a string here (whether it is published is the
    aggregator's question); the reports only to be a non-empty list of at most
    ``max_reports`` items (:func:`check_reports` checks each against the mechanism).
    """
    if not isinstance(data, dict):
        raise BatchFieldType(f'the body must be an object {{"mechanism", "batch", "reports"}}; got {json_type(data)}')
    for name in ("mechanism", "batch", "reports"):
        if name not in data:
            raise MissingBatchField(f"the body has no {name!r} field; expected {_SHAPE}", field=name)
    mechanism, batch, reports = data["mechanism"], data["batch"], data["reports"]
    if not isinstance(mechanism, str):
        raise BatchFieldType(
            f"'mechanism' must be a string (the mechanism id); got {describe_value(mechanism)}", field="mechanism"
        )
    if not isinstance(batch, str) or not BATCH_ID.fullmatch(batch):
        raise BatchFieldType(
            f"'batch' must be a string of 1-128 characters from [A-Za-z0-9._:-] "
            f"(e.g. a UUID); got {describe_value(batch)}",
            field="batch",
        )
    if not isinstance(reports, list):
        raise BatchFieldType(f"'reports' must be an array of integers; got {describe_value(reports)}", field="reports")
    if not reports:
        raise EmptyBatch("'reports' is empty; a batch must hold at least one report", field="reports")
    if len(reports) > max_reports:
        raise TooManyReports(
            f"the batch has {len(reports)} reports; the limit is {max_reports} per batch (MAX_BATCH_REPORTS); split it",
            limit=max_reports,
        )
    return mechanism, batch, reports


def check_reports(reports: list[Any], outputs: int, *, maybe_bool: bool = True) -> np.ndarray:
    """The reports as an integer array, refusing anything but integers in [0, outputs)
    (booleans and floats too).

    ``maybe_bool=False`` is a promise that no report is a boolean (the caller saw no
    boolean in the encoded body), which skips a scan of every element.
    """
    if outputs <= 256:
        # bytearray() refuses non-integers and values outside 0..255 in one fast C loop;
        # on any refusal the general path below names the offending report.
        try:
            arr = np.frombuffer(bytearray(reports), dtype=np.uint8)
        except (TypeError, ValueError):
            pass
        else:
            return _in_range(arr, reports, outputs, maybe_bool)
    try:
        # array('q') refuses floats, strings, null and containers in one C loop.
        arr = np.frombuffer(array.array("q", reports), dtype=np.int64)
    except TypeError:
        i, v = next((i, v) for i, v in enumerate(reports) if type(v) is not int and type(v) is not bool)
        raise BatchFieldType(
            f"reports[{i}] is {describe_value(v)}; every report must be an integer output index in [0, {outputs})",
            field="reports",
            index=i,
        ) from None
    except OverflowError:
        i, v = next((i, v) for i, v in enumerate(reports) if not -(1 << 63) <= v < (1 << 63))
        raise ReportOutOfRange(
            f"reports[{i}] is {v}; every report must be an integer in [0, {outputs})",
            field="reports",
            index=i,
            allowed=[0, outputs - 1],
        ) from None
    return _in_range(arr, reports, outputs, maybe_bool)


def _in_range(arr: np.ndarray, reports: list[Any], outputs: int, maybe_bool: bool) -> np.ndarray:
    # Booleans are ints to array() and bytearray(), so they pass the loops above.
    if maybe_bool and bool in set(map(type, reports)):
        i = next(i for i, v in enumerate(reports) if type(v) is bool)
        raise BatchFieldType(
            f"reports[{i}] is {describe_value(reports[i])}; every report must be an integer "
            f"output index in [0, {outputs}), not a boolean",
            field="reports",
            index=i,
        )
    lo = 0 if arr.dtype == np.uint8 else int(arr.min())  # bytearray's bytes: never negative
    hi = int(arr.max())
    if lo < 0 or hi >= outputs:
        i = int(np.argmax((arr < 0) | (arr >= outputs)))
        raise ReportOutOfRange(
            f"reports[{i}] is {int(arr[i])}; this mechanism has {outputs} outputs, so every "
            f"report must be an integer in [0, {outputs - 1}]",
            field="reports",
            index=i,
            allowed=[0, outputs - 1],
        )
    return arr


def check_window(data: dict[str, Any], window: Window | None, now: float) -> str:
    """The batch's window label checked against its mechanism's collection ``window``; ``NO_WINDOW``
    ("") for a mechanism without windows.

    Rule: a mechanism with windows needs a label L that is exactly ``window.label_at(start)``
    for a window start, with start ≤ (start of the window holding ``now``) + one window —
    the current window, any past one (a late upload from an offline queue), or the next one
    (a client clock up to one window ahead). Why: the client's guarantee holds per window (at
    most one report per record owner), so each batch is counted in the window it claims.
    A mechanism without windows takes no label (``"window": null`` is the same as none).
    """
    value = data.get("window")
    if window is None:
        if value is not None:
            raise UnexpectedWindow(
                f"'window' is {describe_value(value)} but this mechanism has no collection windows "
                "(its document has no 'collection'); send the batch without 'window'",
                field="window",
            )
        return NO_WINDOW
    current = window.label_at(now)
    if value is None:
        raise WindowRequired(
            f"this mechanism collects reports by window ({window.text}): the batch needs 'window', the label "
            f"of the window its reports belong to, e.g. {current!r} (the current one)",
            field="window",
            example=current,
        )
    try:
        if not isinstance(value, str):
            raise ValidationError("a label is a string")
        start = window.start_of(value)
        if window.label_at(start) != value:  # strptime also reads '2026-1-5': one label per window
            raise ValidationError("not in canonical form")
    except ValidationError:
        raise InvalidWindow(
            f"'window' is {describe_value(value)}, not the label of a window of this mechanism's collection "
            f"({window.text}, aligned on 1970-01-01 UTC); labels look like {current!r} (the current window)",
            field="window",
            example=current,
        ) from None
    latest = (int(now // window.seconds) + 1) * window.seconds
    if start > latest:
        raise FutureWindow(
            f"'window' {value!r} has not begun: a batch may be labelled with the current window "
            f"({current!r}), a past one, or the next one ({window.label_at(latest)!r}, one window of "
            "clock skew); check the client's clock",
            field="window",
            example=current,
        )
    return value


# --------------------------------------------------------------------------- stored form


def report_dtype(outputs: int) -> np.dtype:
    """The smallest little-endian unsigned dtype that holds every output index of ``outputs``."""
    if outputs <= 1 << 8:
        return np.dtype("<u1")
    if outputs <= 1 << 16:
        return np.dtype("<u2")
    return np.dtype("<u4")


def pack_reports(reports: np.ndarray, outputs: int) -> bytes:
    """Reports (validated integers in [0, outputs)) as little-endian bytes of the smallest width."""
    return np.ascontiguousarray(reports, dtype=report_dtype(outputs)).tobytes()


def unpack_reports(data: bytes, outputs: int) -> np.ndarray:
    """Inverse of :func:`pack_reports` (int64 array)."""
    return np.frombuffer(data, dtype=report_dtype(outputs)).astype(np.int64)


def encode_batch(reports: np.ndarray, outputs: int) -> tuple[bytes, str, bytes, np.ndarray]:
    """(SHA-256 of the packed reports, encoding, payload, counts) for storing one batch.

    The payload is the packed reports ("reports") or the uint32 per-output counts
    ("counts"), whichever is smaller; both are exact.
    """
    packed = pack_reports(reports, outputs)
    counts = np.bincount(reports, minlength=outputs)
    if len(packed) <= 4 * outputs:
        return hashlib.sha256(packed).digest(), "reports", packed, counts
    return hashlib.sha256(packed).digest(), "counts", counts.astype("<u4").tobytes(), counts


def batch_counts(encoding: str, payload: bytes, outputs: int) -> np.ndarray:
    """Per-output counts of a stored batch (either encoding)."""
    if encoding == "counts":
        return np.frombuffer(payload, dtype="<u4").astype(np.int64)
    return np.bincount(unpack_reports(payload, outputs), minlength=outputs)
