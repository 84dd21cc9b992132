"""The dashboard's limits: failed logins per address (429 with Retry-After) and forms over
MAX_BODY_BYTES (an HTML 413 page, through Flask and through the buffering front of rldp serve)."""

from __future__ import annotations

import io
import re
import socket

import pytest
from rldp_live import ADMIN, ADMIN_TOKEN, READ_TOKEN, LiveServer, in_process_app

from rldp.aggregator.http.dashboard.throttle import MAX_FAILURES, WINDOW_SECONDS, LoginThrottle, login_throttle

LIMIT = 50_000  # bytes: MAX_BODY_BYTES of these tests


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, MAX_BODY_BYTES=LIMIT) as app:
        yield app


def _nonce(resp) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', resp.get_data(as_text=True))
    assert match, resp.get_data(as_text=True)[:300]
    return match.group(1)


def _login(client, token: str, address: str):
    env = {"REMOTE_ADDR": address}
    nonce = _nonce(client.get("/ui/login", environ_base=env))
    return client.post("/ui/login", data={"token": token, "csrf_token": nonce, "next": ""}, environ_base=env)


def test_failed_logins_are_limited_per_address(app):
    clock = Clock()
    login_throttle(app).clock = clock
    client = app.test_client()
    for _ in range(MAX_FAILURES):
        assert _login(client, "wrong-token-0123456789", "10.0.0.1").status_code == 401
        clock.now += 1.0
    blocked = _login(client, ADMIN_TOKEN, "10.0.0.1")  # even the right token is not checked now
    assert blocked.status_code == 429 and blocked.mimetype == "text/html"
    wait = int(blocked.headers["Retry-After"])
    assert wait == WINDOW_SECONDS - MAX_FAILURES  # until the first failure leaves the window
    assert f"Try again in {wait} s" in blocked.get_data(as_text=True)
    assert "rldp_session" not in blocked.headers.get("Set-Cookie", "")
    # another address is not affected, and a success does not clear the count
    assert _login(app.test_client(), READ_TOKEN, "10.0.0.2").status_code == 303
    clock.now += wait
    assert _login(app.test_client(), ADMIN_TOKEN, "10.0.0.1").status_code == 303
    assert _login(client, "wrong", "10.0.0.1").status_code == 401


def test_the_throttle_is_bounded():
    clock = Clock()
    throttle = LoginThrottle(max_failures=2, window=60.0, max_addresses=3, clock=clock)
    for address in ("a", "b", "c", "d"):
        throttle.failed(address)
        throttle.failed(address)
    assert len(throttle._failures) == 3 and throttle.retry_after("a") is None  # the oldest was dropped
    assert throttle.retry_after("d") == 60
    clock.now += 60.0
    assert throttle.retry_after("d") is None and "d" not in throttle._failures


def test_a_design_form_over_the_limit_gets_an_html_page(app):
    client = app.test_client()
    assert _login(client, ADMIN_TOKEN, "127.0.0.1").status_code == 303
    nonce = _nonce(client.get("/ui/designs"))
    big = io.BytesIO(b"a,b\n" + b"x,y\n" * (LIMIT // 4))
    resp = client.post(
        "/ui/designs",
        data={"csrf_token": nonce, "csv": (big, "big.csv"), "sensitive": "a", "released": "b", "epsilon": "1"},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 413 and resp.mimetype == "text/html"
    text = resp.get_data(as_text=True)
    assert "Upload too large" in text and f"{LIMIT:,} bytes" in text
    # the API keeps its JSON problem
    api = client.post("/v1/mechanisms", data=b"0" * (LIMIT + 1), headers={**ADMIN, "Content-Type": "application/json"})
    assert api.status_code == 413 and api.get_json()["reason"] == "body-too-large"


def _answer(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(head)  # the body is never sent: the front refuses on Content-Length alone
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


@pytest.mark.live
def test_the_front_answers_dashboard_forms_over_the_limit_with_an_html_page(tmp_path):
    server = LiveServer(
        f"sqlite:///{tmp_path}/db.sqlite3",
        tmp_path / "logs",
        workers=1,
        threads=1,
        env={"RLDP_MAX_BODY_BYTES": str(LIMIT)},
    ).start()
    try:
        size = f"Content-Length: {LIMIT + 1}\r\n\r\n".encode()
        page = _answer(
            server.port,
            b"POST /ui/designs HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n" + size,
        )
        head, _, body = page.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 ") and b"text/html" in head.lower(), head
        assert b"Upload too large" in body and f"{LIMIT:,} bytes".encode() in body
        api = _answer(server.port, b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + size)
        assert api.startswith(b"HTTP/1.1 413 ") and b"application/problem+json" in api and b"body-too-large" in api
    finally:
        server.stop()
