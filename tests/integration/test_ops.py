"""Operational rough edges of ``rldp serve``: a busy port, folders left by a killed server, SIGTERM."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests
from cli_helpers import RLDP
from rldp_live import LiveServer, in_process_app, make_document, wait_until

from rldp.aggregator.http.front import BufferedFront
from rldp.aggregator.http.front_keys import DRAINING_KEY
from rldp.aggregator.services import clean_stale_dirs
from rldp.aggregator.storage import open_storage


def _owned_dirs(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith(("rldp-writer-", "rldp-metrics-")))


@pytest.mark.live
def test_a_second_serve_on_a_busy_port_refuses(tmp_path):
    server = LiveServer(f"sqlite:///{tmp_path}/a.sqlite3", tmp_path / "logs", workers=1, threads=1).start()
    try:
        second = subprocess.Popen(
            [*RLDP, "serve", "--port", str(server.port), "--db", f"sqlite:///{tmp_path}/b.sqlite3", "--workers", "1"],
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # if it does start, its whole group is stopped below
        )
        try:
            _, stderr = second.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(second.pid, signal.SIGKILL)
            second.communicate()
            raise AssertionError("a second rldp serve started on a port in use") from None
        assert second.returncode == 2, stderr
        last = stderr.strip().splitlines()[-1]
        assert last.startswith(f"rldp serve: error: address in use: 127.0.0.1:{server.port}"), last
        assert not (tmp_path / "b.sqlite3").exists()  # refused before opening its store
    finally:
        server.stop()


@pytest.mark.live
def test_folders_of_a_killed_server_are_removed_at_the_next_start(tmp_path):
    # A short TMPDIR of its own: the writer's socket lives there, and a Unix socket path has at most 103 bytes
    # (pytest's tmp_path under xdist is longer; a too-long TMPDIR is refused in one line, tested below).
    tmp = Path(tempfile.mkdtemp(prefix="rldp-ops-", dir="/tmp"))
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
    shutil.rmtree(tmp, ignore_errors=True)


def test_a_temporary_folder_too_long_for_the_writers_socket_is_one_clear_error(tmp_path, monkeypatch):
    from rldp.aggregator.writer import WriterError, WriterProcess

    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with pytest.raises(WriterError, match="set TMPDIR to a shorter folder"):
        WriterProcess(f"sqlite:///{tmp_path}/db.sqlite3")
    assert list(deep.iterdir()) == []  # nothing left behind


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


def _read_answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(v) for k, _, v in (x.partition(b":") for x in head.split(b"\r\n")) if k.lower() == b"content-length"
    )
    while len(rest) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest


@pytest.mark.live
def _accepted(port: int, peers: set[int]) -> bool:
    """Whether the server's end of every connection from ``peers`` to ``port`` has been accepted: a socket in
    the listen backlog shows inode 0 in /proc/net/tcp until a process accepts it."""
    inodes = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, inode = fields[1], fields[2], int(fields[9])
        if int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) in peers:
            inodes[int(remote.split(":")[1], 16)] = inode
    return set(inodes) == peers and all(inodes.values())


def test_sigterm_drains_the_uploads_in_flight(tmp_path):
    url = f"sqlite:///{tmp_path}/db.sqlite3"
    server = LiveServer(url, tmp_path / "logs", workers=2, threads=4).start()
    doc = make_document()
    assert server.publish(doc).status_code == 201
    bodies = [
        json.dumps({"mechanism": doc["id"], "batch": f"drain-{k}", "reports": [k % 6] * 100}).encode()
        for k in range(12)
    ]
    socks = []
    try:
        for body in bodies:  # each upload is half sent when the server is told to stop
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=15)
            sock.sendall(
                b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body[: len(body) // 2]
            )
            socks.append(sock)
        # Stop only once the server holds every connection (accepted, not waiting in the listen backlog, where
        # closing the listener would reset it): on a loaded machine a fixed sleep was not always enough.
        ports = {sock.getsockname()[1] for sock in socks}
        wait_until(lambda: _accepted(server.port, ports), 60, "the server accepting the 12 connections")
        assert server.proc is not None
        os.killpg(server.proc.pid, signal.SIGTERM)  # as Ctrl-C or a service manager does
        time.sleep(0.5)
        for sock, body in zip(socks, bodies, strict=True):
            sock.sendall(body[len(body) // 2 :])
        answers = [_read_answer(sock) for sock in socks]
        assert server.proc.wait(20) == 0
    finally:
        for sock in socks:
            sock.close()
        server.stop()
    assert [a.split(b"\r\n", 1)[0] for a in answers] == [b"HTTP/1.1 201 Created"] * len(bodies), answers[:2]
    store = open_storage(url)
    try:
        assert store.batch_totals(doc["id"]) == (len(bodies), 100 * len(bodies))
    finally:
        store.close()


def test_readyz_is_unready_while_draining(tmp_path):
    with in_process_app(tmp_path) as app:
        front = BufferedFront(app, threads=1, max_body=1000)
        environ = {**_get("/readyz"), DRAINING_KEY: front.draining}
        assert front._call(environ)[0] == 200
        front.draining.set()
        status, headers, body = front._call(environ)
        assert status == 503 and json.loads(body)["reason"] == "service-unavailable", body
        front.pool.shutdown()


def _get(path: str) -> dict:
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
    }


def _raw(port: int, data: bytes, *, half_close: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)  # the client's end of file
        return _read_answer(sock)


@pytest.mark.live
def test_incomplete_bodies_are_refused_and_not_stored(tmp_path):
    url = f"sqlite:///{tmp_path}/db.sqlite3"
    server = LiveServer(url, tmp_path / "logs", workers=1, threads=2).start()
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        body = json.dumps({"mechanism": doc["id"], "batch": "cut", "reports": [1, 2]}).encode()
        head = b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        chunk = b"%x\r\n" % len(body) + body + b"\r\n"
        # chunked, cut before its terminating 0 chunk
        cut = _raw(server.port, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunk)
        assert cut.startswith(b"HTTP/1.1 400 "), cut
        assert b"terminating 0 chunk" in cut
        # fewer bytes than the Content-Length announced
        short = _raw(server.port, head + f"Content-Length: {len(body) + 10}\r\n\r\n".encode() + body)
        assert short.startswith(b"HTTP/1.1 400 ") or short == b"", short
        # the same upload complete is stored
        done = _raw(server.port, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunk + b"0\r\n\r\n", half_close=False)
        assert done.startswith(b"HTTP/1.1 201 "), done
        metrics = requests.get(server.url + "/metrics", timeout=10).text
        assert 'rldp_rejections_total{reason="bad-request"} 2.0' in metrics  # the front counts its refusals
    finally:
        server.stop()
    store = open_storage(url)
    try:
        assert store.batch_totals(doc["id"]) == (1, 2)
    finally:
        store.close()


@pytest.mark.live
def test_slow_bodies_do_not_take_the_threads(tmp_path):
    """Trickling clients hold no app thread: with one worker × one thread and 16 connections
    sending a byte every 0.5 s, /healthz and a normal upload are answered (a body that never
    completes gets 408 after BODY_TIMEOUT)."""
    url = f"sqlite:///{tmp_path}/db.sqlite3"
    server = LiveServer(url, tmp_path / "logs", workers=1, threads=1, env={"RLDP_BODY_TIMEOUT": "3"}).start()
    socks = []
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        head = (
            b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
        )
        for _ in range(16):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=15)
            sock.sendall(head)
            socks.append(sock)
        for _ in range(2):
            time.sleep(0.5)
            for sock in socks:
                sock.sendall(b"1")
        assert requests.get(server.url + "/healthz", timeout=10).status_code == 200
        assert server.post_reports(doc["id"], "normal", [1, 2, 3]).status_code == 201
        late = _read_answer(socks[0])  # BODY_TIMEOUT (3 s) after its headers
        assert late.startswith(b"HTTP/1.1 408 ") and b"request-timeout" in late, late
    finally:
        for sock in socks:
            sock.close()
        server.stop()


@pytest.mark.live
def test_unbuffered_serves_the_app_under_wsgi_without_the_front(tmp_path):
    """``--unbuffered`` (behind a buffering proxy): the same API under Granian's WSGI interface, said
    at start-up; uploads are stored as with the front."""
    url = f"sqlite:///{tmp_path}/db.sqlite3"
    server = LiveServer(url, tmp_path / "logs", workers=1, threads=2, extra_args=("--unbuffered",)).start()
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        body = {"mechanism": doc["id"], "batch": "whole", "reports": [0, 1, 1]}
        assert requests.post(server.url + "/v1/reports", json=body, timeout=10).status_code == 201
        assert requests.get(server.url + "/healthz", timeout=10).status_code == 200
        log = "".join(p.read_text(errors="replace") for p in (tmp_path / "logs").glob("*"))
        assert "unbuffered (WSGI" in log, log[-2000:]
    finally:
        server.stop()
    store = open_storage(url)
    try:
        assert int(store.counts(doc["id"], len(doc["matrix"])).sum()) == 3
    finally:
        store.close()
