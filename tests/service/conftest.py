"""Fixtures for the service tests: databases (SQLite, PostgreSQL) and live servers."""

from __future__ import annotations

import pytest
from service.rldp_live import BACKENDS, MAX_BODY, Databases, LiveServer


@pytest.fixture(scope="session")
def databases(tmp_path_factory):
    dbs = Databases(tmp_path_factory.mktemp("databases"))
    yield dbs
    dbs.cleanup()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def live_server(backend, databases, tmp_path_factory):
    """One live server per backend for the whole session (tests use fresh mechanisms)."""
    server = LiveServer(
        databases.url(backend), tmp_path_factory.mktemp(f"server-{backend}"), env={"RLDP_MAX_BODY_BYTES": str(MAX_BODY)}
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def http(app):
    """A test client of the module's in-process ``app`` fixture."""
    return app.test_client()
