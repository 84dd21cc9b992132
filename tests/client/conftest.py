"""Fixtures for the client's unit tests: a recording stub aggregator (:mod:`aggregator_stub`).

Nothing here imports the aggregator: these tests run on a client-only install
(``make test-client-only``). Tests against the real service use the ``server`` fixture of
tests/conftest.py and are marked ``live``.
"""

from __future__ import annotations

from typing import Any

import pytest
from aggregator_stub import Aggregator


@pytest.fixture
def aggregator():
    made: list[Aggregator] = []

    def make(*documents: dict[str, Any]) -> Aggregator:
        made.append(Aggregator(list(documents)))
        return made[-1]

    yield make
    for agg in made:
        agg.close()
