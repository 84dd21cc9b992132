"""What the storage reports to /metrics: commit latency and size, the writer's queue, database errors.

The storage knows nothing of HTTP. Whoever serves /metrics calls :func:`install` with its
prometheus_client registry (the HTTP app's :class:`~rldp.aggregator.http.metrics.Metrics`; the
writer process with its own, under ``rldp serve``'s multiprocess directory, so /metrics adds its
samples to the workers'); until then the hooks below do nothing. prometheus_client is imported
only by :func:`install` (see the HTTP metrics module for why it must not be imported early).
"""

from __future__ import annotations

from typing import Any

__all__ = ["install", "commit_observed", "queue_depth", "database_error"]

#: Commit latency buckets, seconds (a commit is one fsync: ~0.1–10 ms on a healthy disk).
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

_metrics: dict[str, Any] = {}


def install(registry: Any = None) -> None:
    """Create the storage's metrics in ``registry`` (a new private one when None) and start counting."""
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    r = registry if registry is not None else CollectorRegistry()
    _metrics.clear()
    _metrics["commit"] = Histogram(
        "rldp_commit_duration_seconds",
        "Time to commit one group of report batches (transaction and fsync), by backend.",
        ["backend"],
        buckets=BUCKETS,
        registry=r,
    )
    _metrics["group"] = Counter(
        "rldp_commit_batches", "Report batches committed in group commits (divide by the commits: group size).",
        ["backend"], registry=r,
    )  # fmt: skip
    _metrics["queue"] = Gauge(
        "rldp_writer_queue_depth",
        "Report batches waiting for a commit (the writer process's queue, or each worker's group commit).",
        registry=r,
        multiprocess_mode="livesum",
    )
    _metrics["errors"] = Counter(
        "rldp_database_errors", "Database operations that failed (the request got a 503), by backend.",
        ["backend"], registry=r,
    )  # fmt: skip


def commit_observed(backend: str, seconds: float, batches: int) -> None:
    """One group of ``batches`` batches committed in ``seconds``."""
    if _metrics:
        _metrics["commit"].labels(backend).observe(seconds)
        _metrics["group"].labels(backend).inc(batches)


def queue_depth(waiting: int) -> None:
    """``waiting`` batches queue for the next commit."""
    if _metrics:
        _metrics["queue"].set(waiting)


def database_error(backend: str) -> None:
    """A database operation failed."""
    if _metrics:
        _metrics["errors"].labels(backend).inc()
