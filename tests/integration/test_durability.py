"""kill -9 of the server in the middle of ingestion: no acknowledged batch lost, none counted twice."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import requests
from rldp_live import LiveServer, make_document

from rldp.aggregator.storage import open_storage

N_BATCHES = 300
THREADS = 6


@pytest.mark.parametrize("backend, sync", [("sqlite", "FULL"), ("sqlite", "NORMAL"), ("postgresql", None)])
@pytest.mark.live
def test_kill9_mid_ingestion_then_restart(backend, sync, databases, tmp_path):
    url = databases.url(backend)
    if sync:
        url += f"?synchronous={sync}"
    server = LiveServer(url, tmp_path / "logs", workers=2, threads=4).start()
    try:
        doc = make_document()
        assert server.publish(doc).status_code == 201
        mid = doc["id"]
        rng = np.random.default_rng(11)
        batches = {f"kill9-{i:04d}": rng.integers(0, 6, int(rng.integers(200, 800))).tolist() for i in range(N_BATCHES)}
        names = list(batches)
        acked: set[str] = set()
        lock = threading.Lock()
        killed = threading.Event()

        def upload(k: int) -> None:
            with requests.Session() as session:
                for name in names[k::THREADS]:
                    if killed.is_set():
                        return
                    try:
                        resp = session.post(
                            server.url + "/v1/reports",
                            timeout=10,
                            json={"mechanism": mid, "batch": name, "reports": batches[name]},
                        )
                    except requests.RequestException:
                        continue  # not acknowledged: will be retried after the restart
                    if resp.status_code in (200, 201):
                        with lock:
                            acked.add(name)

        threads = [threading.Thread(target=upload, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(acked) < N_BATCHES // 4 and time.monotonic() < deadline:
            time.sleep(0.002)
        server.kill9()  # mid-ingestion: uploads are in flight on every thread
        killed.set()
        for t in threads:
            t.join()
        assert N_BATCHES // 4 <= len(acked) < N_BATCHES, len(acked)

        store = open_storage(url)
        try:
            stored = store.batch_ids(mid)
            assert acked <= stored, f"{len(acked - stored)} acknowledged batches lost"
            np.testing.assert_array_equal(store.counts(mid, 6), store.recount(mid, 6))
        finally:
            store.close()

        server.restart()
        statuses = []
        with requests.Session() as session:  # clients retry everything with the same batch ids
            for name in names:
                resp = session.post(
                    server.url + "/v1/reports",
                    timeout=30,
                    json={"mechanism": mid, "batch": name, "reports": batches[name]},
                )
                statuses.append(resp.status_code)
                assert resp.status_code == (200 if name in stored else 201), (name, resp.status_code, resp.text)
        expected = np.bincount(np.concatenate([np.array(v) for v in batches.values()]), minlength=6)
        store = open_storage(url)
        try:
            assert store.batch_totals(mid) == (N_BATCHES, int(expected.sum()))
            np.testing.assert_array_equal(store.counts(mid, 6), expected)
            np.testing.assert_array_equal(store.recount(mid, 6), expected)
        finally:
            store.close()
        assert server.estimate(mid).json()["n"] == int(expected.sum())
    finally:
        server.stop()
