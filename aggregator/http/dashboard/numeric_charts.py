"""A numeric released attribute's estimate drawn on the server as inline SVG: its histogram
(bars over the bin edges, heights a density so that unequal bins read honestly, 95 % intervals as
error bars) and its CDF (the estimate at each edge, linear in between, the pointwise 95 % band shaded,
the median, p90 and p99 marked). No JavaScript, nothing fetched; presentation attributes only (the
dashboard's Content-Security-Policy allows no inline style)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from .charts import _text

__all__ = ["histogram_chart", "cdf_chart", "density_unit"]

_W, _H, _LEFT, _TOP, _BOTTOM = 560, 230, 64, 28, 52
_BAR, _CI, _BAND, _LINE, _GRID = "#9ecae1", "#08306b", "#c6dbef", "#08519c", "#e3e6ea"
QUANTILE_LABELS = {"0.5": "median", "0.9": "p90", "0.99": "p99"}


def _nice(value: float) -> float:
    """The round number (1, 2 or 5 × 10^k) nearest ``value`` from below."""
    if not value > 0 or not math.isfinite(value):
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return max(m * power for m in (1, 2, 5) if m * power <= value * (1 + 1e-9))


def density_unit(edges: Sequence[float]) -> float:
    """The width per which the histogram states its density: a round number near the narrowest bin's width
    (so a bar's height reads as "share per 5 years", say)."""
    widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    return _nice(min(widths))


def _ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    step = _nice((hi - lo) / n) if hi > lo else 1.0
    first = math.ceil(lo / step - 1e-9) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def _label(v: float) -> str:
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3g}"


def _frame(name: str, ylabel: str, lo: float, hi: float, ymax: float, yticks: Sequence[float], aria: str) -> tuple:
    """The SVG's opening, grid, axes and axis labels, and the scales (sx, sy)."""
    plot_w, plot_h = _W - _LEFT - 20, _H - _TOP - _BOTTOM
    span = hi - lo if hi > lo else 1.0

    def sx(v: float) -> float:
        return _LEFT + plot_w * (min(max(v, lo), hi) - lo) / span

    def sy(v: float) -> float:
        return _TOP + plot_h * (1 - min(max(v, 0.0), ymax) / ymax)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart numeric" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(aria)}">'
    ]
    for t in yticks:
        y = sy(t)
        parts.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_LEFT + plot_w}" y2="{y:.1f}" stroke="{_GRID}"/>')
        parts.append(_text(_LEFT - 6, y + 4, f"{t:.3g}", "end"))
    base = _TOP + plot_h
    parts.append(f'<line x1="{_LEFT}" y1="{base}" x2="{_LEFT + plot_w}" y2="{base}" stroke="#6b7280"/>')
    parts.append(f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{base}" stroke="#6b7280"/>')
    for t in _ticks(lo, hi):
        x = sx(t)
        parts.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 5}" stroke="#6b7280"/>')
        parts.append(_text(x, base + 18, _label(t), "middle"))
    parts.append(_text(_LEFT + plot_w / 2, base + 40, name, "middle", ' font-weight="600"'))
    mid = _TOP + plot_h / 2
    parts.append(_text(14, mid, ylabel, "middle", f' transform="rotate(-90 14 {mid:.1f})"'))
    return parts, sx, sy, base


def _num(v: Any) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)


def histogram_chart(name: str, summary: Mapping[str, Any]) -> Markup:
    """The histogram of a numeric summary (:func:`rldp.aggregator.estimate.numeric.numeric_summaries`): one
    bar per bin spanning its edges, its height the bin's share per :func:`density_unit` of the value, the
    95 % interval as an error bar (withheld intervals: none drawn); the edges are ticked under the axis."""
    edges = [float(e) for e in summary["edges"]]
    hist = summary["histogram"]
    unit = density_unit(edges)
    scale = [unit / (b - a) for a, b in zip(edges, edges[1:], strict=False)]
    est = [None if (v := _num(e)) is None else v * s for e, s in zip(hist["estimate"], scale, strict=True)]
    low = [None if (v := _num(e)) is None else max(v, 0.0) * s for e, s in zip(hist["ci95_low"], scale, strict=True)]
    high = [None if (v := _num(e)) is None else v * s for e, s in zip(hist["ci95_high"], scale, strict=True)]
    top = max([v for v in (*est, *high) if v is not None] or [1.0]) * 1.08 or 1.0
    yticks = _ticks(0.0, top, 4)
    top = max(top, yticks[-1])
    per = f"{unit:g} units of {name}" if unit != 1 else f"unit of {name}"
    parts, sx, sy, base = _frame(
        name, f"share per {per}", edges[0], edges[-1], top, yticks, f"histogram of {name} with 95% intervals"
    )
    labels = summary.get("labels") or [f"bin {j}" for j in range(len(edges) - 1)]
    for j in range(len(edges) - 1):
        x0, x1 = sx(edges[j]), sx(edges[j + 1])
        share = _num(hist["estimate"][j])
        lo_s, hi_s = _num(hist["ci95_low"][j]), _num(hist["ci95_high"][j])
        interval = "interval withheld" if lo_s is None and hi_s is None else f"95 % [{lo_s or 0:.4f}, {hi_s or 1:.4f}]"
        title = f"{escape(labels[j])}: share {share if share is None else f'{share:.4f}'}, {interval}"
        if est[j] is not None:
            y = sy(est[j])
            parts.append(
                f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 1, 1):.1f}" height="{base - y:.1f}" '
                f'fill="{_BAR}" stroke="#ffffff"><title>{title}</title></rect>'
            )
        if low[j] is not None or high[j] is not None:
            xm = (x0 + x1) / 2
            y_lo, y_hi = sy(low[j] or 0.0), sy(high[j] if high[j] is not None else top)
            cap = min(6.0, (x1 - x0) / 3)
            parts.append(
                f'<line class="ci" x1="{xm:.1f}" y1="{y_lo:.1f}" x2="{xm:.1f}" y2="{y_hi:.1f}" stroke="{_CI}" '
                'stroke-width="1.5"/>'
            )
            for y in (y_lo, y_hi):
                parts.append(
                    f'<line class="ci" x1="{xm - cap:.1f}" y1="{y:.1f}" x2="{xm + cap:.1f}" y2="{y:.1f}" stroke="{_CI}" '
                    f'stroke-width="1.5"/>'
                )
    parts.append(_edge_marks(edges, sx, base))
    parts.append(f'<rect x="{_LEFT + 8}" y="6" width="14" height="10" fill="{_BAR}"/>')
    parts.append(_text(_LEFT + 26, 15, "estimate"))
    parts.append(f'<line x1="{_LEFT + 100}" y1="5" x2="{_LEFT + 100}" y2="17" stroke="{_CI}" stroke-width="1.5"/>')
    parts.append(_text(_LEFT + 108, 15, "95 % interval"))
    parts.append(_text(_W - 20, 15, f"bins closed {summary.get('closed', 'left')}", "end", ' fill="#6b7280"'))
    parts.append("</svg>")
    return Markup("".join(parts))


def _edge_marks(edges: Sequence[float], sx: Any, base: float) -> str:
    """A short dark tick at every bin edge, above the axis (the value ticks are below it)."""
    return "".join(
        f'<line x1="{sx(e):.1f}" y1="{base - 4}" x2="{sx(e):.1f}" y2="{base + 2}" stroke="#111827">'
        f"<title>edge {_label(e)}</title></line>"
        for e in edges
    )


def cdf_chart(name: str, summary: Mapping[str, Any]) -> Markup:
    """The CDF of a numeric summary: the estimate at every edge (0 at the first, 1 at the last; linear in
    between, as the values are spread uniformly within a bin), the pointwise 95 % band shaded, and a dashed
    mark at the median, p90 and p99 with their values."""
    edges = [float(e) for e in summary["edges"]]
    cdf = summary["cdf"]
    inner = len(edges) - 2
    est = [0.0, *(_num(v) for v in cdf["estimate"][:inner]), 1.0]
    low = [0.0, *(0.0 if (v := _num(x)) is None else v for x in cdf["ci95_low"][:inner]), 1.0]
    high = [0.0, *(1.0 if (v := _num(x)) is None else v for x in cdf["ci95_high"][:inner]), 1.0]
    parts, sx, sy, base = _frame(
        name, f"P({name} ≤ x)", edges[0], edges[-1], 1.0, [0, 0.25, 0.5, 0.75, 1.0], f"CDF of {name} with 95% band"
    )
    band = [(sx(e), sy(min(max(v, 0.0), 1.0))) for e, v in zip(edges, high, strict=True)]
    band += [(sx(e), sy(min(max(v, 0.0), 1.0))) for e, v in reversed(list(zip(edges, low, strict=True)))]
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in band)
    parts.append(f'<polygon points="{points}" fill="{_BAND}" fill-opacity="0.8" stroke="none"/>')
    line = [(sx(e), sy(v)) for e, v in zip(edges, est, strict=True) if v is not None]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in line)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{_LINE}" stroke-width="2"/>')
    for e, v in zip(edges, est, strict=True):
        if v is not None:
            parts.append(
                f'<circle cx="{sx(e):.1f}" cy="{sy(v):.1f}" r="2.5" fill="{_LINE}"><title>'
                f"P({escape(name)} ≤ {_label(e)}) = {v:.4f}</title></circle>"
            )
    for p, entry in (summary.get("quantiles") or {}).items():
        q = _num(entry.get("estimate"))
        if q is None or p not in QUANTILE_LABELS:
            continue
        x, y = sx(q), sy(float(p))
        parts.append(
            f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{y:.1f}" stroke="#b45309" stroke-dasharray="4 3"/>'
        )
        lo, hi = _num(entry.get("ci95_low")), _num(entry.get("ci95_high"))
        ci = "" if lo is None or hi is None else f", 95 % [{_label(lo)}, {_label(hi)}]"
        parts.append(
            f'<text x="{x - 4:.1f}" y="{y - 4:.1f}" text-anchor="end" fill="#b45309">'
            f"<title>{QUANTILE_LABELS[p]} {_label(q)}{ci}</title>{QUANTILE_LABELS[p]} {_label(q)}</text>"
        )
    parts.append(_edge_marks(edges, sx, base))
    parts.append(f'<line x1="{_LEFT + 8}" y1="11" x2="{_LEFT + 30}" y2="11" stroke="{_LINE}" stroke-width="2"/>')
    parts.append(_text(_LEFT + 36, 15, "estimate"))
    parts.append(f'<rect x="{_LEFT + 100}" y="5" width="22" height="12" fill="{_BAND}"/>')
    parts.append(_text(_LEFT + 128, 15, "95 % band (pointwise)"))
    parts.append(
        f'<line x1="{_LEFT + 290}" y1="5" x2="{_LEFT + 290}" y2="17" stroke="#b45309" stroke-dasharray="4 3"/>'
    )
    parts.append(_text(_LEFT + 296, 15, "quantile", extra=' fill="#b45309"'))
    parts.append("</svg>")
    return Markup("".join(parts))
