"""``Client.estimate`` returns an :class:`Estimate` (attributes, to_dict, to_frame); a refusal below the
server's minimum is a :class:`TooFewReports`. Against a scripted requests adapter (no server, no aggregator)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import requests
from requests.adapters import BaseAdapter

from rldp.client import Client, Estimate, ProblemError, RldpError, TooFewReports
from rldp.client.estimate import FRAME_COLUMNS

BASE = "http://stub.invalid"
MID = "ab" * 32

ANSWER: dict[str, Any] = {
    "n": 400,
    "joint": [[0.1, 0.2, 0.05], [0.3, 0.25, 0.1]],
    "marginals": {"sex": {"estimate": [0.35, 0.65]}, "colour": {"estimate": [0.4, 0.45, 0.15]}},
    "ci95": {
        "low": [[0.05, 0.15, 0.0], [0.25, 0.2, 0.05]],
        "high": [[0.15, 0.25, 0.1], [0.35, None, 0.15]],
        "level": 0.95,
        "method": "delta",
        "identified": [[True, True, True], [True, False, True]],
    },
    "method": "em",
    "identifiable": True,
    "rank": 6,
    "iterations": 12,
    "converged": True,
    "gap": 1e-9,
    "log_likelihood": -700.5,
    "prior_weight": 0.0,
    "fitted": [0.1, 0.2, 0.05, 0.3, 0.25, 0.1],
    "labels": {
        "sensitive": {"name": "sex", "values": ["Female", "Male"]},
        "released": {"names": ["colour"], "values": ["blue", "green", "red"]},
    },
    "mechanism": MID,
    "status": "active",
    "drift": None,
    "drift_unavailable": "the claim holds over every distribution",
    "from_a_newer_server": {"x": 1},
}
TOO_FEW = {
    "type": "https://rldp.dev/problems/too-few-reports",
    "title": "Too few reports to estimate",
    "status": 409,
    "detail": f"mechanism {MID} has 40 reports; this service serves an estimate from 100 reports on",
    "reason": "too-few-reports",
    "reports": 40,
    "min_reports": 100,
    "mechanism": MID,
}


class Scripted(BaseAdapter):
    """Answers every request with (status, JSON body); records the requests."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__()
        self.status, self.body = status, body
        self.requests: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        resp = requests.Response()
        resp.status_code = self.status
        resp._content = json.dumps(self.body).encode()
        media = "application/problem+json" if self.status >= 400 else "application/json"
        resp.headers["Content-Type"] = media
        resp.url = request.url or ""
        resp.request = request
        return resp

    def close(self) -> None:
        pass


def _client(status: int, body: dict[str, Any]) -> tuple[Client, Scripted]:
    session = requests.Session()
    client = Client(BASE, token="t" * 20, state_path=None, session=session, retries=0)
    adapter = Scripted(status, body)
    session.mount(BASE + "/", adapter)  # longer than the client's own "http://" prefix: it wins
    return client, adapter


def test_estimate_is_an_object_with_the_answer_as_attributes_and_to_dict() -> None:
    client, adapter = _client(200, ANSWER)
    est = client.estimate(MID, method="em", interval="delta", window=None)
    assert isinstance(est, Estimate)
    assert (est.n, est.method, est.mechanism, est.status, est.rank) == (400, "em", MID, "active", 6)
    assert est.joint == ANSWER["joint"] and est.ci95["high"][1][1] is None and est.labels == ANSWER["labels"]
    assert est.drift is None and est.drift_unavailable.startswith("the claim")
    assert est.extra == {"from_a_newer_server": {"x": 1}}  # nothing is lost
    assert est.to_dict() == ANSWER
    est.to_dict()["joint"][0][0] = 99.0  # a copy: the estimate stays as answered
    assert est.joint[0][0] == 0.1
    with pytest.raises(AttributeError):
        est.n = 1  # type: ignore[misc]  # frozen
    query = adapter.requests[0].url or ""
    assert query.startswith(f"{BASE}/v1/mechanisms/{MID}/estimate?") and "method=em" in query and "window" not in query
    client.close()


def test_to_frame_lists_every_cell() -> None:
    pd = pytest.importorskip("pandas")
    est = Estimate.from_dict(ANSWER)
    frame = est.to_frame()
    assert isinstance(frame, pd.DataFrame) and tuple(frame.columns) == FRAME_COLUMNS
    assert len(frame) == 6 and frame["value"].tolist()[:2] == ["Female | blue", "Female | green"]
    assert frame["estimate"].tolist() == [v for row in ANSWER["joint"] for v in row]
    assert frame["upper"].isna().tolist() == [False, False, False, False, True, False]  # None: unbounded
    assert frame["identified"].tolist() == [True, True, True, True, False, True]
    assert frame.loc[frame["value"] == "Male | red", "lower"].item() == 0.05


def test_to_frame_without_pandas_says_how_to_get_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError) as info:
        Estimate.from_dict(ANSWER).to_frame()
    assert str(info.value) == "to_frame needs pandas: pip install pandas"


def test_the_client_does_not_import_pandas() -> None:
    import subprocess

    code = "import sys, rldp.client; Estimate = rldp.client.Estimate; print('pandas' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_below_the_minimum_the_client_raises_too_few_reports() -> None:
    client, _ = _client(409, TOO_FEW)
    with pytest.raises(TooFewReports) as info:
        client.estimate(MID)
    exc = info.value
    assert isinstance(exc, ProblemError) and isinstance(exc, RldpError)
    assert (exc.status, exc.reason, exc.reports, exc.min_reports) == (409, "too-few-reports", 40, 100)
    assert "has 40 reports" in str(exc)
    client.close()
    none = {"type": "https://rldp.dev/problems/no-reports", "status": 409, "reason": "no-reports", "detail": "none"}
    client, _ = _client(409, none)
    with pytest.raises(TooFewReports) as empty:  # no report at all is too few as well
        client.estimate_collection("usage")
    assert (empty.value.reason, empty.value.reports, empty.value.min_reports) == ("no-reports", 0, None)
    client.close()
    client, _ = _client(404, {"type": "https://rldp.dev/problems/unknown-mechanism", "reason": "unknown-mechanism"})
    with pytest.raises(ProblemError) as other:
        client.estimate(MID)
    assert type(other.value) is ProblemError  # the other refusals are ProblemError itself
    client.close()


def test_collection_estimates_are_estimates_too() -> None:
    body = {**ANSWER, "collection": "usage", "mechanisms": [{"mechanism": MID, "reports": 400, "current": True}]}
    body.pop("mechanism")
    client, adapter = _client(200, body)
    est = client.collection("usage").estimate(interval="bootstrap")
    assert est.collection == "usage" and est.mechanism is None and est.mechanisms == body["mechanisms"]
    assert (adapter.requests[0].url or "").endswith("/v1/collections/usage/estimate?interval=bootstrap")
    client.close()


def test_bad_method_or_interval_is_refused_before_any_request() -> None:
    client, adapter = _client(200, ANSWER)
    with pytest.raises(ValueError, match="method must be one of auto, em, inverse; got 'median'"):
        client.estimate(MID, method="median")
    with pytest.raises(ValueError, match="interval must be one of delta, bootstrap"):
        client.estimate_collection("usage", interval="wilson")
    assert adapter.requests == []
    client.close()


def test_an_answer_that_is_not_an_estimate_is_a_clear_error() -> None:
    client, _ = _client(200, {"hello": "world"})
    with pytest.raises(ProblemError, match="lacks n, joint, ci95, marginals, method"):
        client.estimate(MID)
    client.close()
