"""Estimating the distribution of X = (S, U) from privatised reports.

Every user sends one output y of a published mechanism Q (``matrix[y, x] = Q(y|x)``,
columns summing to 1). The aggregator only sees the counts c_y, which are
Multinomial(n, π) with π = Q θ, where θ = P_X (flattened s-major: x = s·|U| + u).
:func:`estimate_distribution` returns an :class:`Estimate` of θ with 95 % intervals.

Modules: :mod:`.inputs` (validation, :func:`report_counts`), :mod:`.likelihood` (maximum
likelihood by EM with the Qᵀ update, SQUAREM and an interior-point finish; identifiability),
:mod:`.inverse` (the unbiased inverse estimator and the simplex projection),
:mod:`.intervals` (delta-method, bootstrap and partial-identification intervals),
:mod:`.result` (:class:`Estimate` and its JSON form), :mod:`.estimator` (the entry point),
:mod:`.linalg` (shared linear algebra), :mod:`.combined` (one likelihood over several mechanisms:
:func:`estimate_combined`).
"""

from __future__ import annotations

from .combined import estimate_combined
from .estimator import DEFAULT_BOOTSTRAP, INTERVALS, METHODS, estimate_distribution, estimate_many
from .inputs import report_counts
from .intervals import LEVEL
from .inverse import project_simplex
from .likelihood import Likelihood
from .numeric import numeric_summaries
from .result import Estimate

__all__ = [
    "estimate_combined",
    "estimate_many",
    "DEFAULT_BOOTSTRAP",
    "Estimate",
    "INTERVALS",
    "LEVEL",
    "Likelihood",
    "numeric_summaries",
    "METHODS",
    "estimate_distribution",
    "project_simplex",
    "report_counts",
]
