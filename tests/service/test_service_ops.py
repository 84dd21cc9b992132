"""Operational rough edges of ``rldp serve``: a busy port, folders left by a killed server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_helpers import run_cli
from service.rldp_live import LiveServer

from rldp.aggregator.services import clean_stale_dirs


def _owned_dirs(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith(("rldp-writer-", "rldp-metrics-")))


def test_a_second_serve_on_a_busy_port_refuses(tmp_path):
    server = LiveServer(f"sqlite:///{tmp_path}/a.sqlite3", tmp_path / "logs", workers=1, threads=1).start()
    try:
        proc = run_cli(
            "serve", "--port", server.port, "--db", f"sqlite:///{tmp_path}/b.sqlite3", "--workers", "1", timeout=60
        )
        assert proc.returncode == 2, proc.stderr
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith(f"rldp serve: error: address in use: 127.0.0.1:{server.port}"), last
        assert not (tmp_path / "b.sqlite3").exists()  # refused before opening its store
    finally:
        server.stop()


def test_folders_of_a_killed_server_are_removed_at_the_next_start(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    server = LiveServer(
        f"sqlite:///{tmp_path}/db.sqlite3", tmp_path / "logs", workers=1, threads=1, env={"TMPDIR": str(tmp)}
    )
    server.start()
    first = _owned_dirs(tmp)
    assert {name.split("-")[1] for name in first} == {"writer", "metrics"}, first
    server.kill9()
    assert _owned_dirs(tmp) == first  # kill -9 skips the clean-up
    server.restart()
    try:
        second = _owned_dirs(tmp)
        assert len(second) == 2 and not set(first) & set(second), (first, second)
    finally:
        server.stop()
    assert _owned_dirs(tmp) == []


def test_only_folders_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        f"rldp-writer-{dead.pid}-abc123": False,  # its server is gone
        f"rldp-metrics-{dead.pid}-def456": False,
        f"rldp-writer-{os.getppid()}-ghi789": True,  # a live process (the test runner's parent)
        f"rldp-metrics-{os.getpid()}-jkl012": True,
        "rldp-writer-legacy01": False,  # an older version's folder with no socket left
        "rldp-other-1-x": True,  # not ours
    }
    for name in names:
        (tmp_path / name).mkdir()
    legacy_live = tmp_path / "rldp-writer-legacy02"
    legacy_live.mkdir()
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(legacy_live / "writer.sock"))
    listener.listen(1)
    try:
        removed = clean_stale_dirs(str(tmp_path))
    finally:
        listener.close()
    assert sorted(Path(p).name for p in removed) == sorted(n for n, keep in names.items() if not keep)
    assert legacy_live.exists()
    for name, keep in names.items():
        assert (tmp_path / name).exists() == keep, name
