"""Column generation for PolyOpt ([LZG24, Thm 3]): the solver loop, its result and its bound.

See :mod:`rldp.aggregator.design.solvers.cg` for the method. This module runs it: seeds the
master (:mod:`.master`), alternates pricing rounds (:mod:`.pricing`, :mod:`.blocks`) and
master solves until convergence or the time budget, optionally after a coarse stage
(:mod:`.coarsen`), and proves the Lagrangian upper bound at the end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rldp.shared.information import mutual_information
from rldp.shared.probability import as_distribution

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError, SolverError
from .blocks import BlockPricer
from .coarsen import COARSE_SHARE, RUNG_SHARE, coarse_aggregation
from .master import Master, seed_columns, solve_seeds
from .pricing import Pricer, price_round
from .proof import Prover

__all__ = [
    "CGResult",
    "Progress",
    "solve_polyopt_cg",
    "check_inputs",
    "coarse_stage",
    "certified_result",
    "report_progress",
    "SMOOTHING",
    "INTERRUPTED",
    "LADDER_BOUND_SHARE",
    "FIRST_PHASE",
    "SEARCH_SHARE",
]

Progress = Callable[[dict], None]

# Weight of the previous search prices in the smoothed pricing point.
SMOOTHING = 0.6
# Share of the budget kept for the bound after a coarse ladder (0.15 without one). The rungs
# beyond the coarsest and the fine stage added < 1 % to the certified design on Adult (0.1310
# NMI at every rung of occupation×education at ε = 1), while each extra piece of the bound
# tightens it; most of it is spent before the fine stage, at the rungs' lifted duals.
LADDER_BOUND_SHARE = 0.5
# Of that, the share spent before the fine stage (the rest proves the bound at the fine master's
# final duals, which after a ladder are rarely better: the fine master is degenerate).
FIRST_PHASE = 0.9
# Of the first phase, at most this share for the search over λ (cg.proof); the pieces are planned
# for the rest. Occupation×education at ε = 2 (60 s): bound 0.3314 NMI at 0.3, 0.3291 at 0.5,
# 0.3301 at 0.65.
SEARCH_SHARE = 0.5
# The status of a solve stopped by KeyboardInterrupt (Ctrl-C): its result is the last solved master.
INTERRUPTED = "interrupted"


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
    stages: list[dict] = field(default_factory=list)  # coarse stages run first (see :class:`.coarsen.Aggregation`)
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
    stages: list[dict],
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


def coarse_stage(
    p: np.ndarray,
    lower: np.ndarray,
    epsilon: float,
    time_budget: float,
    extra_rows: list[np.ndarray],
    stages: list[dict],
    same_sensitive: bool = False,
    self_pairs: np.ndarray | None = None,
    **options: Any,
) -> list[np.ndarray]:
    """Solve the aggregated problem (:class:`.coarsen.Aggregation`) with COARSE_SHARE of the budget, if the
    alphabet is large enough to have one; that solve is itself coarse-to-fine while its problem
    is still large (the ladder of :func:`.coarsen.coarse_aggregation`), and its rows seed it.
    The expanded rows are appended to ``extra_rows`` (seeds of the fine master) and the record
    of every rung (coarsest first) to ``stages``; returns the duals of every rung lifted to the
    fine cells, coarsest first (any λ gives the fine problem a Lagrangian bound; the coarsest
    rung is usually the converged one), or []. The stages only seed the fine problem, so a
    failure is skipped."""
    agg = coarse_aggregation(p)
    if agg is None or (agg.sensitive.size, agg.released.size) != p.shape or agg.shape == p.shape:
        return []
    pc, lc, selfp = agg.problem(p, lower, same_sensitive, self_pairs)
    try:
        sub = solve_polyopt_cg(
            pc,
            lc,
            epsilon,
            same_sensitive=same_sensitive,
            self_pairs=selfp,
            time_budget=(COARSE_SHARE if self_pairs is None else RUNG_SHARE) * float(time_budget),
            coarsen=True,
            prove_bound=False,
            **options,
        )
    except SolverError:  # the coarse stage only seeds the fine one
        return []
    extra_rows.append(agg.expand(sub.matrix))
    stages.extend(sub.stages)
    stages.append(
        {
            "shape": list(agg.shape),
            "information": sub.information,
            "status": sub.status,
            "iterations": sub.iterations,
            "seconds": sub.seconds,
        }
    )
    rungs = [*sub.rung_duals, *([] if sub.duals is None else [sub.duals])]
    return [agg.lift_duals(d, p) for d in rungs]


def solve_polyopt_cg(
    distribution: np.ndarray,
    lower_bounds: np.ndarray,
    epsilon: float,
    *,
    same_sensitive: bool = False,
    time_budget: float = 60.0,
    extra_rows: Iterable[np.ndarray] = (),
    bound_epsilon: float | None = None,
    max_iterations: int = 100_000,
    progress: Progress | None = None,
    seed: int = 0,
    starts_per_round: int = 8,
    use_blocks: bool = True,
    coarsen: bool = True,
    self_pairs: np.ndarray | None = None,
    prove_bound: bool = True,
) -> CGResult:
    """PolyOpt ([LZG24, Thm 3]) by column generation within ``time_budget`` seconds.

    ``distribution`` is P̂ (|S|, |U|), ``lower_bounds`` L ([LZG24, Prop 1]), ``epsilon`` the level the
    rows must satisfy (callers pass ε(1 − DESIGN_MARGIN)). ``extra_rows`` are candidate
    rows (e.g. of IR, CR) used as seed columns when inside Γ (or after mixing them inside).
    ``bound_epsilon`` (default ``epsilon``) is the level at which the upper bound on the
    PolyOpt optimum is proved (the Lagrangian bound of :class:`.bound.SectionBound`, at the
    coarse rungs' lifted duals, at a λ searched from them and at the master's final duals;
    15 % of the budget is kept for it, :data:`LADDER_BOUND_SHARE` after a coarse ladder; see
    :class:`.proof.Prover`). ``progress`` receives a dict after
    every round (iteration, seconds, information, columns, upper_bound). Deterministic for
    a given ``seed`` up to timing (the budget decides how many rounds run).

    ``coarsen``: on alphabets above :data:`COARSEN_MIN_SYMBOLS` symbols, first solve the
    aggregated problem of :func:`coarse_aggregation` (at most :data:`COARSE_SHARE` of the
    budget; itself coarse-to-fine while large: the ladder) and seed the master with its rows
    expanded to the fine alphabet (they lie in Γ, see :class:`Aggregation`); ``stages``
    records every rung, coarsest first. ``self_pairs`` and ``prove_bound`` are used by those
    inner solves (the s₁ = s₂ row on merged blocks; no bound needed).

    Returns the certified mechanism of the last master solution (anytime: also when the
    budget ends first, ``status`` "time_budget").
    """
    start = time.perf_counter()
    p = check_inputs(distribution, time_budget)
    deadline = start + float(time_budget)
    cone = GammaCone(lower_bounds, epsilon, same_sensitive, self_pairs)
    if cone.lower.shape != p.shape:
        raise CGError(f"lower bounds have shape {cone.lower.shape}; P̂ has {p.shape}")
    pf = p.reshape(-1)
    rng = np.random.default_rng(seed)
    extra_rows = [np.atleast_2d(np.asarray(r, dtype=float)) for r in extra_rows]
    stages: list[dict] = []
    lifted: list[np.ndarray] = []
    if coarsen:
        lifted = coarse_stage(
            p,
            cone.lower,
            epsilon,
            time_budget,
            extra_rows,
            stages,
            same_sensitive=same_sensitive,
            self_pairs=self_pairs,
            progress=progress,
            seed=seed,
            starts_per_round=starts_per_round,
            use_blocks=use_blocks,
        )
    master = Master(p)
    # After a coarse ladder its rows are the seeds that matter; the level searches of GRR, SRR and
    # robust GRR (~1 s each at 1,000 symbols) only run while 60 % of the budget is left.
    master.add(seed_columns(cone, extra_rows, start + 0.4 * float(time_budget) if lifted else deadline))
    pricer = Pricer(cone, pf, rng)
    blocks = BlockPricer(cone, pf) if use_blocks and BlockPricer.usable(cone) else None
    if blocks is None:
        # Per-coordinate vertices (the Γ-maximisers of each z_x) as extra seeds. With block
        # pricing they are left to the intensive rounds: as seeds they made the master
        # plateau longer on Adult native-country × relationship.
        eye = np.eye(cone.size)
        coord = []
        for x in range(cone.size):
            if time.perf_counter() > deadline:
                break
            v = pricer.vertex(eye[x], deadline)
            if v is not None:
                coord.append(v)
        if coord:
            master.add(cone.repair(np.array(coord)))
    master = solve_seeds(master, deadline)

    bound_eps = epsilon if bound_epsilon is None else float(bound_epsilon)
    # The bound is proved at bound_epsilon (the level the caller claims), so it has its own cone.
    prover = Prover(cone.lower, bound_eps, same_sensitive, pf, deadline)
    history = [(time.perf_counter() - start, master.value)]
    iterations, status = 0, "time_budget"
    pending = [*lifted]  # λ still to bound: the rungs' lifted duals, coarsest first

    def report() -> None:
        report_progress(progress, master, iteration=iterations, start=start, upper_bound=prover.upper)

    # Keep 15 % of the budget for the bound when there is one to prove, LADDER_BOUND_SHARE after a
    # coarse ladder (there the fine stage gains < 1 % while more pieces tighten the bound). After a
    # ladder most of it is spent first, at the rungs' lifted duals (so progress shows a bound while
    # the fine stage runs); the rest at the end, at the fine master's duals.
    share = (LADDER_BOUND_SHARE if lifted else 0.15) if blocks is not None and prove_bound else 0.0
    reserve = share * float(time_budget)
    if reserve and lifted and not (stages and stages[-1]["status"] == INTERRUPTED):
        # Any λ gives a valid Lagrangian bound: the coarse problems' (near-converged) duals,
        # lifted, give a far better one than the (degenerate, unconverged) fine master's:
        # 0.24 vs 5.4 NMI on Adult occupation×education at ε = 1. All rungs in one sweep.
        began = time.perf_counter()
        end = min(began + FIRST_PHASE * reserve, deadline)
        # The pieces are planned for the time left after the search (a sweep that does not end in
        # time proves nothing). A search for better λ from the rungs' on a coarse grid first, then
        # one sweep and the refinement at the best of them all.
        try:  # Ctrl-C here: keep the solved seeds (certified as always), like Ctrl-C in the loop below
            prover.build(end - SEARCH_SHARE * (end - began), planned=len(pending) + 2)
            found = prover.search(pending, began + SEARCH_SHARE * (end - began), master.value)
            prover.update([*pending, *([] if found is None else [found])], end, master.value, planned=len(pending) + 2)
        except KeyboardInterrupt:
            status = INTERRUPTED
        if prover.upper is not None:  # else they are tried again at the end
            pending = []
        reserve = max(reserve - (time.perf_counter() - began), 0.0)
    loop_deadline = deadline - reserve
    center = None
    max_columns = 20 * cone.size + 2000  # bounds memory; old non-basic columns only slow the master
    if status == INTERRUPTED or (stages and stages[-1]["status"] == INTERRUPTED):  # Ctrl-C: stop at the seeds
        status, prove_bound = INTERRUPTED, False
    try:
        if status != INTERRUPTED:
            report()
        while status != INTERRUPTED:
            if time.perf_counter() > loop_deadline:
                status = "time_budget"
                break
            if iterations >= max_iterations:
                status = "iteration_limit"
                break
            iterations += 1
            # Wentges-style smoothing: search at prices between the previous search point and
            # the master's duals (damps the oscillation of the duals; ~15 % more utility at 240
            # symbols in 60 s); a column enters only if it improves at the master's own duals.
            center = master.duals if center is None else center
            smooth = SMOOTHING * center + (1 - SMOOTHING) * master.duals
            new = price_round(
                pricer, master, master.duals, rng, loop_deadline, starts_per_round, blocks, price_at=smooth
            )
            center = smooth
            added = master.add(cone.repair(new)) if len(new) else 0
            if added == 0:  # search harder, at the master's duals, before calling it converged
                new = price_round(
                    pricer, master, master.duals, rng, loop_deadline, starts_per_round, blocks, intensive=True
                )
                added = master.add(cone.repair(new)) if len(new) else 0
            if added == 0:
                status = "time_budget" if time.perf_counter() > loop_deadline else "converged"
                break
            if not master.solve(max(loop_deadline - time.perf_counter(), 1e-3)):
                status = "time_budget"
                break
            history.append((time.perf_counter() - start, master.value))
            master.purge(max_columns)
            report()
    except KeyboardInterrupt:
        # Ctrl-C: keep the last solved master (every column is in Γ, so it certifies as always);
        # the caller sees status "interrupted". No bound is proved: the user asked to stop.
        status, prove_bound = INTERRUPTED, False
    if prove_bound and blocks is not None:
        try:  # Rungs not bounded in the first phase, and the master's final duals; Ctrl-C keeps the master
            prover.update([*pending, master.duals], deadline, master.value, planned=len(pending) + 1)
        except KeyboardInterrupt:
            status = INTERRUPTED

    result = certified_result(
        p,
        cone,
        master,
        start=start,
        iterations=iterations,
        status=status,
        upper_bound=prover.upper,
        bound_kind=prover.kind(same_sensitive) if prover.upper is not None else None,
        history=history,
        stages=stages,
        rung_duals=lifted,
    )
    if status != INTERRUPTED:
        try:
            report()
        except KeyboardInterrupt:
            result.status, result.converged = INTERRUPTED, False
    return result
