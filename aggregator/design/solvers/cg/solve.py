"""Column generation for PolyOpt ([LZG24, Thm 3]): the solver loop and its bound.

See :mod:`rldp.aggregator.design.solvers.cg` for the method. This module runs it: seeds the
master (:mod:`.master`), alternates pricing rounds (:mod:`.pricing`, :mod:`.blocks`) and
master solves until convergence or the time budget, optionally after a coarse stage
(:mod:`.coarsen`), and proves the Lagrangian upper bound at the end. Its result is a
:class:`.result.CGResult`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...primitives.cone import GammaCone
from ...primitives.errors import CGError, SolverError
from .blocks import BlockPricer
from .coarsen import COARSE_SHARE, RUNG_SHARE, coarse_aggregation
from .master import Master, seed_columns, solve_seeds
from .pricing import Pricer, price_round
from .proof import Prover
from .result import CGResult, Progress, certified_result, check_inputs, report_progress

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


def coarse_stage(
    p: np.ndarray,
    lower: np.ndarray,
    epsilon: float,
    time_budget: float,
    extra_rows: list[np.ndarray],
    stages: list[dict[str, Any]],
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

    ``distribution`` is P̂ (|S|, |U|), ``lower_bounds`` L ([LZG24, Prop 1]), ``epsilon`` the level the rows must
    satisfy (callers pass ε(1 − DESIGN_MARGIN)). ``extra_rows`` are candidate rows (e.g. of IR, CR) used as seed
    columns when inside Γ (or after mixing them inside). ``bound_epsilon`` (default ``epsilon``) is the level at
    which the upper bound on the PolyOpt optimum is proved (the Lagrangian bound of :class:`.bound.SectionBound`, at
    the coarse rungs' lifted duals, at a λ searched from them and at the master's final duals; 15 % of the budget is
    kept for it, :data:`LADDER_BOUND_SHARE` after a coarse ladder; see :class:`.proof.Prover`). ``progress``
    receives a dict after every round (iteration, seconds, information, columns, upper_bound). Deterministic for a
    given ``seed`` up to timing (the budget decides how many rounds run).

    ``coarsen``: on alphabets above :data:`COARSEN_MIN_SYMBOLS` symbols, first solve the aggregated problem of
    :func:`coarse_aggregation` (at most :data:`COARSE_SHARE` of the budget; itself coarse-to-fine while large: the
    ladder) and seed the master with its rows expanded to the fine alphabet (they lie in Γ, see
    :class:`Aggregation`); ``stages`` records every rung, coarsest first. ``self_pairs`` and ``prove_bound`` are used
    by those inner solves (the s₁ = s₂ row on merged blocks; no bound needed).

    Returns the certified mechanism of the last master solution (anytime: also when the budget ends first,
    ``status`` "time_budget").
    """
    start = time.perf_counter()
    p, cone = _problem(distribution, lower_bounds, epsilon, same_sensitive, self_pairs, time_budget)
    deadline = start + float(time_budget)
    rng = np.random.default_rng(seed)
    extra_rows = [np.atleast_2d(np.asarray(r, dtype=float)) for r in extra_rows]
    stages: list[dict[str, Any]] = []
    lifted: list[np.ndarray] = []
    if coarsen:
        tuning = {"progress": progress, "seed": seed, "starts_per_round": starts_per_round, "use_blocks": use_blocks}
        lifted = coarse_stage(
            p, cone.lower, epsilon, time_budget, extra_rows, stages, same_sensitive, self_pairs, **tuning
        )
    seeds_until = start + 0.4 * float(time_budget) if lifted else deadline  # see _seeded_master
    master, pricing = _seeded_master(p, cone, rng, extra_rows, seeds_until, deadline, use_blocks, starts_per_round)
    bound_eps = epsilon if bound_epsilon is None else float(bound_epsilon)
    # The bound is proved at bound_epsilon (the level the caller claims), so it has its own cone.
    prover = Prover(cone.lower, bound_eps, same_sensitive, p.reshape(-1), deadline)
    run = _Run(start, deadline, progress, prover, [(time.perf_counter() - start, master.value)], stages, lifted)
    loop_deadline = _bound_first_phase(run, master, pricing, time_budget, prove_bound)
    _generate_columns(run, master, pricing, loop_deadline, max_iterations)
    return _finish(run, p, cone, master, same_sensitive)


@dataclass
class _Run:
    """What a solve carries between its phases: its clock, its prover, its record and its status."""

    start: float  # time.perf_counter() at the start
    deadline: float
    progress: Progress | None
    prover: Prover
    history: list[tuple[float, float]]  # (seconds, lp value)
    stages: list[dict[str, Any]]  # the coarse rungs' records
    lifted: list[np.ndarray]  # the coarse rungs' duals, lifted to the fine cells
    pending: list[np.ndarray] = field(default_factory=list)  # λ still to bound
    prove: bool = False  # prove the bound at the end
    iterations: int = 0
    status: str = "time_budget"

    def report(self, master: Master) -> None:
        """Send the progress callback (if any) the state of the solve."""
        report_progress(
            self.progress, master, iteration=self.iterations, start=self.start, upper_bound=self.prover.upper
        )


@dataclass
class _Pricing:
    """The pricing step's tools: the cone, the vertex and block pricers, the RNG and the starts per round."""

    cone: GammaCone
    pricer: Pricer
    blocks: BlockPricer | None
    rng: np.random.Generator
    starts_per_round: int

    def round(self, master: Master, deadline: float, center: np.ndarray | None) -> tuple[int, np.ndarray]:
        """Columns added by one pricing round, and the smoothed prices it searched at (the next centre)."""
        # Wentges-style smoothing: search at prices between the previous search point and
        # the master's duals (damps the oscillation of the duals; ~15 % more utility at 240
        # symbols in 60 s); a column enters only if it improves at the master's own duals.
        center = master.duals if center is None else center
        smooth = SMOOTHING * center + (1 - SMOOTHING) * master.duals
        new = price_round(
            self.pricer, master, master.duals, self.rng, deadline, self.starts_per_round, self.blocks, price_at=smooth
        )
        added = master.add(self.cone.repair(new)) if len(new) else 0
        if added == 0:  # search harder, at the master's duals, before calling it converged
            new = price_round(
                self.pricer,
                master,
                master.duals,
                self.rng,
                deadline,
                self.starts_per_round,
                self.blocks,
                intensive=True,
            )
            added = master.add(self.cone.repair(new)) if len(new) else 0
        return added, smooth


def _problem(
    distribution: np.ndarray,
    lower_bounds: np.ndarray,
    epsilon: float,
    same_sensitive: bool,
    self_pairs: np.ndarray | None,
    time_budget: float,
) -> tuple[np.ndarray, GammaCone]:
    """P̂ checked, and the cone Γ of the rows at level ``epsilon`` for its lower bounds."""
    p = check_inputs(distribution, time_budget)
    cone = GammaCone(lower_bounds, epsilon, same_sensitive, self_pairs)
    if cone.lower.shape != p.shape:
        raise CGError(f"lower bounds have shape {cone.lower.shape}; P̂ has {p.shape}")
    return p, cone


def _seeded_master(
    p: np.ndarray,
    cone: GammaCone,
    rng: np.random.Generator,
    extra_rows: list[np.ndarray],
    seeds_until: float,
    deadline: float,
    use_blocks: bool,
    starts_per_round: int,
) -> tuple[Master, _Pricing]:
    """The master on its seed columns, solved, and the pricing tools (block pricing when usable).

    After a coarse ladder its rows are the seeds that matter; the level searches of GRR, SRR and
    robust GRR (~1 s each at 1,000 symbols) only run until ``seeds_until`` (while 60 % of the budget
    is left)."""
    pf = p.reshape(-1)
    master = Master(p)
    master.add(seed_columns(cone, extra_rows, seeds_until))
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
    return solve_seeds(master, deadline), _Pricing(cone, pricer, blocks, rng, starts_per_round)


def _bound_first_phase(run: _Run, master: Master, pricing: _Pricing, time_budget: float, prove_bound: bool) -> float:
    """The share of the budget kept for the bound, spent first at the coarse rungs' lifted duals after a
    ladder; returns the deadline of the pricing loop (the rest of the reserve is for the final bound)."""
    # Keep 15 % of the budget for the bound when there is one to prove, LADDER_BOUND_SHARE after a
    # coarse ladder (there the fine stage gains < 1 % while more pieces tighten the bound). After a
    # ladder most of it is spent first, at the rungs' lifted duals (so progress shows a bound while
    # the fine stage runs); the rest at the end, at the fine master's duals.
    run.prove = prove_bound and pricing.blocks is not None
    share = (LADDER_BOUND_SHARE if run.lifted else 0.15) if run.prove else 0.0
    reserve = share * float(time_budget)
    run.pending = [*run.lifted]
    ladder_interrupted = bool(run.stages) and run.stages[-1]["status"] == INTERRUPTED
    if reserve and run.lifted and not ladder_interrupted:
        reserve = _bound_at_rungs(run, master, reserve)
    if run.status == INTERRUPTED or ladder_interrupted:  # Ctrl-C: stop at the seeds
        run.status, run.prove = INTERRUPTED, False
    return run.deadline - reserve


def _bound_at_rungs(run: _Run, master: Master, reserve: float) -> float:
    """The bound at the coarse rungs' lifted duals (and a λ searched from them): the reserve left."""
    # Any λ gives a valid Lagrangian bound: the coarse problems' (near-converged) duals,
    # lifted, give a far better one than the (degenerate, unconverged) fine master's:
    # 0.24 vs 5.4 NMI on Adult occupation×education at ε = 1. All rungs in one sweep.
    began = time.perf_counter()
    end = min(began + FIRST_PHASE * reserve, run.deadline)
    # The pieces are planned for the time left after the search (a sweep that does not end in
    # time proves nothing). A search for better λ from the rungs' on a coarse grid first, then
    # one sweep and the refinement at the best of them all.
    prover, pending = run.prover, run.pending
    try:  # Ctrl-C here: keep the solved seeds (certified as always), like Ctrl-C in the pricing loop
        prover.build(end - SEARCH_SHARE * (end - began), planned=len(pending) + 2)
        found = prover.search(pending, began + SEARCH_SHARE * (end - began), master.value)
        prover.update([*pending, *([] if found is None else [found])], end, master.value, planned=len(pending) + 2)
    except KeyboardInterrupt:
        run.status = INTERRUPTED
    if prover.upper is not None:  # else they are tried again at the end
        run.pending = []
    return max(reserve - (time.perf_counter() - began), 0.0)


def _generate_columns(run: _Run, master: Master, pricing: _Pricing, loop_deadline: float, max_iterations: int) -> None:
    """Alternate pricing rounds and master solves until convergence, ``max_iterations`` rounds or
    ``loop_deadline``; the stop reason is left in ``run.status`` (unchanged if already interrupted)."""
    center = None
    max_columns = 20 * pricing.cone.size + 2000  # bounds memory; old non-basic columns only slow the master
    try:
        if run.status != INTERRUPTED:
            run.report(master)
        while run.status != INTERRUPTED:
            if time.perf_counter() > loop_deadline:
                run.status = "time_budget"
                break
            if run.iterations >= max_iterations:
                run.status = "iteration_limit"
                break
            run.iterations += 1
            added, center = pricing.round(master, loop_deadline, center)
            if added == 0:
                run.status = "time_budget" if time.perf_counter() > loop_deadline else "converged"
                break
            if not master.solve(max(loop_deadline - time.perf_counter(), 1e-3)):
                run.status = "time_budget"
                break
            run.history.append((time.perf_counter() - run.start, master.value))
            master.purge(max_columns)
            run.report(master)
    except KeyboardInterrupt:
        # Ctrl-C: keep the last solved master (every column is in Γ, so it certifies as always);
        # the caller sees status "interrupted". No bound is proved: the user asked to stop.
        run.status, run.prove = INTERRUPTED, False


def _finish(run: _Run, p: np.ndarray, cone: GammaCone, master: Master, same_sensitive: bool) -> CGResult:
    """The final bound (the rungs not bounded yet and the master's final duals), the certified result,
    and a last progress report (skipped if interrupted)."""
    prover = run.prover
    if run.prove:
        try:  # Ctrl-C keeps the master
            prover.update([*run.pending, master.duals], run.deadline, master.value, planned=len(run.pending) + 1)
        except KeyboardInterrupt:
            run.status = INTERRUPTED
    result = certified_result(
        p,
        cone,
        master,
        start=run.start,
        iterations=run.iterations,
        status=run.status,
        upper_bound=prover.upper,
        bound_kind=prover.kind(same_sensitive) if prover.upper is not None else None,
        history=run.history,
        stages=run.stages,
        rung_duals=run.lifted,
    )
    if run.status != INTERRUPTED:
        try:
            run.report(master)
        except KeyboardInterrupt:
            result.status, result.converged = INTERRUPTED, False
    return result
