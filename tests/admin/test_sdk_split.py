"""The app's SDK (rldp.client) apart from the operator's (rldp.admin): the app's Client carries none of the
operator's calls and says where each went; importing rldp.client loads nothing of rldp.admin; the operator's
AdminClient speaks through the client's transport; a Collection needs only the public CollectionHost protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import requests
from requests.adapters import BaseAdapter

from rldp.admin import AdminClient
from rldp.client import Client, Collection, CollectionRetired
from rldp.client.reads import MOVED_TO_ADMIN, ReadCalls

BASE = "http://stub.invalid"


def test_the_app_client_has_no_operator_call_and_names_where_each_went() -> None:
    client = Client(BASE, state_path=None)
    for name in sorted(MOVED_TO_ADMIN):
        assert not hasattr(client, name), name
        with pytest.raises(AttributeError, match=rf"Client\.{name} moved to .*rldp\.admin\.AdminClient"):
            getattr(client, name)
        assert callable(getattr(AdminClient, name)), name  # the table names calls AdminClient has
    with pytest.raises(AttributeError, match="has no attribute 'publsh'"):
        _ = client.publsh  # type: ignore[attr-defined]  # any other name: the usual AttributeError
    client.close()


def test_every_operator_call_of_adminclient_is_in_the_moved_table() -> None:
    """What AdminClient adds to the reads both clients share is exactly what the app's Client no longer has."""
    added = {n for n in vars(AdminClient) if not n.startswith("_") and callable(getattr(AdminClient, n))}
    assert added - {"close"} == set(MOVED_TO_ADMIN)
    shared = {n for n in vars(ReadCalls) if not n.startswith("_")}
    assert shared <= set(dir(Client)) and shared <= set(dir(AdminClient))


def test_importing_the_app_sdk_loads_nothing_of_the_operators() -> None:
    code = "import sys, rldp.client; print(json.dumps(sorted(m for m in sys.modules if m.startswith('rldp.admin'))))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


class _Recorder(BaseAdapter):
    """Answers every request 200 with ``body`` and keeps what was asked."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__()
        self.body = body
        self.seen: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.seen.append(request)
        resp = requests.Response()
        resp.status_code = 201
        resp._content = json.dumps(self.body).encode()
        resp.headers["Content-Type"] = "application/json"
        resp.url = request.url or ""
        resp.request = request
        return resp

    def close(self) -> None:
        pass


def test_adminclient_sends_through_the_clients_transport_with_its_token() -> None:
    session = requests.Session()
    recorder = _Recorder({"id": "ab" * 32, "status": "active"})
    session.mount(BASE + "/", recorder)
    with AdminClient(BASE, token="t" * 20, session=session, retries=0) as admin:
        answer = admin.retire_collection("app usage/v1")
    assert answer == {"id": "ab" * 32, "status": "active"}
    (request,) = recorder.seen
    assert (request.method, request.url) == ("POST", BASE + "/v1/collections/app%20usage%2Fv1/retire")
    assert request.headers["Authorization"] == "Bearer " + "t" * 20
    assert request.headers["User-Agent"].startswith("rldp-client/")  # the client's Transport
    with AdminClient(BASE, session=session, retries=0) as anonymous, pytest.raises(ValueError, match="token"):
        anonymous.publish({"id": "x"})  # no admin token: refused before anything is sent
    assert len(recorder.seen) == 1


class _Host:
    """Only what CollectionHost declares: no transport, no private member of a Client."""

    reporter = None  # no state file

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        self.asked: list[str] = []

    def collection_info(self, name: str) -> dict[str, Any]:
        self.asked.append(name)
        return self.info

    def mechanism(self, mechanism_id: str, *, max_epsilon: float | None = None) -> Any:
        return type("M", (), {"id": mechanism_id})()

    def privatize(self, mechanism_id: str, records: Any, *, owners: Any = None, rng: Any = None) -> np.ndarray:
        return np.zeros(len(records), dtype=np.int64)

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not called here")

    def estimate_collection(self, name: str, **params: Any) -> Any:
        raise AssertionError("not called here")


def test_a_collection_needs_only_the_public_host_protocol() -> None:
    host = _Host({"status": "active", "current": "cd" * 32})
    usage = Collection(host, "app-usage")
    mid, ys = usage.privatize([{"sex": "Male"}, {"sex": "Female"}])
    assert (mid, ys.tolist(), host.asked) == ("cd" * 32, [0, 0], ["app-usage"])
    host.info = {"status": "retired", "current": "cd" * 32}
    with pytest.raises(CollectionRetired, match="retired"):
        usage.current()


def test_collection_info_is_a_public_read_of_the_app_client() -> None:
    session = requests.Session()
    recorder = _Recorder({"name": "app-usage", "status": "active", "current": "ab" * 32})
    session.mount(BASE + "/", recorder)
    with Client(BASE, state_path=None, session=session, retries=0) as client:
        assert client.collection_info("app-usage")["current"] == "ab" * 32
        assert client.collection("app-usage").info()["status"] == "active"
    assert [r.url for r in recorder.seen] == [BASE + "/v1/collections/app-usage"] * 2
    assert "Authorization" not in recorder.seen[0].headers  # public: no token sent
