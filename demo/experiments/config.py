"""The papers' set-up, the run configuration and the result of an experiment.

Constants follow [LZG24, Sec 8] and [LZG21, Sec V]; :class:`Config` says how to run an
experiment, :class:`Result` holds what it produced (tidy summary rows, per-draw records,
notes) and :class:`Experiment` is an entry of the registry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rldp.aggregator.design import METHODS
from rldp.shared.errors import RldpError, ValidationError
from rldp.shared.parameters import check_epsilon

__all__ = [
    "ORDER",
    "BETA",
    "N_ADULT",
    "ADULT_PAIRS",
    "PAPER_SHAPES",
    "JEFFREYS",
    "PRIOR",
    "PAPER_LZG24",
    "PAPER_LZG21",
    "KNOWN_METHODS",
    "POLYOPT_SOLVERS",
    "COLUMNS",
    "GROUP",
    "Config",
    "Result",
    "Experiment",
    "UnknownExperiment",
    "close",
]

ORDER = 2.0  # Rényi order α: [LZG24, Sec 8] uses the χ² confidence set, i.e. α = 2
BETA = 0.05  # significance level of the confidence set (both papers)
N_ADULT = 32_561  # rows of adult.data: the public sample size of [LZG24, Sec 8]
ADULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("sex", "race"),
    ("race", "sex"),
    ("occupation", "education"),
    ("native-country", "relationship"),
)
PAPER_SHAPES: tuple[tuple[int, int], ...] = ((2, 5), (5, 2), (15, 16), (42, 6))
JEFFREYS = 0.5  # Dirichlet parameter of the Jeffreys prior on the simplex
PRIOR = "Dirichlet(1/2) (Jeffreys)"  # how the settings name that prior

# The methods each paper plotted, in its legend order; everything else in METHODS is "ours".
PAPER_LZG24 = ("srr", "polyopt-paper", "ir", "grr", "nr")
PAPER_LZG21 = ("polyopt-paper", "grr", "ir", "cr")
# Methods whose cost is known; quick runs (CI) use only these so that a new, possibly slow
# designer added to METHODS cannot blow the CI budget.
KNOWN_METHODS = ("srr", "polyopt-paper", "ir", "grr", "nr", "cr", "polyopt", "ir-calibrated", "cr-calibrated")
POLYOPT_SOLVERS = ("exact", "cg", "auto")

# Tidy CSV columns, and the columns that identify one summary group.
COLUMNS = (
    "experiment",
    "panel",
    "n_sensitive",
    "n_released",
    "n",
    "beta",
    "method",
    "epsilon",
    "statistic",
    "value",
    "draws",
)
GROUP = ("panel", "n_sensitive", "n_released", "n", "beta", "method", "epsilon")

# How close a CSV value (ε or β, written with repr) must be to the one asked for.
_REL_TOL, _ABS_TOL = 1e-9, 1e-12


class UnknownExperiment(RldpError, LookupError):
    """An experiment name that is not in the registry."""


@dataclass(frozen=True)
class Config:
    """How to run an experiment. ``None`` fields take the experiment's (quick or full) default."""

    quick: bool = False
    seed: int = 0
    workers: int = 1
    draws: int | None = None
    epsilons: tuple[float, ...] | None = None
    methods: tuple[str, ...] | None = None
    progress: bool | None = None  # None: show bars when stderr is a terminal
    polyopt_solver: str | None = None  # "exact", "cg" or "auto" for PolyOpt/NR; None: the experiment's default
    time_budget: float = 30.0  # seconds per column-generation design

    def __post_init__(self) -> None:
        if int(self.seed) != self.seed or self.seed < 0:
            raise ValidationError(f"seed must be an integer ≥ 0; got {self.seed!r}")
        if int(self.workers) != self.workers or self.workers < 1:
            raise ValidationError(f"workers must be an integer ≥ 1; got {self.workers!r}")
        if self.draws is not None and (int(self.draws) != self.draws or self.draws < 1):
            raise ValidationError(f"draws must be an integer ≥ 1; got {self.draws!r}")
        if self.epsilons is not None:
            if not self.epsilons:
                raise ValidationError("epsilons must hold at least one ε")
            for e in self.epsilons:
                check_epsilon(e, "each of epsilons")
        if self.polyopt_solver is not None and self.polyopt_solver not in POLYOPT_SOLVERS:
            raise ValidationError(
                f"polyopt_solver must be one of {', '.join(POLYOPT_SOLVERS)}; got {self.polyopt_solver!r}"
            )
        if not (
            isinstance(self.time_budget, (int, float)) and math.isfinite(self.time_budget) and self.time_budget > 0
        ):
            raise ValidationError(f"time_budget must be a number of seconds > 0; got {self.time_budget!r}")
        if self.methods is not None:
            unknown = [m for m in self.methods if m not in METHODS]
            if unknown or not self.methods:
                raise ValidationError(
                    f"unknown method(s) {', '.join(unknown) or '(none given)'}; choose from: {', '.join(METHODS)}"
                )


def close(a: Any, b: float) -> bool:
    """Whether the CSV cell ``a`` (a number, or "" / None when absent) equals ``b``."""
    return a not in (None, "") and math.isclose(float(a), b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


@dataclass
class Result:
    """What an experiment produced: tidy summary rows, per-draw records and notes."""

    name: str
    rows: list[dict[str, Any]]
    records: list[dict[str, Any]]
    panels: list[str]
    panel_titles: dict[str, str]
    methods: list[str]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def value(
        self, panel: str, method: str, statistic: str, epsilon: float | None = None, beta: float | None = None
    ) -> float | None:
        """The value of one summary row (None if absent)."""
        for r in self.rows:
            if (
                r["panel"] == panel
                and r["method"] == method
                and r["statistic"] == statistic
                and (epsilon is None or close(r["epsilon"], epsilon))
                and (beta is None or close(r["beta"], beta))
            ):
                return float(r["value"])
        return None

    def series(self, *, with_beta: bool = True) -> dict[tuple[str, str, str], dict[float, float]]:
        """The summary rows that have an ε as curves: (panel, method, statistic) → {ε: value}.
        ``with_beta=False`` leaves out rows of a β sweep (they share ε with the ε sweep's rows)."""
        out: dict[tuple[str, str, str], dict[float, float]] = {}
        for r in self.rows:
            if r.get("epsilon") in (None, "") or (not with_beta and r.get("beta") not in (None, "")):
                continue
            out.setdefault((r["panel"], r["method"], r["statistic"]), {})[float(r["epsilon"])] = float(r["value"])
        return out


@dataclass(frozen=True)
class Experiment:
    """One reproducible experiment: how to run it, draw it and tabulate it."""

    name: str
    source: str  # the citation, e.g. "[LZG24, Fig 2]"
    summary: str
    run: Callable[[Config], Result]
    plot: Callable[[Result, Path], Path]
    table: Callable[[Result], str]
    # Default PolyOpt/NR solver: exact vertex enumeration as in the papers (omitted beyond
    # 12 symbols); fig2 (real data, few designs) adds column generation above 12 symbols.
    solver: str = "exact"
