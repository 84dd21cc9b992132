"""The LDP baselines for numbers as matrices over U's bins: Square Wave and a discretised Piecewise mechanism.

Both read the released numeric attribute U only. A bin's position is its midpoint normalised to [0, 1] by the
range of the edges, x = (m − e₀)/(e_k − e₀); the report is one of k output buckets (k = U's bin count), each
an interval of the mechanism's continuous output range, and Q(y|u) is the mechanism's probability that its
report falls in bucket y. The continuous mechanisms are ε-LDP (their output densities differ by at most
e^ε), so a bucket's probabilities, integrals of those densities, differ by at most e^ε too: the matrix is
ε-LDP on U itself. The report is then independent of S given U, so every ratio P(y|s₁)/P(y|s₂) is a
mixture of ratios ≤ e^ε: (ε, F)-RLDP w.r.t. S for every F ([LZG24, Def 1]), far from tight when U says
little about S. The exact audit judges the document all the same.

* **Square Wave** [LLW20, Sec 4]: v ∈ [0, 1] is reported as ṽ ∈ [−b, 1 + b] with density p = e^ε/(2b·e^ε + 1)
  within b of v and q = 1/(2b·e^ε + 1) elsewhere, b = (ε·e^ε − e^ε + 1)/(2e^ε(e^ε − 1 − ε)). Bucketised as
  in the paper: the output range cut into equal buckets, as many as the input has bins (the paper's
  d̃ = d), so Q is square: P(U) stays identifiable and no output bucket is narrower than needed to tell
  the inputs apart.
* **Piecewise** [WXY19, Sec III-B]: t = 2v − 1 ∈ [−1, 1] is reported as t̃ ∈ [−C, C], C = (e^{ε/2} + 1)/(e^{ε/2} − 1),
  with density p = (e^ε − e^{ε/2})/(2e^{ε/2} + 2) on [l(t), l(t) + C − 1], l(t) = (C + 1)t/2 − (C − 1)/2, and
  p/e^ε elsewhere. Discretised over the same output grid: [−C, C] cut into k equal buckets.

:func:`epsilon_on_u` is the exact LDP level of a matrix over U: max over y and column pairs of
log Q(y|u)/Q(y|u'); the designers record it as ``parameters.epsilon_on_u``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.numeric import NumericSpec

from ..primitives.errors import DesignError

__all__ = [
    "bin_positions",
    "epsilon_on_u",
    "numeric_released",
    "piecewise_matrix",
    "square_wave_b",
    "square_wave_matrix",
]

# Below this ε, b = (εe^ε − e^ε + 1)/(2e^ε(e^ε − 1 − ε)) loses its digits to cancellation (both sides ~ ε²/2).
_TINY = 1e-6


def numeric_released(method: str, released: Any) -> tuple[str, NumericSpec]:
    """The one released attribute's name and numeric spec (``released``: the request's
    ``released_numeric``, (name, spec or None) per released attribute); DesignError saying what is expected."""
    attrs = tuple(released or ())
    if len(attrs) != 1:
        names = ", ".join(repr(name) for name, _ in attrs) or "none"
        raise DesignError(
            f"method {method!r} needs exactly one released attribute U, numeric (declared with --numeric, or "
            f"'numeric' in the API); got {len(attrs)}: {names}"
        )
    name, spec = attrs[0]
    if spec is None:
        raise DesignError(
            f"method {method!r} needs a numeric released attribute (its bins' edges place each value); "
            f"{name!r} is categorical: if its values are numbers, declare it numeric (--numeric {name}, or 'numeric' "
            "in the API); a category has no place on a line, so for categories use rr-released or grr instead"
        )
    return name, spec


def bin_positions(spec: NumericSpec) -> np.ndarray:
    """Each bin's midpoint, normalised to [0, 1] by the range of the edges."""
    edges = np.asarray(spec.edges, dtype=float)
    mid = (edges[:-1] + edges[1:]) / 2
    out: np.ndarray = (mid - edges[0]) / (edges[-1] - edges[0])
    return out


def _bucket_matrix(cuts: np.ndarray, lo: np.ndarray, hi: np.ndarray, p: float, q: float) -> np.ndarray:
    """Q[j, i]: the mass of bucket [cuts_j, cuts_{j+1}] under density p on [lo_i, hi_i] and q elsewhere."""
    left, right = cuts[:-1, None], cuts[1:, None]
    near = np.clip(np.minimum(right, hi[None, :]) - np.maximum(left, lo[None, :]), 0.0, None)
    mass = q * (right - left) + (p - q) * near
    out: np.ndarray = mass / mass.sum(axis=0, keepdims=True)  # exact up to rounding: the densities integrate to 1
    return out


def square_wave_b(epsilon: float) -> float:
    """Square Wave's half-width b [LLW20, Sec 4] (the value that maximises the mutual information)."""
    e = math.exp(epsilon)
    return (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))


def square_wave_matrix(positions: np.ndarray, epsilon: float, buckets: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Square Wave [LLW20, Sec 4] for inputs at ``positions`` ∈ [0, 1], its output [−b, 1 + b] cut into
    ``buckets`` equal buckets: (Q[bucket, input], {b, buckets, output_range})."""
    if epsilon < _TINY:
        raise DesignError(f"square-wave needs epsilon ≥ {_TINY:g} (its b loses its digits below); got {epsilon:g}")
    e, b = math.exp(epsilon), square_wave_b(epsilon)
    p, q = e / (2 * b * e + 1), 1 / (2 * b * e + 1)
    cuts = np.linspace(-b, 1 + b, buckets + 1)
    x = np.asarray(positions, dtype=float)
    return _bucket_matrix(cuts, x - b, x + b, p, q), {"b": b, "buckets": buckets, "output_range": [-b, 1 + b]}


def piecewise_matrix(positions: np.ndarray, epsilon: float, buckets: int) -> tuple[np.ndarray, dict[str, Any]]:
    """The Piecewise mechanism [WXY19, Sec III-B] for inputs at ``positions`` ∈ [0, 1] (t = 2v − 1), its
    output [−C, C] cut into ``buckets`` equal buckets: (Q[bucket, input], {C, buckets, output_range})."""
    h = math.exp(epsilon / 2)
    c = (h + 1) / (h - 1)
    p = (h * h - h) / (2 * h + 2)
    t = 2 * np.asarray(positions, dtype=float) - 1
    lo = (c + 1) / 2 * t - (c - 1) / 2
    cuts = np.linspace(-c, c, buckets + 1)
    return _bucket_matrix(cuts, lo, lo + c - 1, p, p / (h * h)), {"C": c, "buckets": buckets, "output_range": [-c, c]}


def epsilon_on_u(q: np.ndarray) -> float:
    """max over y and column pairs (u, u') of log Q(y|u)/Q(y|u'): the matrix's exact LDP level on U
    (inf when a row has a zero beside a positive entry)."""
    top, bottom = q.max(axis=1), q.min(axis=1)
    if np.any(bottom <= 0):
        return math.inf
    return float(np.max(np.log(top) - np.log(bottom)))
