"""Mechanism labels in the store (schema version 5): an operator's human name for a mechanism.

A label is metadata of the service, like ``status``: it is not in the document, so it changes
neither the document's content id nor what a client verifies. ``label`` NULL: none.
"""

from __future__ import annotations

import json
from typing import Any

from .host import StorageHost
from .rows import MechanismRecord

__all__ = ["LabelStore", "mechanism_record"]


def mechanism_record(row: Any) -> MechanismRecord:
    """The record of a row of :data:`~.schema.MECHANISM_COLUMNS`."""
    return MechanismRecord(
        id=row[0],
        method=row[1],
        notion=row[2],
        epsilon=float(row[3]),
        epsilon_audited=None if row[4] is None else float(row[4]),
        sensitive=row[5],
        released=tuple(json.loads(row[6])),
        outputs=int(row[7]),
        size=int(row[8]),
        status=row[9],
        published=float(row[10]),
        retired=None if row[11] is None else float(row[11]),
        label=row[12],
    )


class LabelStore(StorageHost):
    """Mixin of :class:`~.base.Storage`: set or clear a mechanism's label."""

    def _get_mechanism(self, conn: Any, mechanism_id: str) -> MechanismRecord | None:  # pragma: no cover
        raise NotImplementedError

    def set_label(self, mechanism_id: str, label: str | None) -> MechanismRecord | None:
        """Set (None: clear) the label of a mechanism; its record after, or None if unknown. The caller
        validates the text (:func:`rldp.shared.parameters.check_text` and its length bound)."""
        with self.write_transaction() as conn:
            conn.execute(self._sql("UPDATE rldp_mechanisms SET label = ? WHERE id = ?"), (label, mechanism_id))
            return self._get_mechanism(conn, mechanism_id)
