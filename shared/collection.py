"""Collection windows: when reports are counted, so that repeated reporting keeps its guarantee.

A mechanism document may carry ``"collection": {"window": "P1D"}``: the client then sends at
most one report per record owner, mechanism and window, labels each batch with its window,
and the service counts every batch in its window (estimates can be read per window).
Documents without ``collection`` behave as before: no windows.

Windows are the default (:data:`DEFAULT_WINDOW`, one day): every design, the pilot's included, and
every collection collects by window unless ``none`` is asked for explicitly (``rldp design --window
none``, ``"window": "none"`` or ``null`` in a request). Why: without a window a repeat reporter is
counted every time it reports, and an app that reports each start gives the aggregator as many
reports of one record as it has starts; the window bounds both (one report per owner and window).

A document may also carry a per-report layer, ``"collection": {"per_report": {"matrix": R,
"epsilon": ε₁}}`` (RAPPOR's instantaneous response on top of the memo): R is a |Y'| × |Y|
column-stochastic matrix, ``R[y'][y] = R(y'|y)``, applied afresh to the memoised Y on every
report, so one report is distributed as (R·Q)(·|x) and reveals at most ε₁ (the audit of R·Q
under the document's notion), while any number of reports reveal no more than the memoised
Y (the document's ε). This module checks the layer's structure; the numbers (shape against
Q, entries, stochasticity, ε₁ ≤ ε) are checked by :mod:`rldp.shared.document.schema`,
which knows Q.

The window length is an ISO 8601 duration of whole weeks, days, hours or minutes (``P1W``,
``P1D``, ``PT6H``, ``PT15M``; at least one minute). Windows are aligned on the Unix epoch in
UTC — window k covers [k·d, (k+1)·d) seconds — and a window's label is its start:
``"2026-11-24"`` when d is a whole number of days, ``"2026-11-24T05:00Z"`` otherwise.

numpy-free, standard library only (this module ships with the client).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import DocumentError, ValidationError
from .parameters import check_epsilon

__all__ = [
    "DEFAULT_WINDOW",
    "NO_WINDOW",
    "Window",
    "window_choice",
    "collection_window",
    "validate_collection",
    "PER_REPORT_FIELDS",
    "DRIFT_POLICIES",
    "drift_policy",
    "DEFAULT_CONTAMINATION",
    "DRIFT_MIN_REPORTS",
    "drift_contamination",
]

#: What a detected drift does to a collection (its ``policy.drift``; the service acts, the operator's CLI
#: offers them): ``warn`` (the default: event, log, banner, metrics), ``pause`` (its reports are refused
#: until the operator resumes it; clients keep them) or ``redesign`` (a design over the live reports'
#: confidence set, then a rotation clients follow).
DRIFT_POLICIES = ("warn", "pause", "redesign")


def drift_policy(policy: Any) -> str:
    """A collection's drift policy: its claim policy's ``drift``, ``warn`` when it names none."""
    return str(policy.get("drift", DRIFT_POLICIES[0]))


#: The contamination budget γ a collection gets when its policy names none: the share of a window's
#: reports that may be forged (uploads are anonymous) without the drift watch acting on them, nor the
#: confidence set of a pilot or a redesign moving off the honest population. The tables behind the
#: choice are in docs/experiments/field.md (``rldp experiment field``); docs/design.md says why.
DEFAULT_CONTAMINATION = 0.001
#: The fewest reports a window holds before the drift watch judges it: the start of a window (or a
#: window a forger filled early) cannot decide alone; see docs/design.md, "The drift watch under attack".
DRIFT_MIN_REPORTS = 1000


def drift_contamination(policy: Any) -> float:
    """A collection's contamination budget γ: its claim policy's ``contamination``, else the default."""
    return float(policy.get("contamination", DEFAULT_CONTAMINATION))


#: The collection window a design or a collection gets when none is named: one report per owner and day.
DEFAULT_WINDOW = "P1D"
#: The word that asks for no collection window (in a request, a flag or a form; ``null`` in JSON too).
NO_WINDOW = "none"

#: The fields of ``collection.per_report``: R (|Y'| × |Y|) and the single-report ε₁ it claims.
PER_REPORT_FIELDS = ("epsilon", "matrix")

_DURATION = re.compile(r"P(?:(?P<weeks>\d+)W|(?P<days>\d+)D|T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?)")
_DAY = 86_400
_UNITS = {"weeks": 7 * _DAY, "days": _DAY, "hours": 3_600, "minutes": 60}
_DAY_LABEL = "%Y-%m-%d"
_TIME_LABEL = "%Y-%m-%dT%H:%MZ"


@dataclass(frozen=True)
class Window:
    """A window length (``text`` as written in the document, ``seconds`` its length)."""

    text: str
    seconds: int

    @classmethod
    def parse(cls, text: Any) -> Window:
        """``"P1D"`` → Window("P1D", 86400); ValidationError naming what is allowed otherwise."""
        match = _DURATION.fullmatch(text) if isinstance(text, str) else None
        seconds = sum(int(v) * _UNITS[k] for k, v in match.groupdict().items() if v) if match else 0
        if seconds < 60:
            raise ValidationError(
                f"collection window must be an ISO 8601 duration of whole weeks, days, hours or minutes of at "
                f"least one minute, e.g. 'P1D', 'PT6H', 'PT15M'; got {text!r}"
            )
        return cls(text, seconds)

    def _format(self) -> str:
        return _DAY_LABEL if self.seconds % _DAY == 0 else _TIME_LABEL

    def label_at(self, timestamp: float) -> str:
        """The label of the window that contains ``timestamp`` (Unix seconds)."""
        start = int(timestamp // self.seconds) * self.seconds
        return datetime.fromtimestamp(start, UTC).strftime(self._format())

    def start_of(self, label: Any) -> int:
        """The Unix start of the window labelled ``label``; ValidationError if it is not one of its labels."""
        try:
            when = datetime.strptime(label, self._format()).replace(tzinfo=UTC) if isinstance(label, str) else None
        except ValueError:
            when = None
        start = int(when.timestamp()) if when is not None else -1
        if when is None or start % self.seconds != 0:
            example = self.label_at(0)
            raise ValidationError(
                f"{label!r} is not a window of this mechanism's collection ({self.text}, aligned on 1970-01-01 UTC); "
                f"labels look like {example!r}"
            )
        return start


def window_choice(value: Any) -> str | None:
    """A requested window in canonical form: ``None`` for :data:`NO_WINDOW` (or ``None``), else the
    duration's text after :meth:`Window.parse` (ValidationError naming what is allowed otherwise)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == NO_WINDOW):
        return None
    try:
        return Window.parse(value).text
    except ValidationError as exc:
        raise ValidationError(f"{exc} (or {NO_WINDOW!r} for no windows)") from None


def validate_collection(value: Any) -> dict[str, Any]:
    """The document's ``collection`` field checked (DocumentError naming the field otherwise)."""
    if not isinstance(value, Mapping):
        raise DocumentError(f"collection must be an object such as {{'window': 'P1D'}}, got {type(value).__name__}")
    unknown = set(value) - {"window", "per_report"}
    if unknown:
        raise DocumentError(f"collection has unknown field(s) {', '.join(sorted(unknown))}; known: per_report, window")
    if "window" in value:
        try:
            Window.parse(value["window"])
        except ValidationError as exc:
            raise DocumentError(str(exc)) from None
    if "per_report" in value:
        _validate_per_report(value["per_report"])
    return dict(value)


def _document_error(message: str, *, parameter: str) -> DocumentError:
    return DocumentError(message)


def _validate_per_report(layer: Any) -> None:
    """The structure of ``collection.per_report``: exactly ``matrix`` (a list of rows) and ``epsilon`` (> 0)."""
    if not isinstance(layer, Mapping):
        raise DocumentError(
            "collection.per_report must be an object {'matrix': R, 'epsilon': ε₁}, got " + type(layer).__name__
        )
    missing = [f for f in PER_REPORT_FIELDS if f not in layer]
    unknown = set(layer) - set(PER_REPORT_FIELDS)
    if missing or unknown:
        raise DocumentError(
            f"collection.per_report must have exactly the fields {' and '.join(PER_REPORT_FIELDS)}; "
            f"missing: {', '.join(missing) or 'none'}, unknown: {', '.join(sorted(unknown)) or 'none'}"
        )
    check_epsilon(layer["epsilon"], "collection.per_report.epsilon", error=_document_error)
    if not isinstance(layer["matrix"], list) or not layer["matrix"]:
        raise DocumentError(
            "collection.per_report.matrix must be a non-empty list of rows, R[y'][y] = R(y'|y), got "
            + repr(layer["matrix"])[:60]
        )


def collection_window(doc: Mapping[str, Any]) -> Window | None:
    """The collection window of a (validated) document, or None when it has none."""
    collection = doc.get("collection")
    if not isinstance(collection, Mapping) or "window" not in collection:
        return None
    return Window.parse(collection["window"])
