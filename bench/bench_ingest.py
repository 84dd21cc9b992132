"""End-to-end ingestion rate over HTTP on loopback (issue 3, bench b).

Starts ``rldp serve`` (gunicorn, 2 workers × 4 threads, SQLite in WAL mode with the default
synchronous=FULL: every acknowledged batch is fsynced) and uploads pre-encoded msgpack
bodies from several client threads over keep-alive connections (a minimal raw-socket HTTP/1.1
client, ``RawConnection``, so that the load generator costs little CPU on the same two cores).
Three figures, same run:

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

The WSGI ceiling, same run: the service itself with no HTTP at all — 2 forked processes × 4
threads calling the Flask app as a WSGI callable on a SQLite file configured as above
(``ingest_wsgi_ceiling_rate``, ``ingest_wsgi_ceiling_vs_inprocess``): what rldp's own per-batch
work (Flask, decoding, validation, the committed SQLite transaction) allows if the HTTP front
end cost nothing. The HTTP floor and this ceiling bound the service from two sides.

Lines (``name value unit``): ingest_http_batch_rate, ingest_http_single_rate,
ingest_inprocess_rate (reports/s), ingest_batch_vs_single (x), ingest_batch_vs_inprocess
(ratio), the same batch figures with SQLite synchronous=NORMAL (``*_sync_normal``: survives
kill -9 but not a power cut), ingest_batch_latency_p50 / _p99 (ms, default configuration).

Run: python bench/bench_ingest.py [--quick]
"""

from __future__ import annotations

import http.client
import io
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from typing import Any

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


class RawConnection:
    """A minimal HTTP/1.1 keep-alive client for the load generator: it sends each request with
    one ``sendall`` and parses only the status line and Content-Length of the answer.

    http.client costs ~250–300 µs of CPU per 10 KB request here (header objects, buffered
    reads, and the GIL traffic of 8 threads); this costs ~70–100 µs, so the generator takes
    fewer cycles from the server on the same two cores. The requests are ordinary HTTP/1.1
    (Host, Content-Type, Content-Length) and every answer is read whole and its status checked.
    """

    def __init__(self, port: int, timeout: float = 60) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def post(self, path: str, body: bytes, content_type: str = "application/msgpack") -> tuple[int, bytes]:
        self.sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        while b"\r\n\r\n" not in self.buffer:
            self._receive()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        fields = {name.strip().lower(): value.strip()
                  for name, _, value in (line.partition(b":") for line in lines[1:])}
        if b"content-length" not in fields:
            raise SystemExit(f"the server answered without Content-Length: {head[:200]!r}")
        length = int(fields[b"content-length"])
        self.buffer = rest
        while len(self.buffer) < length:
            self._receive()
        text, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, text

    def _receive(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise SystemExit("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def upload(port: int, bodies: list[bytes]) -> tuple[float, list[float]]:
    """Send ``bodies`` from CLIENT_THREADS keep-alive connections; (seconds, per-request latencies)."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def work(part: list[bytes]) -> None:
        conn = RawConnection(port)
        mine = []
        for body in part:
            t0 = time.perf_counter()
            status, text = conn.post("/v1/reports", body)
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


def _wsgi_environ(body: bytes) -> dict:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": "/v1/reports", "SCRIPT_NAME": "", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "CONTENT_TYPE": "application/msgpack", "CONTENT_LENGTH": str(len(body)), "HTTP_HOST": "127.0.0.1",
            "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
            "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0)}


def _wsgi_worker(db: str, bodies: list[bytes], threads: int, barrier: Any, failures: Any) -> None:
    from rldp.aggregator.service import create_app

    app = create_app({"DATABASE_URL": db})  # opened after the fork, as a gunicorn worker does
    environs = [_wsgi_environ(body) for body in bodies]

    def work(part: list[dict]) -> None:
        for environ in part:
            status = []
            b"".join(app(environ, lambda s, h, e=None: status.append(s)))
            if not status[0].startswith("201"):
                failures.put(status[0])
                return

    barrier.wait()
    pool = [threading.Thread(target=work, args=(environs[k::threads],)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def wsgi_ceiling(db: str, bodies: list[bytes], processes: int = 2, threads: int = 4) -> float:
    """Seconds for the service to ingest ``bodies`` with no HTTP at all: ``processes`` forked
    workers × ``threads`` threads calling the Flask app as a WSGI callable on one database —
    what rldp's own per-batch work (Flask, decoding, validation, SQLite commit) allows with an
    HTTP front end that cost nothing."""
    ctx = multiprocessing.get_context("fork")
    barrier, failures = ctx.Barrier(processes + 1), ctx.Queue()
    workers = [ctx.Process(target=_wsgi_worker, args=(db, bodies[k::processes], threads, barrier, failures))
               for k in range(processes)]
    for w in workers:
        w.start()
    barrier.wait(120)
    start = time.perf_counter()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    if not failures.empty() or any(w.exitcode for w in workers):
        raise SystemExit(f"in-process ingestion failed: {failures.get() if not failures.empty() else 'a worker died'}")
    return elapsed


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
        # The service with no HTTP at all (same SQLite configuration, same worker layout).
        from rldp.aggregator.service import create_app

        ceiling_db = f"sqlite:///{tmp}/ceiling.sqlite3"
        app = create_app({"DATABASE_URL": ceiling_db, "ADMIN_TOKEN": TOKEN})
        status = app.test_client().post("/v1/mechanisms", data=to_msgpack(doc), content_type="application/msgpack",
                                        headers={"Authorization": f"Bearer {TOKEN}"}).status_code
        assert status == 201, status
        app.extensions["rldp"].storage.close()
        ceiling_bodies = [msgpack.packb({"mechanism": mid, "batch": uuid.uuid4().hex,
                                         "reports": rng.integers(0, outputs, BATCH).tolist()})
                          for _ in range(n_batches)]
        ceiling_seconds = wsgi_ceiling(ceiling_db, ceiling_bodies)
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
    ceiling_rate = n_batches * BATCH / ceiling_seconds
    print(f"ingest_wsgi_ceiling_rate {ceiling_rate:.0f} reports/s")
    print(f"ingest_wsgi_ceiling_vs_inprocess {ceiling_rate / limit:.3f} ratio")
    print(f"ingest_batch_latency_p50 {np.percentile(lat, 50):.2f} ms")
    print(f"ingest_batch_latency_p99 {np.percentile(lat, 99):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
