"""``rldp collections`` and ``rldp collection show``: what the operator reads about a collection."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from rldp.admin import collection_cli
from rldp.client.connection import connection_options

PAUSED = {"since": "2026-12-07T04:00:00Z", "reason": "drift: realised epsilon 3.2 > 1"}


def _collection(name: str, paused: dict[str, Any] | None, status: str = "active") -> dict[str, Any]:
    return {
        "name": name,
        "description": None,
        "policy": {"notion": "rldp", "epsilon": 1.0, "drift": "pause"},
        "window": "P1D",
        "status": status,
        "created": "2026-12-07T03:00:00Z",
        "retired": None,
        "current": "ab" * 32,
        "paused": paused,
        "mechanisms": [{"mechanism": "ab" * 32, "since": "2026-12-07T03:00:00Z", "until": None, "current": True}],
    }


class _FakeClient:
    url = "http://stub"

    def __init__(self, collections: list[dict[str, Any]]) -> None:
        self._collections = collections

    def __enter__(self) -> _FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def collections(self) -> list[dict[str, Any]]:
        return self._collections

    def collection_info(self, name: str) -> dict[str, Any]:
        return next(c for c in self._collections if c["name"] == name)


@pytest.fixture
def served(monkeypatch):
    listed = [_collection("calm", None), _collection("drifted", PAUSED), _collection("old", None, "retired")]
    monkeypatch.setattr(collection_cli, "_client", lambda args, **kw: _FakeClient(listed))
    return listed


def _run(argv: list[str], capsys) -> str:
    parser = argparse.ArgumentParser()
    common = [connection_options(retries=2, json_help="as JSON")]
    collection_cli.add_parsers(parser.add_subparsers(), common, "admin")
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_the_table_shows_a_paused_collection_as_paused(served, capsys):
    out = _run(["collections"], capsys)
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]}
    assert rows == {"calm": "active", "drifted": "paused", "old": "retired"}


def test_json_shows_a_paused_collection_as_paused_and_keeps_why(served, capsys):
    out = json.loads(_run(["collections", "--json"], capsys))
    status = {c["name"]: c["status"] for c in out["collections"]}
    assert status == {"calm": "active", "drifted": "paused", "old": "retired"}
    assert out["collections"][1]["paused"] == PAUSED


def test_show_says_paused(served, capsys):
    assert _run(["collection", "show", "drifted"], capsys).startswith("collection drifted (paused)")
    assert json.loads(_run(["collection", "show", "drifted", "--json"], capsys))["status"] == "paused"
