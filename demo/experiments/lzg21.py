"""The experiments of [LZG21, Sec V]: Figures 2 and 3 (``isit-fig2``, ``isit-fig3``).

* ``isit-fig2`` — PolyOpt, GRR, IR, CR on |S| = |U| = 3, n = 1000, ε ∈ [0.2, 8], 200 draws.
* ``isit-fig3`` — GRR, IR, CR on |S| = |U| = 5 for several n.
"""

from __future__ import annotations

from pathlib import Path

from .config import PAPER_LZG21, Experiment, Result
from .figures import figure
from .synthetic import Shape, Synthetic
from .tables import mean_nmi_table

__all__ = ["ISIT_EPS", "ISIT_EPS_QUICK", "ISIT_FIG3_NS", "ISIT_FIG3_NS_QUICK", "EXPERIMENTS"]

ISIT_EPS = (0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
ISIT_EPS_QUICK = (0.2, 1.0, 4.0)
ISIT_FIG3_NS = (100, 1_000, 10_000, 100_000)
ISIT_FIG3_NS_QUICK = (100, 10_000)
_SHOWN_EPS = (0.2, 1.0, 2.0, 4.0, 8.0)  # the ε columns of the printed tables
_NMI_STATS = {"nmi": ("mean", "sem", "q25", "q75"), "eps_audited": ("max",)}
_YLABEL = "mean NMI under P̂ (dimensionless)"

ISIT_FIG2 = Synthetic(
    "isit-fig2",
    PAPER_LZG21,
    _NMI_STATS,
    epsilons=ISIT_EPS,
    quick_epsilons=ISIT_EPS_QUICK,
    shapes=((3, 3),),
    ns=(1000,),
    draws=200,
    quick_draws=6,
)


def plot_isit_fig2(result: Result, out: Path) -> Path:
    # The same panel twice: linear (as the paper) and log scale (the high-privacy regime).
    return figure(
        result,
        out,
        panels=result.panels * 2,
        statistic="nmi_mean",
        ylabel=_YLABEL,
        yscales=["linear"] * len(result.panels) + ["log"] * len(result.panels),
        ncols=2,
        title=f"|S| = |U| = 3, n = 1000, mean of {result.settings['draws']} draws [LZG21, Fig 2]",
    )


def _n_panel(shape: Shape, n: int) -> str:
    return f"n={n}"


def _n_title(shape: Shape, n: int) -> str:
    return f"|S| = |U| = 5, n = {n:,}"


ISIT_FIG3 = Synthetic(
    "isit-fig3",
    PAPER_LZG21,
    _NMI_STATS,
    epsilons=ISIT_EPS,
    quick_epsilons=ISIT_EPS_QUICK,
    shapes=((5, 5),),
    ns=ISIT_FIG3_NS,
    quick_ns=ISIT_FIG3_NS_QUICK,
    draws=200,
    quick_draws=3,
    panel=_n_panel,
    title=_n_title,
)


def plot_isit_fig3(result: Result, out: Path) -> Path:
    return figure(
        result,
        out,
        statistic="nmi_mean",
        ylabel=_YLABEL,
        title=f"|S| = |U| = 5, varying n, mean of {result.settings['draws']} draws [LZG21, Fig 3]",
    )


def table_isit(result: Result) -> str:
    return mean_nmi_table(result, _SHOWN_EPS)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "isit-fig2",
        "[LZG21, Fig 2]",
        "PolyOpt/GRR/IR/CR on |S| = |U| = 3, n = 1000",
        ISIT_FIG2.run,
        plot_isit_fig2,
        table_isit,
    ),
    Experiment(
        "isit-fig3",
        "[LZG21, Fig 3]",
        "GRR/IR/CR on |S| = |U| = 5 for several n",
        ISIT_FIG3.run,
        plot_isit_fig3,
        table_isit,
    ),
)
