"""Figures and tables of the [LTS20] experiments (:mod:`.funnel`).

House style as :mod:`rldp.demo.plots`: one legend below the plots, ε in nats, I(X;Y) in nats.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from .. import plots
from .config import Experiment, Result
from .funnel import run_fig3, run_fig5, run_fig6, run_fig7, run_fig8
from .funnel_srlip import run_fig4
from .tables import fmt, format_table

__all__ = ["EXPERIMENTS"]

_STYLE = {  # method -> (label, colour, marker)
    "opt-ldp": ("optimal ε-LDP w.r.t. S [LTS20, Thm 2]", "tab:blue", "o"),
    "opt-lip": ("optimal ε-LIP [LTS20, Thm 3]", "tab:red", "s"),
    "opt-ldp-2eps": ("optimal 2ε-LDP w.r.t. S [LTS20, Thm 2]", "tab:green", "^"),
    "grr": ("GRR calibrated to ε-LIP [LTS20, eq 29]", "tab:orange", "v"),
    "oue": ("OUE calibrated to ε-LIP [LTS20, eq 32]", "tab:purple", "D"),
    "cr": ("CR calibrated to ε-LIP [LTS20, Alg 1, Prop 1]", "tab:brown", "P"),
    "thm4-paper": ("product of per-attribute optima at ε/m [LTS20, Thm 4] (as printed, unenforced)", "tab:gray", "D"),
    "thm4-calibrated": (
        "the same product, per-attribute budget calibrated on the exact SRLIP audit (rldp)",
        "tab:green",
        "^",
    ),
}


def _curves(result: Result, out: Path, stat: str, ylabel: str, title: str, ncols: int, sd: str | None = None,
            second: tuple[str, str] | None = None) -> Path:  # fmt: skip
    plt = plots.pyplot()
    n = len(result.panels)
    ncols = min(n, ncols)
    rows_ = math.ceil(n / ncols)
    fig, axes = plt.subplots(rows_, ncols, figsize=(5.0 * ncols, 3.9 * rows_), squeeze=False)
    data = result.series(with_beta=False)
    handles: dict[str, Any] = {}
    for i, panel in enumerate(result.panels):
        ax = axes[i // ncols][i % ncols]
        twin = ax.twinx() if second else None
        for method in result.methods:
            curve = data.get((panel, method, stat), {})
            if not curve:
                continue
            label, colour, marker = _STYLE[method]
            xs = sorted(curve)
            ys = [curve[x] for x in xs]
            (line,) = ax.plot(xs, ys, color=colour, marker=marker, markersize=4, linewidth=1.5)
            if sd:
                err = data.get((panel, method, sd), {})
                ax.fill_between(xs, [y - err.get(x, 0) for x, y in zip(xs, ys)],
                                [y + err.get(x, 0) for x, y in zip(xs, ys)], color=colour, alpha=0.15)  # fmt: skip
            handles[label] = line
            other = data.get((panel, method, second[0]), {}) if second else {}
            if other and second and twin is not None:  # a second statistic on a right-hand axis, dashed
                xs2 = sorted(other)
                (line2,) = twin.plot(xs2, [other[x] for x in xs2], color=colour, linestyle="--", linewidth=1.1)
                twin.set_ylabel(second[1])
                handles[f"{label.split(' [')[0]}: {second[1]} (dashed, right axis)"] = line2
        ident = [float(r["value"]) for r in result.rows if r["panel"] == panel and r["method"] == "identity"]
        if ident:
            line = ax.axhline(ident[0], color="0.5", linestyle=":", linewidth=1)
            handles["H(X) (no privacy)"] = line
        ax.set_xlabel("ε of ε-LIP (nats)")
        ax.set_ylabel(ylabel)
        ax.set_title(result.panel_titles[panel], fontsize=9)
    for j in range(n, rows_ * ncols):
        axes[j // ncols][j % ncols].axis("off")
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=3)


def plot_fig3(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2))
    data = result.series(with_beta=False)
    handles: dict[str, Any] = {}
    for method in result.methods:
        label, colour, marker = _STYLE[method]
        for ax, stat in ((ax0, "information"), (ax1, "seconds")):
            curve = data.get(("synthetic", method, stat), {})
            err = data.get(("synthetic", method, f"{stat}_sd"), {})
            xs = sorted(curve)
            line = ax.errorbar(xs, [curve[x] for x in xs], yerr=[err.get(x, 0) for x in xs], color=colour,
                               marker=marker, markersize=4, capsize=3, linewidth=1.5)  # fmt: skip
            handles[label] = line
    ax0.set_ylabel("I(X;Y) (nats), mean ± sd")
    ax1.set_ylabel("design time (s), mean ± sd")
    ax1.set_yscale("log")
    for ax in (ax0, ax1):
        ax.set_xlabel("ε (nats)")
    ax0.set_title("utility", fontsize=10)
    ax1.set_title("design time (rldp: both as PolyOpt over output rows)", fontsize=10)
    title = f"[LTS20, Fig 3]: {result.panel_titles['synthetic']}"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=3)


def plot_fig4(result: Result, out: Path) -> Path:
    """Rows: the data panels; columns: I(X;Y), the audited SRLIP ε (against the claim ε), design time."""
    plt = plots.pyplot()
    columns = (("information", "I(X;Y) (nats)"), ("srlip_audited", "audited SRLIP ε (exact, nats)"),
               ("seconds", "design time (s)"))  # fmt: skip
    n = len(result.panels)
    fig, axes = plt.subplots(n, 3, figsize=(14.5, 3.6 * n), squeeze=False)
    data = result.series(with_beta=False)
    handles: dict[str, Any] = {}
    for i, panel in enumerate(result.panels):
        for c, (stat, ylabel) in enumerate(columns):
            ax = axes[i][c]
            for method in result.methods:
                curve = data.get((panel, method, stat), {})
                if not curve:
                    continue
                label, colour, marker = _STYLE[method]
                ours = method == "thm4-calibrated"  # drawn over the paper's line, which it equals where that passes
                xs = sorted(curve)
                err = data.get((panel, method, f"{stat}_sd"), {})
                yerr = None if stat == "seconds" else [err.get(x, 0) for x in xs]  # sd of times: noise on a log axis
                line = ax.errorbar(xs, [curve[x] for x in xs], yerr=yerr, color=colour, marker=marker, markersize=4,
                                   capsize=3, zorder=3 if ours else 2, linestyle="--" if ours else "-",
                                   linewidth=2.8 if method == "thm4-paper" else 1.4)  # fmt: skip
                handles[label] = line
                if stat == "srlip_audited":
                    worst = data.get((panel, method, "srlip_audited_max"), {})
                    ax.plot(xs, [worst[x] for x in xs], color=colour, marker=marker, markersize=3,
                            linestyle="none", markerfacecolor="white")  # fmt: skip
            if stat == "srlip_audited":
                xs = sorted(data.get((panel, result.methods[0], stat), {}))
                handles["the claim: ε (a design above this line leaks)"] = ax.plot(xs, xs, color="k", linestyle=":")[0]
                ax.set_yscale("log")
            if stat == "seconds":
                ax.set_yscale("log")
            ax.set_xlabel("ε of ε-SRLIP / ε-LIP (nats)")
            ax.set_ylabel(ylabel)
            ax.set_title(result.panel_titles[panel] if c == 0 else f"{ylabel.split(' (')[0]}: mean" + ("" if stat == "seconds" else " ± sd, ○ = worst"),
                         fontsize=8.5)  # fmt: skip
    title = "[LTS20, Fig 4]: optimal LIP vs the SRLIP products of Thm 4 (which is false), exact SRLIP audit"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=2)


def table_fig4(result: Result) -> str:
    rows = []
    for panel in result.panels:
        grid = sorted({float(r["epsilon"]) for r in result.rows if r["panel"] == panel})
        for method in result.methods:
            cells = [f"{fmt(result.value(panel, method, 'information', epsilon=e))} / "
                     f"{fmt(result.value(panel, method, 'srlip_audited_max', epsilon=e))}" for e in grid]  # fmt: skip
            rows.append([f"{panel} {method}", *(f"ε={e:g}: {c}" for e, c in zip(grid, cells))])
    return "mean I(X;Y) / worst audited SRLIP ε\n" + "\n".join("  ".join(r) for r in rows)


def plot_fig5(result: Result, out: Path) -> Path:
    return _curves(result, out, "information", "I(X;Y) (nats)", "[LTS20, Fig 5]: Adult, designs calibrated to ε-LIP", 3)


def plot_fig8(result: Result, out: Path) -> Path:
    title = "[LTS20, Fig 8]: α of GRR and CR calibrated to ε-LIP (exact audit) on Adult; I(X;Y) dashed"
    return _curves(result, out, "alpha", "α (solid)", title, 3, second=("information", "I(X;Y) (nats)"))


def plot_fig6(result: Result, out: Path) -> Path:
    title = f"[LTS20, Fig 6]: GRR vs CR, {result.settings['draws']} P_SX ~ Dirichlet(½) per shape (mean ± sd)"
    return _curves(result, out, "nmi_mean", "NMI = I(X;Y)/H(X)", title, 4, sd="nmi_sd")


def plot_fig7(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    n = len(result.panels)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 4.0), squeeze=False)
    handles: dict[str, Any] = {}
    for i, panel in enumerate(result.panels):
        ax = axes[0][i]
        pts: dict[float, dict[str, float]] = defaultdict(dict)
        for r in result.rows:
            if r["panel"] == panel and r.get("beta") not in (None, ""):
                pts[float(r["beta"])][r["statistic"]] = float(r["value"])
        xs = [p["d_alpha"] for p in pts.values()]
        ys = [p["d_nmi"] for p in pts.values()]
        handles["one P_SX ~ Dirichlet(½)"] = ax.scatter(xs, ys, s=12, color="tab:brown")
        rho = result.value(panel, "cr-grr", "pearson")
        ax.axhline(0, color="0.6", linewidth=0.8)
        ax.axvline(0, color="0.6", linewidth=0.8)
        ax.set_xlabel("α_CR − α_GRR")
        ax.set_ylabel("NMI_CR − NMI_GRR")
        ax.set_title(f"{result.panel_titles[panel]}; Pearson ρ = {fmt(rho)}", fontsize=9)
    title = "[LTS20, Fig 7]: CR − GRR, both calibrated to ε-LIP"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=1)


def _table(result: Result, stat: str) -> str:
    grid = result.settings["epsilons"]
    rows = []
    for panel in result.panels:
        for method in result.methods:
            cells = [fmt(result.value(panel, method, stat, epsilon=e)) for e in grid]
            if any(c != "—" for c in cells):
                rows.append([f"{panel} {method}", *cells])
    return format_table(["panel / method", *(f"ε={e:g}" for e in grid)], rows)


def table_fig7(result: Result) -> str:
    rows = [[p, fmt(result.value(p, "cr-grr", "pearson"))] for p in result.panels]
    return format_table(["shape", "Pearson ρ(Δα, ΔNMI)"], rows) + "\n(the paper: 0.9815, 0.9889, 0.9731)"


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("funnel-fig3", "[LTS20, Fig 3]", "optimal LDP(ε) vs LIP(ε) vs LDP(2ε) w.r.t. S: utility and time",
               run_fig3, plot_fig3, lambda r: _table(r, "information")),
    Experiment("funnel-fig4", "[LTS20, Fig 4]", "optimal LIP vs the SRLIP product of Thm 4, as printed and "
               "calibrated on the exact SRLIP audit", run_fig4, plot_fig4, table_fig4),
    Experiment("funnel-fig5", "[LTS20, Fig 5]", "GRR, OUE, CR and optimal LIP on Adult: I(X;Y)", run_fig5, plot_fig5,
               lambda r: _table(r, "information")),
    Experiment("funnel-fig6", "[LTS20, Fig 6]", "GRR vs CR calibrated to LIP on Dirichlet(½) data: NMI", run_fig6,
               plot_fig6, lambda r: _table(r, "nmi_mean")),
    Experiment("funnel-fig7", "[LTS20, Fig 7]", "CR − GRR: difference in α explains the difference in utility",
               run_fig7, plot_fig7, table_fig7),
    Experiment("funnel-fig8", "[LTS20, Fig 8]", "α of GRR and CR calibrated to ε-LIP on Adult, with I(X;Y)",
               run_fig8, plot_fig8, lambda r: _table(r, "alpha")),
)  # fmt: skip
