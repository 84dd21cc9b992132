"""The drift watch of the service: per mechanism, is the reporting population still in F?

:func:`rldp.aggregator.estimate.drift.watch` does the statistics; this module decides when to run
it and whom to tell. It runs on every estimate (on that estimate's reports) and on every /metrics
scrape (on every mechanism's reports, or for a mechanism with collection windows the window that is
current by the server's clock — never a later label a client may send ahead, so a forger cannot make a
nearly empty next window the one that decides), and caches each answer under (mechanism, window,
report count): reports are only ever
added, so the count names the counts, and a scrape between two uploads recomputes nothing. Each
fresh answer on what the gauges follow goes to :meth:`ServiceEvents.drift_checked`; one that rejects
H0 where the previous one for that view did not also goes to :meth:`ServiceEvents.drift_detected` (an
alarm counter, and a warning in the service log) and to the collection's policy. Answers on other
views (an estimate over every window, or an old window) are returned, not announced: one drift is
one detection.

Mechanisms whose claim rests on no F (plain ldp over X, radius null) get no drift object, with the
reason (:func:`~rldp.aggregator.estimate.drift.drift_scope`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from rldp.aggregator.estimate import Estimate
from rldp.aggregator.estimate.drift import drift_scope, watch
from rldp.aggregator.storage import MechanismRecord, Storage
from rldp.shared.collection import DRIFT_MIN_REPORTS, drift_contamination
from rldp.shared.errors import RldpError, one_line

from .events import ServiceEvents
from .mechanisms import LRU, MechanismCatalog

__all__ = ["DriftWatch", "DriftAnswer", "SCRAPE_MAX_ENTRIES"]

log = logging.getLogger("rldp.service")

#: A /metrics scrape runs the watch only on mechanisms with at most this many entries |Y'|·|X| (the
#: watch costs an estimate: larger mechanisms get their gauges from their estimate requests only).
SCRAPE_MAX_ENTRIES = 1 << 20

#: (the drift object, or None with the reason it is absent)
DriftAnswer = tuple[dict[str, Any] | None, str | None]


def _across_windows(drift: dict[str, Any]) -> dict[str, Any]:
    """A drift object over every window of a mechanism that collects by window: an owner's memoised report
    repeats in each window, so these reports are not independent and the test's guarantee (one window at a
    time, as the watch judges) does not hold for them; the object says so (``scope``) and acts on nothing."""
    return {
        **drift,
        "scope": "all-windows",
        "statement": drift["statement"]
        + "; over every window, where an owner's report repeats in each: descriptive only, the watch judges one "
        "window at a time (ask with ?window=LABEL)",
    }


class DriftWatch:
    """Drift answers per (mechanism, window), cached by report count; events on each fresh one."""

    def __init__(
        self,
        storage: Storage,
        catalog: MechanismCatalog,
        events: ServiceEvents,
        on_detected: Callable[[MechanismRecord, dict[str, Any]], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.catalog = catalog
        self.events = events
        self.on_detected = on_detected  # a collection's drift policy (AggregatorService)
        self._answers: LRU[tuple[str, str | None], tuple[int, DriftAnswer]] = LRU(1024)  # → (n, DriftAnswer)
        self._scopes: LRU[str, tuple[dict[str, Any], str | None]] = LRU(4096)  # id → (document, reason or None)
        self._locks: dict[tuple[str, str | None], threading.Lock] = {}  # one computation per key at a time
        self._locks_lock = threading.Lock()

    def _scope(self, mechanism_id: str) -> tuple[dict[str, Any], str | None]:
        cached = self._scopes.get(mechanism_id)
        if cached is None:
            doc = msgpack.unpackb(self.catalog.document(mechanism_id, "msgpack"), raw=False)
            cached = self._scopes.put(mechanism_id, (doc, drift_scope(doc)))
        return cached

    def check(
        self,
        record: MechanismRecord,
        counts: np.ndarray,
        label: str | None = None,
        estimate: Estimate | None = None,
    ) -> DriftAnswer:
        """The drift answer for these counts (of window ``label``, or every report); ``estimate`` of
        P_X from the same counts by EM with delta intervals, if the caller has one (else computed)."""
        doc, reason = self._scope(record.id)
        if reason is not None:
            return None, reason
        n = int(np.asarray(counts).sum())
        if n == 0:
            return None, "no reports yet"
        key = (record.id, label)
        cached = self._answers.get(key)
        if cached is not None and cached[0] == n:
            return cached[1]
        with self._locks_lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            cached = self._answers.get(key)
            if cached is not None and cached[0] == n:
                return cached[1]
            try:
                gamma, sequence = self._settings(record, label)
                drift = watch(
                    doc,
                    counts,
                    estimate,
                    contamination=gamma,
                    min_reports=DRIFT_MIN_REPORTS,
                    sequence=sequence,
                    reports=self.catalog.parsed(record.id)[0],  # parsed once per mechanism, not per check
                ).to_dict()
                if label is None and self.catalog.window(record.id) is not None:
                    drift = _across_windows(drift)
            except (RldpError, ValueError, ArithmeticError) as exc:  # numerical trouble: say so, never a 5xx
                answer: DriftAnswer = (None, f"the drift watch could not be computed: {one_line(exc)}")
                self._answers.put(key, (n, answer))
                return answer
            answer = (drift, None)
            before = None if cached is None else cached[1][0]
            self._answers.put(key, (n, answer))
        # Events and the policy's action follow one view per mechanism, the gauges' (every report, or its
        # latest window): an estimate over all windows or an old one answers its drift object but is not a
        # second detection of the same drift (nor a pause for a window that is over).
        if label != self._watched(record):
            return answer
        self.events.drift_checked(record, drift)
        if drift["rejected"] and not (before is not None and before["rejected"]):
            where = "" if label is None else f" (window {label})"
            log.warning("drift: mechanism %s%s: %s", record.id, where, drift["statement"])
            self.events.drift_detected(record, drift)
            if self.on_detected is not None:
                self.on_detected(record, drift)
        return answer

    def _settings(self, record: MechanismRecord, label: str | None) -> tuple[float, int]:
        """(γ, w): the contamination budget of the mechanism's collection (the default without one), and
        the rank of window ``label`` among the mechanism's windows since it was published (1 for the
        first, or without windows): the w-th is tested at a/(w(w + 1)), so that the false-alarm rate over
        the mechanism's life stays ≤ a. Counted from publication, not from stored labels, which anyone
        may send."""
        gamma = None
        for name in self.storage.collections_of(record.id):
            collection = self.storage.get_collection(name)
            if collection is not None:
                gamma = drift_contamination(collection.policy)
                break
        window = self.catalog.window(record.id)
        sequence = 1
        if window is not None and label is not None:
            first = window.start_of(window.label_at(record.published))
            sequence = max(1, (window.start_of(label) - first) // window.seconds + 1)
        return (drift_contamination({}) if gamma is None else gamma), int(sequence)

    def _watched(self, record: MechanismRecord) -> str | None:
        """What the gauges follow: every report (None), or for a mechanism with windows the window that is
        current by the server's clock — so that a drift shows within one window instead of being diluted by
        the history, and a label ahead of the clock (accepted for clients' clock skew) never decides."""
        window = self.catalog.window(record.id)
        return None if window is None else window.label_at(self.clock())

    def refresh(self) -> None:
        """Check every mechanism (the /metrics scrape) up to :data:`SCRAPE_MAX_ENTRIES`, on what its gauges
        follow (:meth:`_watched`); cached answers cost nothing."""
        for record in self.catalog.list():
            self.check_watched(record)

    def check_watched(self, record: MechanismRecord) -> None:
        """Check one mechanism on what its gauges follow (nothing for one outside the watch's scope or
        above :data:`SCRAPE_MAX_ENTRIES`)."""
        if self._scope(record.id)[1] is not None:
            return
        matrix, _, _ = self.catalog.parsed(record.id)
        if matrix.size > SCRAPE_MAX_ENTRIES:
            return
        self.watched(record)

    def watched(self, record: MechanismRecord) -> tuple[str | None, DriftAnswer]:
        """(the window label or None, the answer) on the view the watch judges for this mechanism (:meth:`_watched`):
        the verdict its collection's policy acts on, as a collection's dashboard page shows it."""
        label = self._watched(record)
        return label, self.check(record, self.storage.counts(record.id, record.outputs, window=label), label)
