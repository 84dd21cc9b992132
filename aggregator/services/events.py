"""What the services report as it happens, for whoever counts it (the HTTP layer's metrics).

The services call these hooks; they know nothing of Prometheus. The default does nothing.
"""

from __future__ import annotations

from rldp.aggregator.storage import MechanismRecord

__all__ = ["ServiceEvents"]


class ServiceEvents:
    """Hooks called by the services (thread-safe implementations expected); no-ops here."""

    def published(self, record: MechanismRecord) -> None:
        """A mechanism was published for the first time."""

    def batch_stored(self, reports: int) -> None:
        """A new batch of ``reports`` reports was committed."""

    def batch_duplicate(self) -> None:
        """A retried batch was recognised as already stored (stored once)."""

    def job_finished(self, status: str) -> None:
        """A design job ended with ``status`` ("done" or "failed")."""
