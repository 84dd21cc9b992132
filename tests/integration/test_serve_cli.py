"""`rldp serve` and `rldp token`: start-up checks and one-line errors."""

from __future__ import annotations

import hashlib
import subprocess

import pytest
import requests
from cli_helpers import run_cli
from rldp_live import LiveServer


def run(*args, env=None, stdin=None) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, stdin=stdin, timeout=60)


@pytest.mark.slow
def test_bad_database_url_is_one_line(tmp_path):
    proc = run("serve", "--db", "mysql://x/y", "--port", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("rldp serve: error: unsupported database URL scheme")


@pytest.mark.slow
def test_short_admin_token_is_refused(tmp_path):
    proc = run("serve", "--db", f"sqlite:///{tmp_path}/x.sqlite3", env={"RLDP_ADMIN_TOKEN": "abc"})
    assert proc.returncode == 2 and "too short" in proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_bad_port_is_a_usage_error():
    proc = run("serve", "--port", "70000")
    assert proc.returncode == 2 and "port must be in 0..65535" in proc.stderr


@pytest.mark.slow
def test_token_and_hash():
    proc = run("token")
    assert proc.returncode == 0
    lines = dict(line.split(None, 1) for line in proc.stdout.strip().splitlines())
    assert hashlib.sha256(lines["token"].encode()).hexdigest() == lines["sha256"]
    hashed = run("token", "--hash", stdin=lines["token"] + "\n")
    assert hashed.stdout.strip() == lines["sha256"]
    assert run("token", "--hash", stdin="").returncode == 2


@pytest.mark.live
def test_dev_server_serves(tmp_path):
    server = LiveServer(f"sqlite:///{tmp_path}/dev.sqlite3", tmp_path / "logs", dev=True).start()
    try:
        assert requests.get(server.url + "/healthz", timeout=5).json() == {"status": "ok"}
        assert "development server" in server.log_text()
        assert "plain HTTP" not in server.log_text()  # 127.0.0.1: no warning
    finally:
        server.stop()


def _policies(group: int) -> dict[int, tuple[int, bool]]:
    """Every thread of the process group: its scheduling policy and whether it is the writer process's."""
    import os

    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) != group:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                writer = b"rldp.aggregator.writer" in fh.read()
            for tid in os.listdir(f"/proc/{pid}/task"):
                out[int(tid)] = (os.sched_getscheduler(int(tid)), writer)
        except OSError:
            continue
    return out


@pytest.mark.live
@pytest.mark.skipif(not hasattr(__import__("os"), "SCHED_BATCH"), reason="SCHED_BATCH is Linux's")
@pytest.mark.parametrize("choice", ["batch", "normal"])
def test_the_servers_processes_and_threads_run_under_the_scheduling_asked_for(tmp_path, choice):
    import os

    args = () if choice == "batch" else ("--scheduling", "normal")
    server = LiveServer(f"sqlite:///{tmp_path}/s.sqlite3", tmp_path / "logs", extra_args=args).start()
    try:
        policies = _policies(server.proc.pid)
        # the serve process, its 2 workers (each with its threads) and the writer process
        assert len(policies) >= 4 and any(writer for _, writer in policies.values()), policies
        want = os.SCHED_BATCH if choice == "batch" else os.SCHED_OTHER
        assert {policy for policy, writer in policies.values() if not writer} == {want}, policies
        # the writer, on every upload's path, runs under the default policy either way
        assert {policy for policy, writer in policies.values() if writer} == {os.SCHED_OTHER}, policies
        assert ("SCHED_BATCH" in server.log_text()) == (choice == "batch")
    finally:
        server.stop()


_FAKE_RLOOP = '''"""Stands in for rloop 0.5, which Granian's "auto" loop prefers: no Unix sockets."""
import asyncio


class _Loop(asyncio.SelectorEventLoop):
    async def create_unix_connection(self, *args, **kwargs):
        raise NotImplementedError("no Unix sockets (as rloop 0.5)")


def new_event_loop():
    return _Loop()
'''


@pytest.mark.live
def test_uploads_work_when_rloop_is_installed(tmp_path):
    """Granian's "auto" event loop is rloop whenever it is importable; rloop has no Unix sockets, so
    every upload awaiting the SQLite writer answered 500. rldp serve chooses its loop itself."""
    from documents import make_document

    (tmp_path / "site" / "rloop").mkdir(parents=True)
    (tmp_path / "site" / "rloop" / "__init__.py").write_text(_FAKE_RLOOP)
    import os

    path = os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))
    server = LiveServer(f"sqlite:///{tmp_path}/s.sqlite3", tmp_path / "logs", env={"PYTHONPATH": path}).start()
    try:
        doc = make_document("rloop")
        assert server.publish(doc).status_code in (200, 201)
        resp = server.post_reports(doc["id"], "b1", [0, 1, 2, 1])
        assert resp.status_code == 201, resp.text
        assert resp.json()["accepted"] == 4
    finally:
        server.stop()


@pytest.mark.slow
def test_a_missing_sqlite_folder_is_refused_naming_the_resolved_path(tmp_path):
    """sqlite:/// and a relative path (SQLAlchemy's rule) is relative to the current folder: it silently
    made ./var/lib/rldp/ there. Now the resolved path is named, with the flag that creates it."""
    proc = run_cli("serve", "--db", "sqlite:///var/lib/rldp/rldp.sqlite3", "--port", "0", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("rldp serve: error: the folder of the SQLite store ")
    assert str(tmp_path / "var" / "lib" / "rldp" / "rldp.sqlite3") in line and "--create-dirs" in line
    assert "relative to the current folder" in line
    assert not (tmp_path / "var").exists()


@pytest.mark.live
def test_start_up_names_the_resolved_store_and_warns_of_a_public_plain_http_bind(tmp_path):
    """--create-dirs makes the folder; the start-up lines name the absolute path of the store, and a bind
    beyond loopback over plain HTTP warns once, pointing at deploy/'s reverse proxies."""
    import signal
    import sys

    cmd = [sys.executable, "-m", "rldp.cli", "serve", "--dev", "--port", "0", "--host", "0.0.0.0",
           "--db", "sqlite:///var/lib/rldp/rldp.sqlite3", "--create-dirs"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # until the server says it listens (or the process ends)
            lines.append(line.rstrip("\n"))
            if "development server on" in line:
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    store = tmp_path / "var" / "lib" / "rldp" / "rldp.sqlite3"
    assert f"rldp serve: storage: {store}" in lines, lines
    warnings = [line for line in lines if "plain HTTP" in line]
    assert len(warnings) == 1 and warnings[0].startswith("rldp serve: warning: listening on 0.0.0.0")
    assert "deploy/" in warnings[0] and (tmp_path / "var" / "lib" / "rldp").is_dir()
