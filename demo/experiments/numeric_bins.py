"""The bins sweep of ``rldp experiment numeric``: the measured error at each number of bins k against the
rule's choice (:mod:`rldp.aggregator.design.orchestration.bins`) and against the binning floor.

For each column (age, hours-per-week), ε and k ∈ :data:`~rldp.aggregator.design.orchestration.bins.CANDIDATE_BINS`:
the bins are k public quantiles of adult.data; the design is the one the rule predicts with for the task
designs, ``rr-released`` (randomised response on the bins alone at the largest level the exact RLDP audit
passes; the distribution task's design at every ε in this experiment's main table); each of the 16,281
users of adult.test reports once per repetition; EM estimates P(sex, bin). Measured against the users' true
values, mean and standard deviation over the repetitions:

* ``w1``: W1 of the estimate spread **uniformly** within each bin (as ``rldp estimate`` spreads it);
* ``w1_shape``: W1 of the estimate spread as the **public within-bin shape** (the main table's measure);
* ``mean_error``: |mean error| of Σ_j p̂_j·midpoint_j (as ``rldp estimate`` computes the mean);

and each one's floor (the users' own bin shares, no noise: ``*_floor``); the rule's two predicted terms
(``binning_*``, ``estimation_*``) for both spreads; and the rule's k for each (task, spread) at
planned_reports = 16,281 (rows of method ``rule``).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignRequest, validate_request
from rldp.aggregator.design.orchestration.bins import (
    CANDIDATE_BINS,
    SPREADS,
    CandidateDesign,
    candidate_designs,
    evaluate,
    pick,
    w1_step_linear,
)
from rldp.shared.numeric import NumericSpec, quantile_edges
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet

from .. import plots
from ..datasets import load_adult
from .config import Result
from .numeric_baselines import report_counts_batch
from .stats import row
from .tables import fmt, format_table

__all__ = ["CANDIDATE_BINS", "TASKS", "AdultColumn", "adult_tables", "bins_sweep", "plot_bins", "table_bins"]

NAME = "numeric"
TASKS = ("distribution", "mean")
MEASURES = {
    ("distribution", "uniform"): "w1",
    ("distribution", "public"): "w1_shape",
    ("mean", "uniform"): "mean_error",
}


@functools.lru_cache(maxsize=1)
def adult_tables() -> tuple[Any, Any]:
    """adult.data (the public data) and adult.test (the users), read once."""
    return load_adult("data"), load_adult("test")


def em_batch(q: np.ndarray, counts: np.ndarray, tol: float = 1e-10, max_iter: int = 20_000) -> np.ndarray:
    """EM for P_X from each row of report ``counts`` (reps, outputs), from the uniform distribution, until every
    row's mean log-likelihood gains less than ``tol`` per iteration: (reps, inputs)."""
    n = counts.sum(axis=1, keepdims=True)
    theta = np.full((counts.shape[0], q.shape[1]), 1.0 / q.shape[1])
    last = np.full(counts.shape[0], -np.inf)
    for _ in range(max_iter):
        fitted = np.maximum(theta @ q.T, 1e-300)
        theta = theta * ((counts / fitted) @ q) / n
        ll = np.sum(counts * np.log(np.maximum(theta @ q.T, 1e-300)), axis=1) / n[:, 0]
        if np.all(ll - last < tol):
            break
        last = ll
    return theta


class AdultColumn:
    """One Adult column's public data (adult.data), users (adult.test) and their truth (the integer grid lo..hi)."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.public, self.users = adult_tables()
        self.values = self.public.column(column).astype(float)
        self.lo, self.hi = float(self.values.min()), float(self.values.max())
        self.grid = np.arange(int(self.lo), int(self.hi) + 1, dtype=float)
        self.user_values = np.clip(self.users.column(column).astype(float), self.lo, self.hi)
        self.truth = (
            np.bincount((self.user_values - self.lo).astype(int), minlength=self.grid.size) / self.user_values.size
        )
        self.public_grid = np.bincount(
            (np.clip(self.values, self.lo, self.hi) - self.lo).astype(int), minlength=self.grid.size
        )

    def public_for(self, spec: Any) -> tuple[np.ndarray, int, bool]:
        counts = PublicCounts.from_table(self.public, self.alphabet(spec), name="adult.data")
        return counts.distribution, counts.n, False

    @functools.lru_cache(maxsize=64)  # noqa: B019 (one object per run)
    def alphabet(self, spec: Any) -> Alphabet:
        return Alphabet.from_table(self.public, "sex", [self.column], numeric={self.column: spec})

    def measures(self, spec: Any, shares: np.ndarray) -> dict[str, np.ndarray]:
        """W1 (uniform spread, public shape) and |mean error| of bin ``shares`` (…, k) against the users."""
        edges = np.asarray(spec.edges, dtype=float)
        cuts = np.union1d(self.grid, edges)
        f_true = np.cumsum(np.bincount(np.searchsorted(cuts, self.grid), weights=self.truth, minlength=cuts.size))
        interp = np.stack([np.interp(cuts, edges, e) for e in np.eye(edges.size)], axis=1)  # (cuts, k + 1)
        f_lin = np.concatenate([np.zeros((*shares.shape[:-1], 1)), np.cumsum(shares, axis=-1)], axis=-1) @ interp.T
        bins = spec.bin_of(self.grid)
        shape = np.zeros((spec.bins, self.grid.size))
        shape[bins, np.arange(self.grid.size)] = self.public_grid
        shape /= np.maximum(shape.sum(axis=1, keepdims=True), 1)
        f_shape = np.cumsum(shares @ shape, axis=-1)
        return {
            "w1": w1_step_linear(cuts, f_true, f_lin),
            "w1_shape": np.abs(f_shape - np.cumsum(self.truth))[..., :-1].sum(axis=-1),
            "mean_error": np.abs(shares @ spec.midpoints() - float(self.user_values.mean())),
        }


def bins_sweep(
    column: str, epsilons: tuple[float, ...], reps: int, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], dict[tuple[str, float, str, str], NumericSpec]]:
    """The sweep's tidy rows and the rule's bins by (column, ε, task, spread)."""
    col = AdultColumn(column)
    n_users = int(col.user_values.size)
    rows: list[dict[str, Any]] = []
    choices: dict[tuple[str, float, str, str], NumericSpec] = {}
    for epsilon in epsilons:
        request = validate_request(
            DesignRequest(method="polyopt", epsilon=epsilon, n=col.public.n_rows, task="distribution"),
            released_size=2,
        )
        designs = candidate_designs(column, col.values, request, col.public_for, "rr-released", lo=col.lo, hi=col.hi)
        for design in designs:
            rows.extend(_measured(col, design, epsilon, reps, rng, n_users))
        default = NumericSpec(quantile_edges(col.values)).bins  # the joint task's k (at most 16)
        rows.append(
            row(NAME, {"panel": column, "epsilon": epsilon, "n": n_users, "method": "rule"}, "bins_default", default, 1)
        )
        for task in TASKS:
            for spread in SPREADS:
                scored = evaluate(task, designs, col.values, n_users, spread)
                for c in scored:
                    key = {"panel": column, "n_released": c.bins, "epsilon": epsilon, "n": n_users, "method": "bins"}
                    rows.append(row(NAME, key, f"binning_{task}_{spread}", c.binning_error, 1))
                    if spread == SPREADS[0]:
                        est = np.nan if c.estimation_error is None else c.estimation_error
                        rows.append(row(NAME, key, f"estimation_{task}", est, 1))
                choice = pick(column, task, n_users, "rr-released", designs, scored, spread)
                if choice is not None:
                    choices[(column, epsilon, task, spread)] = choice.spec
                    key = {"panel": column, "epsilon": epsilon, "n": n_users, "method": "rule"}
                    rows.append(row(NAME, key, f"bins_{task}_{spread}", choice.spec.bins, 1))
    return rows, choices


def _measured(
    col: AdultColumn, design: CandidateDesign, epsilon: float, reps: int, rng: np.random.Generator, n_users: int
) -> list[dict[str, Any]]:
    spec, q = design.spec, design.q
    alphabet = col.alphabet(spec)
    x_users = np.bincount(alphabet.encode_joint(col.users), minlength=alphabet.size)
    true_shares = x_users.reshape(alphabet.shape).sum(axis=0) / n_users
    floor = col.measures(spec, true_shares)
    key = {"panel": col.column, "n_released": spec.bins, "epsilon": epsilon, "n": n_users, "method": "bins"}
    out = [row(NAME, key, f"{m}_floor", float(v), 1) for m, v in floor.items()]
    if q is None:
        return out
    theta = em_batch(q, report_counts_batch(q, x_users, reps, rng))
    shares = theta.reshape(reps, *alphabet.shape).sum(axis=1)
    for m, v in col.measures(spec, shares).items():
        out += [row(NAME, key, m, float(np.mean(v)), reps), row(NAME, key, f"{m}_sd", float(np.std(v)), reps)]
    return out


#: The sweep's figure and table: (measure, the (task, spread) whose rule it judges, its label).
PANELS = (
    ("w1_shape", ("distribution", "public"), "W1, public within-bin shape"),
    ("w1", ("distribution", "uniform"), "W1, uniform within bins"),
    ("mean_error", ("mean", "uniform"), "|mean error|, midpoints"),
)


def _sweep_value(
    result: Result, panel: str, epsilon: float, bins: int | None, stat: str, method: str = "bins"
) -> float | None:
    for r in result.rows:
        if (r["panel"], r["method"], r["statistic"]) == (panel, method, stat) and math.isclose(
            float(r["epsilon"]), epsilon
        ):
            if bins is None or int(r["n_released"]) == bins:
                v = float(r["value"])
                return None if math.isnan(v) else v
    return None


def _ks(result: Result, panel: str, epsilon: float) -> list[int]:
    return sorted(
        {
            int(r["n_released"])
            for r in result.rows
            if (r["panel"], r["method"]) == (panel, "bins") and math.isclose(float(r["epsilon"]), epsilon)
        }
    )


def table_bins(result: Result) -> str:
    """Per column, ε and measure: the rule's k, its measured error and floor (and their ratio), the best k in
    hindsight and the default k (the joint task's: ⌈n^(1/3)⌉ public quantiles, at most 16)."""
    header = ["U", "ε", "measure", "rule's k", "measured", "floor", "ratio", "best k", "best", "default k", "measured"]
    out = []
    for panel in result.panels:
        for epsilon in result.settings["epsilons"]:
            ks = _ks(result, panel, epsilon)
            for stat, (task, spread), label in PANELS:
                k = _sweep_value(result, panel, epsilon, None, f"bins_{task}_{spread}", method="rule")
                measured = {b: _sweep_value(result, panel, epsilon, b, stat) for b in ks}
                finite = {b: v for b, v in measured.items() if v is not None}
                if k is None or not finite:
                    continue
                chosen, floor = measured.get(int(k)), _sweep_value(result, panel, epsilon, int(k), f"{stat}_floor")
                best = min(finite, key=lambda b: finite[b])
                ratio = None if chosen is None or not floor else chosen / floor
                default = int(_sweep_value(result, panel, epsilon, None, "bins_default", method="rule") or 0)
                out.append(
                    [
                        panel,
                        f"{epsilon:g}",
                        label,
                        str(int(k)),
                        fmt(chosen, 3),
                        fmt(floor, 3),
                        fmt(ratio, 2),
                        str(best),
                        fmt(finite[best], 3),
                        str(default),
                        fmt(measured.get(default), 3),
                    ]
                )
    return format_table(header, out)


def plot_bins(result: Result, out: Path) -> Path:
    """numeric-bins.png: the measured error against k per ε (lines), the floor (dashed), the rule's k (stars)."""
    plt = plots.pyplot()
    fig, axes = plt.subplots(
        len(PANELS), len(result.panels), figsize=(5.5 * len(result.panels), 3.4 * len(PANELS)), squeeze=False
    )
    handles: dict[str, Any] = {}
    colours = dict(zip(result.settings["epsilons"], ("tab:red", "tab:blue", "tab:green", "tab:purple"), strict=False))
    for col, panel in enumerate(result.panels):
        unit = "years" if panel == "age" else "hours"
        for row_i, (stat, (task, spread), label) in enumerate(PANELS):
            ax = axes[row_i][col]
            for epsilon in result.settings["epsilons"]:
                ks = _ks(result, panel, epsilon)
                ys = [_sweep_value(result, panel, epsilon, b, stat) for b in ks]
                colour = colours.get(epsilon, "grey")
                line = ax.plot(ks, [math.nan if y is None else y for y in ys], "-o", ms=3, color=colour)[0]
                handles[f"measured, ε = {epsilon:g}"] = line
                k = _sweep_value(result, panel, epsilon, None, f"bins_{task}_{spread}", method="rule")
                y = None if k is None else _sweep_value(result, panel, epsilon, int(k), stat)
                if y is not None:
                    ax.plot([k], [y], "*", ms=14, color=colour, markeredgecolor="black")
            ks = _ks(result, panel, result.settings["epsilons"][0])
            floor = [_sweep_value(result, panel, result.settings["epsilons"][0], b, f"{stat}_floor") for b in ks]
            handles["floor (no noise)"] = ax.plot(
                ks, [math.nan if y is None else y for y in floor], "--", color="black"
            )[0]
            ax.set_yscale("log")
            ax.set_xlabel("number of bins k")
            ax.set_ylabel(f"{label} ({unit})", fontsize=9)
            ax.set_title(f"U = {panel}: {label}", fontsize=10)
    handles["the rule's k (star, in the ε's colour)"] = plt.Line2D(
        [], [], marker="*", ms=14, ls="", color="white", markeredgecolor="black"
    )
    title = "Adult, S = sex, rr-released on k public-quantile bins, 16,281 users: error against k"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}-bins.png", legend_cols=5)
