"""What a design request asks for: :class:`DesignOptions`, and the checks of its solver fields."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import DesignError

__all__ = [
    "SOLVERS",
    "NOTIONS",
    "DEFAULT_TIME_BUDGET",
    "SOLVER_OPTIONS",
    "DesignOptions",
    "check_solver_options",
    "warm_rows",
]

SOLVERS = ("auto", "exact", "cg")
#: The notions a design can claim: (ε, F)-RLDP [LZG24, Def 1], (ε, δ)-distribution privacy [KM19, Def 3]
#: between the conditionals P_U|θ over the same uncertainty set F, and the privacy-funnel/lift notions
#: ε-LDP w.r.t. S [LTS20, Def 1], ε-LIP [LTS20, Def 2], (ε_l, ε_u)-ALIP [ZDS23, Def 3] (docs/design.md, "Notions").
NOTIONS = ("rldp", "distp", "ldp", "lip", "alip")
DEFAULT_TIME_BUDGET = 60.0  # seconds, for the column-generation solver
# The keyword options of design_matrix(); they apply to the methods that take a solver.
SOLVER_OPTIONS = ("solver", "time_budget", "progress", "warm_start")


@dataclass(frozen=True)
class DesignOptions:
    """Everything a designer may use besides the uncertainty set it designs for.

    ``epsilon`` is the privacy level (nats). ``radius`` / ``beta`` / ``n`` / ``order`` describe
    the uncertainty set F = {P : D_α(P̂‖P) ≤ B} (B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records, [LZG24, eq. 9]); a designer receives
    the set already built. ``solver``, ``time_budget``, ``progress`` and ``warm_start`` apply
    to the methods that take a solver (see :func:`rldp.aggregator.design.design_matrix`).
    ``extra`` are fields added to the document. ``latent`` is True when S is not an input of
    the mechanism (set by :func:`rldp.aggregator.design.design` from the alphabet).

    ``notion`` is the claim the document makes and its audit checks: ``"rldp"`` (the default) or
    ``"distp"`` ((ε, δ)-DistP between every pair P_U|θ, P_U|θ′ over F, ``delta`` ∈ [0, 1), default 0).
    ``notion="alip"`` takes ``epsilon_lower`` and ``epsilon_upper`` (ε_l, ε_u; ``epsilon`` is then their max).
    ``target`` and ``cost`` apply to method ``coupling`` only (:mod:`.coupling`): the common target
    (None = the barycenter, "marginal", "uniform" or |U| probabilities) and the transport cost
    ("absolute", "hamming" or a |U|×|U| matrix; None = "absolute").
    """

    epsilon: float
    radius: float | None = None
    beta: float | None = 0.05
    n: int | None = None
    order: float = 2.0
    solver: str = "auto"
    time_budget: float = DEFAULT_TIME_BUDGET
    progress: Callable[[dict], None] | None = None
    warm_start: Any = None
    extra: dict | None = None
    latent: bool = False
    notion: str = "rldp"
    delta: float | None = None
    target: Any = None
    cost: Any = None
    epsilon_lower: float | None = None
    epsilon_upper: float | None = None

    def check_solver(self) -> None:
        """Raise DesignError naming the first bad solver field."""
        check_solver_options({"solver": self.solver, "time_budget": self.time_budget, "progress": self.progress})


def check_solver_options(options: dict[str, Any]) -> None:
    """Reject unknown keyword options and bad values of the known ones (DesignError)."""
    unknown = sorted(set(options) - set(SOLVER_OPTIONS))
    if unknown:
        raise DesignError(f"unknown design option(s) {', '.join(unknown)}; expected: {', '.join(SOLVER_OPTIONS)}")
    solver = options.get("solver", "auto")
    if solver not in SOLVERS:
        raise DesignError(f"solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
    budget = options.get("time_budget", DEFAULT_TIME_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise DesignError(f"time_budget must be a finite number of seconds > 0; got {budget!r}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise DesignError("progress must be a callable receiving a dict, or None")


def warm_rows(warm: Any, size: int) -> list[np.ndarray]:
    """The ``warm_start`` option as row blocks: matrices (|Y|, |X|) of earlier designs on the
    same data (e.g. at a smaller ε: Γ_ε ⊆ Γ_ε' for ε ≤ ε', so their rows are certified here
    and the result is never below them). Rows outside the cone are mixed into it, never trusted."""
    if warm is None:
        return []
    mats = [warm] if isinstance(warm, np.ndarray) else list(warm)
    out = []
    for m in mats:
        arr = np.asarray(m, dtype=float)
        if arr.ndim not in (1, 2) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise DesignError("warm_start must be non-negative, finite matrices (|Y|, |X|) of earlier designs")
        if arr.shape[-1] != size:
            raise DesignError(
                f"warm_start matrices must have |X| = {size} columns (one per symbol); got shape {arr.shape}"
            )
        out.append(np.atleast_2d(arr))
    return out
