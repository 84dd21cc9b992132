"""Figures of the experiments and of the demo (matplotlib, Agg backend: no display needed).

matplotlib is an optional dependency (``rldp[demo]``) and slow to import, so it is
imported only when a figure is drawn (:func:`pyplot`); importing this module is cheap.

:func:`plot_curves` and :func:`plot_boxes` take an experiment's tidy rows (dicts with the
columns of :data:`rldp.demo.experiments.COLUMNS`), draw one subplot per panel (data pair or
synthetic shape), and write a PNG; :func:`plot_demo` draws the demo's two figures.
House style: the papers' methods are solid lines, the methods this project adds are
dashed with hollow markers; one legend for the whole figure, below the plots; axes carry
their units (ε in nats; NMI and ratios are dimensionless); ``bbox_inches="tight"`` so
nothing is clipped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["METHOD_STYLES", "pyplot", "method_label", "plot_curves", "plot_boxes", "plot_demo"]

# method -> (legend label, colour, marker, "ours"?)
METHOD_STYLES: dict[str, tuple[str, str, str, bool]] = {
    "srr": ("SRR ([LZG24, Def 4])", "tab:blue", "o", False),
    "polyopt-paper": ("PolyOpt ([LZG24, Def 3] as printed)", "tab:orange", "s", False),
    "ir": ("IR ([LZG24, Thm 5])", "tab:green", "^", False),
    "grr": ("GRR (plain LDP)", "tab:red", "v", False),
    "nr": ("NR (non-robust)", "tab:purple", "D", False),
    "cr": ("CR ([LZG21, Thm 5])", "tab:brown", "P", False),
    "polyopt": ("PolyOpt, s₁≠s₂ rows only (ours)", "tab:orange", "s", True),
    "ir-calibrated": ("IR calibrated to the audit (ours)", "tab:green", "^", True),
    "cr-calibrated": ("CR calibrated to the audit (ours)", "tab:brown", "P", True),
}
_SPARE_COLOURS = ["tab:pink", "tab:gray", "tab:olive", "tab:cyan", "black"]


def method_label(method: str) -> str:
    """The legend label of a design method (its name if unknown)."""
    return METHOD_STYLES.get(method, (method,))[0]


def _style(method: str, index: int) -> dict[str, Any]:
    label, colour, marker, ours = METHOD_STYLES.get(
        method, (method, _SPARE_COLOURS[index % len(_SPARE_COLOURS)], "x", True)
    )
    return {
        "label": label,
        "color": colour,
        "marker": marker,
        "linestyle": "--" if ours else "-",
        "markerfacecolor": "white" if ours else colour,
        "markeredgecolor": colour,
        "linewidth": 1.6,
        "markersize": 5,
    }


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only), imported on first use."""
    # Lazy on purpose: matplotlib is optional and takes ~0.5 s to import.
    import matplotlib

    matplotlib.use("Agg", force=True)  # files only; never try to open a window
    import matplotlib.pyplot as plt

    return plt


def _grid(n_panels: int, ncols: int, panel_size: tuple[float, float]):
    plt = pyplot()
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return plt, fig, list(axes.flat[:n_panels])


def _index(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], dict[float, float]]:
    """(panel, method, statistic) -> {x: value}, with x = ε or β as present."""
    out: dict[tuple[str, str, str], dict[float, float]] = defaultdict(dict)
    for r in rows:
        out[(r["panel"], r["method"], r["statistic"])][r["_x"]] = float(r["value"])
    return out


def finish(plt: Any, fig: Any, handles: dict[str, Any], title: str, path: Path, legend_cols: int) -> Path:
    """Title, a legend of ``handles`` below the panels, saved to ``path`` (folders made) and closed."""
    if title:
        fig.suptitle(title, fontsize=12)
        fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.3 / fig.get_figheight()))  # room for the title
    else:
        fig.tight_layout()
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles.keys()),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=legend_cols,
            frameon=False,
            fontsize=9,
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_curves(
    rows: Sequence[Mapping[str, Any]],
    *,
    path: Path,
    panels: Sequence[str],
    panel_titles: Mapping[str, str],
    methods: Sequence[str],
    statistic: str,
    ylabel: str,
    title: str = "",
    x: str = "epsilon",
    xlabel: str = "privacy level ε (nats)",
    band: tuple[str, str] | None = None,
    xlog: bool = False,
    ylog: bool = False,
    identity: bool = False,
    max_failed_fraction: float = 0.05,
    reference: Mapping[tuple[str, str], Mapping[float, float]] | None = None,
    reference_label: str = "paper",
    ncols: int = 2,
    panel_size: tuple[float, float] = (5.2, 3.8),
    yscales: Sequence[str] | None = None,
) -> Path:
    """Line plot of ``statistic`` against ``x`` per method, one subplot per panel.

    ``band`` = (low statistic, high statistic) shades e.g. the 25–75 % range.
    ``identity`` draws the line y = x (e.g. ε* = ε). A point where more than
    ``max_failed_fraction`` of the synthetic draws could not be designed (its ``failures``
    statistic) is left out: its average would be over a different set of draws.
    ``reference[(panel, method)] = {x: y}`` adds the paper's numbers as unconnected crosses.
    ``yscales`` gives each subplot its own y scale ("linear" or "log"), e.g. the same panel
    twice, in both scales.
    """
    plt, fig, axes = _grid(len(panels), ncols, panel_size)
    tagged = [dict(r, _x=float(r[x])) for r in rows if r.get(x) not in (None, "")]
    data = _index(tagged)
    fractions: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)  # failed draws / all draws
    for r in tagged:
        if r["statistic"] == "failures":
            fractions[(r["panel"], r["method"])][r["_x"]] = float(r["value"]) / max(float(r["draws"] or 1), 1.0)
    handles: dict[str, Any] = {}
    scales = list(yscales) if yscales is not None else ["log" if ylog else "linear"] * len(panels)
    for ax, panel, yscale in zip(axes, panels, scales):
        ylog = yscale == "log"
        # Infinite values (e.g. ε* when some P(Y=y|S=s) = 0) are drawn at a ceiling line.
        shown = [v for m in methods for st in (statistic, *(band or ())) for v in data.get((panel, m, st), {}).values()]
        finite = [v for v in shown if math.isfinite(v)]
        ceiling = (max(finite) * (2.0 if ylog else 1.15)) if finite else 1.0
        if any(math.isinf(v) for v in shown):
            ax.axhline(ceiling, color="0.4", linewidth=0.8, linestyle=(0, (1, 2)))
            ax.annotate(
                "∞ is drawn at this line",
                xy=(0.99, ceiling),
                xycoords=("axes fraction", "data"),
                xytext=(0, -3),
                textcoords="offset points",
                va="top",
                ha="right",
                fontsize=8,
                color="0.3",
            )

        def cap(v: float, ceiling: float = ceiling) -> float:
            return ceiling if math.isinf(v) else v

        for i, method in enumerate(methods):
            series = data.get((panel, method, statistic))
            if not series:
                continue
            failed = fractions.get((panel, method), {})
            xs = sorted(k for k in series if failed.get(k, 0.0) <= max_failed_fraction and not math.isnan(series[k]))
            if not xs:
                continue
            ys = [cap(series[k]) for k in xs]
            style = _style(method, i)
            (line,) = ax.plot(xs, ys, **style)
            handles.setdefault(style["label"], line)
            if band:
                lo, hi = data.get((panel, method, band[0]), {}), data.get((panel, method, band[1]), {})
                bx = [k for k in xs if k in lo and k in hi]
                ax.fill_between(
                    bx,
                    [cap(lo[k]) for k in bx],
                    [cap(hi[k]) for k in bx],
                    color=style["color"],
                    alpha=0.15 if style["linestyle"] != "--" else 0.08,
                    linewidth=0,
                )
            if reference and (panel, method) in reference:
                ref = reference[(panel, method)]
                ax.plot(
                    list(ref),
                    list(ref.values()),
                    linestyle="none",
                    marker="x",
                    markersize=8,
                    markeredgewidth=2,
                    color=style["color"],
                )
                if reference_label not in handles:
                    (proxy,) = ax.plot(
                        [], [], linestyle="none", marker="x", markersize=8, markeredgewidth=2, color="0.2"
                    )
                    handles[reference_label] = proxy
        if identity:
            xs_all = [k for m in methods for k in data.get((panel, m, statistic), {})]
            if xs_all:
                lo_x, hi_x = min(xs_all), max(xs_all)
                (diag,) = ax.plot([lo_x, hi_x], [lo_x, hi_x], color="tab:green", linewidth=1.2, linestyle=":")
                handles.setdefault("ε* = ε (the claimed level)", diag)
        title_text = panel_titles.get(panel, panel)
        if panels.count(panel) > 1:
            title_text += " — log scale" if ylog else " — linear scale"
        ax.set_title(title_text, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if xlog:
            ax.set_xscale("log")
        if ylog:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3, which="both" if (xlog or ylog) else "major")
    return finish(plt, fig, handles, title, path, legend_cols=3)


def plot_boxes(
    rows: Sequence[Mapping[str, Any]],
    *,
    path: Path,
    panels: Sequence[str],
    panel_titles: Mapping[str, str],
    methods: Sequence[str],
    prefix: str,
    ylabel: str,
    title: str = "",
    scale: float = 1.0,
    ncols: int = 2,
    panel_size: tuple[float, float] = (5.2, 3.8),
) -> Path:
    """Box plots from precomputed statistics ``{prefix}_min/_q25/_median/_q75/_max``
    (box = 25–75 %, whiskers = min and max, as in [LZG24, Fig 5]), one box per method."""
    plt, fig, axes = _grid(len(panels), ncols, panel_size)
    stats: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in rows:
        if str(r["statistic"]).startswith(prefix + "_"):
            stats[(r["panel"], r["method"])][r["statistic"][len(prefix) + 1 :]] = float(r["value"]) * scale
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes, panels):
        boxes, colours, names = [], [], []
        for i, method in enumerate(methods):
            s = stats.get((panel, method))
            if not s or not {"min", "q25", "median", "q75", "max"} <= s.keys():
                continue
            boxes.append(
                {
                    "med": s["median"],
                    "q1": s["q25"],
                    "q3": s["q75"],
                    "whislo": s["min"],
                    "whishi": s["max"],
                    "fliers": [],
                    "label": method,
                }
            )
            colours.append(_style(method, i))
            names.append(method)
        if boxes:
            art = ax.bxp(
                boxes, showfliers=False, patch_artist=True, widths=0.6, medianprops={"color": "black", "linewidth": 1.5}
            )
            for patch, style in zip(art["boxes"], colours):
                patch.set_facecolor(style["color"])
                patch.set_alpha(0.35 if style["linestyle"] == "-" else 0.15)
                patch.set_edgecolor(style["color"])
                patch.set_linestyle(style["linestyle"])
                handles.setdefault(style["label"], patch)
            ax.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right", fontsize=8)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_title(panel_titles.get(panel, panel), fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
    return finish(plt, fig, handles, title, path, legend_cols=3)


def plot_demo(out: Path, summary: Mapping[str, Any]) -> list[Path]:
    """The demo's figures in ``out``: estimate.png (truth, public and private estimates with
    intervals) and, if the summary has curves, privacy_utility.png (NMI against ε for each
    certified method on this pair). Returns the paths written."""
    plt = pyplot()
    labels = summary["labels"]
    x = np.arange(len(labels))
    truth = np.ravel(summary["truth"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    grr = np.ravel(summary["grr"]["joint"])
    method = summary["mechanism"]["method"]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(7.5, 0.75 * len(labels) + 2), 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    w = 0.38
    top.bar(x - w / 2, truth, w, label="users' true frequency (adult.test)", color="0.55")
    top.bar(
        x + w / 2, np.ravel(summary["public"]), w, label="public estimate P̂ (adult.data)", color="tab:blue", alpha=0.6
    )
    top.errorbar(
        x,
        est,
        yerr=[est - low, high - est],
        fmt="o",
        color="tab:orange",
        capsize=3,
        markersize=4,
        label=f"private estimate, {method} (95 % CI)",
    )
    top.set_yscale("log")
    top.set_ylabel("frequency (fraction of users, log scale)")
    top.set_title(f"P(S, U) for {summary['users']:,} users at ε = {summary['mechanism']['epsilon']:g} nats")
    top.legend(fontsize=8, loc="upper left")
    bottom.axhline(0.0, color="0.3", linewidth=0.8)
    bottom.errorbar(
        x - 0.12,
        est - truth,
        yerr=[est - low, high - est],
        fmt="o",
        color="tab:orange",
        capsize=3,
        markersize=4,
        label=f"{method}: estimate − truth (95 % CI)  L1 = {summary['l1_error']:.4f}",
    )
    bottom.plot(
        x + 0.12,
        grr - truth,
        "x",
        color="tab:red",
        label=f"GRR (plain LDP, same ε): estimate − truth  L1 = {summary['grr']['l1_error']:.4f}",
    )
    bottom.set_ylabel("estimation error (fraction)")
    bottom.set_xticks(x, labels, rotation=45, ha="right")
    # Headroom above every point (error bars included) so the legend never hides one.
    errors = np.concatenate([low - truth, high - truth, grr - truth])
    lo, hi = float(errors.min()), float(errors.max())
    span = max(hi - lo, 1e-6)
    bottom.set_ylim(lo - 0.08 * span, hi + 0.5 * span)
    bottom.legend(fontsize=8, loc="upper left")
    paths = [out / "estimate.png"]
    fig.savefig(paths[0], dpi=120, bbox_inches="tight")
    plt.close(fig)

    rows = summary["curves"]
    if not rows:
        return paths
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r["epsilon"], r["nmi"]) for r in rows if r["method"] == method)
        if len(pts) > 1:
            ax.plot(*zip(*pts), marker="o", label=method_label(method))
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("NMI = I(X;Y)/H(X) under P̂")
    ax.set_title(
        f"Privacy–utility on S = {summary['config']['sensitive']}, U = {', '.join(summary['config']['released'])}"
    )
    ax.axvline(summary["mechanism"]["epsilon"], color="0.5", linestyle=":", linewidth=1, label="ε of this run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    paths.append(out / "privacy_utility.png")
    fig.savefig(paths[1], dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths
