"""End-to-end ingestion rate over HTTP on loopback (issue 3, bench b).

Starts ``rldp serve`` (gunicorn, 2 workers × 4 threads, SQLite in WAL mode with the default
synchronous=FULL: every acknowledged batch is fsynced) and uploads pre-encoded msgpack
bodies from several client threads over keep-alive connections (http.client, so that the
load generator costs little CPU on the same two cores). Three figures, same run:

* batches of 10,000 reports over HTTP (reports/s, acknowledged = committed);
* single-report uploads over HTTP (reports/s);
* the in-process limit: decoding the same msgpack bodies and counting them with numpy
  (no HTTP, no database, one thread) — with the fastest list-to-array conversion
  (``ingest_inprocess_rate``) and with plain ``np.asarray`` (``*_asarray``).

Targets: batched ≥ 100× single-report uploads and ≥ 0.25 of the in-process limit.

The HTTP floor, same run: the same bodies posted to a do-nothing Flask endpoint under the same
gunicorn configuration (``_http_floor_app.py``: read the body, answer 201) — what HTTP, WSGI and
Flask alone allow on this machine (``ingest_http_floor_rate``, ``ingest_floor_vs_inprocess``,
and ``ingest_batch_vs_floor``: the service's rate as a fraction of that ceiling).

Lines (``name value unit``): ingest_http_batch_rate, ingest_http_single_rate,
ingest_inprocess_rate (reports/s), ingest_batch_vs_single (x), ingest_batch_vs_inprocess
(ratio), the same batch figures with SQLite synchronous=NORMAL (``*_sync_normal``: survives
kill -9 but not a power cut), ingest_batch_latency_p50 / _p99 (ms, default configuration).

Run: python bench/bench_ingest.py [--quick]
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import msgpack
import numpy as np

from rldp.aggregator.mechanisms import grr_matrix
from rldp.shared.document import build_document, to_msgpack
from rldp.shared.records import Alphabet, Attribute

TOKEN = "bench-admin-token-" + uuid.uuid4().hex
BATCH = 10_000
CLIENT_THREADS = 8


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    return resp.status, resp.read()


def start_server(db: str, port: int) -> subprocess.Popen:
    env = dict(os.environ, RLDP_ADMIN_TOKEN=TOKEN)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "rldp.aggregator.cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--db", db, "--workers", "2", "--threads", "4"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    return wait_ready(proc, port)


def wait_ready(proc: subprocess.Popen, port: int) -> subprocess.Popen:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the server exited during start-up")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            if request(conn, "GET", "/readyz")[0] == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.1)
    raise SystemExit("rldp serve did not become ready")


def upload(port: int, bodies: list[bytes]) -> tuple[float, list[float]]:
    """Send ``bodies`` from CLIENT_THREADS keep-alive connections; (seconds, per-request latencies)."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def work(part: list[bytes]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        for body in part:
            t0 = time.perf_counter()
            status, text = request(conn, "POST", "/v1/reports", body, {"Content-Type": "application/msgpack"})
            mine.append(time.perf_counter() - t0)
            if status != 201:
                errors.append(f"{status} {text[:200]!r}")
                break
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(bodies[k::CLIENT_THREADS],)) for k in range(CLIENT_THREADS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise SystemExit(f"upload failed: {errors[0]}")
    return elapsed, latencies


def in_process_limits(bodies: list[bytes], outputs: int) -> dict[str, float]:
    """Reports/s for decoding the bodies and counting them with numpy, per way of turning the
    decoded list into an array (best of 3 runs each): "asarray" (np.asarray), "fromiter"
    (np.fromiter) and, for outputs ≤ 256, "bytearray" (np.frombuffer(bytearray(list)), the
    fastest; the service uses the same conversion)."""
    total = len(msgpack.unpackb(bodies[0])["reports"]) * len(bodies)
    converters = {"asarray": lambda r: np.asarray(r, dtype=np.int64),
                  "fromiter": lambda r: np.fromiter(r, np.int64, len(r))}
    if outputs <= 256:
        converters["bytearray"] = lambda r: np.frombuffer(bytearray(r), dtype=np.uint8)
    rates = {}
    for name, convert in converters.items():
        best = float("inf")
        for _ in range(3):
            counts = np.zeros(outputs, dtype=np.int64)
            start = time.perf_counter()
            for body in bodies:
                counts += np.bincount(convert(msgpack.unpackb(body)["reports"]), minlength=outputs)
            best = min(best, time.perf_counter() - start)
        assert counts.sum() == total
        rates[name] = total / best
    return rates


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    n_batches = 300 if quick else 1000
    n_single = 1000 if quick else 3000
    alpha = Alphabet(Attribute("sex", ("Female", "Male")),
                     [Attribute("race", ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"))])
    doc = build_document(method="grr", matrix=grr_matrix(alpha.size, 1.0), alphabet=alpha,
                         public_distribution=np.full(alpha.shape, 1 / alpha.size),
                         privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
                         extra={"bench": uuid.uuid4().hex})
    mid, outputs = doc["id"], alpha.size
    rng = np.random.default_rng(7)
    batch_bodies = [msgpack.packb({"mechanism": mid, "batch": uuid.uuid4().hex,
                                   "reports": rng.integers(0, outputs, BATCH).tolist()}) for _ in range(n_batches)]
    single_bodies = [msgpack.packb({"mechanism": mid, "batch": uuid.uuid4().hex,
                                    "reports": [int(rng.integers(0, outputs))]}) for _ in range(n_single)]

    limits_before = in_process_limits(batch_bodies, outputs)
    with tempfile.TemporaryDirectory(prefix="rldp-bench-") as tmp:
        # The default configuration first (synchronous=FULL), then NORMAL for comparison.
        port = free_port()
        normal_bodies = [msgpack.packb({"mechanism": mid, "batch": uuid.uuid4().hex,
                                        "reports": rng.integers(0, outputs, BATCH).tolist()})
                         for _ in range(n_batches // 2)]
        proc = start_server(f"sqlite:///{tmp}/normal.sqlite3?synchronous=NORMAL", port)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, _ = request(conn, "POST", "/v1/mechanisms", to_msgpack(doc),
                                {"Content-Type": "application/msgpack", "Authorization": f"Bearer {TOKEN}"})
            assert status == 201, status
            conn.close()
            upload(port, normal_bodies[:20])
            normal_seconds, _ = upload(port, normal_bodies[20:])
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
        port = free_port()
        proc = start_server(f"sqlite:///{tmp}/bench.sqlite3", port)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, _ = request(conn, "POST", "/v1/mechanisms", to_msgpack(doc),
                                {"Content-Type": "application/msgpack", "Authorization": f"Bearer {TOKEN}"})
            assert status == 201, status
            upload(port, batch_bodies[:20])  # warm-up (connections, caches); counted in the check below
            batch_seconds, latencies = upload(port, batch_bodies[20:])
            single_seconds, _ = upload(port, single_bodies)
            conn.close()  # idle longer than the server's keep-alive: reconnect
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, body = request(conn, "GET", f"/v1/mechanisms/{mid}/estimate",
                                   headers={"Authorization": f"Bearer {TOKEN}"})
            n_stored = json.loads(body)["n"]
            assert n_stored == n_batches * BATCH + n_single, (n_stored, n_batches * BATCH + n_single)
            conn.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
        # The HTTP floor: a do-nothing Flask endpoint under the same gunicorn configuration.
        import gunicorn

        port = free_port()
        # gunicorn ≥ 25 opens a control socket at a fixed per-user path (as rldp serve, disable it).
        control = ["--no-control-socket"] if gunicorn.version_info >= (25,) else []
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "--workers", "2", "--threads", "4",
                                 "--worker-class", "gthread", "--keep-alive", "5", "--bind", f"127.0.0.1:{port}",
                                 *control, "--chdir", os.path.dirname(os.path.abspath(__file__)),
                                 "_http_floor_app:app"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_ready(proc, port)
            upload(port, batch_bodies[:20])
            floor_seconds, _ = upload(port, batch_bodies[20:])
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    # Measured before and after the HTTP run; the larger (stricter) figure is reported.
    limits_after = in_process_limits(batch_bodies, outputs)
    limits = {k: max(v, limits_after[k]) for k, v in limits_before.items()}
    limit = max(limits.values())

    batch_rate = (n_batches - 20) * BATCH / batch_seconds
    single_rate = n_single / single_seconds
    lat = np.array(latencies) * 1000
    print(f"ingest_http_batch_rate {batch_rate:.0f} reports/s")
    print(f"ingest_http_single_rate {single_rate:.0f} reports/s")
    print(f"ingest_inprocess_rate {limit:.0f} reports/s")
    print(f"ingest_inprocess_rate_asarray {limits['asarray']:.0f} reports/s")
    print(f"ingest_batch_vs_single {batch_rate / single_rate:.0f} x")
    print(f"ingest_batch_vs_inprocess {batch_rate / limit:.3f} ratio")
    print(f"ingest_batch_vs_inprocess_asarray {batch_rate / limits['asarray']:.3f} ratio")
    normal_rate = (len(normal_bodies) - 20) * BATCH / normal_seconds
    print(f"ingest_http_batch_rate_sync_normal {normal_rate:.0f} reports/s")
    print(f"ingest_batch_vs_inprocess_sync_normal {normal_rate / limit:.3f} ratio")
    floor_rate = (n_batches - 20) * BATCH / floor_seconds
    print(f"ingest_http_floor_rate {floor_rate:.0f} reports/s")
    print(f"ingest_floor_vs_inprocess {floor_rate / limit:.3f} ratio")
    print(f"ingest_batch_vs_floor {batch_rate / floor_rate:.3f} ratio")
    print(f"ingest_batch_latency_p50 {np.percentile(lat, 50):.2f} ms")
    print(f"ingest_batch_latency_p99 {np.percentile(lat, 99):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
