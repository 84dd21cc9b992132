"""What a collection does by itself as its reports arrive: the pilot's automatic switch and the drift policy.

After each stored batch the service calls :meth:`CollectionWatch.observe` with its mechanism and its
number of reports. What the mechanism's collections ask is read from the store at most every
:attr:`~CollectionWatch.CHECK_SECONDS` (so ingestion does not pay for it); for each collection whose
*current* mechanism it is:

* ``policy.switch`` (``{"after": n₁, "method": …}``): once the pilot holds n₁ reports, the switch
  starts (:func:`.pilots.pilot_switch` — a design job over the pilot's confidence set, rotating only
  if it beats the pilot), once per pilot and process;
* ``policy.drift`` ``pause`` or ``redesign``: the drift watch checks the mechanism in a background
  thread (one at a time per mechanism), so a drift is acted on without anyone asking for an
  estimate or scraping /metrics; the watch's own answer cache makes an unchanged count free.

Several server processes may each start the same switch: each job publishes the same content and
the rotation is a compare-and-set from the pilot, so the first wins and the others fail saying so.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rldp.shared.collection import drift_policy

from .collections import Collections
from .drift import DriftWatch
from .mechanisms import MechanismCatalog

__all__ = ["CollectionWatch"]

log = logging.getLogger("rldp.aggregator")


@dataclass
class _Watched:
    """What a mechanism's collections ask of it, read at ``read_at`` (monotonic), and its report count since."""

    read_at: float
    switches: list[tuple[str, int]]  # (collection, after) of the collections whose pilot it is
    drift: bool  # some collection whose current mechanism it is acts on a drift
    reports: int


class CollectionWatch:
    """See the module docstring. ``start_switch(name)`` starts collection ``name``'s automatic switch."""

    CHECK_SECONDS = 1.0

    def __init__(
        self,
        collections: Collections,
        catalog: MechanismCatalog,
        drift: DriftWatch,
        start_switch: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._collections = collections
        self._catalog = catalog
        self._drift = drift
        self._start_switch = start_switch
        self._clock = clock
        self._lock = threading.Lock()
        self._watched: dict[str, _Watched] = {}
        self._switched: set[tuple[str, str]] = set()
        self._checking: set[str] = set()  # mechanisms whose drift check thread runs
        self._dirty: set[str] = set()  # … and got a batch since that check began

    def _read(self, mechanism_id: str, now: float) -> _Watched:
        storage = self._collections.storage
        switches, drift = [], False
        for name in storage.collections_of(mechanism_id):
            record = self._collections.get(name)
            if record.status != "active" or record.current != mechanism_id:
                continue
            if "switch" in record.policy:
                switches.append((name, int(record.policy["switch"]["after"])))
            drift = drift or drift_policy(record.policy) != "warn"
        reports = int(storage.counts(mechanism_id, self._catalog.outputs(mechanism_id)).sum()) if switches else 0
        return _Watched(now, switches, drift, reports)

    def observe(self, mechanism_id: str, accepted: int) -> None:
        """``accepted`` reports of ``mechanism_id`` were stored: act for its collections if something is due.

        What the collections ask is read from the store at most every :attr:`CHECK_SECONDS`; in between
        the reports are counted here, so the batch that reaches a switch's ``after`` starts it at once."""
        now = self._clock()
        with self._lock:
            watched = self._watched.get(mechanism_id)
            if watched is not None and now - watched.read_at < self.CHECK_SECONDS:
                watched.reports += accepted
                fresh = None
            else:
                fresh = mechanism_id
        if fresh is not None:
            watched = self._read(mechanism_id, now)
            with self._lock:
                self._watched[mechanism_id] = watched
        assert watched is not None
        for name, after in watched.switches:
            if watched.reports >= after:
                with self._lock:
                    due = (name, mechanism_id) not in self._switched
                    self._switched.add((name, mechanism_id))
                if due:
                    self._start_switch(name)
        if watched.drift:
            self._check_drift(mechanism_id)

    def _check_drift(self, mechanism_id: str) -> None:
        """Check the mechanism's drift in a background thread: one per mechanism at a time, at most every
        :attr:`CHECK_SECONDS`, and always once more after the last batch that arrived meanwhile (a batch
        during a check or its cool-down marks it dirty), so the batch that makes the difference is seen."""
        with self._lock:
            if mechanism_id in self._checking:
                self._dirty.add(mechanism_id)
                return
            self._checking.add(mechanism_id)

        def run() -> None:
            try:
                while True:
                    with self._lock:
                        self._dirty.discard(mechanism_id)
                    try:
                        self._drift.check_watched(self._catalog.get(mechanism_id))
                    except Exception as exc:  # a background check: log and count it, the next batch tries again
                        log.exception("drift watch of mechanism %s failed", mechanism_id)
                        self._drift.events.drift_check_failed(mechanism_id, exc)
                    time.sleep(self.CHECK_SECONDS)
                    with self._lock:
                        if mechanism_id not in self._dirty:
                            return
            finally:
                with self._lock:
                    self._checking.discard(mechanism_id)

        threading.Thread(target=run, name=f"rldp-drift-{mechanism_id[:8]}", daemon=True).start()
