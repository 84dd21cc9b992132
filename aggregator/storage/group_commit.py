"""In-process group commit by leader hand-off: concurrent batches share one transaction.

While one transaction (and its fsync) runs, new batches queue up, and the next transaction
commits all of them with :meth:`Storage.ingest_group`'s fixed handful of multi-row
statements. Each request waits until *its* transaction has committed, so an acknowledgement
still means "durable", but one fsync serves many concurrent uploads.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from rldp.shared.errors import one_line

from .rows import BatchItem, IngestResult, StorageError, StoreFull
from .telemetry import commit_observed, queue_depth

__all__ = ["MAX_GROUP", "COMMIT_WAIT_SECONDS", "GroupCommitter"]

# Most batches one transaction commits together (bounds the transaction's size).
MAX_GROUP = 64
# How long a request waits for its group's commit before answering 503 (the batch may
# still commit; a retry with the same batch id is then answered as a duplicate).
COMMIT_WAIT_SECONDS = 60.0


class _GroupStore(Protocol):
    """What the committer needs of a :class:`Storage`."""

    dialect: str

    def write_transaction(self) -> AbstractContextManager[Any]: ...

    def ingest_group(self, conn: Any, items: Sequence[BatchItem]) -> list[IngestResult]: ...


@dataclass(eq=False)
class _Waiter:
    """A queued batch and what its owner waits for."""

    item: BatchItem
    state: str = "waiting"  # waiting → done, or waiting → lead (this thread commits next)
    wake: threading.Event = field(default_factory=threading.Event)
    result: IngestResult | None = None
    error: BaseException | None = None


class GroupCommitter:
    """Group commit by leader hand-off (no extra thread).

    A request that finds no commit in progress becomes the leader: it takes everything
    queued (up to MAX_GROUP batches), commits it in one transaction on its own connection,
    wakes the owners, and repeats until its own batch is committed; then it hands the lead
    to the oldest waiting request, if any. While a commit (and its fsync) runs, new batches
    queue up and go into the next transaction together. Uncontended, a request commits its
    own batch directly, with no thread switch.
    """

    def __init__(self, storage: _GroupStore) -> None:
        self._storage = weakref.ref(storage)  # the storage owns the committer, not the reverse
        self._lock = threading.Lock()
        self._pending: list[_Waiter] = []
        self._leading = False
        self._pid = os.getpid()

    def submit(self, item: BatchItem) -> IngestResult:
        """Store one batch; returns once the transaction that holds it has committed."""
        own = _Waiter(item)
        with self._lock:
            if self._pid != os.getpid():  # forked: nothing of the parent's queue is ours
                self._pending, self._leading, self._pid = [], False, os.getpid()
            self._pending.append(own)
            lead = not self._leading
            if lead:
                self._leading = True
                own.state = "lead"
        if not lead and not own.wake.wait(COMMIT_WAIT_SECONDS):
            with self._lock:
                if own.state == "waiting":  # give up: never committed, the client may retry
                    self._pending.remove(own)
                    raise StorageError(f"the database did not commit within {COMMIT_WAIT_SECONDS:g} s")
            own.wake.wait()  # its commit is under way (or it was just made leader): see it through
        if own.state == "lead":
            self._lead(own)
        if own.error is not None:
            kind = StoreFull if isinstance(own.error, StoreFull) else StorageError  # a full disk stays named
            raise kind(one_line(own.error)) from own.error
        assert own.result is not None
        return own.result

    def _take(self) -> list[_Waiter]:
        with self._lock:
            group = self._pending[:MAX_GROUP]
            del self._pending[:MAX_GROUP]
            queue_depth(len(self._pending))
            for waiter in group:
                waiter.state = "committing"
        return group

    def _lead(self, own: _Waiter) -> None:
        storage = self._storage()
        while True:
            with self._lock:
                if own.result is not None or own.error is not None:
                    if self._pending:  # hand the lead to the oldest waiting request
                        successor = self._pending[0]
                        successor.state = "lead"
                        successor.wake.set()
                    else:
                        self._leading = False
                    return
            group: list[_Waiter] = []
            try:
                if storage is None:
                    raise StorageError("storage closed")
                with storage.write_transaction() as conn:
                    # The group is taken only once the write lock is held: batches that
                    # arrived while this leader waited for another writer join this commit.
                    group = self._take()
                    began = time.perf_counter()
                    results = storage.ingest_group(conn, [waiter.item for waiter in group])
                commit_observed(storage.dialect, time.perf_counter() - began, len(group))
            except BaseException as exc:  # every waiter must be released
                if not group:  # the transaction never began: fail what is queued (own included)
                    group = self._take()
                for waiter in group:
                    waiter.error = exc
                    waiter.state = "done"
                    if waiter is not own:
                        waiter.wake.set()
                if not isinstance(exc, Exception):
                    with self._lock:
                        self._leading = False
                    raise
                continue
            for waiter, res in zip(group, results, strict=True):
                waiter.result = res
                waiter.state = "done"
                if waiter is not own:
                    waiter.wake.set()
