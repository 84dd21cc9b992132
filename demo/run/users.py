"""The users: worker processes, each an app that embeds the client SDK."""

from __future__ import annotations

import multiprocessing as mp
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rldp.shared.tables import Table

from ..user_worker import user_worker
from .config import DemoConfig
from .console import bar

__all__ = ["simulate_users"]


def simulate_users(
    cfg: DemoConfig,
    url: str,
    mechanism_id: str,
    users: Table,
    names: Sequence[str],
    stream: int = 0,
    *,
    stateless: bool = False,
) -> dict:
    """Split the users over worker processes and stream their reports; returns timing. Worker i draws from
    the seed (cfg.seed, stream, i): the same reports on every run with the same seed and workers. Each
    worker's apps keep a state file, as apps do by default; ``stateless``: none (the benchmark's baseline)."""
    columns = {name: np.asarray(users.column(name)) for name in names}
    n = len(next(iter(columns.values())))
    parts = np.array_split(np.arange(n), cfg.workers)
    ctx = mp.get_context("spawn")  # clean interpreters, like separate devices
    manager = ctx.Manager()
    progress = manager.Queue()
    states = tempfile.TemporaryDirectory(prefix="rldp-demo-apps-")  # each worker's apps' state file
    start = time.perf_counter()
    with ctx.Pool(cfg.workers) as pool, bar(cfg, n, "users", unit="reports") as shown:
        jobs = [
            pool.apply_async(
                user_worker,
                (
                    url,
                    mechanism_id,
                    {k: v[idx] for k, v in columns.items()},
                    idx,  # the users' ids: one owner per record
                    cfg.batch_size,
                    progress,
                    i,
                    None if stateless else str(Path(states.name) / f"worker{i}.sqlite3"),
                    (int(cfg.seed), stream, i),
                ),
            )
            for i, idx in enumerate(parts)
        ]
        finished = 0
        while finished < cfg.workers:
            item = progress.get()
            if item is None:
                finished += 1
            else:
                shown.update(item)
        results = [job.get() for job in jobs]
    seconds = time.perf_counter() - start
    manager.shutdown()
    states.cleanup()
    accepted = sum(r["accepted"] for r in results)
    return {"accepted": accepted, "seconds": seconds, "reports_per_second": accepted / seconds if seconds else 0.0}
