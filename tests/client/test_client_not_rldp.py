"""A server that is not an aggregator answering 200 with a web page where a document was expected is named
as such, in one line, instead of "invalid or tampered document: not valid JSON" (issue 27 rough edge)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from rldp.client import Client, ProblemError


@pytest.fixture
def web_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # every path is a page
            body = b"<!DOCTYPE HTML><html><body>an ordinary web site</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_web_page_for_a_document_is_not_an_aggregator(web_server: str) -> None:
    with Client(web_server, state_path=None, retries=0) as client, pytest.raises(ProblemError) as info:
        client.mechanism("ab" * 32)
    text = str(info.value)
    assert info.value.reason == "not-rldp" and "not an rldp aggregator" in text and "text/html" in text
    assert "DOCTYPE" not in text and "tampered" not in text and "\n" not in text
