"""Errors declared once, and the three parts agree on every problem type (issue 36, point 4).

``conformance/problems.json`` lists each problem type the service answers: its status, the service's exception
classes answered with it, and the class both SDKs raise for it. Here the Python service (``PROBLEMS`` and
``REASONS``) and the Python client (its transport, answering a scripted server) are checked against it; the
TypeScript SDK is checked against the same file by js/test/problems.test.mjs. And no error class of rldp is
declared twice (the service's and the client's TooFewReports, CollectionPaused and CollectionRetired were)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections import defaultdict
from typing import Any

import pytest
import requests
from helpers import ROOT
from requests.adapters import BaseAdapter

import rldp.client
from rldp.aggregator.http.problems import PROBLEMS, REASONS, Problem
from rldp.client.transport import Transport

TABLE: dict[str, dict[str, Any]] = json.loads((ROOT / "conformance" / "problems.json").read_text(encoding="utf-8"))[
    "problems"
]
BASE = "http://stub.invalid"


def test_the_table_lists_every_problem_type_of_the_service_with_its_status() -> None:
    assert list(TABLE) == list(PROBLEMS)
    assert {r: t["status"] for r, t in TABLE.items()} == {r: t.status for r, t in PROBLEMS.items()}


def test_the_table_names_the_service_classes_answered_with_each_type() -> None:
    raised: dict[str, list[str]] = defaultdict(list)
    for cls, reason in REASONS.items():
        raised[reason].append(cls.__name__)
    assert {r: t["raised_by"] for r, t in TABLE.items()} == {r: sorted(raised.get(r, [])) for r in PROBLEMS}


class _Answer(BaseAdapter):
    """Answers every request with the service's own problem body for ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.problem = Problem(reason, f"the service refused: {reason}", reports=3, min_reports=10)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        resp = requests.Response()
        resp.status_code = self.problem.status
        resp._content = self.problem.encode(request.path_url)
        resp.headers["Content-Type"] = "application/problem+json"
        resp.url = request.url or ""
        resp.request = request
        return resp

    def close(self) -> None:
        pass


@pytest.mark.parametrize("reason", list(TABLE))
def test_the_python_client_raises_the_tables_class_for_each_type(reason: str) -> None:
    session = requests.Session()
    transport = Transport(
        BASE, timeout=5, retries=0, backoff_factor=0, backoff_max=0, token=None, session=session, upload_token=None
    )
    session.mount(BASE + "/", _Answer(reason))
    with pytest.raises(rldp.client.RldpError) as caught:
        transport.request("GET", "/v1/anything")
    expected = TABLE[reason]["client_error"]
    assert type(caught.value) is getattr(rldp.client, expected), (reason, type(caught.value).__name__, expected)
    if isinstance(caught.value, rldp.client.ProblemError):
        assert (caught.value.reason, caught.value.status) == (reason, TABLE[reason]["status"])


def test_every_client_error_of_the_table_is_a_class_of_both_sdks() -> None:
    ts = (ROOT / "js" / "src" / "errors.ts").read_text(encoding="utf-8")
    for name in sorted({t["client_error"] for t in TABLE.values()}):
        assert name in rldp.client.__all__, name
        assert re.search(rf"^export class {name}\b", ts, re.MULTILINE), f"js/src/errors.ts has no class {name}"


def test_no_error_class_of_rldp_is_declared_twice() -> None:
    for package in ("rldp.shared", "rldp.client", "rldp.admin", "rldp.aggregator"):
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            if not info.name.endswith(".__main__"):  # a process's entry point runs on import
                importlib.import_module(info.name)
    homes: dict[str, set[str]] = defaultdict(set)
    todo: list[type[BaseException]] = [BaseException]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("rldp."):
                homes[sub.__name__].add(sub.__module__)
            todo.append(sub)
    twice = {name: sorted(mods) for name, mods in homes.items() if len(mods) > 1}
    assert not twice, f"error classes declared in more than one module: {twice}"
    assert len(homes) > 60  # every package was imported: the walk saw the service's refusals too
