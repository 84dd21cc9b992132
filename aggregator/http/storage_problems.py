"""The problem types of a store that failed (kept here: :mod:`.problems` lists them with the others).

A full store is named as such: its disk needs an operator, not a retry in a second (clients keep the
batch queued and retry later, as for any 503).
"""

from __future__ import annotations

from rldp.aggregator.services import StorageError, StoreFull

__all__ = ["STORAGE_PROBLEMS", "storage_problem"]

#: (reason, status, title, description) of each storage failure.
STORAGE_PROBLEMS = [
    (
        "database-unavailable",
        503,
        "Database unavailable",
        "The storage backend did not answer; nothing was stored. Retry later (same batch id).",
    ),
    (
        "store-full",
        503,
        "Store full",
        "The server's store has no space left (its disk is full); nothing was stored. Keep the batch and retry "
        "later (same batch id), once its operator has freed space.",
    ),
]


def storage_problem(exc: StorageError) -> tuple[str, str]:
    """(reason, detail) of the problem answering a storage failure."""
    if isinstance(exc, StoreFull):
        return (
            "store-full",
            f"the server's store is full, no space left on its disk ({exc}); nothing was stored: keep the batch and "
            "retry later with the same batch id, once the operator has freed space",
        )
    return (
        "database-unavailable",
        "the database did not answer, so this request's batch may not be stored; retry later with the same "
        "batch id (if it was stored, the retry is answered as a duplicate and counted once)",
    )
