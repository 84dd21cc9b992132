"""`rldp mechanisms get ID --out FILE` downloads a published document (issue 37: the README's "No public
data?" section audited a `next.json` nothing said how to get)."""

from __future__ import annotations

import json
import subprocess

from cli_helpers import run_cli
from rldp_live import ADMIN_TOKEN, make_document

from rldp.admin import AdminClient
from rldp.shared.document import from_json, read_document, to_json


def _run(server, *args: object) -> subprocess.CompletedProcess[str]:
    # No token: documents are public.
    return run_cli(*args, env={"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": "", "RLDP_READ_TOKEN": ""}, timeout=120)


def test_get_writes_the_document_as_json_or_msgpack_and_prints_it(server, tmp_path):
    doc = make_document("mechanisms-get", window="P1D")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
    for name in ("next.json", "next.msgpack"):
        proc = _run(server, "mechanisms", "get", doc["id"][:12], "--out", tmp_path / name)  # a prefix, as tables print
        assert proc.returncode == 0, proc.stderr
        assert doc["id"] in proc.stdout and str(tmp_path / name) in proc.stdout
        assert read_document(tmp_path / name) == from_json(to_json(doc).encode())  # as read back from a file
    assert (tmp_path / "next.json").read_bytes()[:1] == b"{" and (tmp_path / "next.msgpack").read_bytes()[:1] != b"{"
    printed = _run(server, "mechanisms", "get", doc["id"])
    assert printed.returncode == 0 and json.loads(printed.stdout)["id"] == doc["id"], printed.stderr
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.create_collection("get-me", doc["id"], {"notion": "rldp", "epsilon": 1.0})
    current = _run(server, "mechanisms", "get", "--collection", "get-me", "--out", tmp_path / "current.json")
    assert current.returncode == 0 and read_document(tmp_path / "current.json")["id"] == doc["id"], current.stderr
    both = _run(server, "mechanisms", "get", doc["id"], "--collection", "get-me")
    assert both.returncode == 2 and "not both" in both.stderr and "Traceback" not in both.stderr
    # The file audits offline as the README does next.
    audit = run_cli("audit", tmp_path / "next.json")
    assert audit.returncode == 0, audit.stderr


def test_get_refuses_with_one_line(server, tmp_path):
    unknown = _run(server, "mechanisms", "get", "ab" * 32, "--out", tmp_path / "x.json")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr and "unknown" in unknown.stderr
    doc = make_document("mechanisms-get-ext")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
    bad = _run(server, "mechanisms", "get", doc["id"], "--out", tmp_path / "next.txt")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and ".json" in bad.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "next.txt").exists()
