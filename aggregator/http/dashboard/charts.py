"""Charts drawn on the server as inline SVG: no JavaScript and nothing fetched by the browser.

:func:`heatmap` draws a mechanism's matrix Q; :func:`interval_chart` a marginal's estimates
with their 95 % intervals next to the public distribution P̂. Colours use only SVG
presentation attributes (no ``style``), so a strict Content-Security-Policy allows them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from markupsafe import Markup, escape

__all__ = ["MAX_CELLS", "heatmap", "interval_chart", "colour", "shade_class"]

#: Most rows or columns a heatmap draws; a larger Q is shown as block means.
MAX_CELLS = 64
#: Sequential colour scale (light to dark blue), interpolated linearly.
_SCALE = np.array([[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]], dtype=float)


def colour(value: float) -> str:
    """The scale's colour at ``value`` in [0, 1] as #rrggbb."""
    t = min(max(float(value), 0.0), 1.0) * (len(_SCALE) - 1)
    i = min(int(t), len(_SCALE) - 2)
    rgb = _SCALE[i] + (t - i) * (_SCALE[i + 1] - _SCALE[i])
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def shade_class(vmax: float) -> Callable[[float], str]:
    """A function giving a table cell's CSS class ``shade-0`` … ``shade-9`` for a value in [0, vmax]
    (classes, not inline styles: the dashboard's Content-Security-Policy allows no inline style)."""
    top = vmax if vmax > 0 else 1.0
    return lambda value: f"shade-{min(max(int(float(value) / top * 9.999), 0), 9)}"


def _blocks(n: int) -> np.ndarray:
    """Start index of each displayed block when ``n`` items are shown in at most MAX_CELLS blocks."""
    return np.linspace(0, n, min(n, MAX_CELLS) + 1).round().astype(int)


def _block_means(q: np.ndarray) -> np.ndarray:
    rows, cols = _blocks(q.shape[0]), _blocks(q.shape[1])
    sums = np.add.reduceat(np.add.reduceat(q, rows[:-1], axis=0), cols[:-1], axis=1)
    return sums / np.outer(np.diff(rows), np.diff(cols))


def _text(x: float, y: float, label: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(label)}</text>'


def heatmap(q: np.ndarray, columns: Sequence[str], cell: int = 34) -> Markup:
    """Q (rows y, columns x) as an SVG heatmap, darker = more likely, with a colour key.

    Over :data:`MAX_CELLS` rows or columns the picture shows block means (and says so); labels
    are drawn while they fit.
    """
    q = np.asarray(q, dtype=float)
    shown = _block_means(q) if max(q.shape) > MAX_CELLS else q
    n_rows, n_cols = shown.shape
    cell = max(6, min(cell, 720 // max(n_cols, 1)))
    labelled = shown is q and cell >= 14
    top = 12 + (min(max(len(c) for c in columns), 28) * 6 if labelled and columns else 16)
    left = 56
    width, height = left + n_cols * cell + 90, top + n_rows * cell + 40
    vmax = float(shown.max()) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart heatmap" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="heatmap of the mechanism matrix Q">'
    ]
    for i in range(n_rows):
        for j in range(n_cols):
            v = shown[i, j]
            parts.append(
                f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell}" height="{cell}" '
                f'fill="{colour(v / vmax)}"><title>y={i}, x={escape(columns[j]) if labelled else j}: {v:.4g}</title></rect>'
            )
    if labelled:
        for j, label in enumerate(columns):
            x, y = left + j * cell + cell / 2 + 4, top - 6
            parts.append(_text(x, y, label[:28], extra=f' transform="rotate(-60 {x:.1f} {y:.1f})"'))
        for i in range(n_rows):
            parts.append(_text(left - 6, top + i * cell + cell * 0.7, f"y={i}", "end"))
    else:
        note = f"{q.shape[0]} outputs × {q.shape[1]} inputs" + (" (block means)" if shown is not q else "")
        parts.append(_text(left, top - 4, note))
    parts.append(_text(left + n_cols * cell / 2, top + n_rows * cell + 18, "input x", "middle"))
    parts.append(
        _text(
            14,
            top + n_rows * cell / 2,
            "output y",
            "middle",
            f' transform="rotate(-90 14 {top + n_rows * cell / 2:.1f})"',
        )
    )
    # Colour key: 0 … max.
    kx, steps = left + n_cols * cell + 20, 10
    key_h = max(min(n_rows * cell, 160), 60)
    for k in range(steps):
        parts.append(
            f'<rect x="{kx}" y="{top + key_h * (steps - 1 - k) / steps:.1f}" width="14" height="{key_h / steps + 0.5:.1f}" '
            f'fill="{colour((k + 0.5) / steps)}"/>'
        )
    parts.append(_text(kx + 18, top + 10, f"{vmax:.3g}"))
    parts.append(_text(kx + 18, top + key_h, "0"))
    parts.append("</svg>")
    return Markup("".join(parts))


def _ticks(high: float) -> list[float]:
    step = 10 ** math.floor(math.log10(high / 4)) if high > 0 else 0.1
    for mult in (1, 2, 2.5, 5, 10):
        if high / (step * mult) <= 5:
            step *= mult
            break
    return [k * step for k in range(int(high / step + 1e-9) + 1)]


def interval_chart(
    labels: Sequence[str],
    estimate: Sequence[float | None],
    low: Sequence[float | None],
    high: Sequence[float | None],
    public: Sequence[float] | None = None,
) -> Markup:
    """One row per category: the estimate (dot) and its 95 % interval (bar); P̂ as a grey tick."""
    row_h, left, plot_w = 26, min(max((len(str(x)) for x in labels), default=4), 32) * 7 + 16, 360
    top, n = 26, len(labels)
    finite = [v for v in (*high, *estimate, *(public or ())) if v is not None and math.isfinite(v)]
    xmax = min(1.0, max(finite, default=1.0) * 1.1) or 1.0
    ticks = _ticks(xmax)
    xmax = max(xmax, ticks[-1])
    width, height = left + plot_w + 30, top + n * row_h + 30

    def sx(v: float) -> float:
        return left + plot_w * min(max(v, 0.0), xmax) / xmax

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart intervals" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="estimates with 95% intervals">'
    ]
    for t in ticks:
        x = sx(t)
        parts.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{top + n * row_h}" stroke="#e3e6ea"/>')
        parts.append(_text(x, top + n * row_h + 16, f"{t:.3g}", "middle"))
    for i, label in enumerate(labels):
        y = top + i * row_h + row_h / 2
        parts.append(_text(left - 8, y + 4, str(label)[:32], "end"))
        lo, hi, est = low[i], high[i], estimate[i]
        if lo is not None or hi is not None:  # both None: the interval is withheld (no bar, not [0, max])
            lo_x = sx(lo if lo is not None and math.isfinite(lo) else 0.0)
            hi_x = sx(hi if hi is not None and math.isfinite(hi) else xmax)
            parts.append(
                f'<line x1="{lo_x:.1f}" y1="{y:.1f}" x2="{hi_x:.1f}" y2="{y:.1f}" stroke="#2171b5" stroke-width="4" '
                f'stroke-linecap="round"/>'
            )
        if public is not None:
            px = sx(public[i])
            parts.append(
                f'<line x1="{px:.1f}" y1="{y - 8:.1f}" x2="{px:.1f}" y2="{y + 8:.1f}" stroke="#6b7280" stroke-width="2"/>'
            )
        if est is not None:
            parts.append(
                f'<circle cx="{sx(est):.1f}" cy="{y:.1f}" r="5" fill="#08306b"><title>{est:.4f}</title></circle>'
            )
    # Legend.
    parts.append(f'<circle cx="{left + 6}" cy="10" r="5" fill="#08306b"/>')
    parts.append(_text(left + 16, 14, "estimate"))
    parts.append(f'<line x1="{left + 90}" y1="10" x2="{left + 120}" y2="10" stroke="#2171b5" stroke-width="4"/>')
    parts.append(_text(left + 126, 14, "95 % interval"))
    if public is not None:
        parts.append(f'<line x1="{left + 240}" y1="3" x2="{left + 240}" y2="17" stroke="#6b7280" stroke-width="2"/>')
        parts.append(_text(left + 248, 14, "public P̂"))
    parts.append("</svg>")
    return Markup("".join(parts))
