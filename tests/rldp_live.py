"""Helpers for tests that run the real service: live servers on loopback, databases.

Imported as ``rldp_live`` (tests/ is on sys.path). The documents and tokens live in
:mod:`documents` (client-safe) and are re-exported here.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import pytest
import requests
from documents import ADMIN_TOKEN, READ_TOKEN, SMALL_ALPHABET, make_document, tampered  # noqa: F401 (re-exported)

from rldp.aggregator.design import DesignRequest, design_document
from rldp.aggregator.http import create_app
from rldp.aggregator.storage import MechanismRecord
from rldp.shared.attributes import Attribute
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet

POSTGRES_ENV = "RLDP_TEST_POSTGRES_URL"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
MAX_BODY = 4_000_000  # bytes: the shared live servers' body limit (small enough to test 413 cheaply)
READ = {"Authorization": f"Bearer {READ_TOKEN}"}

#: A numeric released attribute for the estimate and dashboard tests: age in 4 bins, with sex as S.
AGE_SPEC = NumericSpec((17, 25, 35, 50, 90))
AGE_ALPHABET = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute.binned("age", AGE_SPEC)])
AGE_P_HAT = np.array([[0.12, 0.13, 0.12, 0.13], [0.12, 0.13, 0.12, 0.13]])


def grr_age_document(alphabet: Alphabet = AGE_ALPHABET) -> dict:
    """GRR at ε = 2 over (sex, age in 4 bins): the numeric mechanism the estimate and dashboard tests publish."""
    request = DesignRequest(method="grr", epsilon=2.0, radius=0.01, window=None)
    return design_document(request, alphabet=alphabet, public_distribution=AGE_P_HAT)


# --------------------------------------------------------------------------- in-process app


@contextmanager
def in_process_app(tmp_path: Path, **config: Any) -> Iterator[Any]:
    """The Flask app on a fresh SQLite store with the test tokens (``config`` overrides); closed after."""
    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
            "ADMIN_TOKEN": ADMIN_TOKEN,
            "READ_TOKEN": READ_TOKEN,
            **config,
        }
    )
    try:
        yield app
    finally:
        app.extensions["rldp"].storage.close()


# --------------------------------------------------------------------------- databases


def finished_job(http: Any, status_url: str, timeout: float = 120.0) -> dict[str, Any]:
    """The status of the design job at ``status_url`` (a Flask test client's path) once it is done or failed."""
    deadline = time.monotonic() + timeout
    while (status := http.get(status_url, headers=ADMIN).json)["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, f"design job still {status['status']} after {timeout:g} s"
        time.sleep(0.2)
    return dict(status)


def run_design_job(http: Any, request: dict[str, Any]) -> dict[str, Any]:
    """POST /v1/designs with ``request`` (202 expected) and the job's status once it is done or failed."""
    resp = http.post("/v1/designs", json=request, headers=ADMIN)
    assert resp.status_code == 202, resp.json
    return finished_job(http, resp.json["status_url"])


class _Pipe:
    """A pipe end that keeps what it is sent (what a design job's child sends its parent)."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, item: Any) -> None:
        self.sent.append(item)

    def close(self) -> None:
        pass


def design_child_result(payload: Any) -> tuple[str, Any]:
    """What a design job's child process sends for ``payload`` (``design_request``'s), run in this process:
    ("ok", msgpack bytes) or ("error", message)."""
    from rldp.aggregator.services.jobs import _design_child

    pipe = _Pipe()
    _design_child(pipe, payload)
    (result,) = pipe.sent
    return result


def postgres_url() -> str | None:
    return os.environ.get(POSTGRES_ENV) or None


def with_search_path(url: str, schema: str) -> str:
    """The URL with ``options=-csearch_path=<schema>`` (libpq), so tables land in that schema."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urlunsplit(parts._replace(query=urlencode(query)))


class Databases:
    """Fresh, isolated databases: a SQLite file, or a new schema in the test PostgreSQL database."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.schemas: list[str] = []

    def url(self, backend: str) -> str:
        if backend == "sqlite":
            path = self.tmp / f"db-{uuid.uuid4().hex[:8]}" / "rldp.sqlite3"
            path.parent.mkdir(parents=True)  # rldp serve refuses a missing folder (unless --create-dirs)
            return f"sqlite:///{path}"  # an absolute path gives sqlite:////abs/path
        base = postgres_url()
        if not base:
            pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV} (e.g. postgresql://rldp:rldp@127.0.0.1/rldp_test)")
        import psycopg

        schema = f"rldp_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        self.schemas.append(schema)
        return with_search_path(base, schema)

    def cleanup(self) -> None:
        base = postgres_url()
        if not base or not self.schemas:
            return
        import psycopg

        with psycopg.connect(base, autocommit=True) as conn:
            for schema in self.schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        self.schemas.clear()


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """``rldp serve`` in its own process group on 127.0.0.1 (Granian unless ``dev``)."""

    def __init__(
        self,
        db_url: str,
        log_dir: Path,
        *,
        workers: int = 2,
        threads: int = 4,
        dev: bool = False,
        env: dict[str, str] | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.db_url = db_url
        self.log_dir = log_dir
        self.workers = workers
        self.threads = threads
        self.dev = dev
        self.env = dict(env or {})
        self.extra_args = tuple(extra_args)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._log = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int | None = None, timeout: float = 60.0) -> LiveServer:
        for _attempt in range(3):
            self.port = port or free_port()
            env = dict(os.environ)
            env.pop("PROMETHEUS_MULTIPROC_DIR", None)
            env.update({"RLDP_ADMIN_TOKEN": ADMIN_TOKEN, "RLDP_READ_TOKEN": READ_TOKEN}, **self.env)
            cmd = [
                sys.executable,
                "-m",
                "rldp.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--db",
                self.db_url,
                *self.extra_args,
            ]
            cmd += ["--dev"] if self.dev else ["--workers", str(self.workers), "--threads", str(self.threads)]
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self.starts += 1
            self._log = open(self.log_dir / f"server-{self.port}-{self.starts}.log", "wb")
            self.proc = subprocess.Popen(
                cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
            if self._wait_ready(timeout):
                return self
            self.stop()
            if port:
                break
        raise RuntimeError(f"rldp serve did not become ready; log:\n{self.log_text()}")

    def _wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            try:
                if requests.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return True
            except requests.RequestException:
                pass
            time.sleep(0.1)
        return False

    def log_text(self) -> str:
        if self._log is None:
            return ""
        if not self._log.closed:  # a failed start has closed it (stop()); the file is still there
            self._log.flush()
        try:
            return Path(self._log.name).read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    def kill9(self) -> None:
        """SIGKILL the whole process group (master and workers), like a crash."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._close_log()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
            except ProcessLookupError:
                pass
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()

    def restart(self) -> LiveServer:
        return self.start(port=self.port)

    # -- convenience
    def publish(self, doc: dict[str, Any]) -> requests.Response:
        return requests.post(self.url + "/v1/mechanisms", json=doc, headers=ADMIN, timeout=30)

    def post_reports(
        self, mechanism: str, batch: str, reports: list[Any], window: str | None = None, **kwargs: Any
    ) -> requests.Response:
        body: dict[str, Any] = {"mechanism": mechanism, "batch": batch, "reports": reports}
        if window is not None:  # the label, for a mechanism that collects by window
            body["window"] = window
        return requests.post(
            self.url + "/v1/reports",
            json=body,
            timeout=30,
            **kwargs,
        )

    def estimate(self, mechanism: str, **params: Any) -> requests.Response:
        return requests.get(f"{self.url}/v1/mechanisms/{mechanism}/estimate", params=params, headers=READ, timeout=60)


def assert_problem(resp: requests.Response, status: int, reason: str) -> dict[str, Any]:
    """The response is an RFC 9457 problem of this status and reason; returns its body."""
    assert resp.status_code == status, (resp.status_code, resp.text[:500])
    assert resp.headers["Content-Type"].startswith("application/problem+json"), resp.headers["Content-Type"]
    body = resp.json()
    assert body["type"] == f"https://rldp.dev/problems/{reason}", body
    assert body["status"] == status and body["title"] and body["detail"], body
    return body


# ----------------------------------------------------------------------------- helpers the layers' tests share


def call(wsgi, body: bytes, content_type: str, length: str | None = None, **extra) -> tuple[str, dict, dict]:
    """POST ``body`` to /v1/reports of a WSGI callable (the Flask app): status, headers, JSON."""
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/v1/reports",
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_TYPE": content_type,
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    environ["CONTENT_LENGTH"] = str(len(body)) if length is None else length
    environ.update(extra)
    seen: list = []
    data = b"".join(wsgi(environ, lambda status, headers, exc_info=None: seen.extend([status, dict(headers)])))
    return seen[0], seen[1], json.loads(data)


def csrf_nonce(resp) -> str:
    """The CSRF token of a dashboard page's form."""
    match = re.search(r'name="csrf_token" value="([^"]+)"', resp.get_data(as_text=True))
    assert match, resp.get_data(as_text=True)[:500]
    return match.group(1)


def login(http, token: str, **kwargs):
    """Log in to the dashboard through its form."""
    page = http.get("/ui/login", **kwargs)
    return http.post("/ui/login", data={"token": token, "csrf_token": csrf_nonce(page), "next": ""}, **kwargs)


def record(mid: str, outputs: int = 6, status: str = "active") -> MechanismRecord:
    """A mechanism's storage row (no document), for the storage's own tests."""
    return MechanismRecord(
        id=mid,
        method="grr",
        notion="rldp",
        epsilon=1.0,
        epsilon_audited=0.99,
        sensitive="sex",
        released=("colour",),
        outputs=outputs,
        size=6,
        status=status,
        published=time.time(),
    )


def ingest_concurrently(stores: list, mid: str, outputs: int, n_batches: int, threads: int, seed: int) -> None:
    """``threads`` threads over ``stores`` (as worker processes would) ingest every batch once and
    half of them again (retries); each must be stored once and counted once."""
    rng = np.random.default_rng(seed)
    batches = {f"batch-{i}": rng.integers(0, outputs, rng.integers(1, 400)) for i in range(n_batches)}
    names = sorted(batches)
    results: list[str] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        store = stores[k % len(stores)]
        for name in names[k::threads] + names[k :: 2 * threads]:
            res = store.ingest(mid, name, batches[name], outputs)
            with lock:
                results.append(res.status)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    expected = np.bincount(np.concatenate(list(batches.values())), minlength=outputs)
    assert results.count("accepted") == n_batches and results.count("duplicate") == len(results) - n_batches
    np.testing.assert_array_equal(stores[-1].counts(mid, outputs), expected)
    np.testing.assert_array_equal(stores[0].recount(mid, outputs), expected)


def wait_until(condition: Any, timeout: float = 60.0, what: str = "the condition") -> Any:
    """Poll ``condition()`` until it is truthy and return its value (for what a server does in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout:g} s")


def front_upload(app) -> Any:
    """A caller like :func:`call` (body, content type, WSGI-style headers such as HTTP_AUTHORIZATION) of the
    upload coroutine ``rldp serve``'s front awaits for POST /v1/reports, committing with ``app``'s storage."""
    from rldp.aggregator.http.upload import ReportUpload, UploadRequest

    storage = app.extensions["rldp"].storage

    async def commit(item: Any) -> Any:
        return storage.commit(item)

    upload = ReportUpload(app.extensions["rldp"], app.extensions["rldp.metrics"], commit=commit)

    def post(body: bytes, content_type: str | None, **extra: str) -> tuple[str, dict, dict]:
        headers = [] if content_type is None else [("content-type", content_type)]
        headers += [(k[5:].replace("_", "-").lower(), v) for k, v in extra.items() if k.startswith("HTTP_")]
        status, answer_headers, data = asyncio.run(upload(UploadRequest.of(body, headers)))
        return f"{status} {HTTPStatus(status).phrase}", dict(answer_headers), json.loads(data)

    return post


# ----------------------------------------------------------------------------- the front's RSGI side, faked


class RsgiScope:
    """What Granian's RSGI interface hands the buffering front for one request (the fields it reads)."""

    proto = "http"
    server = "127.0.0.1:8000"
    client = "127.0.0.1:50000"
    query_string = ""
    scheme = "http"
    http_version = "1.1"

    def __init__(self, method: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.method, self.path = method, path
        self.headers = {"content-length": str(len(body)), "content-type": "application/msgpack", **(headers or {})}


class RsgiProto:
    """The RSGI protocol object of one request: its whole body, and the answer once given."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.answer: tuple[int, Any, bytes] | None = None

    async def __call__(self) -> bytes:
        return self.body

    def response_bytes(self, status: int, headers: Any, body: bytes) -> None:
        self.answer = (status, headers, body)
