"""Figure and table of ``rldp experiment pilot`` (:mod:`.pilot`).

House style as :mod:`rldp.demo.plots`: one legend below the panels; n₁ on a log axis; rates with
±2 Monte-Carlo standard errors.
"""

from __future__ import annotations

import math
from pathlib import Path

from .. import plots
from .config import Experiment, Result
from .pilot import BETA, run_pilot
from .tables import fmt, format_table

__all__ = ["EXPERIMENTS", "plot_pilot", "table_pilot"]

_UTILITY = {
    "pilot-then-design": ("pilot, then PolyOpt over the pilot's F", "tab:blue", "-o"),
    "grr-everyone": ("GRR for every user (plain LDP)", "tab:red", "--"),
    "public-design": ("PolyOpt from public data (adult.data) for every user", "tab:green", ":"),
}


def _points(result: Result, panel: str, method: str, statistic: str) -> dict[int, float]:
    return {
        int(r["n"]): float(r["value"])
        for r in result.rows
        if r["panel"] == panel and r["method"] == method and r["statistic"] == statistic
    }


def plot_pilot(result: Result, out: Path) -> Path:
    plt = plots.pyplot()
    pairs = [p.split(" ", 1)[1] for p in result.panels if p.startswith("coverage ")]
    fig, axes = plt.subplots(2, len(pairs), figsize=(6.2 * len(pairs), 8.4), squeeze=False)
    handles = {}
    for j, label in enumerate(pairs):
        ax = axes[0][j]
        panel = f"coverage {label}"
        for statistic, colour, text, marker, size in (
            ("coverage", "tab:blue", "P ∈ F (the true P in the pilot's confidence set)", "o", 9),
            ("claim_holds", "tab:purple", "the design over F keeps its claim at the true P", "s", 5),
            ("naive_coverage", "tab:orange", "P in the public-data χ² ball of n₁ samples (ignores the noise)", "^", 6),
        ):
            rate = _points(result, panel, "pilot", statistic)
            se = _points(result, panel, "pilot", f"{statistic}_se")
            xs = sorted(n for n in rate if not math.isnan(rate[n]))
            handles[text] = ax.errorbar(
                xs,
                [rate[n] for n in xs],
                yerr=[2 * se.get(n, 0.0) for n in xs],
                color=colour,
                marker=marker,
                markersize=size,
                capsize=3,
            )
        handles[f"1 − β = {1 - BETA:g}"] = ax.axhline(1 - BETA, color="grey", linestyle="--")
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("pilot size n₁ (reports)")
        ax.set_ylabel("rate over simulated pilots")
        ax.set_title(result.panel_titles[panel], fontsize=10)
        ax = axes[1][j]
        panel = f"utility {label}"
        for method, (text, colour, style) in _UTILITY.items():
            nmi = _points(result, panel, method, "nmi")
            if method == "pilot-then-design":
                xs = sorted(nmi)
                handles[text] = ax.plot(xs, [nmi[n] for n in xs], style, color=colour)[0]
            elif nmi:
                handles[text] = ax.axhline(next(iter(nmi.values())), color=colour, linestyle=style)
        ax.set_xscale("log")
        ax.set_xlabel("pilot size n₁ (reports)")
        ax.set_ylabel("total NMI (mean over all users, at the true P)")
        ax.set_title(result.panel_titles[panel], fontsize=10)
    path = out / f"{result.name}.png"
    users = result.settings["users"]
    title = f"P̂ from a private pilot on Adult, ε = 1, β = {BETA:g}, {users:,} users"
    return plots.finish(plt, fig, handles, title, path, legend_cols=2)


def table_pilot(result: Result) -> str:
    parts = []
    for panel in result.panels:
        if panel.startswith("coverage "):
            header = ["n₁", "P ∈ F", "± SE", "claim holds", "± SE", "median radius", "median radius (v3)"]
            rows = []
            for n in sorted(_points(result, panel, "pilot", "coverage")):
                cells = [
                    _points(result, panel, "pilot", s).get(n)
                    for s in (
                        "coverage",
                        "coverage_se",
                        "claim_holds",
                        "claim_holds_se",
                        "radius_median",
                        "radius_median_v3",
                    )
                ]
                rows.append([f"{n:,}", *(fmt(c, 4) if c is not None else "-" for c in cells)])
        else:
            header = ["method", "n₁", "total NMI", "L1 error", "switched"]
            rows = []
            for method in _UTILITY:
                nmi = _points(result, panel, method, "nmi")
                l1 = _points(result, panel, method, "l1")
                switched = _points(result, panel, method, "switched")
                for n in sorted(nmi):
                    rows.append(
                        [
                            method,
                            f"{n:,}" if n else "-",
                            fmt(nmi[n], 4),
                            fmt(l1[n], 4),
                            {1.0: "yes", 0.0: "no"}.get(switched.get(n, -1.0), ""),
                        ]
                    )
        parts.append(result.panel_titles[panel] + "\n" + format_table(header, rows))
    return "\n\n".join(parts) + "\n" + "\n".join(result.notes)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "pilot",
        "rldp (docs/design.md, P̂ from a private pilot)",
        "coverage of the pilot's confidence set and the utility of pilot-then-design vs GRR and public data",
        run_pilot,
        plot_pilot,
        table_pilot,
        solver="auto",
    ),
)
