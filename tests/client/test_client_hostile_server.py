"""A server can lie to a client (issue 35): redirects to another origin, answers larger than any document the
client can accept. Both are refused with a ProblemError, against real HTTP servers on 127.0.0.1, as the
TypeScript SDK does (js/test/hostile.test.mjs); the limit is the one declared in conformance/limits.json."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rldp.client import Client, ProblemError, ServiceUnavailable
from rldp.client.mechanism import MAX_DENSE_AUDIT_ENTRIES
from rldp.client.transport import MAX_RESPONSE_BYTES
from rldp.shared.document import MAX_SYMBOLS

LIMITS = Path(__file__).resolve().parents[2] / "conformance" / "limits.json"
ID = "ab" * 32

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


class Server:
    """A local HTTP server answering every request with ``answer``; ``requests`` lists "METHOD path"."""

    def __init__(self, answer: Handler) -> None:
        self.requests: list[str] = []
        outer = self

        class _Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                outer.requests.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up: what the test expects of it

            do_GET = do_POST = _any

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], Server]]:
    servers: list[Server] = []

    def start(answer: Handler) -> Server:
        servers.append(Server(answer))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_a_redirect_to_another_origin_is_refused_and_a_post_never_resent(serve: Callable[[Handler], Server]) -> None:
    def accept(h: http.server.BaseHTTPRequestHandler) -> None:
        body = json.dumps({"accepted": 2, "duplicate": False}).encode()
        h.send_response(201)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    elsewhere = serve(accept)

    def redirect(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(307)
        h.send_header("Location", elsewhere.url + h.path)
        h.send_header("Content-Length", "0")
        h.end_headers()

    redirecting = serve(redirect)
    with Client(redirecting.url, state_path=None, retries=0) as client:
        with pytest.raises(ProblemError) as post:
            client.submit_reports(ID, [0, 1])
        with pytest.raises(ProblemError) as get:
            client.mechanism(ID)
    for info in (post, get):
        assert info.value.reason == "redirect" and info.value.status == 307 and elsewhere.url in str(info.value)
    assert len(redirecting.requests) == 2
    assert elsewhere.requests == [], "nothing reached the other origin"


def test_a_content_length_above_the_cap_is_refused_before_the_body(serve: Callable[[Handler], Server]) -> None:
    def big(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/msgpack")
        h.send_header("Content-Length", str(MAX_RESPONSE_BYTES + 1))
        h.end_headers()
        h.wfile.write(b"\x00" * 1024)
        h.wfile.flush()
        time.sleep(30)  # and nothing more: a client that reads the body waits for it

    server = serve(big)
    with Client(server.url, state_path=None, retries=0, timeout=60) as client, pytest.raises(ProblemError) as info:
        client.mechanism(ID)
    assert info.value.reason == "response-too-large" and f"{MAX_RESPONSE_BYTES + 1:,} bytes" in str(info.value)


def test_a_chunked_body_beyond_the_cap_is_refused_while_streaming(serve: Callable[[Handler], Server]) -> None:
    sent = [0]

    def endless(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/msgpack")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b"\x00" * 65536
        while sent[0] < 64 << 20:  # 64 MiB at most, then the end: the client must stop long before
            h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent[0] += len(chunk)
        h.wfile.write(b"0\r\n\r\n")

    server = serve(endless)
    with Client(server.url, state_path=None, retries=0, timeout=60) as client:
        client._http.max_response_bytes = 1 << 20
        with pytest.raises(ProblemError) as info:
            client.mechanism(ID)
    assert info.value.reason == "response-too-large"


def test_a_catalogue_without_a_list_is_a_typed_refusal(serve: Callable[[Handler], Server]) -> None:
    def odd(h: http.server.BaseHTTPRequestHandler) -> None:
        body = json.dumps({"items": []}).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    server = serve(odd)
    with Client(server.url, state_path=None, retries=0) as client, pytest.raises(ProblemError) as info:
        client.mechanisms()
    assert info.value.reason == "not-rldp" and "no list of mechanisms" in str(info.value)


def test_the_limits_are_the_ones_declared_once() -> None:
    declared: dict[str, Any] = json.loads(LIMITS.read_text(encoding="utf-8"))
    assert MAX_SYMBOLS == declared["max_symbols"]
    assert MAX_DENSE_AUDIT_ENTRIES == declared["max_dense_audit_entries"]
    assert MAX_RESPONSE_BYTES == declared["max_response_bytes"]
    assert MAX_RESPONSE_BYTES == -(-32 * MAX_DENSE_AUDIT_ENTRIES // 3) + 1024 * MAX_SYMBOLS


@pytest.mark.parametrize("chunked", [False, True])
def test_a_trickled_body_ends_in_service_unavailable(serve: Callable[[Handler], Server], chunked: bool) -> None:
    """Each byte arrives well within the per-read timeout, the whole body never within it (issue 35, D20)."""

    def trickle(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/msgpack")
        h.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", "60")))
        h.end_headers()
        for _ in range(60):  # 60 bytes, one every 0.25 s: 15 s in all
            h.wfile.write(b"1\r\n\x00\r\n" if chunked else b"\x00")
            h.wfile.flush()
            time.sleep(0.25)
        if chunked:
            h.wfile.write(b"0\r\n\r\n")

    server = serve(trickle)
    with (
        Client(server.url, state_path=None, retries=0, timeout=1.5) as client,
        pytest.raises(ServiceUnavailable) as info,
    ):
        client.mechanism(ID)
    assert "still arriving" in str(info.value)
