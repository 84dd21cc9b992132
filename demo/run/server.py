"""The aggregator service the demo talks to: started on loopback, or the one given."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from rldp.shared.document import to_msgpack
from rldp.shared.errors import RldpError, ValidationError

from .config import DemoConfig

__all__ = ["DemoError", "SERVE_MODULE", "aggregator", "publish", "fetch_estimate"]

# ``python -m SERVE_MODULE serve ...`` starts an aggregator (the ``rldp`` command's module).
SERVE_MODULE = "rldp.cli"
READY_TIMEOUT = 60.0  # seconds for a fresh aggregator to answer /readyz
_POLL = 0.2  # seconds between two /readyz probes
_STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL
_LOG_TAIL = 2000  # characters of the server log quoted when it dies
_BODY_TAIL = 500  # characters of an error response quoted


class DemoError(RldpError, RuntimeError):
    """The aggregator the demo uses failed: it did not start, or refused a request."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def aggregator(cfg: DemoConfig) -> Iterator[tuple[str, str]]:
    """(base URL, admin token) of a running aggregator: the one given, or a fresh one on
    loopback backed by SQLite in a temporary folder (removed afterwards)."""
    if cfg.server:
        token = cfg.admin_token or os.environ.get("RLDP_ADMIN_TOKEN")
        if not token:
            raise ValidationError("--server needs the aggregator's admin token (--admin-token or RLDP_ADMIN_TOKEN)")
        yield cfg.server.rstrip("/"), token
        return
    folder = Path(tempfile.mkdtemp(prefix="rldp-demo-"))
    token = secrets.token_urlsafe(24)
    port = _free_port()
    env = dict(os.environ, RLDP_ADMIN_TOKEN=token)
    cmd = [
        sys.executable,
        "-m",
        SERVE_MODULE,
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--db",
        f"sqlite:///{folder / 'rldp.sqlite3'}",
    ]
    url = f"http://127.0.0.1:{port}"
    try:
        with open(folder / "server.log", "w") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                _wait_healthy(url, proc, folder / "server.log")
                yield url, token
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text()[-_LOG_TAIL:] if log.exists() else ""
            raise DemoError(f"the aggregator exited with status {proc.returncode}: {tail.strip()}")
        try:
            if requests.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass  # not listening yet
        time.sleep(_POLL)
    raise DemoError(f"the aggregator at {url} did not become ready within {timeout:.0f} s")


def _admin(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def publish(url: str, token: str, doc: dict) -> dict:
    """POST /v1/mechanisms (msgpack): the server re-checks the id and the audit."""
    resp = requests.post(
        f"{url}/v1/mechanisms",
        data=to_msgpack(doc),
        timeout=60,
        headers={**_admin(token), "Content-Type": "application/msgpack"},
    )
    if resp.status_code not in (200, 201):
        raise DemoError(f"publishing the mechanism failed ({resp.status_code}): {resp.text[:_BODY_TAIL]}")
    return resp.json()


def fetch_estimate(url: str, token: str, mechanism_id: str) -> dict:
    """GET the aggregator's estimate of P_X (with 95 % intervals) for ``mechanism_id``."""
    resp = requests.get(f"{url}/v1/mechanisms/{mechanism_id}/estimate", headers=_admin(token), timeout=120)
    if resp.status_code != 200:
        raise DemoError(f"the estimate request failed ({resp.status_code}): {resp.text[:_BODY_TAIL]}")
    return resp.json()
