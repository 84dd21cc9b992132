"""Where batched ingestion spends the two cores: CPU time and context switches per batch, per process.

Starts ``rldp serve`` as ``bench_ingest.py`` does (2 workers, SQLite with its writer process), uploads
``--batches`` batches of 10,000 reports over 32 connections, and prints for every process of the server
(and the load generator, this process) its user and system CPU time and its voluntary (it slept) and
involuntary (it was preempted) context switches per batch, from ``/proc`` (Linux only). The rate is
printed too, but it is not a benchmark: ``bench_ingest.py`` is.

On this project's 2-core VM, blocking is expensive (a 2 ms sleep is charged about 50-180 µs of CPU time),
so the switch counts explain much of the CPU time beyond the work itself; they are how the thread
hand-off of report uploads and the preemptions that SCHED_BATCH removes were found.

run: python bench/profile_ingest.py [--batches N] [--scheduling normal]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import bench_ingest as b
import numpy as np


def _processes(group: int) -> dict[int, str]:
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) == group:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    args = fh.read().split(b"\0")
                out[int(pid)] = "writer" if b"rldp.aggregator.writer" in b" ".join(args) else "serve"
        except OSError:
            continue
    return out


def _usage(pid: int) -> tuple[float, float, int, int]:
    """(user s, system s, voluntary, involuntary switches) of every thread of ``pid``."""
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    user, system = int(fields[11]) / tick, int(fields[12]) / tick
    voluntary = involuntary = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as fh:
                status = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        voluntary += int(status["voluntary_ctxt_switches"])
        involuntary += int(status["nonvoluntary_ctxt_switches"])
    return user, system, voluntary, involuntary


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=4000)
    parser.add_argument("--scheduling", choices=("batch", "normal"), default="batch")
    args = parser.parse_args(argv)
    if not os.path.isdir("/proc"):
        raise SystemExit("profile_ingest reads /proc: Linux only")
    b.SERVE_OPTIONS.extend(["--scheduling", args.scheduling])
    doc, outputs = b.bench_document()
    rng = np.random.default_rng(7)
    bodies = b.report_bodies(doc["id"], outputs, args.batches + 40, rng)
    with tempfile.TemporaryDirectory(prefix="rldp-profile-") as tmp:
        port = b.free_port()
        proc = b.start_service(f"sqlite:///{tmp}/profile.sqlite3", port)
        try:
            b.publish(port, doc)
            b.upload(port, bodies[:40])
            processes = {**_processes(proc.pid), os.getpid(): "load generator"}
            before = {pid: _usage(pid) for pid in processes}
            start = time.perf_counter()
            b.upload(port, bodies[40:])
            seconds = time.perf_counter() - start
            after = {pid: _usage(pid) for pid in processes}
        finally:
            b.stop(proc)
    n = args.batches
    print(f"rate {n * b.BATCH / seconds / 1e6:.2f} M reports/s ({args.scheduling} scheduling)")
    print(f"{'process':>16} {'pid':>7} {'user ms':>8} {'sys ms':>7} {'slept':>6} {'preempted':>9}   per batch")
    for pid, name in sorted(processes.items(), key=lambda kv: kv[1]):
        delta = [a - z for a, z in zip(after[pid], before[pid], strict=True)]
        if sum(delta):
            print(
                f"{name:>16} {pid:>7} {delta[0] / n * 1e3:8.3f} {delta[1] / n * 1e3:7.3f} "
                f"{delta[2] / n:6.2f} {delta[3] / n:9.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
