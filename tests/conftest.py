"""Session fixtures (constants live in helpers.py) and the ``live`` marker.

Every test that uses a live-server fixture (``server``, ``live_server``) or sits in
tests/integration/ is marked ``live``; ``make test-fast`` leaves them out. The live server is
imported only when a test asks for it, so tests/client runs on a client-only install.
"""

from __future__ import annotations

import gzip
import os as _os
from pathlib import Path

import pytest
from helpers import ADULT_COLUMNS, adult_path
from hypothesis import settings as _settings


@pytest.fixture(scope="session")
def adult_csv(tmp_path_factory) -> Path:
    """adult.data with a header row, as a plain CSV (the CLI's input format)."""
    src = adult_path()
    out = tmp_path_factory.mktemp("adult") / "adult.csv"
    with gzip.open(src, "rt") as fin, open(out, "w") as fout:
        fout.write(",".join(ADULT_COLUMNS) + "\n")
        for line in fin:
            if line.strip():
                fout.write(line)
    return out


@pytest.fixture(scope="session", autouse=True)
def _user_data_folder(tmp_path_factory):
    """The clients' default state file (rldp.client.defaults) in a temporary folder, never the tester's own."""
    old = _os.environ.get("XDG_DATA_HOME")
    _os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("user-data"))
    yield
    if old is None:
        _os.environ.pop("XDG_DATA_HOME", None)
    else:
        _os.environ["XDG_DATA_HOME"] = old


# Property tests draw the same examples on every run (reproducible CI); set
# RLDP_HYPOTHESIS_EXPLORE=1 to explore new examples locally.
_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
_settings.register_profile("explore", print_blob=True)
_settings.load_profile("explore" if _os.environ.get("RLDP_HYPOTHESIS_EXPLORE") else "ci")


LIVE_FIXTURES = frozenset({"server", "live_server"})
_INTEGRATION = Path(__file__).resolve().parent / "integration"


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if LIVE_FIXTURES & set(getattr(item, "fixturenames", ())) or _INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.live)


# ----------------------------------------------------------------------------- the aggregator's tests
# (tests/aggregator/{http,services,storage}, tests/integration): databases, the backend, a live server,
# a test client. The aggregator is imported inside the fixtures, so tests/client still collects on a
# client-only install.

#: The storage backends the aggregator's tests run on (PostgreSQL skips without RLDP_TEST_POSTGRES_URL).
BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def databases(tmp_path_factory):
    from rldp_live import Databases

    dbs = Databases(tmp_path_factory.mktemp("databases"))
    yield dbs
    dbs.cleanup()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def live_server(backend, databases, tmp_path_factory):
    """One live server per backend for the whole session (tests use fresh mechanisms)."""
    from rldp_live import MAX_BODY, LiveServer

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


# ----------------------------------------------------------------------------- the client's live tests


@pytest.fixture(scope="session")
def client_databases(tmp_path_factory):
    from rldp_live import Databases  # the aggregator: only for live tests

    dbs = Databases(tmp_path_factory.mktemp("client-databases"))
    yield dbs
    dbs.cleanup()


@pytest.fixture(scope="session")
def server(client_databases, tmp_path_factory):
    """A live aggregator (``rldp serve``, SQLite) on loopback for the whole session."""
    from rldp_live import LiveServer

    srv = LiveServer(client_databases.url("sqlite"), tmp_path_factory.mktemp("client-server"))
    srv.start()
    yield srv
    srv.stop()
