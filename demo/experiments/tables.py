"""The plain-text tables printed after a run."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .config import Result

__all__ = ["fmt", "format_table", "curve_table", "mean_nmi_table"]


def fmt(x: float | None, digits: int = 3) -> str:
    """A number for a table cell: "—" if absent or NaN, "inf" if infinite."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}f}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain fixed-width text table (first column left-aligned, the rest right-aligned)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def _pick(grid: Sequence[float], wanted: Sequence[float]) -> list[float]:
    chosen = [e for e in grid if any(math.isclose(e, w) for w in wanted)]
    return chosen or list(grid)[:: max(1, len(grid) // 5)]


def curve_table(result: Result, statistic: str, shown: Sequence[float], label: str) -> str:
    """One table per panel: ``statistic`` per method at the ε of ``shown`` that were run
    (or about five of the grid); ``*`` marks points where some draws failed."""
    grid = result.settings["epsilons"]
    eps_list = _pick(grid, shown)
    parts = []
    for panel in result.panels:
        rows = []
        for m in result.methods:
            cells = []
            for e in eps_list:
                v = result.value(panel, m, statistic, epsilon=e)
                fails = result.value(panel, m, "failures", epsilon=e)
                cells.append(fmt(v) + ("*" if fails else ""))
            if any(not c.startswith("—") for c in cells):  # leave out methods omitted on this panel
                rows.append([m, *cells])
        parts.append(
            f"{result.panel_titles[panel]} — {label}\n"
            + format_table(["method", *(f"ε={e:g}" for e in eps_list)], rows)
        )
    return "\n\n".join(parts)


def mean_nmi_table(result: Result, shown: Sequence[float]) -> str:
    """:func:`curve_table` of the mean NMI under P̂ over a synthetic experiment's draws."""
    label = f"mean NMI under P̂ over {result.settings['draws']} draws (* = some draws failed)"
    return curve_table(result, "nmi_mean", shown, label)
