"""The aggregator's HTTP service (Flask): publish mechanisms, ingest reports, estimate.

    app = create_app({"DATABASE_URL": "sqlite:///rldp-data/rldp.sqlite3", "ADMIN_TOKEN": "…"})

``rldp serve`` runs it under Granian (``--dev``: Werkzeug's server). The HTTP contract
(v1) is described by ``/openapi.json`` (:mod:`rldp.aggregator.openapi`); errors are
RFC 9457 problems (:mod:`rldp.aggregator.problems`).

Configuration (``config`` argument > environment > default):

=====================  ===========================  ==========================================
key                    environment                  meaning
=====================  ===========================  ==========================================
DATABASE_URL           RLDP_DATABASE_URL            storage URL (default sqlite:///rldp-data/rldp.sqlite3)
ADMIN_TOKEN            RLDP_ADMIN_TOKEN             admin bearer token (publish, retire, design, estimate)
ADMIN_TOKEN_SHA256     RLDP_ADMIN_TOKEN_SHA256      or its SHA-256 hex digest (comma-separated: several)
READ_TOKEN             RLDP_READ_TOKEN              bearer token that may only read estimates
READ_TOKEN_SHA256      RLDP_READ_TOKEN_SHA256       or its SHA-256 hex digest(s)
MAX_BODY_BYTES         RLDP_MAX_BODY_BYTES          request body limit, bytes (default 32 MiB) → 413
MAX_BATCH_REPORTS      RLDP_MAX_BATCH_REPORTS       most reports in one batch (default 1,000,000) → 413
DESIGN_TIMEOUT         RLDP_DESIGN_TIMEOUT          seconds before a design job is stopped (default 3600)
DESIGN_CONCURRENCY     RLDP_DESIGN_CONCURRENCY      design jobs running at once per process (default 1)
WRITER_SOCKET          RLDP_WRITER_SOCKET           SQLite: socket of the writer process that commits
                                                    report batches (``rldp serve`` sets it)
=====================  ===========================  ==========================================

Tokens are hashed (SHA-256) as soon as they are read, compared with
``hmac.compare_digest`` on the hashes, and never logged. Without an admin token the
admin endpoints answer 401 to everyone.
"""

from __future__ import annotations

import array
import hashlib
import hmac
import json
import logging
import math
import multiprocessing
import os
import re
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any, Mapping

import msgpack
import numpy as np
from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from rldp import __version__
from rldp.shared.audit import audit_document
from rldp.shared.document import (
    DocumentError,
    alphabet as document_alphabet,
    from_json,
    from_msgpack,
    mechanism_matrix,
    public_distribution,
    to_msgpack,
)

from .problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from .problems import PROBLEMS, Problem
from .storage import DEFAULT_URL, MechanismRecord, Storage, StorageError, open_storage

__all__ = ["create_app", "load_config", "hash_token", "DEFAULTS"]

log = logging.getLogger("rldp.service")

DEFAULTS: dict[str, Any] = {
    "DATABASE_URL": DEFAULT_URL,
    "MAX_BODY_BYTES": 32 * 1024 * 1024,
    "MAX_BATCH_REPORTS": 1_000_000,
    "DESIGN_TIMEOUT": 3600.0,
    "DESIGN_CONCURRENCY": 1,
    "JOB_STALE_SECONDS": 120.0,
}
_ENV = {
    "DATABASE_URL": "RLDP_DATABASE_URL",
    "ADMIN_TOKEN": "RLDP_ADMIN_TOKEN",
    "ADMIN_TOKEN_SHA256": "RLDP_ADMIN_TOKEN_SHA256",
    "READ_TOKEN": "RLDP_READ_TOKEN",
    "READ_TOKEN_SHA256": "RLDP_READ_TOKEN_SHA256",
    "MAX_BODY_BYTES": "RLDP_MAX_BODY_BYTES",
    "MAX_BATCH_REPORTS": "RLDP_MAX_BATCH_REPORTS",
    "DESIGN_TIMEOUT": "RLDP_DESIGN_TIMEOUT",
    "DESIGN_CONCURRENCY": "RLDP_DESIGN_CONCURRENCY",
    "JOB_STALE_SECONDS": "RLDP_JOB_STALE_SECONDS",
    "WRITER_SOCKET": "RLDP_WRITER_SOCKET",
}
_INT_KEYS = {"MAX_BODY_BYTES": 1, "MAX_BATCH_REPORTS": 1, "DESIGN_CONCURRENCY": 1}
_FLOAT_KEYS = {"DESIGN_TIMEOUT", "JOB_STALE_SECONDS"}

JSON = "application/json"
MSGPACK = "application/msgpack"
_MSGPACK_TYPES = frozenset({"application/msgpack", "application/x-msgpack", "application/vnd.msgpack"})
BATCH_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
MECHANISM_ID = re.compile(r"[0-9a-f]{64}")
IMMUTABLE = "public, max-age=31536000, immutable"


# --------------------------------------------------------------------------- configuration


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a bearer token (what RLDP_*_TOKEN_SHA256 holds)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _hashes(plain: Any, hashed: Any, name: str) -> tuple[bytes, ...]:
    out: list[bytes] = []
    if plain:
        if not isinstance(plain, str):
            raise ValueError(f"{name} must be a string")
        if len(plain) < 16:
            raise ValueError(f"{name} is too short ({len(plain)} characters); use at least 16 random characters")
        out.append(bytes.fromhex(hash_token(plain)))
    if hashed:
        items = hashed if isinstance(hashed, (list, tuple)) else str(hashed).split(",")
        for item in items:
            item = item.strip().lower()
            if not re.fullmatch(r"[0-9a-f]{64}", item):
                raise ValueError(f"{name}_SHA256 must be SHA-256 hex digests (64 hex characters), comma-separated")
            out.append(bytes.fromhex(item))
    return tuple(out)


def load_config(config: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Merge defaults, the environment and ``config``; validate; hash tokens (plain ones dropped)."""
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = dict(DEFAULTS)
    for key, var in _ENV.items():
        if environ.get(var):
            merged[key] = environ[var]
    merged.update({k: v for k, v in (config or {}).items() if v is not None})
    for key, low in _INT_KEYS.items():
        try:
            merged[key] = int(merged[key])
        except (TypeError, ValueError):
            raise ValueError(f"{key} ({_ENV[key]}) must be an integer; got {merged[key]!r}") from None
        if merged[key] < low:
            raise ValueError(f"{key} ({_ENV[key]}) must be ≥ {low}; got {merged[key]}")
    for key in _FLOAT_KEYS:
        try:
            merged[key] = float(merged[key])
        except (TypeError, ValueError):
            raise ValueError(f"{key} ({_ENV[key]}) must be a number of seconds; got {merged[key]!r}") from None
        if not merged[key] > 0:
            raise ValueError(f"{key} ({_ENV[key]}) must be > 0; got {merged[key]}")
    merged["ADMIN_HASHES"] = _hashes(merged.pop("ADMIN_TOKEN", None), merged.pop("ADMIN_TOKEN_SHA256", None),
                                     "ADMIN_TOKEN")
    merged["READ_HASHES"] = _hashes(merged.pop("READ_TOKEN", None), merged.pop("READ_TOKEN_SHA256", None),
                                    "READ_TOKEN")
    return merged


# --------------------------------------------------------------------------- metrics


class _Metrics:
    """Prometheus metrics. ``rldp serve`` (several worker processes) sets PROMETHEUS_MULTIPROC_DIR
    before the workers start, so every worker writes its samples to files there and /metrics
    (answered by any worker) adds them up (prometheus_client's multiprocess mode)."""

    BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.reports = Counter("rldp_reports_accepted", "Reports stored (new batches only).", registry=r)
        self.batches = Counter("rldp_batches_accepted", "Batches stored for the first time.", registry=r)
        self.duplicates = Counter("rldp_batches_deduplicated",
                                  "Retried batches answered as duplicates (stored once).", registry=r)
        self.rejections = Counter("rldp_rejections", "Requests refused, by problem type.", ["reason"], registry=r)
        self.published = Counter("rldp_mechanisms_published", "Mechanisms published (first time).", registry=r)
        self.jobs = Counter("rldp_design_jobs", "Design jobs finished, by outcome.", ["status"], registry=r)
        self.latency = Histogram("rldp_request_duration_seconds", "Request latency by endpoint.",
                                 ["method", "endpoint", "status"], buckets=self.BUCKETS, registry=r)
        for reason in PROBLEMS:  # every reason shows up (as 0) from the start
            self.rejections.labels(reason)

    def render(self) -> bytes:
        from prometheus_client import CollectorRegistry, generate_latest

        if self.multiprocess:
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry)
        return generate_latest(self.registry)


# --------------------------------------------------------------------------- helpers


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({_type_name(value)})"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (bytes, bytearray)):
        return "binary"
    return type(value).__name__


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _LRU:
    """A small thread-safe LRU map for immutable per-mechanism data."""

    def __init__(self, size: int = 256) -> None:
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return None

    def put(self, key: Any, value: Any) -> Any:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)
        return value


# --------------------------------------------------------------------------- design jobs


def _design_child(conn: Any, payload: dict[str, Any]) -> None:
    """Run one design in a separate process (spawned) and send back the msgpack document."""
    try:
        from rldp.aggregator.design import design
        from rldp.shared.records import Alphabet

        alpha = Alphabet.from_dict(payload["alphabet"])
        doc = design(payload["method"], alphabet=alpha, public_distribution=np.array(payload["p_hat"]),
                     epsilon=payload["epsilon"], radius=payload["radius"], beta=payload["beta"], n=payload["n"],
                     order=payload["order"])
        conn.send(("ok", to_msgpack(doc)))
    except ValueError as exc:  # DesignError, DocumentError, bad parameters
        conn.send(("error", " ".join(str(exc).split()) or type(exc).__name__))
    except BaseException as exc:  # noqa: BLE001 - reported as the job's error
        conn.send(("error", f"design failed ({type(exc).__name__}): {' '.join(str(exc).split())}"))
    finally:
        conn.close()


class _DesignRunner:
    """Runs design jobs in spawned processes, at most ``concurrency`` at once per server process.

    A thread per job waits for a slot (status "queued"), starts the process ("running"),
    refreshes the job's heartbeat every few seconds, stops it after ``timeout`` seconds,
    and publishes the result through the same checks as POST /v1/mechanisms.
    """

    HEARTBEAT = 5.0

    def __init__(self, service: "_Service", concurrency: int, timeout: float) -> None:
        self._service = service
        self._slots = threading.Semaphore(concurrency)
        self._timeout = timeout
        self._ctx = multiprocessing.get_context("spawn")

    def start(self, job_id: str, payload: dict[str, Any]) -> None:
        threading.Thread(target=self._run, args=(job_id, payload), name=f"rldp-design-{job_id[:8]}",
                         daemon=True).start()

    def _beat(self, job_id: str, **fields: Any) -> None:
        try:
            self._service.storage.update_job(job_id, heartbeat=time.time(), **fields)
        except StorageError:
            log.warning("design job %s: could not update its status", job_id)

    def _run(self, job_id: str, payload: dict[str, Any]) -> None:
        while not self._slots.acquire(timeout=self.HEARTBEAT):
            self._beat(job_id)
        try:
            self._beat(job_id, status="running", started=time.time())
            status, value = self._design(job_id, payload)
            if status == "ok":
                try:
                    record, _ = self._service.publish_bytes(value, MSGPACK)
                except Problem as exc:
                    status, value = "error", f"the designed mechanism was refused: {exc.detail}"
                else:
                    self._beat(job_id, status="done", mechanism=record.id, finished=time.time())
                    self._service.metrics.jobs.labels("done").inc()
                    return
            self._beat(job_id, status="failed", error=value, finished=time.time())
            self._service.metrics.jobs.labels("failed").inc()
        except Exception as exc:  # noqa: BLE001 - a job thread must always leave a final status
            log.exception("design job %s failed", job_id)
            self._beat(job_id, status="failed", error=f"internal error ({type(exc).__name__})", finished=time.time())
        finally:
            self._slots.release()

    def _design(self, job_id: str, payload: dict[str, Any]) -> tuple[str, Any]:
        parent, child = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(target=_design_child, args=(child, payload), name=f"rldp-design-{job_id[:8]}",
                                 daemon=True)
        proc.start()
        child.close()
        deadline = time.monotonic() + self._timeout
        try:
            while True:
                if parent.poll(self.HEARTBEAT):
                    try:
                        return parent.recv()
                    except EOFError:
                        break
                if not proc.is_alive():
                    if parent.poll(0):
                        continue
                    break
                if time.monotonic() > deadline:
                    proc.terminate()
                    return "error", f"design did not finish within {self._timeout:g} s (DESIGN_TIMEOUT) and was stopped"
                self._beat(job_id)
            proc.join(5)
            return "error", f"the design process exited unexpectedly (exit code {proc.exitcode})"
        finally:
            parent.close()
            proc.join(1)
            if proc.is_alive():
                proc.kill()


# --------------------------------------------------------------------------- the service


class _Service:
    """State shared by the request handlers of one app."""

    def __init__(self, config: dict[str, Any], storage: Storage) -> None:
        self.config = config
        self.storage = storage
        self.metrics = _Metrics()
        self.outputs = _LRU(4096)  # id → number of outputs (immutable)
        self.documents = _LRU(64)  # (id, kind) → encoded document bytes
        self.parsed = _LRU(32)  # id → (matrix, alphabet, p_hat)
        self.designs = _DesignRunner(self, config["DESIGN_CONCURRENCY"], config["DESIGN_TIMEOUT"])

    # -- auth
    def authorize(self, *, read: bool = False) -> None:
        """Raise 401 unless the bearer token is the admin token (or, with ``read``, a read token)."""
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        allowed = self.config["ADMIN_HASHES"] + (self.config["READ_HASHES"] if read else ())
        ok = False
        if scheme.lower() == "bearer" and token.strip():
            digest = hashlib.sha256(token.strip().encode("utf-8", "surrogateescape")).digest()
            for candidate in allowed:  # compare with every hash: time does not tell which matched
                ok |= hmac.compare_digest(digest, candidate)
        if ok:
            return
        need = "an admin or read token" if read else "the admin token"
        if not self.config["ADMIN_HASHES"] and not (read and self.config["READ_HASHES"]):
            detail = (f"this endpoint needs {need}, but none is configured on this server "
                      "(set RLDP_ADMIN_TOKEN or RLDP_ADMIN_TOKEN_SHA256)")
        elif not header:
            detail = f"missing 'Authorization: Bearer <token>' header; this endpoint needs {need}"
        elif scheme.lower() != "bearer":
            detail = f"the Authorization header must use the Bearer scheme; this endpoint needs {need}"
        else:
            detail = f"the bearer token is not valid for this endpoint (it needs {need})"
        raise Problem("unauthorized", detail, headers={"WWW-Authenticate": 'Bearer realm="rldp"'})

    # -- bodies
    @staticmethod
    def body_kind() -> str:
        kind = media_kind(request.mimetype or "")
        if kind is not None:
            return kind
        got = request.headers.get("Content-Type")
        raise Problem("unsupported-media-type",
                      f"Content-Type {got!r} is not supported; send application/json or application/msgpack"
                      if got else "the request has no Content-Type; send application/json or application/msgpack",
                      headers={"Accept-Post": f"{JSON}, {MSGPACK}"})

    def check_body_size(self, size: int | None) -> None:
        """Refuse (413) a body whose announced size exceeds MAX_BODY_BYTES, before reading it."""
        limit = self.config["MAX_BODY_BYTES"]
        if size is not None and size > limit:
            raise Problem("body-too-large", f"the body has {size} bytes; the limit is {limit} "
                          "(MAX_BODY_BYTES); split the batch", limit=limit)

    def body(self) -> bytes:
        limit = self.config["MAX_BODY_BYTES"]
        self.check_body_size(request.content_length)
        try:
            if request.content_length is not None:
                return request.get_data(cache=False)
            # No Content-Length (chunked): Werkzeug hands over the server's stream unbounded
            # (wsgi.input_terminated), so enforce the limit while reading.
            chunks, total = [], 0
            while chunk := request.stream.read(min(1 << 16, limit + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise RequestEntityTooLarge()
            return b"".join(chunks)
        except RequestEntityTooLarge:
            raise Problem("body-too-large", f"the body exceeds the limit of {limit} bytes (MAX_BODY_BYTES)",
                          limit=limit) from None

    @staticmethod
    def decode(body: bytes, kind: str) -> Any:
        if kind == "json":
            try:
                return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
            except UnicodeDecodeError as exc:
                raise Problem("invalid-json", f"the body is not UTF-8 ({exc.reason} at byte {exc.start})") from None
            except json.JSONDecodeError as exc:
                raise Problem("invalid-json", f"the body is not valid JSON: {exc.msg} at line {exc.lineno} "
                              f"column {exc.colno}") from None
            except (ValueError, RecursionError) as exc:
                raise Problem("invalid-json", f"the body is not valid JSON: {' '.join(str(exc).split())}") from None
        try:
            return msgpack.unpackb(body, raw=False, strict_map_key=True)
        except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, StackError, ValueError…)
            detail = str(exc).splitlines()[0] if str(exc) else ""
            raise Problem("invalid-msgpack", f"the body is not valid msgpack ({type(exc).__name__}"
                          f"{': ' + detail if detail else ''})") from None

    # -- mechanisms
    def mechanism(self, mechanism_id: Any) -> MechanismRecord:
        if not isinstance(mechanism_id, str) or not MECHANISM_ID.fullmatch(mechanism_id):
            raise Problem("unknown-mechanism", f"no mechanism {_describe(mechanism_id)} is published here; "
                          "mechanism ids are 64 lowercase hex characters (see GET /v1/mechanisms)")
        record = self.storage.get_mechanism(mechanism_id)
        if record is None:
            raise Problem("unknown-mechanism", f"no mechanism {mechanism_id} is published here "
                          "(see GET /v1/mechanisms)", mechanism=mechanism_id)
        self.outputs.put(record.id, record.outputs)
        return record

    def publish_bytes(self, body: bytes, kind_or_mime: str) -> tuple[MechanismRecord, bool]:
        """Validate, audit and store a document; (record, created). Raises Problem on refusal."""
        kind = "msgpack" if kind_or_mime in ("msgpack", MSGPACK) else "json"
        try:
            doc = from_msgpack(body) if kind == "msgpack" else from_json(body)
        except DocumentError as exc:
            text = " ".join(str(exc).split())
            if text.startswith("id mismatch"):
                raise Problem("id-mismatch", f"{text}: the document was changed after its id was computed") from None
            if kind == "json" and text.startswith("not valid JSON"):
                raise Problem("invalid-json", f"the body is {text[4:]}") from None
            if kind == "msgpack" and text.startswith("not a valid msgpack"):
                raise Problem("invalid-msgpack", f"the body is {text[6:]}") from None
            raise Problem("invalid-document", f"invalid mechanism document: {text}") from None
        try:
            audit = audit_document(doc)
        except ValueError as exc:
            raise Problem("audit-failed", f"the document cannot be audited: {' '.join(str(exc).split())}") from None
        if not audit.passed:
            raise Problem("audit-failed", "the mechanism leaks more than it claims: " + "; ".join(audit.reasons),
                          epsilon=doc["privacy"]["epsilon"],
                          epsilon_audited=None if math.isinf(audit.epsilon) else audit.epsilon)
        alpha = document_alphabet(doc)
        record = MechanismRecord(
            id=doc["id"], method=doc["method"], notion=str(doc["privacy"]["notion"]),
            epsilon=float(doc["privacy"]["epsilon"]),
            epsilon_audited=None if math.isinf(audit.epsilon) else float(audit.epsilon),
            sensitive=alpha.sensitive.name, released=tuple(a.name for a in alpha.released),
            outputs=len(doc["matrix"]), size=alpha.size, status="active", published=time.time())
        created, stored = self.storage.publish(record, to_msgpack(doc))
        if created:
            self.metrics.published.inc()
            log.info("published mechanism %s (%s, epsilon %g)", stored.id, stored.method, stored.epsilon)
        return stored, created

    def document_bytes(self, mechanism_id: str, kind: str) -> bytes:
        cached = self.documents.get((mechanism_id, kind))
        if cached is not None:
            return cached
        packed = self.storage.get_document(mechanism_id)
        if packed is None:
            raise Problem("unknown-mechanism", f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)
        if kind == "json":
            doc = msgpack.unpackb(packed, raw=False)
            data = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        else:
            data = packed
        return self.documents.put((mechanism_id, kind), data)

    def parsed_document(self, mechanism_id: str) -> tuple[np.ndarray, Any, np.ndarray]:
        cached = self.parsed.get(mechanism_id)
        if cached is not None:
            return cached
        doc = msgpack.unpackb(self.document_bytes(mechanism_id, "msgpack"), raw=False)
        return self.parsed.put(mechanism_id, (mechanism_matrix(doc), document_alphabet(doc), public_distribution(doc)))

    # -- reports
    def ingest_reports(self, kind: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """POST /v1/reports: validate the whole batch, store it, (HTTP status, JSON payload).

        Raises :class:`Problem` for every refusal (nothing is stored then) and
        :class:`StorageError` when the database fails.
        """
        mechanism_id, batch, values = self.parse_reports(body, kind)
        outputs = self.outputs.get(mechanism_id)
        if outputs is None:
            outputs = self.mechanism(mechanism_id).outputs
        arr = self.integer_reports(values, body, kind, outputs)
        result = self.storage.ingest(mechanism_id, batch, arr, outputs)
        if result.status == "accepted":
            self.metrics.reports.inc(result.accepted)
            self.metrics.batches.inc()
            return 201, {"batch": batch, "accepted": result.accepted, "duplicate": False}
        if result.status == "duplicate":
            self.metrics.duplicates.inc()
            return 200, {"batch": batch, "accepted": result.accepted, "duplicate": True}
        if result.status == "conflict":
            raise Problem("batch-conflict", f"batch {batch!r} was already stored for this mechanism with different "
                          "reports; use a new batch id for new reports (a retry must resend the same reports)",
                          batch=batch)
        if result.status == "retired":
            raise Problem("mechanism-retired", f"mechanism {mechanism_id} is retired and accepts no more reports; "
                          "fetch the current mechanism list (GET /v1/mechanisms)", mechanism=mechanism_id)
        raise Problem("unknown-mechanism", f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)

    def problem_body(self, problem: Problem, instance: str) -> bytes:
        """The problem+json body of a refusal; counts it under its reason on /metrics."""
        self.metrics.rejections.labels(problem.reason).inc()
        return json.dumps(problem.to_dict(instance=instance), ensure_ascii=False, default=str).encode("utf-8")

    def parse_reports(self, body: bytes, kind: str) -> tuple[str, str, list[Any]]:
        data = self.decode(body, kind)
        if not isinstance(data, dict):
            raise Problem("wrong-type", f"the body must be an object {{\"mechanism\", \"batch\", \"reports\"}}; "
                          f"got {_type_name(data)}")
        for name in ("mechanism", "batch", "reports"):
            if name not in data:
                raise Problem("missing-field", f"the body has no {name!r} field; expected "
                              "{\"mechanism\": \"<id>\", \"batch\": \"<batch id>\", \"reports\": [y, ...]}",
                              field=name)
        mechanism, batch, reports = data["mechanism"], data["batch"], data["reports"]
        if not isinstance(mechanism, str):
            raise Problem("wrong-type", f"'mechanism' must be a string (the mechanism id); got {_describe(mechanism)}",
                          field="mechanism")
        if not isinstance(batch, str) or not BATCH_ID.fullmatch(batch):
            raise Problem("wrong-type", f"'batch' must be a string of 1-128 characters from [A-Za-z0-9._:-] "
                          f"(e.g. a UUID); got {_describe(batch)}", field="batch")
        if not isinstance(reports, list):
            raise Problem("wrong-type", f"'reports' must be an array of integers; got {_describe(reports)}",
                          field="reports")
        if not reports:
            raise Problem("empty-batch", "'reports' is empty; a batch must hold at least one report", field="reports")
        limit = self.config["MAX_BATCH_REPORTS"]
        if len(reports) > limit:
            raise Problem("body-too-large", f"the batch has {len(reports)} reports; the limit is {limit} per batch "
                          "(MAX_BATCH_REPORTS); split it", limit=limit)
        return mechanism, batch, reports

    @staticmethod
    def integer_reports(reports: list[Any], body: bytes, kind: str, outputs: int) -> np.ndarray:
        """The reports as an integer array, refusing anything but integers in [0, outputs)
        (booleans and floats too)."""
        if outputs <= 256:
            # bytearray() refuses non-integers and values outside 0..255 in one fast C loop;
            # on any refusal the general path below names the offending report.
            try:
                arr = np.frombuffer(bytearray(reports), dtype=np.uint8)
            except (TypeError, ValueError):
                pass
            else:
                return _Service._checked(arr, reports, body, kind, outputs)
        try:
            # array('q') refuses floats, strings, null and containers in one C loop.
            arr = np.frombuffer(array.array("q", reports), dtype=np.int64)
        except TypeError:
            i, v = next((i, v) for i, v in enumerate(reports) if type(v) is not int and type(v) is not bool)
            raise Problem("wrong-type", f"reports[{i}] is {_describe(v)}; every report must be an integer output "
                          f"index in [0, {outputs})", field="reports", index=i) from None
        except OverflowError:
            i, v = next((i, v) for i, v in enumerate(reports) if not -(1 << 63) <= v < (1 << 63))
            raise Problem("report-out-of-range", f"reports[{i}] is {v}; every report must be an integer in "
                          f"[0, {outputs})", field="reports", index=i, allowed=[0, outputs - 1]) from None
        return _Service._checked(arr, reports, body, kind, outputs)

    @staticmethod
    def _checked(arr: np.ndarray, reports: list[Any], body: bytes, kind: str, outputs: int) -> np.ndarray:
        # Booleans are ints to array() and bytearray(); they can only be present if their
        # encoding occurs somewhere in the body (msgpack 0xc2/0xc3, JSON literals), so the
        # element scan is rarely needed.
        maybe_bool = (b"\xc2" in body or b"\xc3" in body) if kind == "msgpack" else (b"true" in body or b"false" in body)
        if maybe_bool and bool in set(map(type, reports)):
            i = next(i for i, v in enumerate(reports) if type(v) is bool)
            raise Problem("wrong-type", f"reports[{i}] is {_describe(reports[i])}; every report must be an integer "
                          f"output index in [0, {outputs}), not a boolean", field="reports", index=i)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= outputs:
            i = int(np.argmax((arr < 0) | (arr >= outputs)))
            raise Problem("report-out-of-range", f"reports[{i}] is {int(arr[i])}; this mechanism has {outputs} "
                          f"outputs, so every report must be an integer in [0, {outputs - 1}]",
                          field="reports", index=i, allowed=[0, outputs - 1])
        return arr


def _storage_problem(exc: StorageError) -> Problem:
    log.error("storage unavailable: %s", exc)
    return Problem("database-unavailable", "the database did not answer; nothing was stored by this request. "
                   "Retry later with the same batch id.", headers={"Retry-After": "1"})


def _internal_problem(exc: BaseException, method: str, path: str) -> Problem:
    log.error("internal error on %s %s", method, path, exc_info=exc)
    return Problem("internal-error", f"unexpected {type(exc).__name__}; nothing was stored by this request")


def media_kind(content_type: str) -> str | None:
    """"json" or "msgpack" for a request body's media type (parameters ignored), else None."""
    mime = content_type.partition(";")[0].strip().lower()
    if mime == JSON or (mime.startswith("application/") and mime.endswith("+json")):
        return "json"
    return "msgpack" if mime in _MSGPACK_TYPES else None


class _ReportsFastPath:
    """WSGI middleware answering ``POST /v1/reports`` without Flask's per-request machinery.

    Flask's request and response objects, routing and hooks cost about 80 µs per request
    here — as much as decoding and counting a batch of 10,000 reports — and report uploads
    are nearly all the service's traffic. The common case (a body with a Content-Length,
    declared application/json or msgpack) is therefore served straight from WSGI, by the
    same :func:`media_kind`, :meth:`_Service.check_body_size`, :meth:`_Service.ingest_reports`
    and :meth:`_Service.problem_body` that the Flask route uses, so answers, problem types and
    metrics are identical. Everything else (other endpoints, chunked bodies, unsupported media
    types) goes to Flask unchanged.
    """

    PATH = "/v1/reports"

    def __init__(self, flask_wsgi: Any, service: "_Service") -> None:
        self.flask_wsgi = flask_wsgi
        self.service = service

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") != self.PATH or environ.get("REQUEST_METHOD") != "POST":
            return self.flask_wsgi(environ, start_response)
        kind = media_kind(environ.get("CONTENT_TYPE", ""))
        length = environ.get("CONTENT_LENGTH", "")
        if kind is None or not length.isdigit() or environ.get("HTTP_TRANSFER_ENCODING"):
            return self.flask_wsgi(environ, start_response)
        start = time.perf_counter()
        headers: list[tuple[str, str]] = []
        try:
            size = int(length)
            self.service.check_body_size(size)
            body = environ["wsgi.input"].read(size)
            if len(body) != size:
                raise Problem("bad-request", f"the body ended after {len(body)} of the {size} bytes its "
                              "Content-Length announced")
            status, payload = self.service.ingest_reports(kind, body)
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            media = JSON
        except Exception as exc:  # noqa: BLE001 - every failure is answered as a problem
            if isinstance(exc, StorageError):
                exc = _storage_problem(exc)
            elif not isinstance(exc, Problem):
                exc = _internal_problem(exc, "POST", self.PATH)
            status, data, media = exc.status, self.service.problem_body(exc, self.PATH), PROBLEM_MEDIA_TYPE
            headers = list(exc.headers.items())
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [("Content-Type", media), ("Content-Length", str(len(data))), *headers])
        self.service.metrics.latency.labels("POST", self.PATH, str(status)).observe(time.perf_counter() - start)
        return [data]


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app. ``config`` overrides the environment (see the module docstring);
    ``config["STORAGE"]`` may pass an open :class:`~rldp.aggregator.storage.Storage`."""
    cfg = load_config({k: v for k, v in (config or {}).items() if k != "STORAGE"})
    storage = (config or {}).get("STORAGE") or open_storage(cfg["DATABASE_URL"], writer=cfg.get("WRITER_SOCKET"))
    service = _Service(cfg, storage)
    app = Flask("rldp.aggregator.service")
    app.config["MAX_CONTENT_LENGTH"] = cfg["MAX_BODY_BYTES"]
    app.config["RLDP"] = {k: v for k, v in cfg.items() if not k.endswith("_HASHES")}
    app.extensions["rldp"] = service
    app.wsgi_app = _ReportsFastPath(app.wsgi_app, service)  # type: ignore[method-assign]
    metrics = service.metrics

    # -- responses
    def respond(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
        data = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return app.response_class(data, status=status, mimetype=JSON, headers=dict(headers or {}))

    def problem_response(problem: Problem) -> Response:
        body = service.problem_body(problem, request.path)
        resp = app.response_class(body, status=problem.status, mimetype=PROBLEM_MEDIA_TYPE)
        for key, value in problem.headers.items():
            resp.headers[key] = value
        return resp

    @app.errorhandler(Problem)
    def _problem(exc: Problem) -> Response:
        return problem_response(exc)

    _HTTP_REASONS = {400: "bad-request", 401: "unauthorized", 404: "not-found", 405: "method-not-allowed",
                     406: "not-acceptable", 413: "body-too-large", 415: "unsupported-media-type",
                     429: "too-many-requests"}

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        code = exc.code or 500
        reason = _HTTP_REASONS.get(code)
        if reason is None:
            reason = "internal-error" if code >= 500 else "bad-request"
        detail = exc.description or PROBLEMS[reason].description
        if code == 404:
            detail = f"no endpoint {request.path}; see /openapi.json for the API"
        elif code == 405:
            allowed = ", ".join(sorted(m for m in (getattr(exc, "valid_methods", None) or []) if m != "OPTIONS"))
            detail = f"{request.method} is not allowed on {request.path}" + (f"; allowed: {allowed}" if allowed else "")
        elif code == 413:
            detail = f"the body exceeds the limit of {cfg['MAX_BODY_BYTES']} bytes (MAX_BODY_BYTES)"
        problem = Problem(reason, detail)
        resp = problem_response(problem)
        if code != problem.status:
            resp.status_code = code
        original = dict(exc.get_headers())
        for key in ("Allow", "Retry-After", "WWW-Authenticate"):
            if original.get(key):
                resp.headers[key] = original[key]
        return resp

    @app.errorhandler(StorageError)
    def _storage(exc: StorageError) -> Response:
        return problem_response(_storage_problem(exc))

    @app.errorhandler(Exception)
    def _internal(exc: Exception) -> Response:
        if isinstance(exc, HTTPException):  # pragma: no cover - handled above
            return _http(exc)
        return problem_response(_internal_problem(exc, request.method, request.path))

    @app.before_request
    def _start_timer() -> None:
        g.rldp_start = time.perf_counter()

    @app.after_request
    def _observe(resp: Response) -> Response:
        start = g.get("rldp_start")
        if start is not None:
            rule = request.url_rule.rule if request.url_rule is not None else "<unmatched>"
            metrics.latency.labels(request.method, rule, str(resp.status_code)).observe(time.perf_counter() - start)
        return resp

    # -- operational endpoints
    @app.get("/")
    def index() -> Response:
        return respond({"service": "rldp aggregator", "version": __version__, "openapi": "/openapi.json"})

    @app.get("/healthz")
    def healthz() -> Response:
        return respond({"status": "ok"})

    @app.get("/readyz")
    def readyz() -> Response:
        try:
            service.storage.ping()
        except StorageError as exc:
            raise Problem("database-unavailable", f"the database does not answer: {exc}",
                          headers={"Retry-After": "1"}) from None
        return respond({"status": "ready", "database": service.storage.dialect})

    @app.get("/metrics")
    def metrics_endpoint() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        return Response(metrics.render(), mimetype=None, content_type=CONTENT_TYPE_LATEST)

    @app.get("/openapi.json")
    def openapi() -> Response:
        from .openapi import build_openapi

        return respond(build_openapi())

    # -- mechanisms
    @app.post("/v1/mechanisms")
    def publish() -> Response:
        service.authorize()
        kind = service.body_kind()
        record, created = service.publish_bytes(service.body(), kind)
        payload = {"id": record.id, "method": record.method, "epsilon": record.epsilon,
                   "epsilon_audited": record.epsilon_audited, "status": record.status}
        return respond(payload, 201 if created else 200, {"Location": f"/v1/mechanisms/{record.id}"})

    @app.get("/v1/mechanisms")
    def list_mechanisms() -> Response:
        items = [{"id": r.id, "method": r.method, "epsilon": r.epsilon, "epsilon_audited": r.epsilon_audited,
                  "notion": r.notion, "status": r.status, "sensitive": r.sensitive, "released": list(r.released),
                  "outputs": r.outputs, "size": r.size, "published": _iso(r.published), "retired": _iso(r.retired)}
                 for r in service.storage.list_mechanisms()]
        return respond({"mechanisms": items})

    @app.get("/v1/mechanisms/<mechanism_id>")
    def get_mechanism(mechanism_id: str) -> Response:
        if not MECHANISM_ID.fullmatch(mechanism_id):
            raise Problem("unknown-mechanism", f"no mechanism {mechanism_id!r} is published here; mechanism ids "
                          "are 64 lowercase hex characters")
        best = request.accept_mimetypes.best_match([JSON, MSGPACK, "application/x-msgpack"], default=JSON)
        kind = "msgpack" if best in _MSGPACK_TYPES else "json"
        headers = {"ETag": f'"{mechanism_id}"', "Cache-Control": IMMUTABLE, "Vary": "Accept"}
        if request.if_none_match and request.if_none_match.contains(mechanism_id):
            if service.storage.get_mechanism(mechanism_id) is not None:
                return Response(status=304, headers=headers)
        data = service.document_bytes(mechanism_id, kind)
        return Response(data, status=200, content_type=MSGPACK if kind == "msgpack" else JSON, headers=headers)

    @app.post("/v1/mechanisms/<mechanism_id>/retire")
    def retire(mechanism_id: str) -> Response:
        service.authorize()
        service.mechanism(mechanism_id)
        record = service.storage.retire(mechanism_id)
        assert record is not None
        return respond({"id": record.id, "status": record.status, "retired": _iso(record.retired)})

    @app.get("/v1/mechanisms/<mechanism_id>/estimate")
    def estimate(mechanism_id: str) -> Response:
        from .estimate import INTERVALS, METHODS, estimate_distribution

        service.authorize(read=True)
        record = service.mechanism(mechanism_id)
        args = request.args
        method = args.get("method", "auto")
        interval = args.get("interval", "delta")
        prior = args.get("prior", "public")
        if method not in METHODS:
            raise Problem("invalid-parameter", f"method must be one of {', '.join(METHODS)}; got {method!r}",
                          parameter="method")
        if interval not in INTERVALS:
            raise Problem("invalid-parameter", f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}",
                          parameter="interval")
        if prior not in ("public", "uniform"):
            raise Problem("invalid-parameter", f"prior must be 'public' (start EM from the document's public "
                          f"distribution) or 'uniform'; got {prior!r}", parameter="prior")
        try:
            prior_weight = float(args.get("prior_weight", "0"))
        except ValueError:
            prior_weight = math.nan
        if not (math.isfinite(prior_weight) and prior_weight >= 0):
            raise Problem("invalid-parameter", f"prior_weight must be a number ≥ 0 (pseudo-reports); got "
                          f"{args.get('prior_weight')!r}", parameter="prior_weight")
        if prior_weight > 0 and prior != "public":
            raise Problem("invalid-parameter", "prior_weight > 0 needs prior=public", parameter="prior_weight")
        counts = service.storage.counts(record.id, record.outputs)
        if int(counts.sum()) == 0:
            raise Problem("no-reports", f"mechanism {record.id} has no reports yet; an estimate needs at least one",
                          mechanism=record.id)
        matrix, alpha, p_hat = service.parsed_document(record.id)
        try:
            est = estimate_distribution(matrix, counts, alpha.shape, method=method, interval=interval,
                                        prior=p_hat if prior == "public" else None, prior_weight=prior_weight)
        except ValueError as exc:
            raise Problem("invalid-parameter", " ".join(str(exc).split())) from None
        out = est.to_dict(alpha)
        out["mechanism"] = record.id
        out["status"] = record.status
        return respond(out)

    # -- reports (the common case is answered by _ReportsFastPath before Flask sees it)
    @app.post("/v1/reports")
    def reports() -> Response:
        kind = service.body_kind()
        status, payload = service.ingest_reports(kind, service.body())
        return respond(payload, status)

    # -- designs
    @app.post("/v1/designs")
    def create_design() -> Response:
        service.authorize()
        kind = service.body_kind()
        data = service.decode(service.body(), kind)
        payload, summary = _design_request(data)
        job_id = uuid.uuid4().hex
        service.storage.create_job(job_id, summary)
        service.designs.start(job_id, payload)
        url = f"/v1/designs/{job_id}"
        return respond({"job": job_id, "status": "queued", "status_url": url}, 202, {"Location": url})

    @app.get("/v1/designs/<job_id>")
    def get_design(job_id: str) -> Response:
        service.authorize()
        job = service.storage.get_job(job_id) if re.fullmatch(r"[0-9a-f]{32}", job_id) else None
        if job is None:
            raise Problem("unknown-job", f"no design job {job_id!r}", job=job_id)
        now = time.time()
        status, error, finished = job.status, job.error, job.finished
        if status in ("queued", "running") and now - job.heartbeat > cfg["JOB_STALE_SECONDS"]:
            status, finished = "failed", now
            error = "the server process running this job stopped (no heartbeat); submit the design again"
            service.storage.update_job(job.id, status=status, error=error, finished=finished)
        out: dict[str, Any] = {"job": job.id, "status": status, "elapsed": round((finished or now) - job.created, 3),
                               "created": _iso(job.created), "params": job.params}
        if status == "done":
            out["mechanism"] = job.mechanism
            out["mechanism_url"] = f"/v1/mechanisms/{job.mechanism}"
        if status == "failed":
            out["error"] = error
        return respond(out)

    return app


# --------------------------------------------------------------------------- design requests


def _design_request(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a POST /v1/designs body; (payload for the design process, summary to store)."""
    from rldp.shared.records import Alphabet, read_csv

    from .design import METHODS, DesignError, validate_parameters

    if not isinstance(data, dict):
        raise Problem("wrong-type", f"the body must be an object; got {_type_name(data)}")
    for name in ("csv", "sensitive", "released", "epsilon", "method"):
        if name not in data:
            raise Problem("missing-field", f"the design request has no {name!r} field; expected "
                          "{\"csv\", \"sensitive\", \"released\", \"epsilon\", \"method\"} and optionally "
                          "\"beta\" or \"radius\", \"order\", \"names\"", field=name)

    def bad(detail: str, field: str) -> Problem:
        return Problem("invalid-parameter", detail, parameter=field)

    csv_text, sensitive, released = data["csv"], data["sensitive"], data["released"]
    if not isinstance(csv_text, str) or not csv_text.strip():
        raise bad("'csv' must be the text of the public CSV file (with a header row unless 'names' is given)", "csv")
    if not isinstance(sensitive, str) or not sensitive:
        raise bad(f"'sensitive' must be a column name; got {_describe(sensitive)}", "sensitive")
    if isinstance(released, str):
        released = [released]
    if not isinstance(released, list) or not all(isinstance(r, str) and r for r in released):
        raise bad(f"'released' must be a list of column names; got {_describe(data['released'])}", "released")
    method = data["method"]
    if not isinstance(method, str) or method not in METHODS:
        raise bad(f"'method' must be one of {', '.join(METHODS)}; got {_describe(method)}", "method")

    def number(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"{name!r} must be a number; got {_describe(value)}", name)
        return float(value)

    epsilon = number("epsilon", data["epsilon"])
    order = number("order", data.get("order", 2.0))
    radius = data.get("radius")
    if radius is not None:
        radius = math.inf if radius in ("inf", "Infinity") else number("radius", radius)
    beta = data.get("beta")
    if beta is not None:
        beta = number("beta", beta)
        if radius is not None:
            raise bad("give either 'beta' or 'radius', not both", "radius")
    elif radius is None:
        beta = 0.05
    names = data.get("names")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
        raise bad(f"'names' must be a list of column names (for a CSV without a header); got {_describe(names)}",
                  "names")
    with tempfile.TemporaryDirectory(prefix="rldp-design-") as tmp:
        path = os.path.join(tmp, "public.csv")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(csv_text)
        try:
            table = read_csv(path, names=names)
            alpha = Alphabet.from_table(table, sensitive, released)
            p_hat = alpha.empirical_distribution(table)
        except ValueError as exc:
            raise bad(" ".join(str(exc).replace(path, "csv").split()), "csv") from None
    try:
        validate_parameters(method, epsilon, radius=radius, beta=beta, n=table.n_rows, order=order)
    except DesignError as exc:
        raise bad(" ".join(str(exc).split()), "parameters") from None
    payload = {"method": method, "alphabet": alpha.to_dict(), "p_hat": p_hat.tolist(), "epsilon": epsilon,
               "radius": radius, "beta": beta, "n": table.n_rows, "order": order}
    summary = {"method": method, "sensitive": sensitive, "released": released, "epsilon": epsilon,
               "radius": None if radius is None or math.isinf(radius) else radius,
               "unbounded": radius is not None and math.isinf(radius), "beta": beta, "order": order,
               "n": table.n_rows, "size": alpha.size}
    return payload, summary
