"""Slow-body clients for ``bench_ingest.py --trickle``: connections to 127.0.0.1 that send a
report upload's headers, then one byte of its body every ``interval`` seconds.

Bounded: ``count`` connections (at most 256), loopback only, closed when the block ends.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

MAX_CLIENTS = 256


@contextmanager
def trickling(port: int, count: int, interval: float = 0.5) -> Iterator[list[socket.socket]]:
    """``count`` connections trickling a body (declared 1 MB) a byte every ``interval`` s."""
    if not 0 < count <= MAX_CLIENTS:
        raise ValueError(f"count must be in 1..{MAX_CLIENTS}; got {count}")
    head = (
        b"POST /v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000\r\n\r\n["
    )
    socks = []
    stop = threading.Event()
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(head)
            socks.append(sock)

        def drip() -> None:
            while not stop.wait(interval):
                for sock in socks:
                    try:
                        sock.send(b"1")
                    except OSError:
                        pass

        thread = threading.Thread(target=drip, daemon=True)
        thread.start()
        time.sleep(interval)  # every trickler has been accepted and is mid-body
        yield socks
        stop.set()
        thread.join(5)
    finally:
        stop.set()
        for sock in socks:
            sock.close()


def healthz_seconds(port: int, timeout: float = 10.0) -> float:
    """Seconds for GET /healthz on a new connection (``timeout`` if it does not answer)."""
    start = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", "/healthz")
        ok = conn.getresponse().status == 200
        conn.close()
    except OSError:
        ok = False
    return time.perf_counter() - start if ok else timeout
