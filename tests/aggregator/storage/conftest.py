"""Fixtures of the writer-process tests: a SQLite store with mechanisms to write to, and its writer."""

from __future__ import annotations

import msgpack
import pytest
from rldp_live import record

from rldp.aggregator.storage import open_storage
from rldp.aggregator.writer import WriterProcess

#: The active mechanism of :func:`sqlite_url` (6 outputs); ``"d" * 64`` is a retired one.
MID = "a" * 64


@pytest.fixture
def sqlite_url(tmp_path):
    url = f"sqlite:///{tmp_path}/w.sqlite3"
    store = open_storage(url)
    # A stand-in document: the service reads its (absent) collection and its claim.
    store.publish(record(MID), msgpack.packb({"privacy": {"notion": "rldp", "epsilon": 1.0}}))
    store.publish(record("d" * 64), b"doc")
    store.retire("d" * 64)
    store.close()
    return url


@pytest.fixture
def writer(sqlite_url):
    proc = WriterProcess(sqlite_url).start()
    yield proc
    proc.stop()
