"""Pauses: a collection whose drift policy is ``pause`` stops taking its current mechanism's reports.

When the drift watch rejects H0 for a collection's current mechanism (the reporting population
no longer looks like its P̂, so its claim may not hold for them), :meth:`Pauses.pause` records the
pause in the store; :meth:`Pauses.check` then refuses that mechanism's batches before anything is
stored:

* :class:`~.errors.CollectionPaused` (423, Retry-After) while it is the collection's current
  mechanism: the SDKs keep such a batch queued and send it after the operator resumes the
  collection (``rldp collection resume NAME``), having judged the claim still fine;
* :class:`~.errors.MechanismWithdrawn` (410) once the collection has rotated away from it (e.g. a
  redesign over the live reports): reports drawn under the paused mechanism are never taken; the
  SDKs drop them and draw again under the current mechanism.

A resume stands for the drift the operator saw: the watch pauses the collection again only after it has
seen the population back in F and then leave it again (a new detection), or after a rotation.

Every server process reads the pauses from the store at most every :attr:`Pauses.TTL` seconds
(one small query), so a pause set by one process holds in all of them within that time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rldp.aggregator.storage import CollectionPause, Storage

from .errors import CollectionPaused, MechanismWithdrawn

__all__ = ["Pauses"]


class Pauses:
    """The pauses in force, cached for :attr:`TTL` seconds (see the module docstring)."""

    TTL = 1.0

    def __init__(self, storage: Storage, clock: Callable[[], float] = time.monotonic) -> None:
        self._storage = storage
        self._clock = clock
        self._lock = threading.Lock()
        self._by_mechanism: dict[str, CollectionPause] = {}
        self._read_at = -float("inf")

    def _current(self) -> dict[str, CollectionPause]:
        now = self._clock()
        with self._lock:
            if now - self._read_at >= self.TTL:
                self._by_mechanism = {p.mechanism: p for p in self._storage.collection_pauses()}
                self._read_at = now
            return self._by_mechanism

    def _forget(self) -> None:
        with self._lock:
            self._read_at = -float("inf")

    def check(self, mechanism_id: str) -> None:
        """Refuse a batch of a paused mechanism (CollectionPaused or MechanismWithdrawn); nothing otherwise."""
        pause = self._current().get(mechanism_id)
        if pause is None:
            return
        record = self._storage.get_collection(pause.collection)
        if record is not None and record.current != mechanism_id:
            raise MechanismWithdrawn(
                f"mechanism {mechanism_id} was paused by collection {pause.collection!r} ({pause.reason}) and the "
                f"collection has moved on to {record.current}; reports drawn under it are not taken: draw again "
                "under the collection's current mechanism",
                mechanism=mechanism_id,
                collection=pause.collection,
            )
        raise CollectionPaused.refused(
            f"collection {pause.collection!r} is paused: {pause.reason}. Nothing was stored; keep this batch and "
            "send it again once the operator resumes the collection (rldp collection resume) or rotates it",
            mechanism=mechanism_id,
            collection=pause.collection,
        )

    def pause(self, collection: str, mechanism_id: str, reason: str) -> bool:
        """Pause ``mechanism_id`` for ``collection`` (idempotent); True if it was not paused before."""
        created = self._storage.pause_mechanism(collection, mechanism_id, reason)
        self._forget()
        return created

    def replace_reason(self, collection: str, mechanism_id: str, reason: str) -> None:
        """Pause ``mechanism_id`` for ``collection`` with ``reason``, replacing the reason of a pause in force."""
        self._storage.pause_mechanism(collection, mechanism_id, reason, replace=True)
        self._forget()

    def resume(self, collection: str) -> int:
        """Lift the pauses of ``collection``; how many there were."""
        lifted = self._storage.resume_collection(collection)
        self._forget()
        return lifted

    def get(self, mechanism_id: str) -> CollectionPause | None:
        """The pause of ``mechanism_id`` in force, if any (as of at most :attr:`TTL` seconds ago)."""
        return self._current().get(mechanism_id)
