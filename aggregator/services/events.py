"""What the services report as it happens, for whoever counts it (the HTTP layer's metrics).

The services call these hooks; they know nothing of Prometheus. The default does nothing.
"""

from __future__ import annotations

from typing import Any

from rldp.aggregator.storage import MechanismRecord, telemetry

__all__ = ["ServiceEvents", "install_store_telemetry"]


def install_store_telemetry(registry: Any) -> None:
    """Count the storage's commits, writer queue and database errors in ``registry`` (prometheus_client's)."""
    telemetry.install(registry)


class ServiceEvents:
    """Hooks called by the services (thread-safe implementations expected); no-ops here."""

    def published(self, record: MechanismRecord) -> None:
        """A mechanism was published for the first time."""

    def batch_stored(self, reports: int, mechanism: str = "") -> None:
        """A new batch of ``reports`` reports of the published ``mechanism`` was committed."""

    def batch_refused(self, mechanism: str, exc: BaseException) -> None:
        """A batch of the published ``mechanism`` was refused with ``exc`` (a refusal the HTTP layer
        maps to a problem reason). Batches naming no published mechanism are not reported here: a
        client could otherwise make up any number of ids, each one a new series."""

    def batch_duplicate(self) -> None:
        """A retried batch was recognised as already stored (stored once)."""

    def job_finished(self, status: str) -> None:
        """A design job ended with ``status`` ("done" or "failed")."""

    def drift_checked(self, record: MechanismRecord, drift: dict[str, Any]) -> None:
        """The drift watch ran afresh on all of a mechanism's reports (``drift``: the API's drift object)."""

    def drift_detected(self, record: MechanismRecord, drift: dict[str, Any]) -> None:
        """The drift watch rejected H0 (the population lies in F) where its previous answer did not."""

    def drift_check_failed(self, mechanism: str, exc: BaseException) -> None:
        """A background drift check of the published ``mechanism`` raised ``exc`` (logged; the next batch
        tries again): counted so that a watch that keeps failing is seen, not only read in a log."""

    def redesign_failed(self, collection: str, reason: str) -> None:
        """A drift redesign of ``collection`` published nothing: the collection stays paused."""
