"""The designers, one object per method, and the registry that names them.

Every designer has the same call: ``designer(uncertainty, options) -> (Q, parameters)``,
with Q[y, x] = Q(y|x) designed for the uncertainty set at ``options.epsilon``, and declares
what it is: whether it takes the solver options, whether its guarantee is robust (for the
requested set) or only for P̂ itself, and whether it can design for a latent S (S not an
input of the mechanism, X = U).

Only GRR supports a latent S: GRR on X = U is ε-LDP with respect to U, and Y then depends
on S only through U, so every ratio P(y|s₁)/P(y|s₂) is a mixture of ratios ≤ e^ε — it is
(ε, F)-RLDP ([LZG24, Def 1]) for every F. The other designers need S as an input.

Designers return raw matrices: :func:`rldp.aggregator.design.design` audits every one of
them before it packages a document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from rldp.shared.uncertainty import UncertaintySet

from . import polyopt
from .calibrate import cr_calibrated, cr_theorem, ir_calibrated, ir_theorem
from .families import grr_matrix, srr_matrix
from .options import DesignOptions

__all__ = ["Designer", "REGISTRY", "METHODS", "SOLVER_METHODS", "NON_ROBUST", "LATENT_METHODS"]


class Designer(Protocol):
    """A mechanism designer (one per method name)."""

    name: str
    summary: str
    takes_solver: bool  # uses options.solver / time_budget / progress / warm_start
    robust: bool  # False: the guarantee holds for {P̂} only, not for the requested set
    supports_latent: bool  # can design for a latent S (Q over U only)

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]: ...


class GrrDesigner:
    name = "grr"
    summary = "generalised randomised response on X, the LDP baseline [LZG24, eq. 56]"
    takes_solver = False
    robust = True
    supports_latent = True

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        k = uncertainty.n_released if options.latent else uncertainty.public_distribution.size
        return grr_matrix(k, options.epsilon), {}


class SrrDesigner:
    name = "srr"
    summary = "secret randomised response [LZG24, Def 4]"
    takes_solver = False
    robust = True
    supports_latent = False

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return srr_matrix(uncertainty.n_sensitive, uncertainty.n_released, options.epsilon), {}


_Build = Callable[[UncertaintySet, float], tuple[np.ndarray, dict[str, Any]]]


class ReportingDesigner:
    """A reporting family with a theorem's parameters or calibrated to the exact audit: independent
    reporting (``ir``, [LZG24, Thm 5-6]) and conditional reporting (``cr``, [LZG21, Thm 5])."""

    takes_solver = False
    robust = True
    supports_latent = False

    def __init__(self, family: str, label: str, citation: str, theorem: _Build, calibrate: _Build, calibrated: bool):
        self.calibrated = calibrated
        self.name = f"{family}-calibrated" if calibrated else family
        self.summary = f"{label}, " + (
            "calibrated to the exact audit" if calibrated else f"the theorem's parameters {citation}"
        )
        self.build = calibrate if calibrated else theorem

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return self.build(uncertainty, float(options.epsilon))


class PolyOptDesigner:
    """PolyOpt [LZG24, Thm 3]: without the s₁ = s₂ rows (``polyopt``) or Definition 3 as printed."""

    takes_solver = True
    robust = True
    supports_latent = False

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

    def __call__(self, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict[str, Any]]:
        return polyopt.nr(uncertainty, options)


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
)
#: Method name → designer, in the order methods are listed to users.
REGISTRY: Mapping[str, Designer] = MappingProxyType({d.name: d for d in _DESIGNERS})
METHODS = REGISTRY
#: Methods that take the solver options (solver, time_budget, progress, warm_start).
SOLVER_METHODS = frozenset(name for name, d in REGISTRY.items() if d.takes_solver)
#: Methods whose guarantee is only w.r.t. the point estimate P̂.
NON_ROBUST = frozenset(name for name, d in REGISTRY.items() if not d.robust)
#: Methods that can design for a latent S.
LATENT_METHODS = tuple(name for name, d in REGISTRY.items() if d.supports_latent)
