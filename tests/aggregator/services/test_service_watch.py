"""The collection watch (services.watch): the automatic switch starts on the batch that reaches n₁, once;
the drift check runs in the background and always once more after the last batch that arrived while a
check ran or cooled down (the batch that makes the difference is never left unchecked)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from rldp.aggregator.services.watch import CollectionWatch


class _Storage:
    def __init__(self, policy: dict) -> None:
        self.record = SimpleNamespace(status="active", current="m", policy=policy)
        self.stored = 0

    def collections_of(self, mechanism: str) -> list[str]:
        return ["c"] if mechanism == "m" else []

    def counts(self, mechanism: str, outputs: int):
        import numpy as np

        return np.array([self.stored])


class _Collections:
    def __init__(self, storage: _Storage) -> None:
        self.storage = storage

    def get(self, name: str):
        return self.storage.record


class _Drift:
    def __init__(self, storage: _Storage) -> None:
        self.storage = storage
        self.seen: list[int] = []
        self.lock = threading.Lock()
        self.gate = threading.Event()  # a check runs once it is set: a test holds it to make a burst
        self.gate.set()

    def check_watched(self, record) -> None:
        assert self.gate.wait(timeout=60)
        time.sleep(0.05)  # a check takes a while
        with self.lock:
            self.seen.append(self.storage.stored)


def _watch(policy: dict, starts: list[str]):
    storage = _Storage(policy)
    drift = _Drift(storage)
    catalog = SimpleNamespace(outputs=lambda m: 1, get=lambda m: SimpleNamespace(id=m))
    watch = CollectionWatch(_Collections(storage), catalog, drift, starts.append)
    watch.CHECK_SECONDS = 0.1
    return watch, storage, drift


def test_the_switch_starts_on_the_batch_that_reaches_n1_and_only_once():
    starts: list[str] = []
    watch, storage, _ = _watch({"switch": {"after": 100}}, starts)
    for _ in range(9):  # 90 reports: within one read period, counted here
        storage.stored += 10
        watch.observe("m", 10)
    assert starts == []
    storage.stored += 10
    watch.observe("m", 10)  # 100: due at once, though the store was read less than CHECK_SECONDS ago
    assert starts == ["c"]
    time.sleep(0.15)
    storage.stored += 10
    watch.observe("m", 10)
    assert starts == ["c"]
    watch.observe("x", 10)  # a mechanism of no collection: nothing
    assert starts == ["c"]


def test_the_drift_check_always_runs_after_the_last_batch():
    watch, storage, drift = _watch({"drift": "pause"}, [])
    drift.gate.clear()  # the first check waits until the whole burst has arrived, however slow the machine
    for _ in range(5):  # a burst: the first starts a check, the rest arrive during it
        storage.stored += 1
        watch.observe("m", 1)
    drift.gate.set()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not drift.seen or drift.seen[-1] != 5 or watch._checking):
        time.sleep(0.02)
    assert drift.seen[-1] == 5, drift.seen  # the last batch was checked
    assert len(drift.seen) <= 3, drift.seen  # not once per batch
    warn, storage2, drift2 = _watch({"drift": "warn"}, [])
    warn.observe("m", 1)
    time.sleep(0.2)
    assert drift2.seen == []  # warn: the watch leaves it to estimates and scrapes


def test_an_automatic_switch_without_a_method_uses_the_notions_recommended_designer():
    from rldp.aggregator.services.pilots import auto_switch_body

    assert auto_switch_body({"notion": "rldp", "switch": {"after": 5000}}) == {"method": "polyopt", "min_reports": 1000}
    assert auto_switch_body({"notion": "rldp", "switch": {"after": 500, "method": "srr"}}) == {
        "method": "srr",
        "min_reports": 500,
    }


def test_a_drift_check_that_raises_is_logged_and_counted_not_only_swallowed(caplog):
    from rldp.aggregator.http.metrics import Metrics

    watch, storage, drift = _watch({"drift": "pause"}, [])
    failed: list[tuple[str, str]] = []
    done = threading.Event()

    def broken(record) -> None:
        raise ValueError("a stored document this version cannot read")

    def count(mechanism: str, exc: BaseException) -> None:
        failed.append((mechanism, str(exc)))
        done.set()

    drift.check_watched = broken
    drift.events = SimpleNamespace(drift_check_failed=count)
    storage.stored += 1
    with caplog.at_level("ERROR", logger="rldp.aggregator"):
        watch.observe("m", 1)
        assert done.wait(timeout=60)
    assert failed == [("m", "a stored document this version cannot read")]
    assert "drift watch of mechanism m failed" in caplog.text
    metrics = Metrics()
    metrics.drift_check_failed("m", ValueError("x"))
    assert b"rldp_drift_check_failures_total 1.0" in metrics.render()
