"""The errors of the designers: a refused request and a solver that could not finish.

:class:`DesignError` is what callers of :func:`rldp.aggregator.design.design` see: a bad
request or a result that failed its audit. The solvers' own failures
(:class:`SolverError` and its kinds) are wrapped into a DesignError by
:func:`~rldp.aggregator.design.orchestration.build.design_matrix`, so only direct users of the solvers
meet them.
"""

from __future__ import annotations

from rldp.shared.errors import RldpError, ValidationError

__all__ = ["DesignError", "DesignParameterError", "SolverError", "PolyOptError", "PolyOptTooLarge", "CGError"]


class DesignError(ValidationError):
    """A design request was invalid, or its result failed the audit."""


class DesignParameterError(DesignError):
    """A design request's field out of its range or against another field; ``parameter`` names it."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


class SolverError(RldpError, RuntimeError):
    """A PolyOpt solver could not produce a mechanism (numerical failure, bad solver input)."""


class PolyOptError(SolverError):
    """Exact PolyOpt: vertex enumeration or the linear program failed."""


class PolyOptTooLarge(PolyOptError):
    """The alphabet exceeds what exact enumeration can do (EXACT_MAX_SYMBOLS): not a numerical
    failure, so no fallback should hide it."""


class CGError(SolverError):
    """The column-generation solver could not produce a mechanism."""
