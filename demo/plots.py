"""Figures of the experiments and of the demo (matplotlib, Agg backend: no display needed).

matplotlib is an optional dependency (``rldp[demo]``) and slow to import, so it is
imported only when a figure is drawn (:func:`pyplot`); importing this module is cheap.

:func:`plot_curves` and :func:`plot_boxes` take an experiment's tidy rows (dicts with the
columns of :data:`rldp.demo.experiments.COLUMNS`), draw one subplot per panel (data pair or
synthetic shape), and write a PNG (the demo run's own figures: :mod:`rldp.demo.run.figures`).
House style: the papers' methods are solid lines, the methods this project adds are
dashed with hollow markers; one legend for the whole figure, below the plots; axes carry
their units (ε in nats; NMI and ratios are dimensionless); ``bbox_inches="tight"`` so
nothing is clipped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["METHOD_STYLES", "pyplot", "method_label", "plot_curves", "plot_boxes"]

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
    fractions = _failed_fractions(tagged)
    handles: dict[str, Any] = {}
    scales = list(yscales) if yscales is not None else ["log" if ylog else "linear"] * len(panels)
    for ax, panel, yscale in zip(axes, panels, scales):
        ylog = yscale == "log"
        shown = [v for m in methods for st in (statistic, *(band or ())) for v in data.get((panel, m, st), {}).values()]
        cap = _infinity_ceiling(ax, shown, ylog)
        references = {m: ref for (p, m), ref in (reference or {}).items() if p == panel}
        series = {m: data.get((panel, m, statistic)) or {} for m in methods}
        bands = (
            {m: (data.get((panel, m, band[0]), {}), data.get((panel, m, band[1]), {})) for m in methods} if band else {}
        )
        for i, method in enumerate(methods):
            failed = fractions.get((panel, method), {})
            _draw_method(
                ax, handles, _style(method, i), series[method], failed, max_failed_fraction, cap, bands.get(method)
            )
            if method in references and _shown_xs(series[method], failed, max_failed_fraction):
                _draw_reference(ax, handles, references[method], reference_label, _style(method, i)["color"])
        if identity:
            _draw_identity(ax, handles, [k for m in methods for k in data.get((panel, m, statistic), {})])
        twice = panels.count(panel) > 1  # the same panel in two scales: say which
        _label_axes(ax, panel_titles.get(panel, panel) + _scale_note(twice, ylog), xlabel, ylabel, xlog, ylog)
    return finish(plt, fig, handles, title, path, legend_cols=3)


def _shown_xs(series: Mapping[float, float], failed: Mapping[float, float], max_failed_fraction: float) -> list[float]:
    """The x values of a series that are drawn: not NaN, and where few enough draws failed."""
    return sorted(k for k in series if failed.get(k, 0.0) <= max_failed_fraction and not math.isnan(series[k]))


def _draw_method(
    ax: Any,
    handles: dict[str, Any],
    style: dict[str, Any],
    series: Mapping[float, float],
    failed: Mapping[float, float],
    max_failed_fraction: float,
    cap: Callable[[float], float],
    band: tuple[Mapping[float, float], Mapping[float, float]] | None,
) -> None:
    """One method's line (and its band)."""
    xs = _shown_xs(series, failed, max_failed_fraction)
    if not xs:
        return
    (line,) = ax.plot(xs, [cap(series[k]) for k in xs], **style)
    handles.setdefault(style["label"], line)
    if band:
        _draw_band(ax, xs, band[0], band[1], cap, style)


def _failed_fractions(tagged: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[float, float]]:
    """{(panel, method): {x: failed draws / all draws}} from the rows' ``failures`` statistic."""
    fractions: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
    for r in tagged:
        if r["statistic"] == "failures":
            fractions[(r["panel"], r["method"])][r["_x"]] = float(r["value"]) / max(float(r["draws"] or 1), 1.0)
    return fractions


def _infinity_ceiling(ax: Any, shown: Sequence[float], ylog: bool) -> Callable[[float], float]:
    """Infinite values (e.g. ε* when some P(Y=y|S=s) = 0) are drawn at a ceiling line, marked on the axes; the
    function that maps a value to where it is drawn."""
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
    return lambda v: ceiling if math.isinf(v) else v


def _draw_band(
    ax: Any,
    xs: Sequence[float],
    lo: Mapping[float, float],
    hi: Mapping[float, float],
    cap: Callable[[float], float],
    style: Mapping[str, Any],
) -> None:
    """The shaded range between two statistics (e.g. the 25–75 % quantiles) under a method's line."""
    bx = [k for k in xs if k in lo and k in hi]
    ax.fill_between(
        bx,
        [cap(lo[k]) for k in bx],
        [cap(hi[k]) for k in bx],
        color=style["color"],
        alpha=0.15 if style["linestyle"] != "--" else 0.08,
        linewidth=0,
    )


def _draw_reference(ax: Any, handles: dict[str, Any], ref: Mapping[float, float], label: str, color: Any) -> None:
    """A paper's numbers as unconnected crosses (one legend entry for all of them)."""
    ax.plot(list(ref), list(ref.values()), linestyle="none", marker="x", markersize=8, markeredgewidth=2, color=color)
    if label not in handles:
        (proxy,) = ax.plot([], [], linestyle="none", marker="x", markersize=8, markeredgewidth=2, color="0.2")
        handles[label] = proxy


def _draw_identity(ax: Any, handles: dict[str, Any], xs_all: Sequence[float]) -> None:
    """The line y = x over the panel's x range (ε* = ε, the claimed level)."""
    if xs_all:
        lo_x, hi_x = min(xs_all), max(xs_all)
        (diag,) = ax.plot([lo_x, hi_x], [lo_x, hi_x], color="tab:green", linewidth=1.2, linestyle=":")
        handles.setdefault("ε* = ε (the claimed level)", diag)


def _scale_note(twice: bool, ylog: bool) -> str:
    return "" if not twice else " — log scale" if ylog else " — linear scale"


def _label_axes(ax: Any, title: str, xlabel: str, ylabel: str, xlog: bool, ylog: bool) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xlog:
        ax.set_xscale("log")
    if ylog:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3, which="both" if (xlog or ylog) else "major")


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
