"""Fixtures for the client tests: a live aggregator on loopback (SQLite) to talk to."""

from __future__ import annotations

import pytest
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
