"""Safe defaults: Client memoises by default in the user's data folder; a memoised batch of several records
needs owners (a typed error); state_path=None turns memoisation off."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from aggregator_stub import grr_document

from rldp.client import DEFAULT_STATE, Client, OwnersRequired, default_state_path

RED = ("Male", "red")


def test_the_default_state_file_is_in_the_platforms_user_data_folder():
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann", "APPDATA": r"C:\Users\ann\AppData\Roaming"}
    assert default_state_path("linux", env) == Path("/data/ann/rldp/client-state.sqlite3")
    assert default_state_path("linux", {**env, "XDG_DATA_HOME": ""}) == Path(
        "/home/ann/.local/share/rldp/client-state.sqlite3"
    )
    assert default_state_path("linux", {**env, "XDG_DATA_HOME": "relative"}).parts[:3] == ("/", "home", "ann")
    assert default_state_path("darwin", env) == Path("/home/ann/Library/Application Support/rldp/client-state.sqlite3")
    assert default_state_path("win32", env) == Path(r"C:\Users\ann\AppData\Roaming") / "rldp" / "client-state.sqlite3"
    assert repr(DEFAULT_STATE) == "DEFAULT_STATE"


def test_a_client_memoises_by_default_and_refuses_a_batch_without_owners(aggregator):
    doc = grr_document()
    agg = aggregator(doc)
    expected = default_state_path()  # tests/conftest.py points XDG_DATA_HOME at a temporary folder
    assert str(expected).startswith(os.environ["XDG_DATA_HOME"])
    with Client(agg.url) as client:
        assert client.state is not None and Path(client.state.path) == expected
        first = client.privatize(doc["id"], [RED])
        for _ in range(10):  # the same record, the same draw: no averaging across app starts
            np.testing.assert_array_equal(client.privatize(doc["id"], [RED]), first)
        with pytest.raises(OwnersRequired, match="2 records and no owners") as info:
            client.submit(doc["id"], [RED, RED])
        assert isinstance(info.value, ValueError)
        assert not agg.posts  # refused before anything was drawn or sent
        assert client.submit(doc["id"], [RED, RED], owners=["ann", "bob"]).accepted == 2
        assert client.submit(doc["id"], [RED]).accepted == 1  # one record: the device owner's
    assert (expected.stat().st_mode & 0o777) == 0o600
    with Client(agg.url) as again:  # the next app start reads the same memo
        np.testing.assert_array_equal(again.privatize(doc["id"], [RED]), first)
    with Client(agg.url, state_path=None) as stateless:  # explicitly off: fresh draws, no owners needed
        assert stateless.state is None
        assert stateless.submit(doc["id"], [RED] * 50).accepted == 50


@pytest.mark.parametrize("window", [None, "P1D"])
def test_the_owners_refusal_advises_only_what_works_for_the_mechanism(aggregator, window):
    """Issue 37: OwnersRequired advised state_path=None, which a windowed mechanism then refused
    (ValidationError). Every step it advises is followed here, literally."""
    doc = grr_document(window=window)
    agg = aggregator(doc)
    with Client(agg.url) as client:
        with pytest.raises(OwnersRequired) as info:
            client.submit(doc["id"], [RED, RED, RED])
        advice = str(info.value)
        assert "owners=[one id per record]" in advice and "owners='<id>'" in advice
        assert client.submit(doc["id"], [RED, RED, RED], owners=["ann", "bob", "cat"]).accepted == 3
        assert client.submit(doc["id"], [RED, RED, RED], owners="dan").accepted == (1 if window else 3)
    if window is None:
        assert "state_path=None" in advice
        with Client(agg.url, state_path=None) as stateless:
            assert stateless.submit(doc["id"], [RED, RED, RED]).accepted == 3
    else:
        assert "state_path=None" not in advice and "collects by window" in advice
