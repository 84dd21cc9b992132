"""The SQLite writer process: one group commit for every worker, nothing acknowledged lost."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import msgpack
import numpy as np
import pytest
import requests
from rldp_live import LiveServer, ingest_concurrently, make_document

from rldp.aggregator.http import create_app
from rldp.aggregator.storage import open_storage
from rldp.aggregator.writer import WriterClient, WriterError, WriterProcess

MID = "a" * 64  # conftest.py's active mechanism


@pytest.mark.live
def test_batches_through_the_writer_get_the_answers_of_direct_writes(sqlite_url, writer):
    store = open_storage(sqlite_url, sink=WriterClient(writer.path))
    try:
        ys = np.array([0, 1, 1, 5])
        assert store.ingest(MID, "b1", ys, 6).status == "accepted"
        assert (store.ingest(MID, "b1", ys.copy(), 6).status, store.ingest(MID, "b1", ys, 6).accepted) == (
            "duplicate",
            4,
        )
        assert store.ingest(MID, "b1", ys[::-1].copy(), 6).status == "conflict"
        assert store.ingest("f" * 64, "b2", ys, 6).status == "unknown"
        assert store.ingest("d" * 64, "b3", ys, 6).status == "retired"
        store.ping()
        np.testing.assert_array_equal(store.counts(MID, 6), [1, 2, 0, 0, 0, 1])
        np.testing.assert_array_equal(store.recount(MID, 6), [1, 2, 0, 0, 0, 1])
    finally:
        store.close()


@pytest.mark.live
def test_concurrent_workers_share_group_commits_and_count_each_batch_once(sqlite_url, writer):
    stores = [open_storage(sqlite_url, sink=WriterClient(writer.path)) for _ in range(2)]
    ingest_concurrently(stores, MID, 6, n_batches=200, threads=8, seed=3)
    for s in stores:
        s.close()


@pytest.mark.live
def test_a_malformed_request_is_refused_and_the_writer_carries_on(sqlite_url, writer):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(writer.path)
        sock.sendall(msgpack.packb(["ingest", MID, "x", "not an int", b"", "reports", b"", b""]))
        answer = msgpack.Unpacker(raw=False)
        answer.feed(sock.recv(4096))
        reply = answer.unpack()
        assert reply[0] == "error" and "malformed" in reply[1]
        assert sock.recv(4096) == b""  # and it hung up
    with socket.socket(socket.AF_UNIX) as sock:  # a stream that never completes an object
        sock.settimeout(10)
        sock.connect(writer.path)
        sock.sendall(b"\xc6\x7f\xff\xff\xff")  # bin 32 announcing 2 GiB
        try:
            for _ in range(100):
                sock.sendall(b"\0" * (1 << 20))
        except (BrokenPipeError, ConnectionResetError):  # the writer hung up on it
            pass
        refusal = msgpack.Unpacker(raw=False)
        refusal.feed(sock.recv(4096))
        assert refusal.unpack()[0] == "error"
    store = open_storage(sqlite_url, sink=WriterClient(writer.path))
    assert store.ingest(MID, "after", np.array([3]), 6).status == "accepted"
    store.close()
    assert writer._proc.poll() is None  # the same writer process carried on


@pytest.mark.slow
def test_a_writer_that_cannot_start_is_one_clear_error(tmp_path):
    with pytest.raises(WriterError, match="writer process failed to start.*SQLite stores only") as caught:
        WriterProcess("postgresql://nobody@127.0.0.1:1/none").start()
    assert isinstance(caught.value, ValueError)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(WriterError, match="writer process failed to start"):
        WriterProcess(f"sqlite:///{blocked}/under-a-file.sqlite3").start()


@pytest.mark.live
@pytest.mark.slow
def test_a_dead_writer_is_a_503_then_it_is_restarted(sqlite_url, writer, monkeypatch):
    app = create_app({"DATABASE_URL": sqlite_url, "WRITER_SOCKET": writer.path})
    http = app.test_client()
    body = {"mechanism": MID, "batch": "before", "reports": [1, 2]}
    assert http.post("/v1/reports", json=body).status_code == 201
    writer._proc.kill()
    writer._proc.wait()
    resp = http.post("/v1/reports", json={**body, "batch": "during"})
    assert resp.status_code == 503 and resp.json["reason"] == "database-unavailable"
    assert resp.headers["Retry-After"] == "1"
    assert http.get("/readyz").status_code == 503
    deadline = time.monotonic() + 30
    while http.get("/readyz").status_code != 200:  # the supervisor restarts it
        assert time.monotonic() < deadline, "the writer was not restarted"
        time.sleep(0.1)
    assert http.post("/v1/reports", json={**body, "batch": "during"}).status_code == 201  # the retry
    assert http.post("/v1/reports", json=body).status_code == 200
    assert app.extensions["rldp"].storage.batch_totals(MID) == (2, 4)
    app.extensions["rldp"].storage.close()


def writer_pid(server: LiveServer) -> int:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) != server.proc.pid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"rldp.aggregator.writer" in fh.read():
                    return int(pid)
        except OSError:
            continue
    raise AssertionError("no writer process in the server's process group")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the writer process through /proc")
@pytest.mark.live
def test_kill9_of_the_writer_mid_ingestion_loses_no_acknowledged_batch(tmp_path):
    url = f"sqlite:///{tmp_path}/live.sqlite3"
    server = LiveServer(url, tmp_path / "logs", workers=2, threads=4).start()
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        rng = np.random.default_rng(5)
        batches = {f"w-{i:04d}": rng.integers(0, 6, int(rng.integers(50, 400))).tolist() for i in range(400)}
        names = list(batches)
        acked: set[str] = set()
        refused: list[tuple[bool, int, str]] = []
        lock = threading.Lock()
        killed = threading.Event()

        def upload(k: int) -> None:
            with requests.Session() as session:
                for name in names[k::6]:
                    resp = session.post(
                        server.url + "/v1/reports",
                        timeout=30,
                        json={"mechanism": doc["id"], "batch": name, "reports": batches[name]},
                    )
                    with lock:
                        if resp.status_code in (200, 201):
                            acked.add(name)
                        else:
                            refused.append((killed.is_set(), resp.status_code, resp.text[:200]))

        threads = [threading.Thread(target=upload, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        while len(acked) < 100:
            time.sleep(0.002)
        os.kill(writer_pid(server), signal.SIGKILL)
        killed.set()
        for t in threads:
            t.join()
        # Refusals only after the kill, each a 503 the client can retry; and there were some:
        # the writer really died under load.
        assert refused and all(after and status == 503 for after, status, _ in refused), refused[:3]
        store = open_storage(url)
        try:
            assert acked <= store.batch_ids(doc["id"]), "an acknowledged batch was lost"
            np.testing.assert_array_equal(store.counts(doc["id"], 6), store.recount(doc["id"], 6))
        finally:
            store.close()
        deadline = time.monotonic() + 30
        while requests.get(server.url + "/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the writer was not restarted"
            time.sleep(0.1)
        with requests.Session() as session:  # the clients retry everything with the same batch ids
            for name in names:
                resp = session.post(
                    server.url + "/v1/reports",
                    timeout=30,
                    json={"mechanism": doc["id"], "batch": name, "reports": batches[name]},
                )
                assert resp.status_code in (200, 201), (resp.status_code, resp.text)
        expected = np.bincount(np.concatenate([np.array(v) for v in batches.values()]), minlength=6)
        assert server.estimate(doc["id"]).json()["n"] == int(expected.sum())
        store = open_storage(url)
        try:
            np.testing.assert_array_equal(store.counts(doc["id"], 6), expected)
            np.testing.assert_array_equal(store.recount(doc["id"], 6), expected)
        finally:
            store.close()
    finally:
        server.stop()
