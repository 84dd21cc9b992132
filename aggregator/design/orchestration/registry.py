"""The designers, one object per method, and the registry that names them.

Every designer has the same call: ``designer(uncertainty, options) -> (Q, parameters)``,
with Q[y, x] = Q(y|x) designed for the uncertainty set at ``options.epsilon``, and declares
what it is: whether it takes the solver options, whether its guarantee is robust (for the
requested set) or only for P̂ itself, and whether it can design for a latent S (S not an
input of the mechanism, X = U).

GRR supports a latent S: GRR on X = U is ε-LDP with respect to U, and Y then depends
on S only through U, so every ratio P(y|s₁)/P(y|s₂) is a mixture of ratios ≤ e^ε — it is
(ε, F)-RLDP ([LZG24, Def 1]) for every F. So do the LDP baselines for a numeric U (``square-wave``,
``piecewise``: :mod:`..solvers.numeric_ldp`) for the same reason, and ``rr-released`` (it reads U only,
its level set by the exact audit). The other designers need S as an input.

Every designer also declares the notions it designs for (``notions``). :data:`METHODS` (=
:data:`REGISTRY`) are the methods of the default notion ``rldp``; :data:`NOTION_METHODS` maps each
notion to its methods. Under ``distp`` [KM19, Def 3]: ``coupling`` ([KM19, Defs 16, 18], :mod:`.coupling`;
it reads θ = S, so no latent S) and every robust RLDP method — an (ε, F)-RLDP mechanism is (ε, 0)-DistP
between every pair of conditionals in F (the distp audit's δ is 0 exactly when its ε at δ = 0, the RLDP
audit's, is ≤ ε), and the distp audit checks it all the same. ``nr`` claims radius 0 whatever was asked,
so it stays an RLDP method only. Under ``ldp`` (w.r.t. S), ``lip`` and ``alip``: the designers of
:mod:`.funnel.designers` (``optimal``, ``grr``, ``oue``, ``cr``, the watchdog family).

Designers return raw matrices: :func:`rldp.aggregator.design.design` audits every one of
them before it packages a document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from rldp.shared.audit.distp import robust_distp_delta
from rldp.shared.notions import DEFAULT_NOTION
from rldp.shared.notions import NOTIONS as NOTION_TABLE
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.errors import DesignError
from ..primitives.families import grr_matrix, srr_matrix
from ..primitives.options import NOTIONS, DesignOptions
from ..solvers import polyopt
from ..solvers.calibrate import cr_calibrated, cr_theorem, ir_calibrated, ir_theorem
from ..solvers.coupling import design_coupling
from ..solvers.funnel.designers import FUNNEL_DESIGNERS
from ..solvers.numeric_ldp import (
    bin_positions,
    epsilon_on_u,
    numeric_released,
    piecewise_matrix,
    square_wave_matrix,
)
from ..solvers.task import released_rr

__all__ = [
    "Designer",
    "REGISTRY",
    "METHODS",
    "NOTION_METHODS",
    "ALL_METHODS",
    "TRANSPORT_METHODS",
    "methods_for",
    "SOLVER_METHODS",
    "NON_ROBUST",
    "LATENT_METHODS",
    "TASK_METHODS",
    "NUMERIC_METHODS",
]


class Designer(Protocol):
    """A mechanism designer (one per method name)."""

    name: str
    summary: str
    takes_solver: bool  # uses options.solver / time_budget / progress / warm_start
    robust: bool  # False: the guarantee holds for {P̂} only, not for the requested set
    supports_latent: bool  # can design for a latent S (Q over U only)
    notions: frozenset[str]  # the notions it designs for ("rldp", "distp")

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]: ...


class GrrDesigner:
    name = "grr"
    summary = "generalised randomised response on X, the LDP baseline [LZG24, eq. 56]"
    takes_solver = False
    robust = True
    supports_latent = True
    notions = frozenset({"rldp", "distp"})

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        k = uncertainty.n_released if options.latent else uncertainty.public_distribution.size
        return grr_matrix(k, options.level), {}


class SrrDesigner:
    name = "srr"
    summary = "secret randomised response [LZG24, Def 4]"
    takes_solver = False
    robust = True
    supports_latent = False
    notions = frozenset({"rldp", "distp"})

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return srr_matrix(uncertainty.n_sensitive, uncertainty.n_released, options.level), {}


_Build = Callable[[UncertaintySet, float], tuple[np.ndarray, dict[str, Any]]]


class ReportingDesigner:
    """A reporting family with a theorem's parameters or calibrated to the exact audit: independent
    reporting (``ir``, [LZG24, Thm 5-6]) and conditional reporting (``cr``, [LZG21, Thm 5])."""

    takes_solver = False
    robust = True
    supports_latent = False
    notions = frozenset({"rldp", "distp"})

    def __init__(self, family: str, label: str, citation: str, theorem: _Build, calibrate: _Build, calibrated: bool):
        self.calibrated = calibrated
        self.name = f"{family}-calibrated" if calibrated else family
        self.summary = f"{label}, " + (
            "calibrated to the exact audit" if calibrated else f"the theorem's parameters {citation}"
        )
        self.build = calibrate if calibrated else theorem

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return self.build(uncertainty, options.level)


class PolyOptDesigner:
    """PolyOpt [LZG24, Thm 3]: without the s₁ = s₂ rows (``polyopt``) or Definition 3 as printed."""

    takes_solver = True
    robust = True
    supports_latent = False
    notions = frozenset({"rldp", "distp"})

    def __init__(self, same_sensitive: bool) -> None:
        self.same_sensitive = same_sensitive
        self.name = "polyopt-paper" if same_sensitive else "polyopt"
        self.summary = "optimal rows in the cone Γ of [LZG24, Def 3]" + (
            " as printed (with the s1 = s2 rows)" if same_sensitive else " (RLDP's pairs s1 ≠ s2)"
        )

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return polyopt.polyopt(uncertainty, self.same_sensitive, options)


class NrDesigner:
    name = "nr"
    summary = "the non-robust optimum for P̂ alone [LZG24, Sec 8] (claims radius 0)"
    takes_solver = True
    robust = False
    supports_latent = False
    notions = frozenset({"rldp"})

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return polyopt.nr(uncertainty, options)


class CouplingDesigner:
    """The utility-optimal coupling mechanism [KM19, Defs 16, 18] to one common target (:mod:`.coupling`).

    Exactly private at P̂; over a larger uncertainty set it is mixed with the independent coupling
    until the distp audit's worst-case δ at the claimed ε is within the claimed δ.
    """

    name = "coupling"
    summary = "optimal-transport coupling of every P̂_U|θ to one common target [KM19, Defs 16, 18]"
    takes_solver = False
    robust = True
    supports_latent = False  # A(y | θ, x) reads θ = S
    notions = frozenset({"distp"})

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        epsilon, delta = options.level, float(options.delta or 0.0)

        def leaks(q: np.ndarray) -> bool:
            return robust_distp_delta(q, uncertainty, epsilon)[0] > delta

        return design_coupling(uncertainty, target=options.target, cost=options.cost, leaks=leaks)


class ReleasedRrDesigner:
    """Randomised response on U alone, δ the largest the exact audit passes (:mod:`..solvers.task`)."""

    name = "rr-released"
    summary = "randomised response on the released U alone, its level the largest the exact RLDP audit passes"
    takes_solver = False
    robust = True
    supports_latent = True  # the report reads U only
    notions = frozenset({"rldp", "distp"})

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return released_rr(uncertainty, options.level, options.latent)


class NumericLdpDesigner:
    """An LDP baseline for a numeric U as a matrix over its bins (:mod:`..solvers.numeric_ldp`): Square Wave
    [LLW20, Sec 4] bucketised, or Piecewise [WXY19, Sec III-B] discretised, into as many output buckets as U
    has bins. It reads U only (with S an input the columns repeat over S); ε-LDP on U itself, hence
    (ε, F)-RLDP w.r.t. S for every F. ``parameters.epsilon_on_u`` is the matrix's exact LDP level on U."""

    takes_solver = False
    robust = True
    supports_latent = True  # the report reads U only
    notions = frozenset({"rldp", "distp"})

    def __init__(self, name: str, summary: str, build: Callable[..., tuple[np.ndarray, dict[str, Any]]]) -> None:
        self.name, self.summary, self.build = name, summary, build

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        _, spec = numeric_released(self.name, options.released_numeric)
        positions = bin_positions(spec)
        if positions.size != uncertainty.n_released:  # the request's spec and P̂ disagree: a caller's bug
            raise DesignError(f"{self.name}: U has {positions.size} bins but P̂ has {uncertainty.n_released} columns")
        rows, params = self.build(positions, options.level, positions.size)
        q = rows if options.latent else np.tile(rows, (1, uncertainty.n_sensitive))
        return q, {**params, "epsilon_on_u": epsilon_on_u(rows), "inputs": "bin midpoints normalised to [0, 1]"}


_NUMERIC_DESIGNERS = (
    NumericLdpDesigner(
        "square-wave",
        "Square Wave on a numeric U, bucketised over its bins [LLW20, Sec 4]: ε-LDP on U (the LDP baseline)",
        square_wave_matrix,
    ),
    NumericLdpDesigner(
        "piecewise",
        "the Piecewise mechanism on a numeric U, discretised over its bins [WXY19, Sec III-B]: ε-LDP on U",
        piecewise_matrix,
    ),
)

_DESIGNERS: tuple[Designer, ...] = (
    GrrDesigner(),
    SrrDesigner(),
    *(
        ReportingDesigner("ir", "independent reporting", "[LZG24, Thm 5-6]", ir_theorem, ir_calibrated, calibrated)
        for calibrated in (False, True)
    ),
    *(
        ReportingDesigner("cr", "conditional reporting", "[LZG21, Thm 5]", cr_theorem, cr_calibrated, calibrated)
        for calibrated in (False, True)
    ),
    PolyOptDesigner(False),
    PolyOptDesigner(True),
    NrDesigner(),
    CouplingDesigner(),
    ReleasedRrDesigner(),
    *_NUMERIC_DESIGNERS,
    *FUNNEL_DESIGNERS,
)


def _serves(designer: Designer, notion: str) -> bool:
    """Whether ``designer`` designs for ``notion``: it names the notion, or one the notion is designed as."""
    return notion in designer.notions or NOTION_TABLE[notion].designed_as in designer.notions


#: Notion → (method name → designer), in the order methods are listed to users.
NOTION_METHODS: Mapping[str, Mapping[str, Designer]] = MappingProxyType(
    {notion: MappingProxyType({d.name: d for d in _DESIGNERS if _serves(d, notion)}) for notion in NOTIONS}
)
#: Method name → designer for the default notion ``rldp``, in the order methods are listed to users.
REGISTRY: Mapping[str, Designer] = NOTION_METHODS[DEFAULT_NOTION]
METHODS = REGISTRY
#: Methods that take a target and a transport cost (DesignOptions.target / .cost).
TRANSPORT_METHODS = ("coupling",)
#: Every method name of every notion (the rldp ones first), e.g. for a command line's choices.
ALL_METHODS = tuple(dict.fromkeys(name for methods in NOTION_METHODS.values() for name in methods))


def methods_for(notion: str) -> Mapping[str, Designer]:
    """The methods that design for ``notion``; DesignError naming the notions otherwise."""
    if notion not in NOTION_METHODS:
        raise DesignError(f"notion must be one of {', '.join(NOTION_METHODS)}; got {notion!r}")
    return NOTION_METHODS[notion]


#: Methods that take the solver options (solver, time_budget, progress, warm_start).
SOLVER_METHODS = frozenset(name for name, d in REGISTRY.items() if d.takes_solver)
#: Methods whose guarantee is only w.r.t. the point estimate P̂.
NON_ROBUST = frozenset(name for name, d in REGISTRY.items() if not d.robust)
#: Methods that optimise a utility: for a task other than ``joint`` (DesignRequest.task) their design is
#: compared with ``rr-released`` by the task's error and the better one is kept (:mod:`..solvers.task`).
TASK_METHODS = frozenset({"polyopt", "polyopt-paper", "nr", "ir-calibrated", "cr-calibrated"})
#: Methods that need one numeric released attribute (the LDP baselines for numbers; ``auto`` skips them:
#: ε-LDP on U is a stronger claim than the one asked, and they serve as the baselines to compare with).
NUMERIC_METHODS = frozenset(d.name for d in _NUMERIC_DESIGNERS)
#: Methods that can design for a latent S.
LATENT_METHODS = tuple(name for name, d in REGISTRY.items() if d.supports_latent)
