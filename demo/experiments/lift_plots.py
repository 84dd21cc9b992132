"""Figures and tables of the [ZDS23] experiments (:mod:`.lift`).

House style as :mod:`rldp.demo.plots`: one legend below the plots, ε in nats, NMI dimensionless; the
papers' methods solid, rldp's (audit-enforced) dashed with hollow markers, rldp's robust designs
dotted; one colour per budget (per method when the figure has one budget).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import plots
from .config import Experiment, Result
from .lift import FIG1_BINS, METHODS, PAPER_METHODS, SWEEPS, Sweep, run_fig1, run_sweep
from .tables import fmt, format_table

__all__ = ["EXPERIMENTS", "plot_sweep", "table_sweep", "plot_fig1", "table_fig1"]

_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
_MARKERS = {"watchdog-paper": "o", "watchdog": "o", "subset-merging-paper": "s", "subset-merging": "s",
            "aorr": "^", "subset-rr-paper": "D", "subset-rr": "D", "aorr-robust": "v", "watchdog-robust": "P"}  # fmt: skip
_COLUMNS = (
    ("nmi", "NMI = I(X;Y)/H(X)", "utility"),
    ("log_max_lift", "log max_y Λ(y) (nats)", "max-lift leakage (audited)"),
    ("log_min_lift", "log min_y Ψ(y) (nats)", "min-lift leakage (audited)"),
)


def plot_sweep(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    data = result.series()
    columns = list(_COLUMNS)
    if any(k[2] == "seconds" for k in data) and result.name in ("lift-fig8", "lift-fig9", "lift-fig10"):
        columns.append(("seconds", "seconds per design", "run time (log scale)"))
    fig, axes = plt.subplots(1, len(columns), figsize=(5.2 * len(columns), 4.4), squeeze=False)
    handles: dict[str, Any] = {}
    for c, (stat, ylabel, heading) in enumerate(columns):
        ax = axes[0][c]
        for b, panel in enumerate(result.panels):
            colour = _COLOURS[b % len(_COLOURS)]
            for method in result.methods:
                curve = data.get((panel, method, stat), {})
                if not curve:
                    continue
                ours = method not in PAPER_METHODS
                xs = sorted(curve)
                style = ":" if method.endswith("-robust") else "--" if ours else "-"
                if len(result.panels) == 1:  # one budget: colour by method instead
                    colour = _COLOURS[result.methods.index(method) % len(_COLOURS)]
                (line,) = ax.plot(xs, [curve[x] for x in xs], color=colour, linestyle=style,
                                  marker=_MARKERS.get(method, "x"), markersize=3.5, linewidth=1.4,
                                  markerfacecolor="white" if ours else colour)  # fmt: skip
                label = METHODS[method]
                if panel.startswith(("ℓ1", "χ²", "α-lift")):  # no product notion: the experiment's own check
                    label = label.replace("(rldp)", "(experiment's own check)")
                handles[f"{label} — {panel}"] = line
        ax.set_xlabel("ε_LDP = ε_l + ε_u (nats)")
        ax.set_ylabel(ylabel)
        ax.set_title(heading, fontsize=10)
        if stat == "seconds":
            ax.set_yscale("log")
        if stat == "nmi":
            ax.set_ylim(-0.02, 1.02)
    source = next((f"{s.source} " for s in SWEEPS if s.name == result.name), "")
    title = f"{source}{result.name}: {result.settings['data']}"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=2)


def table_sweep(result: Result) -> str:
    grid = result.settings["epsilons"]
    shown = [e for e in grid if e in (0.5, 1.0, 2.0, 4.0, 8.0)] or list(grid)[:5]
    rows = []
    for panel in result.panels:
        for method in result.methods:
            cells = [fmt(result.value(panel, method, "nmi", epsilon=e)) for e in shown]
            if any(c != "—" for c in cells):
                rows.append([f"{method} / {panel}", *cells])
    return f"mean NMI ({result.settings['data']})\n" + format_table(
        ["method / budget", *(f"ε={e:g}" for e in shown)], rows
    )


def plot_fig1(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    data = result.series()
    handles: dict[str, Any] = {}
    width = float(FIG1_BINS[1] - FIG1_BINS[0])
    for method, colour, label in (
        ("log_min_lift", "tab:blue", "log Ψ(x) = min_s log-lift"),
        ("log_max_lift", "tab:red", "log Λ(x) = max_s log-lift"),
    ):
        curve = data.get(("histogram", method, "fraction"), {})
        xs = np.array(sorted(curve))
        bars = ax.bar(xs + width / 2, [curve[x] for x in xs], width=width, color=colour, alpha=0.6)
        handles[label] = bars
    ax.set_xlabel("log-lift (nats)")
    ax.set_ylabel("fraction of symbols")
    ax.set_yscale("log")
    title = f"[ZDS23, Fig 1]: {result.panel_titles['histogram']}"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=2)


def table_fig1(result: Result) -> str:
    rows = [[m, *(fmt(result.value("histogram", m, s), 2) for s in ("min", "max", "mean"))] for m in result.methods]
    return format_table(["log-lift", "min", "max", "mean"], rows)


def _experiment(sweep: Sweep) -> Experiment:
    return Experiment(sweep.name, sweep.source, sweep.summary, lambda cfg: run_sweep(sweep, cfg), plot_sweep,
                      table_sweep)  # fmt: skip


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "lift-fig1",
        "[ZDS23, Fig 1]",
        "lift asymmetry: histograms of min- and max-log-lifts",
        run_fig1,
        plot_fig1,
        table_fig1,
    ),  # fmt: skip
    *(_experiment(s) for s in SWEEPS),
)
