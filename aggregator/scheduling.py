"""CPU scheduling of ``rldp serve``'s processes on Linux: the throughput policy for the server and its
workers (:func:`batch_scheduling`), the default one for the SQLite writer they all wait for
(:func:`default_scheduling`). Elsewhere than Linux both do nothing."""

from __future__ import annotations

import os

__all__ = ["batch_scheduling", "default_scheduling"]


def batch_scheduling() -> bool:
    """Run this process, and every process and thread it starts, under Linux's SCHED_BATCH; whether it did.
    (The SQLite writer process returns to the default policy: :func:`default_scheduling`.)

    Why: on two cores the workers, their HTTP threads, the writer and the clients' connections wake one
    another for every upload, and under the default policy each wake-up may preempt the process that is
    computing. ``bench/bench_ingest.py``'s load counted about 2 context switches per upload per worker,
    half of them preemptions; SCHED_BATCH (no preemption on wake-up; the policy of non-interactive
    throughput work, sched(7)) halved both and raised the batched rate by 4-6 % in 3 of 3 interleaved
    pairs. A request may wait for the running one's time slice under full load — a few milliseconds — and
    an idle core still runs it at once. Unprivileged; elsewhere than Linux nothing changes.
    """
    if not hasattr(os, "sched_setscheduler") or not hasattr(os, "SCHED_BATCH"):
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:  # e.g. a sandbox that forbids it: the default policy is kept
        return False
    return True


def default_scheduling() -> None:
    """Run this process (the SQLite writer) under the default policy if it inherited :func:`batch_scheduling`'s.

    Why: every upload waits for the writer's commit, so a writer that must wait for a worker's time
    slice after each wake-up holds back all of them — while the workers, busy decoding, are the
    processes SCHED_BATCH is for (a wake-up of theirs need not preempt). Woken with a group to
    commit, the writer now runs at once: +4.6 % batched rate on two cores on average over 8 interleaved
    pairs of ``bench/profile_ingest.py`` runs (7 faster, +0.9 to +11.9 %; one -1 %), with 4 % less CPU
    per batch. Unprivileged; a refusal keeps the inherited policy."""
    if not hasattr(os, "sched_getscheduler") or getattr(os, "SCHED_BATCH", None) is None:
        return
    try:  # every thread: the policy is per thread, and imports (numpy's BLAS) have started some already
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            if os.sched_getscheduler(tid) == os.SCHED_BATCH:
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass
