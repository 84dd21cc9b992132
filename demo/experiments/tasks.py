"""Building an experiment's task list and running it on worker processes."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from rldp.aggregator.design import METHODS, NUMERIC_METHODS
from rldp.shared.errors import ValidationError

from .config import KNOWN_METHODS, Config

__all__ = ["select_methods", "COST", "shape_panel", "shape_title", "draw_tasks", "run_tasks", "default_workers"]

Task = dict[str, Any]
Records = list[dict[str, Any]]

# Rough relative design cost, to start the slow tasks first (better use of the workers).
COST = {"polyopt": 8, "polyopt-paper": 8, "nr": 2, "ir-calibrated": 4, "cr-calibrated": 4}


def select_methods(cfg: Config, paper: Sequence[str], only: Sequence[str] | None = None) -> list[str]:
    """The paper's methods first (legend order), then every other method in METHODS but those that need a
    numeric U (NUMERIC_METHODS: these experiments' alphabets are categorical). ``only`` restricts the list (e.g. Fig. 4 compares NR and PolyOpt)."""
    if only is not None:
        pool = [m for m in only if m in METHODS and (cfg.methods is None or m in cfg.methods)]
        if not pool:
            raise ValidationError(f"this experiment compares {', '.join(only)}; --methods selected none of them")
        return pool
    if cfg.methods is not None:
        return list(cfg.methods)
    pool = [m for m in METHODS if m not in NUMERIC_METHODS and (not cfg.quick or m in KNOWN_METHODS)]
    return [m for m in paper if m in pool] + [m for m in pool if m not in paper]


def shape_panel(shape: tuple[int, int]) -> str:
    """The panel name of a synthetic shape, e.g. "2x5"."""
    return f"{shape[0]}x{shape[1]}"


def shape_title(shape: tuple[int, int], n: int) -> str:
    """The panel title of a synthetic shape with n public samples."""
    return f"|S| = {shape[0]}, |U| = {shape[1]} (n = {n:,})"


def draw_tasks(
    cfg: Config,
    shapes: Sequence[tuple[int, int]],
    ns: Sequence[int],
    draws: int,
    betas: Sequence[float],
    methods: Sequence[str],
    epsilons: Sequence[float],
    panel: Callable[[tuple[int, int], int], str],
    **flags: Any,
) -> list[Task]:
    """One synthetic task per (shape, n, draw), biggest shapes first; ``flags`` (``truth``,
    ``membership``) go into every task."""
    tasks = []
    for shape in shapes:
        for n in ns:
            base = {"panel": panel(shape, n), "n_sensitive": shape[0], "n_released": shape[1], "n": int(n)}
            for d in range(draws):
                tasks.append(
                    dict(
                        flags,
                        seed=cfg.seed,
                        shape=shape,
                        n=int(n),
                        draw=d,
                        betas=tuple(betas),
                        methods=tuple(methods),
                        epsilons=tuple(epsilons),
                        base=base,
                        solver=cfg.polyopt_solver,
                        time_budget=cfg.time_budget,
                    )
                )
    # Big shapes first: better load balance across workers.
    tasks.sort(key=lambda t: -t["shape"][0] * t["shape"][1])
    return tasks


def _indexed(job: tuple[Callable[[Task], Records], int, Task]) -> tuple[int, Records]:
    fn, i, task = job
    return i, fn(task)


def run_tasks(fn: Callable[[Task], Records], tasks: list[Task], cfg: Config, desc: str) -> Records:
    """Run tasks on cfg.workers processes and return their records in task order, with a
    tqdm bar on stderr. ``spawn`` workers inherit no state, so the records are the same as
    in one process; on an error or an interrupt the workers are terminated at once."""
    results: list[Records | None] = [None] * len(tasks)
    disable = None if cfg.progress is None else not cfg.progress  # None: tqdm decides (TTY)
    with tqdm(
        total=len(tasks), desc=desc, unit="task", file=sys.stderr, disable=disable, mininterval=1.0, dynamic_ncols=True
    ) as bar:
        if cfg.workers <= 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                results[i] = fn(task)
                bar.update()
        else:
            ctx = multiprocessing.get_context("spawn")
            pool = ctx.Pool(processes=min(cfg.workers, len(tasks)))
            try:
                jobs = [(fn, i, task) for i, task in enumerate(tasks)]
                for i, records in pool.imap_unordered(_indexed, jobs):
                    results[i] = records
                    bar.update()
                pool.close()
            except BaseException:
                pool.terminate()  # do not leave workers computing after an error or Ctrl-C
                raise
            finally:
                pool.join()
    return [rec for chunk in results for rec in (chunk or [])]


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
