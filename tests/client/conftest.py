"""Fixtures for the client tests: a live aggregator on loopback (SQLite) to talk to, and a
recording stub aggregator (:mod:`aggregator_stub`)."""

from __future__ import annotations

from typing import Any

import pytest
from aggregator_stub import Aggregator
from service.rldp_live import Databases, LiveServer


@pytest.fixture(scope="session")
def client_databases(tmp_path_factory):
    dbs = Databases(tmp_path_factory.mktemp("client-databases"))
    yield dbs
    dbs.cleanup()


@pytest.fixture(scope="session")
def server(client_databases, tmp_path_factory):
    srv = LiveServer(client_databases.url("sqlite"), tmp_path_factory.mktemp("client-server"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def aggregator():
    made: list[Aggregator] = []

    def make(*documents: dict[str, Any]) -> Aggregator:
        made.append(Aggregator(list(documents)))
        return made[-1]

    yield make
    for agg in made:
        agg.close()
