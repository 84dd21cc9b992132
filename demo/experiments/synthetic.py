"""Experiments on synthetic draws: from what an experiment states to its :class:`Result`.

Every synthetic experiment of [LZG24, Sec 8] and [LZG21, Sec V] runs the same way: draw
P* from the Jeffreys prior and P̂ from n samples of it for each shape, n and draw,
evaluate the designs, summarise the records per group and note the failed designs.
A :class:`Synthetic` states only what differs (grids, shapes, draws, statistics, panel
names); its :meth:`Synthetic.run` is the experiment's ``run``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import BETA, N_ADULT, ORDER, PRIOR, Config, Result
from .evaluation import synthetic_task
from .stats import failure_notes, summarise
from .tasks import draw_tasks, run_tasks, select_methods, shape_panel, shape_title

__all__ = ["Shape", "Records", "Synthetic"]

Shape = tuple[int, int]
Records = list[dict[str, Any]]


def _by_shape(shape: Shape, n: int) -> str:
    return shape_panel(shape)


@dataclass(frozen=True)
class Synthetic:
    """A synthetic-draws experiment. The ``quick_*`` fields are the reduced ``--quick``
    version (``None``: as the full one); ``--epsilons`` and ``--draws`` override both."""

    name: str
    paper: Sequence[str]  # the paper's methods, in its legend order (see select_methods)
    fields: Mapping[str, Sequence[str]]  # record field -> statistics (see summarise)
    epsilons: Sequence[float]
    shapes: Sequence[Shape]
    draws: int
    quick_draws: int
    quick_epsilons: Sequence[float] | None = None
    quick_shapes: Sequence[Shape] | None = None
    ns: Sequence[int] = (N_ADULT,)
    quick_ns: Sequence[int] | None = None
    betas: Sequence[float] = (BETA,)
    only: Sequence[str] | None = None  # restrict the methods (see select_methods)
    truth: bool = False  # also evaluate under P*
    membership: bool = False  # also record whether P* lies in the confidence set
    panel: Callable[[Shape, int], str] = _by_shape  # panel name of (shape, n)
    title: Callable[[Shape, int], str] = shape_title  # panel title of (shape, n)
    # Derives further per-draw fields from the records, in place, before summarising.
    prepare: Callable[[Records], None] | None = None
    # Further summary rows from (records, shapes), appended after the summary.
    extra_rows: Callable[[Records, Sequence[Shape]], Records] | None = None

    def run(self, cfg: Config) -> Result:
        """Draw, design, evaluate and summarise under ``cfg``."""
        quick = cfg.quick
        eps = cfg.epsilons or (self.quick_epsilons if quick and self.quick_epsilons else self.epsilons)
        shapes = self.quick_shapes if quick and self.quick_shapes else self.shapes
        ns = self.quick_ns if quick and self.quick_ns else self.ns
        draws = cfg.draws or (self.quick_draws if quick else self.draws)
        methods = select_methods(cfg, self.paper, only=self.only)
        flags = {"truth": self.truth, "membership": self.membership}
        tasks = draw_tasks(cfg, shapes, ns, draws, self.betas, methods, eps, self.panel, **flags)
        records = run_tasks(synthetic_task, tasks, cfg, self.name)
        if self.prepare is not None:
            self.prepare(records)
        rows = summarise(self.name, records, self.fields)
        if self.extra_rows is not None:
            rows += self.extra_rows(records, shapes)
        titles = {self.panel(s, n): self.title(s, n) for s in shapes for n in ns}
        # One β or n is recorded as a number, several as a list (settings key "betas"/"ns").
        settings = {
            "epsilons": list(eps),
            **({"beta": self.betas[0]} if len(self.betas) == 1 else {"betas": list(self.betas)}),
            "order": ORDER,
            **({"n": ns[0]} if len(ns) == 1 else {"ns": list(ns)}),
            "draws": draws,
            "prior": PRIOR,
            "shapes": [list(s) for s in shapes],
        }
        return Result(self.name, rows, records, list(titles), titles, methods, settings, failure_notes(records))
