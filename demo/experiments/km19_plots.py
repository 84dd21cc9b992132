"""Figures and tables of the [KM19] experiments (:mod:`.km19`): ``distp-example`` and ``distp-adult``.

House style as :mod:`rldp.demo.plots`: one legend below the plots, units on the axes (ε in nats; δ,
losses and NMI dimensionless), dashed lines for "over the uncertainty set" variants.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import plots
from .config import Experiment, Result
from .km19 import ADULT_METHODS, EXAMPLE_N, LAMBDA0, LAMBDA1, run_adult, run_example
from .tables import fmt, format_table

__all__ = ["EXPERIMENTS", "plot_example", "plot_adult", "table_example", "table_adult"]

# method -> (label, colour)
_STYLE = {
    "coupling": ("coupling mechanism, exactly private at P̂", "tab:blue"),
    "coupling-robust": ("coupling designed over the 95 % set (δ = 0)", "tab:cyan"),
    "grr": ("GRR on X (ε-LDP on X)", "tab:red"),
    "grr-1": ("GRR on X at ε = 1", "tab:red"),
    "grr-2": ("GRR on X at ε = 2", "tab:orange"),
    "polyopt": ("optimal ε-LDP w.r.t. S at P̂ (PolyOpt, radius 0)", "tab:purple"),
}


def _value(result: Result, panel: str, statistic: str) -> float:
    return next(float(r["value"]) for r in result.rows if r["panel"] == panel and r["statistic"] == statistic)


# ----------------------------------------------------------------------------- distp-example


def plot_example(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(16.5, 4.6), gridspec_kw={"width_ratios": [1, 1.25, 1.25]})
    gamma = np.array([[_value(result, "coupling", f"gamma_{x}{y}") for y in (1, 2, 3)] for x in (1, 2, 3)])
    ax0.imshow(gamma, cmap="Blues", vmin=0, vmax=0.45)
    for x in range(3):
        for y in range(3):
            text = f"{gamma[x, y]:.1f}" if gamma[x, y] > 1e-12 else "0"
            ax0.text(y, x, text, ha="center", va="center", fontsize=12, color="black")
    ax0.set_xticks(range(3), [f"y={y + 1}\nλ₁={v:g}" for y, v in enumerate(LAMBDA1)])
    ax0.set_yticks(range(3), [f"x={x + 1}, λ₀={v:g}" for x, v in enumerate(LAMBDA0)])
    row2 = ", ".join(f"{_value(result, 'coupling', f'A_2{y}'):.1f}" for y in (1, 2, 3))
    ax0.set_title(
        f"{result.panel_titles['coupling']}\nEMD = {_value(result, 'coupling', 'emd'):.1f}; A(·|x=2) = ({row2})",
        fontsize=10,
    )
    data = result.series()
    handles: dict[str, Any] = {}
    for method in ("coupling", "grr-1", "grr-2"):
        label, colour = _STYLE[method]
        for statistic, dash, scope in (("delta_p_hat", "-", "at λ₀, λ₁"), ("delta_robust", "--", "over F")):
            curve = data.get(("delta", method, statistic), {})
            xs = sorted(curve)
            (line,) = ax1.plot(xs, [curve[x] for x in xs], color=colour, linestyle=dash, linewidth=1.7)
            handles[f"{label.replace(', exactly private at P̂', '')} — {scope}"] = line
    ax1.set_xlabel("ε (nats)")
    ax1.set_ylabel("smallest δ (probability)")
    ax1.set_title(f"{result.panel_titles['delta']}\n(F: 95 % set of n = {EXAMPLE_N:,} public records)", fontsize=10)
    ax1.set_ylim(bottom=-0.01)
    for method, marker in (("grr", "v"), ("coupling-robust", "o")):
        label, colour = _STYLE[method]
        curve = data.get(("loss", method, "loss"), {})
        xs = sorted(curve)
        (line,) = ax2.plot(xs, [curve[x] for x in xs], color=colour, marker=marker, linewidth=1.7, markersize=5)
        handles.setdefault(label if method == "grr" else f"{label}, n = {EXAMPLE_N:,}", line)
    exact = data[("loss", "coupling", "loss")][0.0]
    line = ax2.axhline(exact, color=_STYLE["coupling"][1], linestyle=":", linewidth=1.5)
    handles["coupling at P̂: (0, 0)-DistP at λ₀, λ₁, loss ½·EMD = 0.15"] = line
    ax2.set_xlabel("ε of the (ε, 0)-DistP guarantee (nats)")
    ax2.set_ylabel("expected loss E|X − Y|")
    ax2.set_title(result.panel_titles["loss"], fontsize=10)
    ax2.set_ylim(bottom=0)
    title = "[KM19, Example 2 / Fig 2]: the coupling mechanism vs GRR, λ₀ = (0.2, 0.5, 0.3), λ₁ = (0.3, 0.2, 0.5)"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=3)


def table_example(result: Result) -> str:
    gamma = [[fmt(_value(result, "coupling", f"gamma_{x}{y}"), 2) for y in (1, 2, 3)] for x in (1, 2, 3)]
    lines = [
        f"optimal coupling γ (rows x ~ λ₀, columns y ~ λ₁); EMD = {fmt(_value(result, 'coupling', 'emd'))} "
        "(paper: 0.3)",
        format_table(["x", "y=1", "y=2", "y=3"], [[str(x + 1), *gamma[x]] for x in range(3)]),
        "mechanism A(·|x=2) = ("
        + ", ".join(fmt(_value(result, "coupling", f"A_2{y}"), 2) for y in (1, 2, 3))
        + ") (paper: 0.2, 0.4, 0.4)",
        "",
    ]
    data = result.series()
    shown = (0.0, 0.25, 0.5, 1.0)
    rows = []
    for method in ("coupling", "grr-1", "grr-2"):
        for statistic, scope in (("delta_p_hat", "at λ₀, λ₁"), ("delta_robust", "over F")):
            curve = data.get(("delta", method, statistic), {})
            rows.append([f"{method} {scope}", *(fmt(curve.get(e), 4) for e in shown)])
    lines += ["smallest δ of (ε, δ)-DistP", format_table(["mechanism", *(f"ε={e:g}" for e in shown)], rows)]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- distp-adult

# statistic, axis label, title, y scale ("symlog": δ may be exactly 0)
_ADULT_COLUMNS = (
    ("nmi_u", "I(X;Y) / H(X)", "utility under P̂", "linear"),
    ("loss_decoded", "E[X ≠ X̂(Y)] (Bayes decoder)", "expected Hamming loss under P̂", "linear"),
    ("eps_test", "smallest ε at δ = 0 (nats)", "privacy under adult.test's distribution", "log"),
    ("delta_robust", "smallest δ at the design's ε", "privacy over the 95 % confidence set", "symlog"),
)


def plot_adult(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    n = len(result.panels)
    fig, axes = plt.subplots(n, len(_ADULT_COLUMNS), figsize=(18, 3.9 * n), squeeze=False)
    data = result.series()
    handles: dict[str, Any] = {}
    for r, panel in enumerate(result.panels):
        for c, (statistic, ylabel, heading, yscale) in enumerate(_ADULT_COLUMNS):
            ax = axes[r][c]
            values = [v for m in ADULT_METHODS for v in data.get((panel, m, statistic), {}).values()]
            finite = [v for v in values if math.isfinite(v)]
            ceiling = max(finite) * 1.15 if finite and max(finite) > 0 else 1.0
            for method in ADULT_METHODS:
                curve = data.get((panel, method, statistic), {})
                if not curve:
                    continue
                label, colour = _STYLE[method]
                xs = sorted(curve)
                ys = [ceiling if math.isinf(curve[x]) else max(curve[x], 1e-3 if yscale == "log" else 0.0) for x in xs]
                dash = "--" if method == "coupling-robust" else "-"
                (line,) = ax.plot(xs, ys, color=colour, linestyle=dash, marker="o", markersize=4, linewidth=1.6)
                handles.setdefault(label, line)
            if statistic == "eps_test":
                xs = sorted({x for m in ADULT_METHODS for x in data.get((panel, m, statistic), {})})
                (diag,) = ax.plot(xs, xs, color="tab:green", linestyle=":", linewidth=1.2)
                handles.setdefault("ε under adult.test = the design's ε", diag)
            if any(math.isinf(v) for v in values):
                ax.axhline(ceiling, color="0.4", linewidth=0.8, linestyle=(0, (1, 2)))
                ax.annotate("∞ drawn here", xy=(0.99, ceiling), xycoords=("axes fraction", "data"), fontsize=8,
                            ha="right", va="bottom", color="0.3")  # fmt: skip
            ax.set_xscale("log", base=2)
            grid = sorted({x for m in ADULT_METHODS for x in data.get((panel, m, statistic), {})})
            ax.set_xticks(grid, [f"{x:g}" for x in grid])
            ax.minorticks_off()
            if yscale == "log":
                ax.set_yscale("log")
            elif yscale == "symlog":
                ax.set_yscale("symlog", linthresh=1e-3)
                ax.set_ylim(bottom=0)
            ax.set_xlabel("ε of the design (nats)")
            ax.set_ylabel(ylabel, fontsize=9)
            ax.set_title(f"{result.panel_titles[panel]}\n{heading}", fontsize=9)
    title = "Adult: coupling mechanism vs GRR vs optimal ε-LDP w.r.t. S at P̂ (P̂ from adult.data, Hamming cost)"
    return plots.finish(plt, fig, handles, title, out / f"{result.name}.png", legend_cols=3)


def table_adult(result: Result) -> str:
    shown = 1.0 if any(math.isclose(e, 1.0) for e in result.settings["epsilons"]) else result.settings["epsilons"][0]
    header = ["method", "NMI(X)", "loss", "loss*", "ε P̂", "δ P̂", "ε F", "δ F", "ε test", "δ test"]
    stats = ("nmi_u", "loss", "loss_decoded", "eps_p_hat", "delta_p_hat", "eps_robust", "delta_robust")
    parts = []
    for panel in result.panels:
        rows = []
        for method in ADULT_METHODS:
            cells = [fmt(result.value(panel, method, s, epsilon=shown)) for s in stats]
            cells += [fmt(result.value(panel, method, s, epsilon=shown), 4) for s in ("eps_test", "delta_test")]
            rows.append([method, *cells])
        parts.append(f"{result.panel_titles[panel]} at ε = {shown:g}\n" + format_table(header, rows))
    legend = "loss: Y read as X (Hamming); loss*: Y decoded by the Bayes rule; F: the 95 % confidence set"
    return "\n\n".join(parts) + "\n" + legend


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "distp-example",
        "[KM19, Example 2 / Fig 2]",
        "the coupling mechanism: Example 2's coupling and EMD, δ vs ε against GRR",
        run_example,
        plot_example,
        table_example,
    ),
    Experiment(
        "distp-adult",
        "[KM19, Defs 16, 18] on Adult",
        "coupling vs GRR vs optimal ε-LDP w.r.t. S at P̂: utility and audited (ε, δ)",
        run_adult,
        plot_adult,
        table_adult,
        solver="auto",
    ),
)
