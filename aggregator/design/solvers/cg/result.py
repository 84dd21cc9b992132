"""The result of a column-generation solve ([LZG24, Thm 3]): its record, its certified mechanism and its
progress reports, shared by the solvers of :mod:`.solve`, :mod:`.nr` and :mod:`.exact_set`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rldp.shared.information import mutual_information
from rldp.shared.probability import as_distribution

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError
from .master import Master

__all__ = ["CGResult", "Progress", "check_inputs", "certified_result", "report_progress"]

Progress = Callable[[dict[str, Any]], None]


@dataclass
class CGResult:
    """Outcome of a column-generation solve (all information in nats)."""

    matrix: np.ndarray  # (|Y|, |X|), certified: every row in the cone, columns sum to 1
    information: float  # I_P̂(X;Y) of ``matrix``
    lp_value: float  # the master's objective (≈ information, before certification)
    iterations: int  # pricing rounds
    columns: int  # columns in the master at the end
    seconds: float
    converged: bool  # the pricer found no improving column (exact pricer: proven optimal)
    status: str  # "converged", "time_budget", "iteration_limit", "stalled" or "interrupted" (Ctrl-C)
    upper_bound: float | None = None  # proven upper bound on the optimum, if any
    bound_kind: str | None = None  # what ``upper_bound`` bounds and how it was proved
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, lp value)
    stages: list[dict[str, Any]] = field(
        default_factory=list
    )  # coarse stages run first (see :class:`.coarsen.Aggregation`)
    duals: np.ndarray | None = None  # the master's final duals λ (|X|,)
    rung_duals: list[np.ndarray] = field(default_factory=list)  # every coarse rung's duals, lifted here


def check_inputs(distribution: np.ndarray, time_budget: float) -> np.ndarray:
    """P̂ as a float array (|S| ≥ 2, |U|) after checking it is a distribution, and a valid budget."""
    p = np.asarray(distribution, dtype=float)
    if p.ndim != 2 or p.shape[0] < 2:
        raise CGError(f"distribution must have shape (|S| ≥ 2, |U|); got {p.shape}")
    try:
        as_distribution(p)
    except ValueError as exc:
        raise CGError(str(exc)) from exc
    if not (isinstance(time_budget, (int, float)) and time_budget > 0 and not math.isnan(time_budget)):
        raise CGError(f"time_budget must be a number of seconds > 0; got {time_budget!r}")
    return p


def report_progress(
    progress: Progress | None, master: Master, *, iteration: int, start: float, upper_bound: float | None
) -> None:
    """Send ``progress`` (if any) the state of a solve that started at ``start`` (``time.perf_counter()``)."""
    if progress is not None:
        progress(
            {
                "iteration": iteration,
                "seconds": time.perf_counter() - start,
                "information": master.value,
                "columns": len(master.columns),
                "upper_bound": upper_bound,
            }
        )


def certified_result(
    p: np.ndarray,
    cone: GammaCone,
    master: Master,
    *,
    start: float,
    iterations: int,
    status: str,
    upper_bound: float | None,
    bound_kind: str | None,
    history: list[tuple[float, float]],
    stages: list[dict[str, Any]],
    rung_duals: list[np.ndarray] | None = None,
) -> CGResult:
    """The result of a solve that started at ``start`` (``time.perf_counter()``): the master's last
    solution, certified to lie in ``cone`` ([LZG24, Thm 2]; :meth:`GammaCone.certify`), and the
    solver's record."""
    q = cone.certify(master.mechanism())
    return CGResult(
        q,
        mutual_information(q, p),
        master.value,
        iterations,
        len(master.columns),
        time.perf_counter() - start,
        status == "converged",
        status,
        upper_bound,
        bound_kind,
        history,
        stages,
        master.duals.copy(),
        list(rung_duals or []),
    )
