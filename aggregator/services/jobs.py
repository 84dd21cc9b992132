"""Design jobs: each design runs in its own process and its result is published like an upload.

A job is "queued" until one of ``concurrency`` slots frees up, then "running" in a
spawned process (a design can take minutes and much memory; a process can be stopped),
then "done" (with the published mechanism's id) or "failed" (with the reason). While it
waits or runs, its thread refreshes the job's heartbeat in storage, so a job whose server
process died is reported failed instead of running forever (:meth:`DesignRunner.status`).
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignRequest, design_document, validated_from_wire
from rldp.aggregator.design.orchestration.pilot import switch_after_pilot
from rldp.aggregator.design.orchestration.table_bins import bins_by_rule
from rldp.aggregator.storage import JobRecord, MechanismRecord, Storage, StorageError
from rldp.shared.document import to_msgpack
from rldp.shared.errors import one_line
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from .designs import DEFAULT_MAX_BETA, design_request
from .errors import InvalidParameter, ServiceError, UnknownJob
from .events import ServiceEvents

__all__ = ["JOB_ID", "JOB_LIST_DEFAULT", "JOB_LIST_MAX", "DesignRunner", "job_list_limit", "exit_with_parent"]

log = logging.getLogger("rldp.service")

JOB_ID = re.compile(r"[0-9a-f]{32}")
#: How many jobs a listing returns by default, and at most (a listing stays one cheap page).
JOB_LIST_DEFAULT = 50
JOB_LIST_MAX = 500


def job_list_limit(value: str | None) -> int:
    """The ``limit`` query parameter of a job listing: an integer in [1, JOB_LIST_MAX], JOB_LIST_DEFAULT if absent."""
    if value is None:
        return JOB_LIST_DEFAULT
    text = value.strip()
    if text.isascii() and text.isdigit() and len(text) <= 6 and 1 <= int(text) <= JOB_LIST_MAX:
        return int(text)
    raise InvalidParameter(f"limit must be an integer from 1 to {JOB_LIST_MAX}; got {value!r}", parameter="limit")


def exit_with_parent(parent_pid: int, interval: float = 0.25) -> threading.Thread:
    """Start a daemon thread that ends this process (exit status 1) as soon as ``parent_pid`` is no
    longer its parent: the parent died (kill -9 skips every clean-up) and the process was re-parented.

    Why: a design runs for minutes with much memory; without its server nobody reads its result.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os._exit(1)

    thread = threading.Thread(target=watch, name="rldp-parent-watch", daemon=True)
    thread.start()
    return thread


def _design_child(conn: Any, payload: dict[str, Any], parent_pid: int | None = None) -> None:
    """Run one design in a separate (spawned) process and send back the msgpack document; a pilot's
    switch (payload ``pilot``) sends ``("kept", why)`` when the design would not beat the pilot. The
    process ends with its server (``parent_pid``: :func:`exit_with_parent`)."""
    if parent_pid is not None:
        exit_with_parent(parent_pid)
    try:
        if "pilot" in payload:  # validated by design_document over the pilot's confidence set (its radius is new)
            request = DesignRequest.from_wire(payload["request"])
            pilot = payload["pilot"]
            outcome = switch_after_pilot(
                request,
                pilot["document"],
                pilot["counts"],
                beta=pilot["beta"],
                collection=pilot["collection"],
                redesign=bool(pilot.get("redesign", False)),
                contamination=float(pilot.get("contamination", 0.0)),
            )
            conn.send(("ok", to_msgpack(outcome.document)) if outcome.switch else ("kept", outcome.reason))
            return
        # the request design_request validated in the server: not checked again
        request, alphabet = validated_from_wire(payload["request"]), Alphabet.from_dict(payload["alphabet"])
        p_hat, provenance = np.array(payload["p_hat"]), payload["provenance"]
        if "rule_table" in payload:  # U's bins by the rule, here: it takes seconds (rldp design's same step)
            rows = payload["rule_table"]
            table = Table(tuple(rows["columns"]), tuple(np.asarray(col, dtype=str) for col in rows["data"]))
            public = PublicCounts.from_table(table, alphabet, name=rows["public_name"])
            alphabet, public, request, _ = bins_by_rule(table, alphabet, public, request, "csv")
            p_hat, provenance = public.distribution, public.provenance()
        doc = design_document(request, alphabet=alphabet, public_distribution=p_hat, provenance=provenance)
        conn.send(("ok", to_msgpack(doc)))
    except ValueError as exc:  # DesignError, DocumentError, bad parameters
        conn.send(("error", one_line(exc)))
    except BaseException as exc:
        conn.send(("error", f"design failed ({type(exc).__name__}): {one_line(exc)}"))
    finally:
        conn.close()


class DesignRunner:
    """Runs design jobs in spawned processes, at most ``concurrency`` at once per server process.

    A thread per job waits for a slot (status "queued"), starts the process ("running"),
    refreshes the job's heartbeat every few seconds, stops it after ``timeout`` seconds,
    and publishes the result with ``publish`` (the same checks as an uploaded document).
    """

    HEARTBEAT = 5.0

    def __init__(
        self,
        storage: Storage,
        publish: Callable[[bytes, str], tuple[MechanismRecord, bool]],
        *,
        concurrency: int,
        timeout: float,
        stale_seconds: float,
        events: ServiceEvents | None = None,
        max_beta: float = DEFAULT_MAX_BETA,
    ) -> None:
        self.storage = storage
        self._max_beta = max_beta
        self._publish = publish
        self._slots = threading.Semaphore(concurrency)
        self._timeout = timeout
        self._stale = stale_seconds
        self._events = events or ServiceEvents()
        self._ctx = multiprocessing.get_context("spawn")

    def submit(self, data: Any) -> JobRecord:
        """Validate a decoded design request, record the job and start it; the queued job."""
        payload, summary = design_request(data, max_beta=self._max_beta)
        return self.start(payload, summary)

    def start(
        self,
        payload: dict[str, Any],
        summary: dict[str, Any],
        then: Callable[[MechanismRecord], None] | None = None,
        failed: Callable[[str], None] | None = None,
    ) -> JobRecord:
        """Record a validated job and start it; ``then`` runs on the published mechanism (e.g. a rotation),
        ``failed`` with the reason when the job ends any other way (nothing published, or ``then`` refused)."""
        job = self.storage.create_job(uuid.uuid4().hex, summary)
        threading.Thread(
            target=self._run, args=(job.id, payload, then, failed), name=f"rldp-design-{job.id[:8]}", daemon=True
        ).start()
        return job

    def status(self, job_id: str) -> JobRecord:
        """The job as stored, marked failed if its heartbeat stopped (its server process died)."""
        job = self.storage.get_job(job_id) if JOB_ID.fullmatch(job_id) else None
        if job is None:
            raise UnknownJob(f"no design job {job_id!r}", job=job_id)
        return self._checked(job)

    def recent(self, limit: int = JOB_LIST_DEFAULT) -> list[JobRecord]:
        """The ``limit`` most recent jobs, newest first, each checked like :meth:`status`."""
        return [self._checked(job) for job in self.storage.list_jobs(limit)]

    def _checked(self, job: JobRecord) -> JobRecord:
        """``job``, marked failed (in storage too) if it is queued or running without a recent heartbeat."""
        now = time.time()
        if job.status in ("queued", "running") and now - job.heartbeat > self._stale:
            error = "the server process running this job stopped (no heartbeat); submit the design again"
            self.storage.update_job(job.id, status="failed", error=error, finished=now)
            job = dataclasses.replace(job, status="failed", error=error, finished=now)
        return job

    def _beat(self, job_id: str, **fields: Any) -> None:
        try:
            self.storage.update_job(job_id, heartbeat=time.time(), **fields)
        except StorageError:
            log.warning("design job %s: could not update its status", job_id)

    def _run(
        self,
        job_id: str,
        payload: dict[str, Any],
        then: Callable[[MechanismRecord], None] | None = None,
        failed: Callable[[str], None] | None = None,
    ) -> None:
        while not self._slots.acquire(timeout=self.HEARTBEAT):
            self._beat(job_id)
        error: str | None = None
        try:
            self._beat(job_id, status="running", started=time.time())
            status, value = self._design(job_id, payload)
            if status == "ok":
                try:
                    record, _ = self._publish(value, "msgpack")
                except ServiceError as exc:
                    status, value = "error", f"the designed mechanism was refused: {exc.detail}"
                else:
                    try:
                        if then is not None:
                            then(record)
                    except ServiceError as exc:  # e.g. the collection rotated or was retired meanwhile
                        status, value = "error", f"published {record.id}, but {exc.detail}"
                        self._beat(job_id, mechanism=record.id)
                    else:
                        self._beat(job_id, status="done", mechanism=record.id, finished=time.time())
                        self._events.job_finished("done")
                        return
            if status == "kept":  # a pilot's switch that would not beat the pilot: nothing published
                value = f"not switched: {value}"
            error = str(value)
            self._beat(job_id, status="failed", error=value, finished=time.time())
            self._events.job_finished("failed")
        except Exception as exc:
            log.exception("design job %s failed", job_id)
            error = f"internal error ({type(exc).__name__})"
            self._beat(job_id, status="failed", error=error, finished=time.time())
        finally:
            self._slots.release()
            if error is not None and failed is not None:
                try:
                    failed(f"job {job_id}: {error}")
                except Exception:  # the job's end is recorded already; a failed callback is logged, not lost
                    log.exception("design job %s: its failure callback failed", job_id)

    def _design(self, job_id: str, payload: dict[str, Any]) -> tuple[str, Any]:
        parent, child = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=_design_child, args=(child, payload, os.getpid()), name=f"rldp-design-{job_id[:8]}", daemon=True
        )
        proc.start()
        child.close()
        deadline = time.monotonic() + self._timeout
        try:
            while True:
                if parent.poll(self.HEARTBEAT):
                    try:
                        answer: tuple[str, Any] = parent.recv()  # what _design_child sends
                        return answer
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
