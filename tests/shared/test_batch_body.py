"""The upload body is built and parsed in one module (rldp.shared.reports): what one builds, the other reads."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.shared.errors import ValidationError
from rldp.shared.reports import batch_body, parse_batch


@pytest.mark.parametrize("window", [None, "2026-11-27"])
def test_the_body_the_client_builds_is_the_body_the_server_parses(window):
    reports = np.array([0, 3, 2, 2], dtype=np.uint8)
    body = batch_body("ab" * 32, "batch-1", reports, window)
    mechanism, batch, parsed = parse_batch(body, max_reports=10)
    assert (mechanism, batch, parsed) == ("ab" * 32, "batch-1", [0, 3, 2, 2])
    assert body.get("window") == window
    assert all(type(y) is int for y in body["reports"])  # plain ints: msgpack and JSON encode them alike


def test_a_bad_batch_id_is_refused_where_the_body_is_built():
    with pytest.raises(ValidationError, match="batch id"):
        batch_body("ab" * 32, "not a batch id!", [1], None)
