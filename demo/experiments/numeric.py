"""``rldp experiment numeric``: a numeric U (Adult age, hours-per-week), with S = sex — binned RLDP against LDP on numbers.

P̂ from adult.data (32,561 rows); the users are adult.test's 16,281, each reporting once per repetition.
Age is binned by the default rule (:func:`rldp.shared.numeric.quantile_edges`: 16 public-quantile bins).
At each ε, the designs and baselines:

* ``polyopt-nmi``: PolyOpt over (sex, bin), its objective I(X;Y) (the joint task); EM estimate;
* ``task``: what rldp recommends for the distribution task (``--method polyopt --task distribution``:
  the design with the least W1 of PolyOpt's and ``rr-released``); EM estimate;
* ``grr-bins``: GRR over (sex, bin), ε-LDP on both; EM estimate;
* ``sw-ems``: Square Wave on the integer ages, 1,024 output buckets, EMS [LLW20, Sec 4-5] — protects age itself;
* ``piecewise``: the Piecewise mechanism's mean [WXY19, Sec III-B] (the mean only);
* ``floor``: the 16 bins without noise.

A binned estimate becomes a distribution over the integer ages by spreading each bin's share as the public
data spreads within it (the public within-bin shape). Errors against the users' true ages: W1 (years),
KS, |mean error| and |median error| (years), mean and standard deviation over the repetitions; each
design's audited ε (its document's exact audit, RLDP w.r.t. sex; for the LDP baselines the LDP claim) and
realised ε at the users' true P(sex, ·) [LZG24, Sec 8.3]. Under RLDP age itself is protected only as far as
it reveals sex.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignRequest, design, design_document, square_wave_matrix
from rldp.aggregator.design.solvers.search import DELTA_CAP
from rldp.shared.audit import realised_epsilon
from rldp.shared.numeric import NumericSpec, quantile_edges
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet

from .. import plots
from .config import Config, Experiment, Result
from .numeric_baselines import em, ems, metrics, piecewise_mean, report_counts
from .numeric_bins import CANDIDATE_BINS, adult_tables, bins_sweep, plot_bins, table_bins
from .stats import row
from .tables import fmt, format_table

__all__ = ["EXPERIMENTS", "run_numeric"]

NAME = "numeric"
METHODS = ("task", "polyopt-nmi", "grr-bins", "sw-ems", "piecewise", "floor", "task-floor")
STATS = ("w1", "ks", "mean_error", "median_error")
COLUMNS = ("age", "hours-per-week")
NOTE = "age (hours-per-week) itself is protected only as far as it reveals sex (RLDP protects sex, not the number)"
SW_OUTPUTS = 1024


def _setup(column: str, spec: NumericSpec | None = None) -> dict[str, Any]:
    """The column's data over ``spec``'s bins (default: the default public-quantile bins)."""
    public, users = adult_tables()
    ages = public.column(column).astype(float)
    spec = NumericSpec(quantile_edges(ages)) if spec is None else spec
    alphabet = Alphabet.from_table(public, "sex", [column], numeric={column: spec})
    counts = PublicCounts.from_table(public, alphabet, name="adult.data")
    grid = np.arange(int(spec.lo), int(spec.hi) + 1, dtype=float)
    user_age = np.clip(users.column(column).astype(float), spec.lo, spec.hi)
    truth = np.bincount((user_age - spec.lo).astype(int), minlength=grid.size) / user_age.size
    # the public within-bin shape: P̂(age | bin) over the integer grid, (bins, grid)
    bins_of_grid = spec.bin_of(grid)
    public_age = np.bincount((np.clip(ages, spec.lo, spec.hi) - spec.lo).astype(int), minlength=grid.size)
    shape = np.zeros((spec.bins, grid.size))
    shape[bins_of_grid, np.arange(grid.size)] = public_age
    shape /= np.maximum(shape.sum(axis=1, keepdims=True), 1)
    x_users = alphabet.encode_joint(users)
    s_users = np.asarray(users.column("sex") == alphabet.sensitive.values[1], dtype=int)
    return {
        "spec": spec,
        "alphabet": alphabet,
        "public": counts,
        "grid": grid,
        "truth": truth,
        "shape": shape,
        "x_counts": np.bincount(x_users, minlength=alphabet.size),
        "user_age": user_age,
        "p_users": np.bincount(x_users, minlength=alphabet.size).reshape(alphabet.shape) / x_users.size,
        "p_users_int": np.stack(
            [np.bincount((user_age[s_users == s] - spec.lo).astype(int), minlength=grid.size) for s in (0, 1)]
        )
        / user_age.size,
    }


def _common(setup: dict[str, Any]) -> dict[str, Any]:
    public = setup["public"]
    return {
        "alphabet": setup["alphabet"],
        "public_distribution": public.distribution,
        "provenance": public.provenance(),
    }


def _designs(setup: dict[str, Any], task_setup: dict[str, Any], epsilon: float, cfg: Config) -> dict[str, dict]:
    """The designs at ε; ``task`` over the rule's bins (``task_setup``), the others over the default bins."""
    solver: dict[str, Any] = {"solver": cfg.polyopt_solver or "cg", "time_budget": cfg.time_budget}
    n = setup["public"].n
    return {
        "polyopt-nmi": design("polyopt", epsilon=epsilon, **solver, **_common(setup)),
        "task": design_document(
            DesignRequest(method="polyopt", epsilon=epsilon, n=n, task="distribution", **solver), **_common(task_setup)
        ),
        "grr-bins": design("grr", epsilon=epsilon, **_common(setup)),
    }


def _binned(setup: dict[str, Any], p_bins: np.ndarray) -> dict[str, float]:
    return metrics(setup["grid"], p_bins @ setup["shape"], setup["truth"])


def run_numeric(cfg: Config) -> Result:
    epsilons = cfg.epsilons or ((1.0,) if cfg.quick else (0.5, 1.0, 2.0))
    reps = cfg.draws or (3 if cfg.quick else 30)
    sweep_rng = np.random.default_rng([cfg.seed, 38])  # the sweep's own stream
    columns = COLUMNS[:1] if cfg.quick else COLUMNS
    records: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    notes = [NOTE]
    for column in columns:
        sweep_rows, choices = bins_sweep(column, epsilons, reps, sweep_rng)
        rows.extend(sweep_rows)
        _run_column(column, cfg, epsilons, reps, records, rows, notes, choices)
    return Result(
        NAME,
        rows,
        records,
        list(columns),
        {c: f"Adult {c} (S = sex): P̂ from adult.data, the 16,281 users of adult.test" for c in columns},
        list(METHODS),
        {
            "epsilons": list(epsilons),
            "repetitions": reps,
            "sw_outputs": SW_OUTPUTS,
            "bins_candidates": list(CANDIDATE_BINS),
            "task_bins": "the rule's (least predicted W1, public within-bin shape, at 16,281 planned reports)",
        },
        notes,
    )


def _run_column(
    column: str,
    cfg: Config,
    epsilons: tuple[float, ...],
    reps: int,
    records: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    notes: list[str],
    choices: dict[tuple[str, float, str, str], NumericSpec],
) -> None:
    setup = _setup(column)
    spec, grid = setup["spec"], setup["grid"]
    notes.append(f"{column} binned into {spec.bins} public-quantile bins: edges {[f'{e:g}' for e in spec.edges]}")
    floor = _binned(setup, setup["p_users"].sum(axis=0))
    for epsilon in epsilons:
        task_spec = choices[(column, epsilon, "distribution", "public")]
        k = task_spec.bins
        task_setup = _setup(column, task_spec)
        notes.append(f"{column}, ε = {epsilon:g}: the task design's bins, by the rule: {k}")
        docs = _designs(setup, task_setup, epsilon, cfg)
        setups = {name: task_setup if name == "task" else setup for name in docs}
        # one random stream per (column, ε, method): a design's draws do not depend on another's (PolyOpt's
        # time-budgeted design may differ run to run and would otherwise shift every later draw)
        streams = {
            name: np.random.default_rng([cfg.seed, COLUMNS.index(column), round(epsilon * 1000), i])
            for i, name in enumerate(METHODS)
        }
        # the square-wave designer's matrix, with the paper's 1,024 output buckets over the integer values
        sw = square_wave_matrix((grid - spec.lo) / (spec.hi - spec.lo), epsilon, SW_OUTPUTS)[0]
        sw_joint = np.tile(sw, (1, 2))
        sw_eps = realised_epsilon(sw_joint, setup["p_users_int"])
        values = 2 * (setup["user_age"] - spec.lo) / (spec.hi - spec.lo) - 1
        true_mean = float(setup["user_age"].mean())
        for r in range(reps):
            for name, doc in docs.items():
                q = np.asarray(doc["matrix"]) if isinstance(doc["matrix"], list) else _dense(doc)
                theta = em(q, report_counts(q, setups[name]["x_counts"], streams[name]), tol=1e-10)
                a1, a2 = setups[name]["alphabet"].shape
                m = _binned(setups[name], theta.reshape(a1, a2).sum(axis=0))
                records.append({"panel": column, "method": name, "epsilon": epsilon, "draw": r, **m})
            counts = np.round(setup["truth"] * setup["user_age"].size).astype(int)
            theta = ems(sw, report_counts(sw, counts, streams["sw-ems"]))
            m = metrics(grid, theta, setup["truth"])
            records.append({"panel": column, "method": "sw-ems", "epsilon": epsilon, "draw": r, **m})
            est = spec.lo + (piecewise_mean(values, epsilon, streams["piecewise"]) + 1) / 2 * (spec.hi - spec.lo)
            error = abs(est - true_mean)
            records.append({"panel": column, "method": "piecewise", "epsilon": epsilon, "draw": r, "mean_error": error})
        records.append({"panel": column, "method": "floor", "epsilon": epsilon, "draw": 0, **floor})
        task_floor = _binned(task_setup, task_setup["p_users"].sum(axis=0))
        records.append({"panel": column, "method": "task-floor", "epsilon": epsilon, "draw": 0, **task_floor})
        _summarise(column, epsilon, int(setup["user_age"].size), docs, setups, records, rows, notes)
        rows.append(row(NAME, {"panel": column, "epsilon": epsilon, "method": "task"}, "bins", k, 1))
        key = {"panel": column, "epsilon": epsilon, "n": int(setup["user_age"].size)}
        rows.append(row(NAME, {**key, "method": "sw-ems"}, "epsilon_audited", epsilon, 1))
        rows.append(row(NAME, {**key, "method": "sw-ems"}, "epsilon_realised", sw_eps, 1))


def _summarise(
    column: str,
    epsilon: float,
    n: int,
    docs: dict[str, dict],
    setups: dict[str, dict[str, Any]],
    records: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    notes: list[str],
) -> None:
    key = {"panel": column, "epsilon": epsilon, "n": n}
    for name in METHODS:
        these = [x for x in records if (x["panel"], x["method"], x["epsilon"]) == (column, name, epsilon)]
        for stat in STATS:
            vals = [x[stat] for x in these if stat in x]
            if vals:
                rows.append(row(NAME, {**key, "method": name}, stat, float(np.mean(vals)), len(vals)))
                rows.append(row(NAME, {**key, "method": name}, f"{stat}_sd", float(np.std(vals)), len(vals)))
    for name, doc in docs.items():
        q = np.asarray(doc["matrix"]) if isinstance(doc["matrix"], list) else _dense(doc)
        rows.append(row(NAME, {**key, "method": name}, "epsilon_audited", float(doc["audit"]["epsilon"]), 1))
        rows.append(
            row(NAME, {**key, "method": name}, "epsilon_realised", realised_epsilon(q, setups[name]["p_users"]), 1)
        )
        if name == "task":
            clear = float(doc["parameters"].get("delta_u", 0.0)) >= DELTA_CAP  # rr-released with no noise at all
            rows.append(row(NAME, {**key, "method": name}, "in_the_clear", float(clear), 1))
            # a design is tight, or a note says why not: here, why the audit is below the claim
            if clear and doc["audit"]["epsilon"] < 0.99 * epsilon:
                notes.append(
                    f"{column}, ε = {epsilon:g}: the task design releases the {len(doc['released'][0]['values'])} "
                    f"bins in the clear: they reveal at most {doc['audit']['epsilon']:.3g} nats about sex (its "
                    "audit), below the claim, so there is no noise to add"
                )
            errors = doc["parameters"]["task"]["per_report_error"]
            said = ", ".join(f"{m} {'not identifiable' if e is None else f'{e:.4g}'}" for m, e in errors.items())
            notes.append(
                f"{column}, ε = {epsilon:g}: the task design chose {doc['method']} (W1 per report at P̂: {said})"
            )


def _dense(doc: dict) -> np.ndarray:
    from rldp.shared.document import mechanism_matrix

    return np.asarray(mechanism_matrix(doc))


def _value(result: Result, method: str, stat: str, epsilon: float, panel: str = "age") -> float | None:
    return result.value(panel, method, stat, epsilon)


def table_numeric(result: Result) -> str:
    header = ["U", "ε", "design", "W1", "KS", "|mean err|", "|median err|", "audited ε", "realised ε"]
    out = []
    for panel in result.panels:
        for epsilon in result.settings["epsilons"]:
            for method in METHODS:
                cells = []
                for stat in STATS:
                    v = _value(result, method, stat, epsilon, panel)
                    sd = _value(result, method, f"{stat}_sd", epsilon, panel)
                    cells.append("—" if v is None else f"{fmt(v, 3)} ± {fmt(sd, 2)}")
                eps = [_value(result, method, s, epsilon, panel) for s in ("epsilon_audited", "epsilon_realised")]
                out.append([panel, f"{epsilon:g}", method, *cells, *(fmt(e, 3) for e in eps)])
    bins = "The bins sweep (rr-released on k public-quantile bins; rule = least predicted error):\n" + table_bins(
        result
    )
    return format_table(header, out) + "\n" + "\n".join(result.notes) + "\n\n" + bins


_LEGEND = {"task": "task (the rule's bins)", "floor": "floor (default bins)", "task-floor": "floor (the rule's bins)"}


def plot_numeric(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    fig, axes = plt.subplots(1, len(result.panels), figsize=(6 * len(result.panels), 4), squeeze=False)
    handles = {}
    eps = result.settings["epsilons"]
    for ax, panel in zip(axes[0], result.panels, strict=True):
        for method in ("task", "polyopt-nmi", "grr-bins", "sw-ems", "floor", "task-floor"):
            ys = [_value(result, method, "w1", e, panel) for e in eps]
            if any(y is not None for y in ys):
                style = {"ls": "--", "marker": "x"} if method.endswith("floor") else {"ls": "-", "marker": "o"}
                line = ax.plot(eps, [math.nan if y is None else y for y in ys], **style)[0]
                handles[_LEGEND.get(method, method)] = line
        ax.set_xlabel("ε (nats)")
        ax.set_ylabel(f"W1 error of the {panel} distribution")
        ax.set_yscale("log")
        ax.set_title(f"U = {panel}, S = sex", fontsize=10)
    title = "Adult, S = sex: " + NOTE
    plot_bins(result, out)  # numeric-bins.png beside it
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=3)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        NAME,
        "rldp (docs/experiments/numeric.md)",
        "a numeric U (Adult age, S = sex): binned RLDP designs vs Square Wave + EMS and Piecewise",
        run_numeric,
        plot_numeric,
        table_numeric,
        solver="cg",
    ),
)
