"""The papers' experiments, reproduced: ``rldp experiment NAME``.

Seed 000 (Lopuhaä-Zwakenberg & Goseling, *Mechanisms for Robust Local Differential
Privacy*, Entropy 2024), Section 8:

* ``fig2``   — NMI vs ε on four Adult pairs (P̂ from adult.data, n = 32,561, β = 0.05, α = 2).
* ``fig3``   — the same on synthetic data: P* from the Jeffreys prior Dirichlet(½), P̂ from
  n = 32,561 draws, NMI averaged over draws (Sec. 8.2).
* ``table2`` — NMI at ε = 1.5 for β ∈ {0.1, 0.01, 0.001} on synthetic data (Sec. 8.5), printed
  next to the paper's Table 2.
* ``fig4``   — the realised ε* (Sec. 8.3) of NR and PolyOpt under P*, 25–75 % band.
* ``fig5``   — (I_P̂ − I_P*)/I_P̂ at ε = 1.5 (Sec. 8.4), box = 25–75 %, whiskers = min/max.

Seed 001 (the ISIT 2021 version), Section V:

* ``isit-fig2`` — PolyOpt, GRR, IR, CR on |S| = |U| = 3, n = 1000, ε ∈ [0.2, 8], 200 draws.
* ``isit-fig3`` — GRR, IR, CR on |S| = |U| = 5 for several n.

Every experiment also draws the methods this project adds (``polyopt`` — Γ without the
s₁ = s₂ rows —, ``ir-calibrated``, ``cr``, ``cr-calibrated``, and whatever else
:data:`rldp.aggregator.design.METHODS` offers) as extra lines. Designs that are
infeasible (exact PolyOpt/NR above 12 symbols, as in the paper) or that fail numerically
are left out and listed in the run's notes; nothing is silently dropped.

Outputs (``write_outputs``): ``NAME.csv`` (tidy: one row per experiment, panel, method,
ε, β, statistic), ``NAME.png`` and ``NAME.json`` (settings, notes, run time) in the
output folder. Synthetic draws are seeded from (seed, |S|, |U|, n, draw index), so the
results do not depend on the number of worker processes, and the experiments on the
same shape and n share their draws (Table 2, Fig. 4 and Fig. 5 see the same P*).
"""

from __future__ import annotations

import csv
import json
import math
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from rldp import __version__
from rldp.shared.audit import AUDIT_TOLERANCE, realised_epsilon, rldp_epsilon
from rldp.shared.uncertainty import UncertaintySet, confidence_radius, renyi_divergence
from rldp.shared.utility import entropy, mutual_information

__all__ = [
    "COLUMNS", "Config", "Result", "Experiment", "EXPERIMENTS", "PAPER_TABLE2",
    "synthetic_draw", "run_experiment", "write_outputs", "load_result", "report", "format_table",
]

# ---------------------------------------------------------------------------
# Constants of the papers' set-up
# ---------------------------------------------------------------------------
ORDER = 2.0  # Rényi order α: seed 000 Sec. 8 uses the χ² confidence set, i.e. α = 2
BETA = 0.05  # significance level of the confidence set (both papers)
N_ADULT = 32_561  # rows of adult.data: the public sample size of seed 000 Sec. 8
ADULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("sex", "race"), ("race", "sex"), ("occupation", "education"), ("native-country", "relationship"))
PAPER_SHAPES: tuple[tuple[int, int], ...] = ((2, 5), (5, 2), (15, 16), (42, 6))
JEFFREYS = 0.5  # Dirichlet parameter of the Jeffreys prior on the simplex

# The methods each paper plotted, in its legend order; everything else in METHODS is "ours".
PAPER_000 = ("srr", "polyopt-paper", "ir", "grr", "nr")
PAPER_001 = ("polyopt-paper", "grr", "ir", "cr")
# Methods whose cost is known; quick runs (CI) use only these so that a new, possibly slow
# designer added to METHODS cannot blow the CI budget.
KNOWN_METHODS = ("srr", "polyopt-paper", "ir", "grr", "nr", "cr", "polyopt", "ir-calibrated", "cr-calibrated")

# Seed 000, Table 2: NMI at ε = 1.5, averages over 100 synthetic draws; columns β = 0.1, 0.01, 0.001.
# The paper's "PolyOpt" is Definition 3 as printed, i.e. our ``polyopt-paper``.
TABLE2_BETAS = (0.1, 0.01, 0.001)
PAPER_TABLE2: dict[tuple[int, int], dict[str, tuple[float, float, float]]] = {
    (2, 5): {"srr": (0.231, 0.231, 0.231), "polyopt-paper": (0.727, 0.723, 0.719), "ir": (0.512, 0.501, 0.492)},
    (5, 2): {"srr": (0.126, 0.126, 0.126), "polyopt-paper": (0.374, 0.372, 0.370), "ir": (0.169, 0.165, 0.162)},
    (15, 16): {"srr": (0.009, 0.009, 0.009), "ir": (0.055, 0.053, 0.051)},
    (42, 6): {"srr": (0.005, 0.005, 0.005), "ir": (0.052, 0.052, 0.052)},
}
# Seed 000 Sec. 8.3: "at ε = 0.075 ... the 75%-quantile of ε* of NR was 0.3897".
PAPER_FIG4_NR_Q75_AT_0075 = 0.3897

# Tidy CSV columns.
COLUMNS = ("experiment", "panel", "n_sensitive", "n_released", "n", "beta", "method", "epsilon",
           "statistic", "value", "draws")
_GROUP = ("panel", "n_sensitive", "n_released", "n", "beta", "method", "epsilon")


# ---------------------------------------------------------------------------
# Configuration and results
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """How to run an experiment. ``None`` fields take the experiment's (quick or full) default."""

    quick: bool = False
    seed: int = 0
    workers: int = 1
    draws: int | None = None
    epsilons: tuple[float, ...] | None = None
    methods: tuple[str, ...] | None = None
    progress: bool | None = None  # None: show bars when stderr is a terminal
    polyopt_solver: str | None = None  # "exact", "cg" or "auto" for PolyOpt/NR; None: the experiment's default
    time_budget: float = 30.0  # seconds per column-generation design

    def __post_init__(self) -> None:
        if int(self.seed) != self.seed or self.seed < 0:
            raise ValueError(f"seed must be an integer ≥ 0; got {self.seed!r}")
        if int(self.workers) != self.workers or self.workers < 1:
            raise ValueError(f"workers must be an integer ≥ 1; got {self.workers!r}")
        if self.draws is not None and (int(self.draws) != self.draws or self.draws < 1):
            raise ValueError(f"draws must be an integer ≥ 1; got {self.draws!r}")
        if self.epsilons is not None:
            if not self.epsilons or any(not (math.isfinite(e) and e > 0) for e in self.epsilons):
                raise ValueError(f"epsilons must be finite numbers > 0 (nats); got {self.epsilons!r}")
        if self.polyopt_solver is not None and self.polyopt_solver not in POLYOPT_SOLVERS:
            raise ValueError(f"polyopt_solver must be one of {', '.join(POLYOPT_SOLVERS)}; got {self.polyopt_solver!r}")
        if not (isinstance(self.time_budget, (int, float)) and math.isfinite(self.time_budget)
                and self.time_budget > 0):
            raise ValueError(f"time_budget must be a number of seconds > 0; got {self.time_budget!r}")
        if self.methods is not None:
            from rldp.aggregator.design import METHODS

            unknown = [m for m in self.methods if m not in METHODS]
            if unknown or not self.methods:
                raise ValueError(f"unknown method(s) {', '.join(unknown) or '(none given)'}; "
                                 f"choose from: {', '.join(METHODS)}")


@dataclass
class Result:
    """What an experiment produced: tidy summary rows, per-draw records and notes."""

    name: str
    rows: list[dict[str, Any]]
    records: list[dict[str, Any]]
    panels: list[str]
    panel_titles: dict[str, str]
    methods: list[str]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def value(self, panel: str, method: str, statistic: str, epsilon: float | None = None,
              beta: float | None = None) -> float | None:
        """The value of one summary row (None if absent)."""
        for r in self.rows:
            if (r["panel"] == panel and r["method"] == method and r["statistic"] == statistic
                    and (epsilon is None or _close(r["epsilon"], epsilon))
                    and (beta is None or _close(r["beta"], beta))):
                return float(r["value"])
        return None


def _close(a: Any, b: float) -> bool:
    return a not in (None, "") and math.isclose(float(a), b, rel_tol=1e-9, abs_tol=1e-12)


@dataclass(frozen=True)
class Experiment:
    name: str
    source: str
    summary: str
    run: Callable[[Config], Result]
    plot: Callable[[Result, Path], Path]
    table: Callable[[Result], str]
    # Default PolyOpt/NR solver: exact vertex enumeration as in the papers (omitted beyond
    # 12 symbols); fig2 (real data, few designs) adds column generation above 12 symbols.
    solver: str = "exact"


# ---------------------------------------------------------------------------
# Designing and evaluating (runs inside worker processes)
# ---------------------------------------------------------------------------
def synthetic_draw(seed: int, shape: tuple[int, int], n: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(P*, P̂) for synthetic draw ``index`` (seed 000 Sec. 8.2, seed 001 Sec. V).

    P* ~ Dirichlet(½, …, ½) over X = S × U (the Jeffreys prior), and P̂ is the empirical
    distribution of n i.i.d. samples from P*. Both have shape (|S|, |U|). The generator is
    seeded by (seed, |S|, |U|, n, index), so a draw is the same in every experiment and
    for any number of worker processes.
    """
    a1, a2 = shape
    rng = np.random.default_rng([int(seed), int(a1), int(a2), int(n), int(index)])
    p_star = rng.dirichlet(np.full(a1 * a2, JEFFREYS))
    p_hat = rng.multinomial(int(n), p_star) / float(n)
    return p_star.reshape(shape), p_hat.reshape(shape)


POLYOPT_SOLVERS = ("exact", "cg", "auto")


def _solver_options(method: str, n_symbols: int, solver: str, time_budget: float) -> dict[str, Any]:
    """design_matrix options for the vertex-based designers (PolyOpt, NR).

    ``exact``: vertex enumeration, the paper's method (infeasible beyond 12 symbols: those
    designs fail and are omitted, as in the paper); ``cg``: column generation with
    ``time_budget`` seconds (anytime, so the result depends on the machine's speed);
    ``auto``: exact up to 12 symbols, column generation above.
    """
    from rldp.aggregator.design import SOLVER_METHODS
    from rldp.aggregator.polyopt import EXACT_MAX_SYMBOLS

    if method not in SOLVER_METHODS:
        return {}
    if solver == "auto":
        solver = "exact" if n_symbols <= EXACT_MAX_SYMBOLS else "cg"
    return {"solver": "exact"} if solver == "exact" else {"solver": "cg", "time_budget": float(time_budget)}


def _design(method: str, uset: UncertaintySet, epsilon: float, options: Mapping[str, Any]
            ) -> tuple[np.ndarray | None, dict[str, Any], str | None, float]:
    """(matrix or None, parameters, failure reason or None, seconds). Failures of the
    solvers (exact PolyOpt beyond 12 symbols, an infeasible LP, cddlib's floating-point
    inconsistencies at large ε) are reported, not raised, so one bad point does not lose
    an hour of draws; anything else is a bug and propagates."""
    from rldp.aggregator.design import DesignError, design_matrix

    start = time.perf_counter()
    try:
        q, params = design_matrix(method, uset, epsilon, **options)
    except (RuntimeError, DesignError) as exc:
        return None, {}, _one_line(exc), time.perf_counter() - start
    return q, params, None, time.perf_counter() - start


def _one_line(exc: BaseException) -> str:
    text = " ".join((str(exc) or type(exc).__name__).split())
    return f"{type(exc).__name__}: {text}"


def _evaluate(p_hat: np.ndarray, n: int, betas: Sequence[float], methods: Sequence[str],
              epsilons: Sequence[float], base: Mapping[str, Any], *, p_star: np.ndarray | None = None,
              solver: str = "exact", time_budget: float = 30.0) -> list[dict[str, Any]]:
    """Design every (β, method, ε) for public estimate P̂ and measure it.

    Per design: the exact robust ε over the (1 − β) confidence set (``eps_audited``; for NR
    its leakage over the set it does not protect) — a certified design above its ε is
    recorded as failed —, I_P̂(X;Y) (``mi``, nats) and NMI = I_P̂/H_P̂ (``nmi``, seed 000
    Sec. 8); with P* given, I_P*(X;Y)
    (``mi_true``), I_P*/H_P* (``nmi_true``) and the realised ε* (``eps_star``, Sec. 8.3).
    PolyOpt and NR use ``solver`` (see :func:`_solver_options`); column generation also
    records its proven upper bound on I_P̂ as ``nmi_upper_bound``; each of their designs is
    warm-started with the method's design at the previous, smaller ε (its rows lie in Γ_ε).
    The uncertainty set is built once per β and shared by all methods.
    """
    from rldp.aggregator.design import NON_ROBUST as non_robust

    h_hat = entropy(p_hat)
    h_star = entropy(p_star) if p_star is not None else None
    out: list[dict[str, Any]] = []
    for beta in betas:
        uset = UncertaintySet.from_confidence(p_hat, int(n), float(beta), ORDER)
        for method in methods:
            previous: tuple[float, np.ndarray] | None = None
            for eps in epsilons:
                rec: dict[str, Any] = dict(base, beta=float(beta), method=method, epsilon=float(eps))
                options = _solver_options(method, p_hat.size, solver, time_budget)
                if options and previous is not None and previous[0] < eps:
                    # Γ_ε grows with ε: the design at the smaller ε seeds this one, so the
                    # curve never drops because an anytime solver stopped early.
                    options = dict(options, warm_start=previous[1])
                q, params, failure, seconds = _design(method, uset, float(eps), options)
                if q is not None:
                    previous = (float(eps), q)
                rec["seconds"] = seconds
                if options:
                    rec["solver"] = options["solver"]
                if q is None:
                    rec["failed"] = failure
                    out.append(rec)
                    continue
                # The exact robust audit (Theorem 1). A certified method whose design fails it
                # counts as a failed design: design() would refuse to publish it.
                rec["eps_audited"] = rldp_epsilon(q, uset)[0]
                if method not in non_robust and rec["eps_audited"] > eps + AUDIT_TOLERANCE:
                    rec["audit_excess"] = rec["eps_audited"] - eps
                    rec["failed"] = ("AuditFailed: the design's audited epsilon exceeds the claimed epsilon "
                                     f"by more than {AUDIT_TOLERANCE:g} nats (design() would refuse it)")
                    out.append(rec)
                    continue
                mi = mutual_information(q, p_hat)
                rec["mi"] = mi
                rec["nmi"] = mi / h_hat if h_hat > 0 else 0.0
                bound = params.get("upper_bound")
                if bound is not None and h_hat > 0:
                    rec["nmi_upper_bound"] = min(float(bound) / h_hat, 1.0)
                if p_star is not None:
                    mi_true = mutual_information(q, p_star)
                    rec["mi_true"] = mi_true
                    rec["nmi_true"] = mi_true / h_star if h_star else 0.0
                    rec["eps_star"] = realised_epsilon(q, p_star)
                out.append(rec)
    return out


def _adult_task(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return _evaluate(np.asarray(spec["p_hat"]), spec["n"], spec["betas"], spec["methods"], spec["epsilons"],
                     spec["base"], solver=spec["solver"], time_budget=spec["time_budget"])


def _synthetic_task(spec: dict[str, Any]) -> list[dict[str, Any]]:
    shape, n = tuple(spec["shape"]), int(spec["n"])
    p_star, p_hat = synthetic_draw(spec["seed"], shape, n, spec["draw"])
    base = dict(spec["base"], draw=int(spec["draw"]))
    if spec.get("membership"):
        # Is P* in the (1 − β) confidence set F = {P : D₂(P̂‖P) ≤ B} (seed 000 eq. 9)?
        radius = confidence_radius(n, BETA, p_hat.size, ORDER)
        div = float(renyi_divergence(p_hat.ravel(), p_star.ravel(), ORDER))
        base.update(divergence=div, radius=radius, in_F=bool(div <= radius),
                    empty_cells=int(np.count_nonzero(p_hat == 0)))
    return _evaluate(p_hat, n, spec["betas"], spec["methods"], spec["epsilons"], base,
                     p_star=p_star if spec.get("truth") else None,
                     solver=spec["solver"], time_budget=spec["time_budget"])


def _indexed(job: tuple[Callable[[dict], list[dict]], int, dict]) -> tuple[int, list[dict]]:
    fn, i, task = job
    return i, fn(task)


def _run_tasks(fn: Callable[[dict], list[dict]], tasks: list[dict], cfg: Config, desc: str) -> list[dict]:
    """Run tasks on cfg.workers processes and return their records in task order, with a
    tqdm bar on stderr. ``spawn`` workers inherit no state, so the records are the same as
    in one process; on an error or an interrupt the workers are terminated at once."""
    from tqdm import tqdm

    results: list[list[dict] | None] = [None] * len(tasks)
    disable = None if cfg.progress is None else not cfg.progress  # None: tqdm decides (TTY)
    with tqdm(total=len(tasks), desc=desc, unit="task", file=sys.stderr, disable=disable,
              mininterval=1.0, dynamic_ncols=True) as bar:
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


# ---------------------------------------------------------------------------
# Summaries (tidy rows)
# ---------------------------------------------------------------------------
def _quantile(values: np.ndarray, q: float) -> float:
    """Linear-interpolation quantile that treats +inf (ε* with a zero denominator) as
    larger than everything: a quantile touching an infinite neighbour is inf."""
    s = np.sort(np.asarray(values, dtype=float))
    pos = q * (len(s) - 1)
    lo, hi = int(math.floor(pos)), int(math.ceil(pos))
    if math.isinf(s[hi]) or math.isinf(s[lo]):
        return math.inf
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))


def _stat(values: np.ndarray, stat: str) -> float:
    if stat in ("mean", "value"):
        return float(np.mean(values))
    if stat == "sem":
        return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0
    if stat == "min":
        return float(np.min(values))
    if stat == "max":
        return float(np.max(values))
    q = {"q25": 0.25, "median": 0.5, "q75": 0.75}[stat]
    return _quantile(values, q)


def _row(name: str, key: Mapping[str, Any], statistic: str, value: float, draws: int | str) -> dict[str, Any]:
    row = {c: key.get(c, "") for c in COLUMNS}
    row.update(experiment=name, statistic=statistic, value=value, draws=draws)
    return row


def _summarise(name: str, records: Iterable[Mapping[str, Any]],
               fields: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Group records by (panel, shape, n, β, method, ε) and emit ``{field}_{stat}`` rows
    (``field`` itself for stat "value"), over the draws that were designed, plus a
    ``failures`` row counting the draws that could not be designed."""
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        groups[tuple(r.get(k) for k in _GROUP)].append(r)
    rows = []
    for key_t, recs in groups.items():
        key = dict(zip(_GROUP, key_t))
        ok = [r for r in recs if not r.get("failed")]
        if len(ok) < len(recs):
            rows.append(_row(name, key, "failures", len(recs) - len(ok), len(recs)))
        for fld, stats in fields.items():
            vals = np.array([r[fld] for r in ok if r.get(fld) is not None], dtype=float)
            if not vals.size:
                continue
            for stat in stats:
                rows.append(_row(name, key, fld if stat == "value" else f"{fld}_{stat}", _stat(vals, stat), len(vals)))
    return rows


def _failure_notes(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Human-readable notes on the designs that failed, one line per (method, reason):
    the panels where the method was omitted altogether, and the (panel, ε) points where
    only some draws failed."""
    fails: dict[tuple[str, str, str], dict[float, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[tuple[str, str, float], int] = defaultdict(int)
    for r in records:
        totals[(r["panel"], r["method"], r["epsilon"])] += 1
        if r.get("failed"):
            fails[(r["method"], r["failed"][:200], r["panel"])][r["epsilon"]] += 1
    omitted: dict[tuple[str, str], list[str]] = defaultdict(list)
    partial: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (method, reason, panel), by_eps in fails.items():
        eps_all = {e for (p, m, e) in totals if p == panel and m == method}
        if set(by_eps) == eps_all and all(by_eps[e] == totals[(panel, method, e)] for e in by_eps):
            omitted[(method, reason)].append(panel)
        else:
            where = ", ".join(f"ε={e:g} ({by_eps[e]} of {totals[(panel, method, e)]})" for e in sorted(by_eps))
            partial[(method, reason)].append(f"{panel} at {where}")
    notes = [f"{method} omitted on {', '.join(panels)}: {reason}" for (method, reason), panels in omitted.items()]
    notes += [f"{method} failed on {'; '.join(where)}: {reason}. Those points (* in the tables) average the "
              f"remaining draws "
              f"and are left out of the figure if more than 5 % of the draws failed" for (method, reason), where in partial.items()]
    return sorted(notes)


# ---------------------------------------------------------------------------
# Helpers shared by the experiments
# ---------------------------------------------------------------------------
def _methods(cfg: Config, paper: Sequence[str], only: Sequence[str] | None = None) -> list[str]:
    """The paper's methods first (legend order), then every other method in METHODS.
    ``only`` restricts the list (e.g. Fig. 4 compares NR and PolyOpt)."""
    from rldp.aggregator.design import METHODS

    if only is not None:
        pool = [m for m in only if m in METHODS and (cfg.methods is None or m in cfg.methods)]
        if not pool:
            raise ValueError(f"this experiment compares {', '.join(only)}; --methods selected none of them")
        return pool
    if cfg.methods is not None:
        return list(cfg.methods)
    pool = [m for m in METHODS if not cfg.quick or m in KNOWN_METHODS]
    return [m for m in paper if m in pool] + [m for m in pool if m not in paper]


# Rough relative design cost, to start the slow tasks first (better use of the workers).
_COST = {"polyopt": 8, "polyopt-paper": 8, "nr": 2, "ir-calibrated": 4, "cr-calibrated": 4}


def _shape_panel(shape: tuple[int, int]) -> str:
    return f"{shape[0]}x{shape[1]}"


def _shape_title(shape: tuple[int, int], n: int) -> str:
    return f"|S| = {shape[0]}, |U| = {shape[1]} (n = {n:,})"


def _draw_tasks(cfg: Config, shapes: Sequence[tuple[int, int]], ns: Sequence[int], draws: int,
                betas: Sequence[float], methods: Sequence[str], epsilons: Sequence[float],
                panel: Callable[[tuple[int, int], int], str], **flags: Any) -> list[dict[str, Any]]:
    tasks = []
    for shape in shapes:
        for n in ns:
            base = {"panel": panel(shape, n), "n_sensitive": shape[0], "n_released": shape[1], "n": int(n)}
            for d in range(draws):
                tasks.append(dict(flags, seed=cfg.seed, shape=shape, n=int(n), draw=d, betas=tuple(betas),
                                  methods=tuple(methods), epsilons=tuple(epsilons), base=base,
                                  solver=cfg.polyopt_solver, time_budget=cfg.time_budget))
    # Big shapes first: better load balance across workers.
    tasks.sort(key=lambda t: -t["shape"][0] * t["shape"][1])
    return tasks


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}f}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain fixed-width text table (first column left-aligned, the rest right-aligned)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def _pick(grid: Sequence[float], wanted: Sequence[float]) -> list[float]:
    chosen = [e for e in grid if any(math.isclose(e, w) for w in wanted)]
    return chosen or list(grid)[:: max(1, len(grid) // 5)]


def _curve_table(result: Result, statistic: str, shown: Sequence[float], label: str) -> str:
    grid = result.settings["epsilons"]
    eps_list = _pick(grid, shown)
    parts = []
    for panel in result.panels:
        rows = []
        for m in result.methods:
            cells = []
            for e in eps_list:
                v = result.value(panel, m, statistic, epsilon=e)
                fails = result.value(panel, m, "failures", epsilon=e)
                cells.append(_fmt(v) + ("*" if fails else ""))
            if any(not c.startswith("—") for c in cells):  # leave out methods omitted on this panel
                rows.append([m, *cells])
        parts.append(f"{result.panel_titles[panel]} — {label}\n"
                     + format_table(["method", *(f"ε={e:g}" for e in eps_list)], rows))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------
# Seed 000, Figure 2: the Adult pairs
# ---------------------------------------------------------------------------
FIG2_EPS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)
FIG2_EPS_QUICK = (0.5, 1.0, 2.0)


def run_fig2(cfg: Config) -> Result:
    from .datasets import load_adult
    from rldp.shared.records import Alphabet

    eps = cfg.epsilons or (FIG2_EPS_QUICK if cfg.quick else FIG2_EPS)
    pairs = ADULT_PAIRS[:2] if cfg.quick else ADULT_PAIRS
    methods = _methods(cfg, PAPER_000)
    table = load_adult("data")
    tasks, panels, titles = [], [], {}
    for s, u in pairs:
        alphabet = Alphabet.from_table(table, s, [u])
        p_hat = alphabet.empirical_distribution(table)
        panel = f"{s}/{u}"
        panels.append(panel)
        titles[panel] = f"S = {s} ({p_hat.shape[0]}), U = {u} ({p_hat.shape[1]})"
        base = {"panel": panel, "n_sensitive": p_hat.shape[0], "n_released": p_hat.shape[1], "n": table.n_rows}
        for m in methods:
            tasks.append({"p_hat": p_hat, "n": table.n_rows, "betas": (BETA,), "methods": (m,),
                          "epsilons": tuple(eps), "base": base,
                          "solver": cfg.polyopt_solver, "time_budget": cfg.time_budget})
    tasks.sort(key=lambda t: -t["p_hat"].size * _COST.get(t["methods"][0], 1))
    records = _run_tasks(_adult_task, tasks, cfg, "fig2")
    for panel in panels:
        if any(r.get("solver") == "cg" for r in records if r["panel"] == panel):
            titles[panel] += f"\nPolyOpt, NR: column generation, {cfg.time_budget:g} s each (anytime)"
    rows = _summarise("fig2", records, {"nmi": ("value",), "mi": ("value",), "eps_audited": ("value",),
                                        "nmi_upper_bound": ("value",), "seconds": ("value",)})
    return Result("fig2", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "n": table.n_rows,
                   "data": "adult.data (UCI Adult, shipped in rldp/demo/data)", "pairs": [list(p) for p in pairs]},
                  _failure_notes(records))


def plot_fig2(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    return plot_curves(result.rows, path=out / "fig2.png", panels=result.panels, panel_titles=result.panel_titles,
                       methods=result.methods, statistic="nmi",
                       ylabel="NMI = I(X;Y)/H(X) under P̂ (dimensionless)",
                       title=f"Adult data (n = {result.settings['n']:,}, β = {result.settings['beta']:g}, α = 2): "
                             "utility vs privacy (seed 000, Fig. 2)")


def table_fig2(result: Result) -> str:
    return _curve_table(result, "nmi", (0.1, 0.5, 1.0, 2.0, 4.0), "NMI under P̂")


# ---------------------------------------------------------------------------
# Seed 000, Figure 3: synthetic data, NMI averaged over draws
# ---------------------------------------------------------------------------
FIG3_EPS = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
FIG3_EPS_QUICK = (0.5, 1.5)


def run_fig3(cfg: Config) -> Result:
    eps = cfg.epsilons or (FIG3_EPS_QUICK if cfg.quick else FIG3_EPS)
    shapes = PAPER_SHAPES[:2] if cfg.quick else PAPER_SHAPES
    draws = cfg.draws or (2 if cfg.quick else 100)
    methods = _methods(cfg, PAPER_000)
    tasks = _draw_tasks(cfg, shapes, (N_ADULT,), draws, (BETA,), methods, eps, lambda s, n: _shape_panel(s))
    records = _run_tasks(_synthetic_task, tasks, cfg, "fig3")
    rows = _summarise("fig3", records, {"nmi": ("mean", "sem", "q25", "q75"), "nmi_true": ("mean",),
                                        "eps_audited": ("max",)})
    panels = [_shape_panel(s) for s in shapes]
    titles = {_shape_panel(s): _shape_title(s, N_ADULT) for s in shapes}
    return Result("fig3", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "n": N_ADULT, "draws": draws,
                   "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(s) for s in shapes]},
                  _failure_notes(records))


def plot_fig3(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    return plot_curves(result.rows, path=out / "fig3.png", panels=result.panels, panel_titles=result.panel_titles,
                       methods=result.methods, statistic="nmi_mean", band=("nmi_q25", "nmi_q75"),
                       ylabel="mean NMI under P̂ (dimensionless)",
                       title=f"Synthetic P* ~ Dirichlet(½), mean of {result.settings['draws']} draws, "
                             f"band 25–75 % (seed 000, Fig. 3)")


def table_fig3(result: Result) -> str:
    return _curve_table(result, "nmi_mean", (0.1, 0.5, 1.0, 2.0, 4.0),
                        f"mean NMI under P̂ over {result.settings['draws']} draws (* = some draws failed)")


# ---------------------------------------------------------------------------
# Seed 000, Table 2: the β sweep at ε = 1.5
# ---------------------------------------------------------------------------
TABLE2_EPSILON = 1.5


def run_table2(cfg: Config) -> Result:
    shapes = PAPER_SHAPES[:1] if cfg.quick else PAPER_SHAPES
    draws = cfg.draws or (3 if cfg.quick else 100)
    eps = cfg.epsilons or (TABLE2_EPSILON,)
    methods = _methods(cfg, PAPER_000)
    tasks = _draw_tasks(cfg, shapes, (N_ADULT,), draws, TABLE2_BETAS, methods, eps,
                        lambda s, n: _shape_panel(s))
    records = _run_tasks(_synthetic_task, tasks, cfg, "table2")
    rows = _summarise("table2", records, {"nmi": ("mean", "sem"), "eps_audited": ("max",)})
    for shape in shapes:
        for method, values in PAPER_TABLE2.get(shape, {}).items():
            for beta, v in zip(TABLE2_BETAS, values):
                key = {"panel": _shape_panel(shape), "n_sensitive": shape[0], "n_released": shape[1],
                       "n": N_ADULT, "beta": beta, "method": method, "epsilon": TABLE2_EPSILON}
                rows.append(_row("table2", key, "nmi_paper", v, 100))
    panels = [_shape_panel(s) for s in shapes]
    titles = {_shape_panel(s): _shape_title(s, N_ADULT) for s in shapes}
    return Result("table2", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "betas": list(TABLE2_BETAS), "order": ORDER, "n": N_ADULT,
                   "draws": draws, "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(s) for s in shapes]},
                  _failure_notes(records))


def plot_table2(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    eps = result.settings["epsilons"][0]
    rows = [r for r in result.rows if _close(r["epsilon"], eps)]
    reference = defaultdict(dict)
    for r in rows:
        if r["statistic"] == "nmi_paper":
            reference[(r["panel"], r["method"])][float(r["beta"])] = float(r["value"])
    return plot_curves(rows, path=out / "table2.png", panels=result.panels, panel_titles=result.panel_titles,
                       methods=result.methods, statistic="nmi_mean", x="beta", xlog=True,
                       xlabel="significance level β of the confidence set (dimensionless)",
                       ylabel="mean NMI under P̂ (dimensionless)", reference=reference,
                       reference_label="× = the paper's Table 2 (colour = method)",
                       title=f"NMI vs β at ε = {eps:g} nats, mean of {result.settings['draws']} synthetic draws "
                             "(seed 000, Table 2; × = the paper's numbers)")


def table_table2(result: Result) -> str:
    eps = result.settings["epsilons"][0]
    parts = []
    for panel in result.panels:
        rows = []
        for m in result.methods:
            cells = []
            for beta in TABLE2_BETAS:
                paper = result.value(panel, m, "nmi_paper", epsilon=eps, beta=beta)
                ours = result.value(panel, m, "nmi_mean", epsilon=eps, beta=beta)
                fails = result.value(panel, m, "failures", epsilon=eps, beta=beta)
                cells += [_fmt(paper), _fmt(ours) + ("*" if fails else "")]
            if any(not c.startswith("—") for c in cells[1::2]):  # leave out methods omitted here
                rows.append([m, *cells])
        header = ["method"] + [f"{w} β={b:g}" for b in TABLE2_BETAS for w in ("paper", "ours")]
        parts.append(f"{result.panel_titles[panel]} — NMI at ε = {eps:g}, mean over "
                     f"{result.settings['draws']} draws\n" + format_table(header, rows))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------
# Seed 000, Figure 4: realised ε* of NR vs PolyOpt
# ---------------------------------------------------------------------------
FIG4_EPS = (0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
FIG4_EPS_QUICK = (0.075, 0.5, 1.5)
FIG4_METHODS = ("nr", "polyopt-paper", "polyopt")


def run_fig4(cfg: Config) -> Result:
    eps = cfg.epsilons or (FIG4_EPS_QUICK if cfg.quick else FIG4_EPS)
    shapes = PAPER_SHAPES[:1] if cfg.quick else PAPER_SHAPES[:2]
    draws = cfg.draws or (4 if cfg.quick else 100)
    methods = _methods(cfg, PAPER_000, only=FIG4_METHODS)
    tasks = _draw_tasks(cfg, shapes, (N_ADULT,), draws, (BETA,), methods, eps, lambda s, n: _shape_panel(s),
                        truth=True, membership=True)
    records = _run_tasks(_synthetic_task, tasks, cfg, "fig4")
    rows = _summarise("fig4", records, {"eps_star": ("q25", "median", "q75", "mean", "max"),
                                        "eps_audited": ("max",), "nmi": ("mean",)})
    # Beyond quantiles: how often ε* exceeds the claim, and the worst case when the
    # guarantee applies (P* ∈ F, which the confidence set promises with probability 1 − β).
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        if not r.get("failed"):
            groups[tuple(r.get(k) for k in _GROUP)].append(r)
    for key_t, recs in groups.items():
        key = dict(zip(_GROUP, key_t))
        e = float(key["epsilon"])
        above = np.mean([r["eps_star"] > e + 1e-9 for r in recs])
        rows.append(_row("fig4", key, "fraction_eps_star_above_eps", float(above), len(recs)))
        rows.append(_row("fig4", key, "fraction_eps_star_infinite",
                         float(np.mean([math.isinf(r["eps_star"]) for r in recs])), len(recs)))
        inside = [r["eps_star"] for r in recs if r["in_F"]]
        if inside:
            rows.append(_row("fig4", key, "eps_star_max_when_P_star_in_F", float(max(inside)), len(inside)))
        # Draws whose P̂ has no empty cell: NR's infinite ε* comes from those cells.
        full = np.array([r["eps_star"] for r in recs if r["empty_cells"] == 0])
        if full.size:
            for stat in ("q25", "median", "q75"):
                rows.append(_row("fig4", key, f"eps_star_full_support_{stat}", _stat(full, stat), int(full.size)))
    for shape in shapes:
        panel = _shape_panel(shape)
        members = {r["draw"]: r["in_F"] for r in records if r["panel"] == panel}
        key = {"panel": panel, "n_sensitive": shape[0], "n_released": shape[1], "n": N_ADULT, "beta": BETA}
        rows.append(_row("fig4", key, "fraction_P_star_in_F", float(np.mean(list(members.values()))), len(members)))
    panels = [_shape_panel(s) for s in shapes]
    titles = {_shape_panel(s): _shape_title(s, N_ADULT) for s in shapes}
    return Result("fig4", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "n": N_ADULT, "draws": draws,
                   "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(s) for s in shapes]},
                  _failure_notes(records))


def plot_fig4(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    return plot_curves(result.rows, path=out / "fig4.png", panels=result.panels, panel_titles=result.panel_titles,
                       methods=result.methods, statistic="eps_star_median", band=("eps_star_q25", "eps_star_q75"),
                       xlog=True, ylog=True, identity=True,
                       ylabel="realised ε* under P* (nats)",
                       title=f"Realised privacy ε* over {result.settings['draws']} synthetic draws: median, "
                             "band 25–75 % (seed 000, Fig. 4)")


def table_fig4(result: Result) -> str:
    parts = []
    for panel in result.panels:
        rows = []
        for e in result.settings["epsilons"]:
            cells = [f"{e:g}"]
            for m in result.methods:
                q25 = result.value(panel, m, "eps_star_q25", epsilon=e)
                q75 = result.value(panel, m, "eps_star_q75", epsilon=e)
                above = result.value(panel, m, "fraction_eps_star_above_eps", epsilon=e)
                cells += [f"{_fmt(q25)}–{_fmt(q75)}", _fmt(above, 2)]
            rows.append(cells)
        inside = result.value(panel, "", "fraction_P_star_in_F")
        header = ["ε"] + [h for m in result.methods for h in (f"{m} ε* 25–75%", "P(ε*>ε)")]
        parts.append(f"{result.panel_titles[panel]} — P* ∈ F in {_fmt(inside, 2)} of the draws\n"
                     + format_table(header, rows))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------
# Seed 000, Figure 5: I under P̂ vs under P*
# ---------------------------------------------------------------------------
FIG5_EPSILON = 1.5


def run_fig5(cfg: Config) -> Result:
    eps = cfg.epsilons or (FIG5_EPSILON,)
    shapes = PAPER_SHAPES[:2] if cfg.quick else PAPER_SHAPES
    draws = cfg.draws or (3 if cfg.quick else 100)
    methods = _methods(cfg, PAPER_000)
    tasks = _draw_tasks(cfg, shapes, (N_ADULT,), draws, (BETA,), methods, eps, lambda s, n: _shape_panel(s),
                        truth=True)
    records = _run_tasks(_synthetic_task, tasks, cfg, "fig5")
    for r in records:
        if not r.get("failed"):
            # seed 000 Sec. 8.4: the normalised difference (I_P̂ − I_P*)/I_P̂.
            r["mi_relative_difference"] = (r["mi"] - r["mi_true"]) / r["mi"] if r["mi"] > 0 else 0.0
    rows = _summarise("fig5", records, {"mi_relative_difference": ("min", "q25", "median", "q75", "max", "mean"),
                                        "nmi": ("mean",), "nmi_true": ("mean",), "eps_audited": ("max",)})
    panels = [_shape_panel(s) for s in shapes]
    titles = {_shape_panel(s): _shape_title(s, N_ADULT) for s in shapes}
    return Result("fig5", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "n": N_ADULT, "draws": draws,
                   "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(s) for s in shapes]},
                  _failure_notes(records))


def plot_fig5(result: Result, out: Path) -> Path:
    from .plots import plot_boxes

    eps = result.settings["epsilons"][0]
    rows = [r for r in result.rows if _close(r["epsilon"], eps)]
    return plot_boxes(rows, path=out / "fig5.png", panels=result.panels, panel_titles=result.panel_titles,
                      methods=result.methods, prefix="mi_relative_difference", scale=100.0,
                      ylabel=r"$(I_{\hat P} - I_{P^*})\,/\,I_{\hat P}$  (%)",
                      title=f"Utility under P̂ vs under P* at ε = {eps:g} nats, {result.settings['draws']} draws; "
                            "box 25–75 %, whiskers min–max (seed 000, Fig. 5)")


def table_fig5(result: Result) -> str:
    eps = result.settings["epsilons"][0]
    parts = []
    for panel in result.panels:
        rows = []
        for m in result.methods:
            vals = [result.value(panel, m, f"mi_relative_difference_{s}", epsilon=eps)
                    for s in ("min", "q25", "median", "q75", "max")]
            if all(v is None for v in vals):
                continue
            rows.append([m, *(_fmt(None if v is None else 100 * v, 2) for v in vals)])
        parts.append(f"{result.panel_titles[panel]} — (I_P̂ − I_P*)/I_P̂ in % at ε = {eps:g}\n"
                     + format_table(["method", "min", "25%", "median", "75%", "max"], rows))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------
# Seed 001, Figures 2 and 3
# ---------------------------------------------------------------------------
ISIT_EPS = (0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
ISIT_EPS_QUICK = (0.2, 1.0, 4.0)
ISIT_FIG3_NS = (100, 1_000, 10_000, 100_000)
ISIT_FIG3_NS_QUICK = (100, 10_000)


def run_isit_fig2(cfg: Config) -> Result:
    eps = cfg.epsilons or (ISIT_EPS_QUICK if cfg.quick else ISIT_EPS)
    shape, n = (3, 3), 1000
    draws = cfg.draws or (6 if cfg.quick else 200)
    methods = _methods(cfg, PAPER_001)
    tasks = _draw_tasks(cfg, (shape,), (n,), draws, (BETA,), methods, eps, lambda s, n: _shape_panel(s))
    records = _run_tasks(_synthetic_task, tasks, cfg, "isit-fig2")
    rows = _summarise("isit-fig2", records, {"nmi": ("mean", "sem", "q25", "q75"), "eps_audited": ("max",)})
    panel = _shape_panel(shape)
    return Result("isit-fig2", rows, records, [panel], {panel: _shape_title(shape, n)}, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "n": n, "draws": draws,
                   "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(shape)]},
                  _failure_notes(records))


def plot_isit_fig2(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    # The same panel twice: linear (as the paper) and log scale (the high-privacy regime).
    return plot_curves(result.rows, path=out / "isit-fig2.png", panels=result.panels * 2,
                       panel_titles=result.panel_titles, methods=result.methods, statistic="nmi_mean",
                       ylabel="mean NMI under P̂ (dimensionless)", yscales=["linear"] * len(result.panels)
                       + ["log"] * len(result.panels), ncols=2,
                       title=f"|S| = |U| = 3, n = 1000, mean of {result.settings['draws']} draws (seed 001, Fig. 2)")


def table_isit_fig2(result: Result) -> str:
    return _curve_table(result, "nmi_mean", (0.2, 1.0, 2.0, 4.0, 8.0),
                        f"mean NMI under P̂ over {result.settings['draws']} draws (* = some draws failed)")


def run_isit_fig3(cfg: Config) -> Result:
    eps = cfg.epsilons or (ISIT_EPS_QUICK if cfg.quick else ISIT_EPS)
    shape = (5, 5)
    ns = ISIT_FIG3_NS_QUICK if cfg.quick else ISIT_FIG3_NS
    draws = cfg.draws or (3 if cfg.quick else 200)
    methods = _methods(cfg, PAPER_001)
    panel = lambda s, n: f"n={n}"  # noqa: E731
    tasks = _draw_tasks(cfg, (shape,), ns, draws, (BETA,), methods, eps, panel)
    records = _run_tasks(_synthetic_task, tasks, cfg, "isit-fig3")
    rows = _summarise("isit-fig3", records, {"nmi": ("mean", "sem", "q25", "q75"), "eps_audited": ("max",)})
    panels = [panel(shape, n) for n in ns]
    titles = {panel(shape, n): f"|S| = |U| = 5, n = {n:,}" for n in ns}
    return Result("isit-fig3", rows, records, panels, titles, methods,
                  {"epsilons": list(eps), "beta": BETA, "order": ORDER, "ns": list(ns), "draws": draws,
                   "prior": "Dirichlet(1/2) (Jeffreys)", "shapes": [list(shape)]},
                  _failure_notes(records))


def plot_isit_fig3(result: Result, out: Path) -> Path:
    from .plots import plot_curves

    return plot_curves(result.rows, path=out / "isit-fig3.png", panels=result.panels,
                       panel_titles=result.panel_titles, methods=result.methods, statistic="nmi_mean",
                       ylabel="mean NMI under P̂ (dimensionless)",
                       title=f"|S| = |U| = 5, varying n, mean of {result.settings['draws']} draws (seed 001, Fig. 3)")


def table_isit_fig3(result: Result) -> str:
    return _curve_table(result, "nmi_mean", (0.2, 1.0, 2.0, 4.0, 8.0),
                        f"mean NMI under P̂ over {result.settings['draws']} draws (* = some draws failed)")


# ---------------------------------------------------------------------------
# Registry, running and writing
# ---------------------------------------------------------------------------
EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("fig2", "seed 000, Figure 2", "NMI vs ε on four Adult pairs", run_fig2, plot_fig2, table_fig2,
               solver="auto"),
    Experiment("fig3", "seed 000, Figure 3", "NMI vs ε on synthetic Dirichlet(½) data", run_fig3, plot_fig3,
               table_fig3),
    Experiment("table2", "seed 000, Table 2", "NMI at ε = 1.5 for β = 0.1, 0.01, 0.001", run_table2, plot_table2,
               table_table2),
    Experiment("fig4", "seed 000, Figure 4", "realised ε* of NR vs PolyOpt under P*", run_fig4, plot_fig4,
               table_fig4),
    Experiment("fig5", "seed 000, Figure 5", "(I_P̂ − I_P*)/I_P̂ at ε = 1.5", run_fig5, plot_fig5, table_fig5),
    Experiment("isit-fig2", "seed 001, Figure 2", "PolyOpt/GRR/IR/CR on |S| = |U| = 3, n = 1000", run_isit_fig2,
               plot_isit_fig2, table_isit_fig2),
    Experiment("isit-fig3", "seed 001, Figure 3", "GRR/IR/CR on |S| = |U| = 5 for several n", run_isit_fig3,
               plot_isit_fig3, table_isit_fig3),
)}


def run_experiment(name: str, cfg: Config) -> Result:
    """Run experiment ``name`` (a key of :data:`EXPERIMENTS`) and return its result."""
    if name not in EXPERIMENTS:
        raise LookupError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    exp = EXPERIMENTS[name]
    cfg = replace(cfg, polyopt_solver=cfg.polyopt_solver or exp.solver)
    start = time.perf_counter()
    result = exp.run(cfg)
    result.seconds = time.perf_counter() - start
    result.settings.update(quick=cfg.quick, seed=cfg.seed, workers=cfg.workers, methods=result.methods,
                           polyopt_solver=cfg.polyopt_solver)
    if cfg.polyopt_solver != "exact":
        result.settings["time_budget_seconds"] = cfg.time_budget
    return result


def _csv_value(v: Any) -> Any:
    if isinstance(v, float):
        return "inf" if math.isinf(v) else repr(v)
    return v


def write_outputs(result: Result, out: Path, *, records: bool = False) -> list[Path]:
    """Write NAME.csv (tidy summary), NAME.png and NAME.json (settings, notes, run time);
    with ``records`` also NAME_draws.csv (one row per design and draw). Returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    csv_path = out / f"{result.name}.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in result.rows:
            writer.writerow({k: _csv_value(r.get(k, "")) for k in COLUMNS})
    paths.append(csv_path)
    if records and result.records:
        keys = list(dict.fromkeys(k for r in result.records for k in r))
        rec_path = out / f"{result.name}_draws.csv"
        with open(rec_path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=keys, lineterminator="\n")
            writer.writeheader()
            for r in result.records:
                writer.writerow({k: _csv_value(r.get(k, "")) for k in keys})
        paths.append(rec_path)
    paths.append(EXPERIMENTS[result.name].plot(result, out))
    meta = {
        "experiment": result.name, "source": EXPERIMENTS[result.name].source,
        "summary": EXPERIMENTS[result.name].summary, "settings": result.settings, "notes": result.notes,
        "seconds": round(result.seconds, 1), "software": f"rldp {__version__}",
        "panels": {p: result.panel_titles[p] for p in result.panels},
    }
    json_path = out / f"{result.name}.json"
    json_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths.append(json_path)
    return paths


def load_result(name: str, out: Path) -> Result:
    """Rebuild a :class:`Result` (without per-draw records) from the NAME.csv and NAME.json
    that :func:`write_outputs` wrote, e.g. to redraw the figure without recomputing."""
    if name not in EXPERIMENTS:
        raise LookupError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    out = Path(out)
    meta_path, csv_path = out / f"{name}.json", out / f"{name}.csv"
    for path in (meta_path, csv_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found; run 'rldp experiment {name} --out {out}' first")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        with open(csv_path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValueError(f"{csv_path}: expected the columns {', '.join(COLUMNS)}")
            rows = []
            for r in reader:
                for k in ("n_sensitive", "n_released", "n", "draws"):
                    r[k] = int(r[k]) if r[k] != "" else ""
                for k in ("beta", "epsilon", "value"):
                    r[k] = float(r[k]) if r[k] != "" else ""
                rows.append(r)
        panels = dict(meta["panels"])
        result = Result(name, rows, [], list(panels), panels, list(meta["settings"]["methods"]),
                        dict(meta["settings"]), list(meta.get("notes", [])), float(meta.get("seconds", 0.0)))
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{meta_path}: not an experiment summary written by rldp ({_one_line(exc)})") from None
    return result


def report(result: Result) -> str:
    """The short text printed after a run: the table and the notes."""
    exp = EXPERIMENTS[result.name]
    lines = [f"== {result.name}: {exp.summary} ({exp.source}){' [quick]' if result.settings.get('quick') else ''}",
             "", exp.table(result)]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {n}" for n in result.notes]
    return "\n".join(lines)


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)

