"""The experiments of [LZG21, Sec V]: Figures 2 and 3 (``isit-fig2``, ``isit-fig3``).

* ``isit-fig2`` — PolyOpt, GRR, IR, CR on |S| = |U| = 3, n = 1000, ε ∈ [0.2, 8], 200 draws.
* ``isit-fig3`` — GRR, IR, CR on |S| = |U| = 5 for several n.
"""

from __future__ import annotations

from pathlib import Path

from .. import plots
from .config import BETA, ORDER, PAPER_LZG21, PRIOR, Config, Experiment, Result
from .evaluation import synthetic_task
from .stats import failure_notes, summarise
from .tables import curve_table
from .tasks import draw_tasks, run_tasks, select_methods, shape_panel, shape_title

__all__ = ["ISIT_EPS", "ISIT_EPS_QUICK", "ISIT_FIG3_NS", "ISIT_FIG3_NS_QUICK", "EXPERIMENTS"]

ISIT_EPS = (0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
ISIT_EPS_QUICK = (0.2, 1.0, 4.0)
ISIT_FIG3_NS = (100, 1_000, 10_000, 100_000)
ISIT_FIG3_NS_QUICK = (100, 10_000)
_SHOWN_EPS = (0.2, 1.0, 2.0, 4.0, 8.0)  # the ε columns of the printed tables
_NMI_STATS = {"nmi": ("mean", "sem", "q25", "q75"), "eps_audited": ("max",)}


def _table_label(result: Result) -> str:
    return f"mean NMI under P̂ over {result.settings['draws']} draws (* = some draws failed)"


def run_isit_fig2(cfg: Config) -> Result:
    eps = cfg.epsilons or (ISIT_EPS_QUICK if cfg.quick else ISIT_EPS)
    shape, n = (3, 3), 1000
    draws = cfg.draws or (6 if cfg.quick else 200)
    methods = select_methods(cfg, PAPER_LZG21)
    tasks = draw_tasks(cfg, (shape,), (n,), draws, (BETA,), methods, eps, lambda s, n: shape_panel(s))
    records = run_tasks(synthetic_task, tasks, cfg, "isit-fig2")
    rows = summarise("isit-fig2", records, _NMI_STATS)
    panel = shape_panel(shape)
    return Result(
        "isit-fig2",
        rows,
        records,
        [panel],
        {panel: shape_title(shape, n)},
        methods,
        {
            "epsilons": list(eps),
            "beta": BETA,
            "order": ORDER,
            "n": n,
            "draws": draws,
            "prior": PRIOR,
            "shapes": [list(shape)],
        },
        failure_notes(records),
    )


def plot_isit_fig2(result: Result, out: Path) -> Path:
    # The same panel twice: linear (as the paper) and log scale (the high-privacy regime).
    return plots.plot_curves(
        result.rows,
        path=out / "isit-fig2.png",
        panels=result.panels * 2,
        panel_titles=result.panel_titles,
        methods=result.methods,
        statistic="nmi_mean",
        ylabel="mean NMI under P̂ (dimensionless)",
        yscales=["linear"] * len(result.panels) + ["log"] * len(result.panels),
        ncols=2,
        title=f"|S| = |U| = 3, n = 1000, mean of {result.settings['draws']} draws [LZG21, Fig 2]",
    )


def table_isit_fig2(result: Result) -> str:
    return curve_table(result, "nmi_mean", _SHOWN_EPS, _table_label(result))


def _n_panel(shape: tuple[int, int], n: int) -> str:
    return f"n={n}"


def run_isit_fig3(cfg: Config) -> Result:
    eps = cfg.epsilons or (ISIT_EPS_QUICK if cfg.quick else ISIT_EPS)
    shape = (5, 5)
    ns = ISIT_FIG3_NS_QUICK if cfg.quick else ISIT_FIG3_NS
    draws = cfg.draws or (3 if cfg.quick else 200)
    methods = select_methods(cfg, PAPER_LZG21)
    tasks = draw_tasks(cfg, (shape,), ns, draws, (BETA,), methods, eps, _n_panel)
    records = run_tasks(synthetic_task, tasks, cfg, "isit-fig3")
    rows = summarise("isit-fig3", records, _NMI_STATS)
    panels = [_n_panel(shape, n) for n in ns]
    titles = {_n_panel(shape, n): f"|S| = |U| = 5, n = {n:,}" for n in ns}
    return Result(
        "isit-fig3",
        rows,
        records,
        panels,
        titles,
        methods,
        {
            "epsilons": list(eps),
            "beta": BETA,
            "order": ORDER,
            "ns": list(ns),
            "draws": draws,
            "prior": PRIOR,
            "shapes": [list(shape)],
        },
        failure_notes(records),
    )


def plot_isit_fig3(result: Result, out: Path) -> Path:
    return plots.plot_curves(
        result.rows,
        path=out / "isit-fig3.png",
        panels=result.panels,
        panel_titles=result.panel_titles,
        methods=result.methods,
        statistic="nmi_mean",
        ylabel="mean NMI under P̂ (dimensionless)",
        title=f"|S| = |U| = 5, varying n, mean of {result.settings['draws']} draws [LZG21, Fig 3]",
    )


def table_isit_fig3(result: Result) -> str:
    return curve_table(result, "nmi_mean", _SHOWN_EPS, _table_label(result))


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "isit-fig2",
        "[LZG21, Fig 2]",
        "PolyOpt/GRR/IR/CR on |S| = |U| = 3, n = 1000",
        run_isit_fig2,
        plot_isit_fig2,
        table_isit_fig2,
    ),
    Experiment(
        "isit-fig3",
        "[LZG21, Fig 3]",
        "GRR/IR/CR on |S| = |U| = 5 for several n",
        run_isit_fig3,
        plot_isit_fig3,
        table_isit_fig3,
    ),
)
