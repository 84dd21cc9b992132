"""Divergence distribution privacy [KM19, Defs 5–6, 11–12]: how far apart the output distributions are.

(ε, D)-DistP [KM19, Def 11]: D(Aλ₀ ‖ Aλ₁) ≤ ε for every protected pair (λ₀, λ₁). As in the distp
audit (:mod:`rldp.shared.audit.distp`) the pairs are P_U|θ, P_U|θ′ of a joint distribution over
(θ, u), every ordered θ ≠ θ′, and Aλ_θ is P(·|θ) = Σ_u Q(·|θ,u) P(u|θ). The divergences D
(rebuilt: the formulas and [KM19, Table I] were lost in extraction; the standard forms of
[KM19, Def 5–6], with f as in Barthe and Olmedo, ICALP 2013, whom [KM19] cites for them):

* ``max`` — the max divergence D∞(p ‖ q) = max_y log(p_y / q_y) [KM19, Def 5 at δ = 0], so
  (ε, D∞)-DistP is (ε, 0)-DistP; :func:`approximate_max_divergence` is Def 5 at δ > 0.
* the f-divergences D_f(p ‖ q) = Σ_y q_y f(p_y / q_y) [KM19, Def 6]: ``kl`` f(t) = t log t;
  ``reverse_kl`` f(t) = −log t (= KL(q ‖ p)); ``total_variation`` f(t) = ½|t − 1| (= ½‖p − q‖₁);
  ``chi2`` f(t) = (t − 1)²; ``hellinger`` f(t) = ½(√t − 1)² (the squared Hellinger distance
  ½ Σ (√p − √q)², in [0, 1]). Where q_y = 0 < p_y the term is p_y · lim_{t→∞} f(t)/t: +inf for
  kl and chi2, 0 for reverse_kl, p_y/2 for total_variation and hellinger.

XDistP [KM19, Def 12] asks D(Aλ₀ ‖ Aλ₁) ≤ ε·d(λ₀, λ₁) for a metric d on distributions (the Earth
mover's distance); d needs optimal transport, which the shared package does not do:
:func:`pairwise_divergences` gives the numerators and the aggregator divides by its d.

All in nats; numpy only (the client may import this).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .audit.distp import conditional_outputs, hockey_stick_threshold
from .errors import ValidationError

__all__ = ["DIVERGENCES", "divergence", "approximate_max_divergence", "pairwise_divergences", "divergence_distp"]

#: The divergences D of (ε, D)-DistP, in the order reports list them.
DIVERGENCES = ("max", "kl", "reverse_kl", "total_variation", "chi2", "hellinger")


def _max(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)) - np.log(q), -np.inf)
    out: np.ndarray = np.maximum(np.max(ratio, axis=-1), 0.0)  # 0 when p = 0 everywhere
    return out


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - np.log(q)), 0.0)
    out: np.ndarray = np.sum(terms, axis=-1)
    return out


def _reverse_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return _kl(q, p)


def _total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * np.sum(np.abs(p - q), axis=-1)
    return out


def _chi2(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, (p - q) ** 2 / np.where(q > 0, q, 1.0), np.where(p > 0, np.inf, 0.0))
    out: np.ndarray = np.sum(terms, axis=-1)
    return out


def _hellinger(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * np.sum((np.sqrt(p) - np.sqrt(q)) ** 2, axis=-1)
    return out


_MEASURES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "max": _max,
    "kl": _kl,
    "reverse_kl": _reverse_kl,
    "total_variation": _total_variation,
    "chi2": _chi2,
    "hellinger": _hellinger,
}


def _probability(value: Any, name: str) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.ndim != 1 or not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValidationError(f"{name} must be a 1-D array of finite numbers ≥ 0; got shape {v.shape}")
    return v


def divergence(name: str, p: Any, q: Any) -> float:
    """D(p ‖ q) for D named ``name`` (one of :data:`DIVERGENCES`), in nats."""
    if name not in _MEASURES:
        raise ValidationError(f"unknown divergence {name!r}; expected one of {', '.join(DIVERGENCES)}")
    a, b = _probability(p, "p"), _probability(q, "q")
    if a.shape != b.shape:
        raise ValidationError(f"p and q must have the same length; got {a.size} and {b.size}")
    return float(_MEASURES[name](a, b))


def approximate_max_divergence(p: Any, q: Any, delta: float) -> float:
    """D∞^δ(p ‖ q) = max over sets R with p(R) > δ of log((p(R) − δ) / q(R)) [KM19, Def 5].

    Equal to log of the smallest t with Σ_y max(0, p_y − t q_y) ≤ δ (the same condition), so
    (ε, δ)-DistP is D∞^δ ≤ ε in both directions [KM19, Prop 1]; −inf when δ ≥ Σ p.
    """
    a, b = _probability(p, "p"), _probability(q, "q")
    if a.shape != b.shape:
        raise ValidationError(f"p and q must have the same length; got {a.size} and {b.size}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta <= 1:
        raise ValidationError(f"delta must be a number in [0, 1], got {delta!r}")
    t = hockey_stick_threshold(a, b, float(delta))
    return -math.inf if t == 0 else math.log(t)


def pairwise_divergences(matrix: Any, distribution: Any) -> dict[str, np.ndarray]:
    """For each D, the (|S|, |S|) table D(P(·|θ) ‖ P(·|θ′)); NaN on the diagonal and for θ without mass.

    ``distribution`` is a joint distribution (or counts) over (θ, u), shape (|S|, |U|); ``matrix``
    is Q with |S|·|U| columns (θ read) or |U| (θ latent).
    """
    out, keep = conditional_outputs(matrix, distribution)
    p, q = out[:, None, :], out[None, :, :]
    valid = keep[:, None] & keep[None, :] & ~np.eye(len(keep), dtype=bool)
    return {name: np.where(valid, measure(p, q), np.nan) for name, measure in _MEASURES.items()}


def divergence_distp(matrix: Any, distribution: Any) -> dict[str, float]:
    """For each D, the smallest ε of (ε, D)-DistP [KM19, Def 11]: the worst D over ordered pairs θ ≠ θ′.

    0.0 when fewer than two values θ have mass; may be inf (max, kl, reverse_kl, chi2).
    """
    tables = pairwise_divergences(matrix, distribution)
    worst: dict[str, float] = {}
    for name in DIVERGENCES:
        table = tables[name]
        values = table[~np.isnan(table)]
        worst[name] = float(values.max()) if values.size else 0.0
    return worst
