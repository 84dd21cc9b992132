"""Ingesting a report batch: check it against its mechanism, store it once.

A batch is refused whole (nothing stored) when anything in it is wrong; the checks of its
form and reports are :func:`rldp.shared.reports.parse_batch` and
:func:`~rldp.shared.reports.check_reports`. Storage makes a batch idempotent by
(mechanism, batch id): a retry with the same reports is answered as a duplicate, the same
id with other reports is a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rldp.aggregator.storage import Storage
from rldp.shared.reports import check_reports, parse_batch

from .errors import BatchConflict, MechanismRetired, UnknownMechanism
from .events import ServiceEvents
from .mechanisms import MechanismCatalog

__all__ = ["Receipt", "Ingest"]


@dataclass(frozen=True)
class Receipt:
    """A stored batch: its id, its number of reports, and whether it had been stored before."""

    batch: str
    accepted: int
    duplicate: bool

    def to_dict(self) -> dict[str, Any]:
        return {"batch": self.batch, "accepted": self.accepted, "duplicate": self.duplicate}


class Ingest:
    """Validates report batches and hands them to storage."""

    def __init__(
        self, storage: Storage, catalog: MechanismCatalog, max_reports: int, events: ServiceEvents | None = None
    ) -> None:
        self.storage = storage
        self.catalog = catalog
        self.max_reports = max_reports
        self.events = events or ServiceEvents()

    def submit(self, data: Any, *, maybe_bool: bool = True) -> Receipt:
        """Store one decoded batch; its :class:`Receipt` once committed (durable).

        ``maybe_bool=False``: the caller saw no boolean in the encoded body (see
        :func:`~rldp.shared.reports.check_reports`). Raises a
        :class:`~rldp.shared.reports.BatchError`, :class:`UnknownMechanism`,
        :class:`MechanismRetired` or :class:`BatchConflict` for a refusal and
        :class:`~rldp.aggregator.storage.StorageError` when the database fails.
        """
        mechanism_id, batch, values = parse_batch(data, self.max_reports)
        outputs = self.catalog.outputs(mechanism_id)
        reports = check_reports(values, outputs, maybe_bool=maybe_bool)
        result = self.storage.ingest(mechanism_id, batch, reports, outputs)
        if result.status == "accepted":
            self.events.batch_stored(result.accepted)
            return Receipt(batch, result.accepted, False)
        if result.status == "duplicate":
            self.events.batch_duplicate()
            return Receipt(batch, result.accepted, True)
        if result.status == "conflict":
            raise BatchConflict(
                f"batch {batch!r} was already stored for this mechanism with different reports; "
                "use a new batch id for new reports (a retry must resend the same reports)",
                batch=batch,
            )
        if result.status == "retired":
            raise MechanismRetired(
                f"mechanism {mechanism_id} is retired and accepts no more reports; "
                "fetch the current mechanism list (GET /v1/mechanisms)",
                mechanism=mechanism_id,
            )
        raise UnknownMechanism(f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)
