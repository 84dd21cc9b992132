"""Collection windows: parsing, labels, alignment, and the document field."""

from __future__ import annotations

import pytest

from rldp.shared.collection import Window, collection_window, validate_collection
from rldp.shared.errors import DocumentError, ValidationError

T = 1_795_500_000  # 2026-11-24T06:00:00Z


@pytest.mark.parametrize(
    ("text", "seconds", "label"),
    [
        ("P1D", 86_400, "2026-11-24"),
        ("PT6H", 21_600, "2026-11-24T06:00Z"),
        ("PT15M", 900, "2026-11-24T06:00Z"),
        ("P1W", 604_800, "2026-11-19"),
        ("PT1H30M", 5_400, "2026-11-24T06:00Z"),
    ],
)
def test_windows_are_aligned_on_the_epoch(text: str, seconds: int, label: str) -> None:
    w = Window.parse(text)
    assert w.seconds == seconds and w.label_at(T) == label
    assert w.start_of(label) <= T < w.start_of(label) + seconds
    assert w.label_at(w.start_of(label) + seconds - 1) == label != w.label_at(w.start_of(label) + seconds)


@pytest.mark.parametrize("text", ["P0D", "1D", "PT30S", "P1DT2H", "", None, 1, "P-1D"])
def test_bad_windows_say_what_is_allowed(text: object) -> None:
    with pytest.raises(ValidationError, match="ISO 8601 duration of whole weeks, days, hours or minutes"):
        Window.parse(text)


def test_labels_must_be_window_starts() -> None:
    w = Window.parse("P1D")
    with pytest.raises(ValidationError, match="not a window of this mechanism's collection"):
        w.start_of("2026-11-24T01:00Z")
    with pytest.raises(ValidationError, match="labels look like '1970-01-01'"):
        w.start_of(20261124)


def test_the_document_field() -> None:
    assert collection_window({"collection": {"window": "PT6H"}}) == Window("PT6H", 21_600)
    assert collection_window({}) is None
    with pytest.raises(DocumentError, match="unknown field"):
        validate_collection({"window": "P1D", "every": 2})
    with pytest.raises(DocumentError, match="must be an object"):
        validate_collection("P1D")
