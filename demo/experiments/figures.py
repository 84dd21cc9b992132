"""The figure of an experiment: a :mod:`rldp.demo.plots` function applied to its :class:`Result`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import plots
from .config import Result

__all__ = ["figure"]


def figure(
    result: Result,
    out: Path,
    plot: Callable[..., Path] = plots.plot_curves,
    *,
    rows: Sequence[Mapping[str, Any]] | None = None,
    **options: Any,
) -> Path:
    """Draw ``result`` (or only its ``rows``) with ``plot`` into ``out/NAME.png``: the
    result's panels, panel titles and methods, unless ``options`` say otherwise."""
    options = {"panels": result.panels, "panel_titles": result.panel_titles, "methods": result.methods, **options}
    return plot(result.rows if rows is None else rows, path=out / f"{result.name}.png", **options)
