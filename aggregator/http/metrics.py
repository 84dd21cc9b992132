"""Prometheus metrics of the HTTP service (served at /metrics).

``rldp serve`` (several worker processes) sets PROMETHEUS_MULTIPROC_DIR before the workers
start, so every worker writes its samples to files there and /metrics (answered by any
worker) adds them up (prometheus_client's multiprocess mode).

prometheus_client is imported inside the methods, not at the top, on purpose: it chooses
between in-process and multiprocess metric values once, when it is first imported, from
PROMETHEUS_MULTIPROC_DIR; ``rldp serve`` imports this package before it sets that variable
(and its workers are forked from it), so an import here at module level would leave every
worker counting in private memory that /metrics never reads.
"""

from __future__ import annotations

import math
import os
import platform
import re
import time
from typing import Any

from rldp import __version__
from rldp.aggregator.services import MechanismRecord, ServiceEvents, install_store_telemetry

from .problems import PROBLEMS, reason_of

__all__ = ["Metrics", "METHODS", "OTHER", "method_label"]

#: The HTTP methods the latency histogram names; any other method (a client may send any token) is
#: counted under :data:`OTHER`, so a client cannot add series by making up methods.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: The label of every method outside :data:`METHODS` and of every path no route matches.
OTHER = "other"


def method_label(method: str) -> str:
    """``method`` if it is one of :data:`METHODS`, else :data:`OTHER` (labels come from a closed set)."""
    return method if method in METHODS else OTHER


class Metrics(ServiceEvents):
    """The service's counters and latency histogram; also the services' event sink."""

    BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

    def __init__(self) -> None:
        from prometheus_client import (  # see the docstring
            CONTENT_TYPE_LATEST,
            CollectorRegistry,
        )

        self.content_type = CONTENT_TYPE_LATEST
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._declare_service(r)
        self._declare_drift(r)
        for reason in PROBLEMS:  # every reason shows up (as 0) from the start
            self.rejections.labels(reason)
        self._declare_mechanisms(r)
        install_store_telemetry(r)  # commit latency, writer queue depth, database errors
        # The labelled children the per-request paths use, by label values (the same objects labels() returns).
        self._mechanism_children: dict[str, tuple[Any, Any]] = {}
        self._latency_children: dict[tuple[str, str, int], Any] = {}

    def _declare_service(self, r: Any) -> None:
        """Reports, batches, refusals, publications, design jobs and request latency."""
        from prometheus_client import Counter, Histogram

        self.reports = Counter("rldp_reports_accepted", "Reports stored (new batches only).", registry=r)
        self.batches = Counter("rldp_batches_accepted", "Batches stored for the first time.", registry=r)
        self.duplicates = Counter(
            "rldp_batches_deduplicated", "Retried batches answered as duplicates (stored once).", registry=r
        )
        self.rejections = Counter("rldp_rejections", "Requests refused, by problem type.", ["reason"], registry=r)
        self.published_total = Counter("rldp_mechanisms_published", "Mechanisms published (first time).", registry=r)
        self.jobs = Counter("rldp_design_jobs", "Design jobs finished, by outcome.", ["status"], registry=r)
        self.latency = Histogram(
            "rldp_request_duration_seconds",
            "Request latency by endpoint.",
            ["method", "endpoint", "status"],
            buckets=self.BUCKETS,
            registry=r,
        )

    def _declare_drift(self, r: Any) -> None:
        """What the drift watch found per mechanism, and the redesigns that failed."""
        from prometheus_client import Counter, Gauge

        # The drift watch's latest answer per mechanism (on all its reports): in multiprocess mode the
        # value of the worker that computed it last.
        self.realised_epsilon = Gauge(
            "rldp_realised_epsilon",
            "Realised epsilon* of the reporting population [LZG24, Sec 8.3], a calibrated estimate: at the "
            "maximum a-posteriori P with 100 pseudo-reports from the public P-hat (NaN: not identified).",
            ["mechanism"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.realised_epsilon_upper = Gauge(
            "rldp_realised_epsilon_upper",
            "Upper bound of realised epsilon* over the estimate's 95% confidence region (+Inf: unbounded).",
            ["mechanism"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.realised_epsilon_lower = Gauge(
            "rldp_realised_epsilon_lower",
            "Lower bound of realised epsilon* over the estimate's 95% confidence region (the interval's low end).",
            ["mechanism"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.drift_p_value = Gauge(
            "rldp_drift_p_value",
            "Anytime-valid p-value of the test that the honest reports come from the uncertainty set F.",
            ["mechanism"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.drift_alarms = Counter(
            "rldp_drift_detected",
            "Times the drift test started rejecting (population left F).",
            ["mechanism"],
            registry=r,
        )
        self.drift_check_failures = Counter(
            "rldp_drift_check_failures",
            "Background drift checks that raised (logged with the error; the watch tries again on the next batch).",
            registry=r,
        )
        self.redesign_failures = Counter(
            "rldp_redesign_failures",
            "Drift redesigns that published nothing (the collection stays paused).",
            registry=r,
        )

    def _declare_mechanisms(self, r: Any) -> None:
        """Per published mechanism: reports, refusals and the last report's time; and the build."""
        from prometheus_client import Counter, Gauge

        # Per mechanism: labelled only by published mechanisms (ServiceEvents.batch_refused), so a
        # client cannot add series by making up ids; the reason label is one of PROBLEMS.
        self.mechanism_reports = Counter(
            "rldp_mechanism_reports_accepted", "Reports stored, by mechanism.", ["mechanism"], registry=r
        )
        self.mechanism_refusals = Counter(
            "rldp_mechanism_batches_refused",
            "Batches of a published mechanism refused, by mechanism and problem reason.",
            ["mechanism", "reason"],
            registry=r,
        )
        self.mechanism_last = Gauge(
            "rldp_mechanism_last_report_timestamp_seconds",
            "Unix time of the last batch stored, by mechanism.",
            ["mechanism"],
            registry=r,
            multiprocess_mode="max",
        )
        self.build = Gauge(
            "rldp_build_info",
            "rldp's version, the Python running it and the storage backend (value 1).",
            ["version", "python", "storage"],
            registry=r,
            multiprocess_mode="max",
        )

    def build_info(self, storage: str) -> None:
        """Publish ``rldp_build_info`` for this storage backend ("sqlite" / "postgresql")."""
        self.build.labels(__version__, platform.python_version(), storage).set(1)

    # -- ServiceEvents
    def published(self, record: MechanismRecord) -> None:
        self.published_total.inc()

    def batch_stored(self, reports: int, mechanism: str = "") -> None:
        self.reports.inc(reports)
        self.batches.inc()
        if mechanism:
            children = self._mechanism_children.get(mechanism)
            if children is None:  # labels() checks and looks up every call: ~13 µs each, per batch
                children = (self.mechanism_reports.labels(mechanism), self.mechanism_last.labels(mechanism))
                self._mechanism_children[mechanism] = children
            children[0].inc(reports)
            children[1].set(time.time())

    def batch_refused(self, mechanism: str, exc: BaseException) -> None:
        reason = reason_of(exc)
        if reason is not None:
            self.mechanism_refusals.labels(mechanism, reason).inc()

    def batch_duplicate(self) -> None:
        self.duplicates.inc()

    def job_finished(self, status: str) -> None:
        self.jobs.labels(status).inc()

    def drift_checked(self, record: MechanismRecord, drift: dict[str, Any]) -> None:
        point, lower, upper = (
            drift.get(k) for k in ("realised_epsilon", "realised_epsilon_lower", "realised_epsilon_upper")
        )
        latent = point is None and lower is None and upper is None

        def bound(v: float | None) -> float:  # null in JSON: unbounded (latent S: not identified, NaN)
            return math.nan if latent else (math.inf if v is None else float(v))

        # a null point: not identified (latent S, or a mechanism of rank < |X|): NaN
        self.realised_epsilon.labels(record.id).set(math.nan if point is None else float(point))
        self.realised_epsilon_upper.labels(record.id).set(bound(upper))
        self.realised_epsilon_lower.labels(record.id).set(bound(lower))
        self.drift_p_value.labels(record.id).set(float(drift["p_value"]))

    def drift_detected(self, record: MechanismRecord, drift: dict[str, Any]) -> None:
        self.drift_alarms.labels(record.id).inc()

    def drift_check_failed(self, mechanism: str, exc: BaseException) -> None:
        self.drift_check_failures.inc()

    def redesign_failed(self, collection: str, reason: str) -> None:
        self.redesign_failures.inc()

    # -- HTTP
    def rejected(self, reason: str) -> None:
        """Count a refusal under its problem reason."""
        self.rejections.labels(reason).inc()

    def observe(self, method: str, endpoint: str, status: int, seconds: float) -> None:
        """Record one request's latency. ``endpoint`` is the matched route's rule (the app's routes: a closed
        set) or :data:`OTHER`; a method outside :data:`METHODS` is counted as :data:`OTHER`."""
        key = (method_label(method), endpoint, status)
        child = self._latency_children.get(key)
        if child is None:  # bounded: (METHODS + other) × (routes + other) × the statuses the app answers
            child = self._latency_children[key] = self.latency.labels(key[0], endpoint, str(status))
        child.observe(seconds)

    def render(self) -> bytes:
        """The Prometheus text exposition (of every worker, in multiprocess mode)."""
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess  # see the docstring

        if self.multiprocess:
            _forget_dead_processes(multiprocess.mark_process_dead)
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry)
        return generate_latest(self.registry)


def _forget_dead_processes(mark_dead: Any) -> None:
    """Drop the live-summed gauges of processes that are gone (a respawned worker, a restarted
    writer): prometheus_client adds every file it finds, so a dead process's last queue depth
    would stay in ``rldp_writer_queue_depth`` for good."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        match = re.fullmatch(r"gauge_live\w*?_(\d+)\.db", name)
        if match is None:
            continue
        pid = int(match.group(1))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_dead(pid, path)
        except PermissionError:  # alive, another user's
            pass
