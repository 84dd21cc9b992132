"""A design job with a numeric column (issue 38): ``numeric`` in the request, its bins in the payload's
alphabet, rows without a number dropped, and each bad form refused with the field named."""

from __future__ import annotations

import pytest

from rldp.aggregator.services.designs import design_request
from rldp.aggregator.services.errors import InvalidParameter
from rldp.shared.records import Alphabet

CSV = "sex,age\n" + "".join(f"{'Female' if i % 3 else 'Male'},{17 + (i * 7) % 70}\n" for i in range(300))
BODY = {"sensitive": "sex", "released": ["age"], "epsilon": 1.0, "method": "rr-released", "task": "distribution"}


def test_numeric_by_name_and_with_options() -> None:
    payload, _ = design_request({**BODY, "csv": CSV + "Male,\n", "numeric": ["age"]})
    alpha = Alphabet.from_dict(payload["alphabet"])
    spec = alpha.released[0].numeric
    assert spec is not None and spec.lo == 17 and spec.hi == 80
    assert payload["provenance"]["n"] == 300  # the row without an age was dropped
    assert payload["request"]["task"] == "distribution"
    payload, _ = design_request({**BODY, "csv": CSV, "numeric": {"age": {"edges": [17, 40, 90], "closed": "right"}}})
    spec = Alphabet.from_dict(payload["alphabet"]).released[0].numeric
    assert spec is not None and spec.edges == (17.0, 40.0, 90.0) and spec.closed == "right"


@pytest.mark.parametrize(
    "numeric, message",
    [
        ("age", "list of column names or an object"),
        (["height"], "not one of the request's columns"),
        ({"age": {"bins": 2.5}}, "must be an integer"),
        ({"age": {"range": [50, 20]}}, "is empty"),
        ({"age": {"range": [0]}}, "must be [lo, hi]"),
        ({"age": {"edges": [1, 1]}}, "strictly increasing"),
        ({"age": {"log": True}}, "keys among"),
    ],
)
def test_bad_numeric_is_refused(numeric: object, message: str) -> None:
    with pytest.raises(InvalidParameter, match="numeric") as info:
        design_request({**BODY, "csv": CSV, "numeric": numeric})
    assert message in str(info.value) and info.value.fields["parameter"] == "numeric"


def test_bad_task_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="task must be one of"):
        design_request({**BODY, "csv": CSV, "task": "median"})
