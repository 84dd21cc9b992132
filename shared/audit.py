"""Privacy audits: the worst-case ε a mechanism really gives, computed from its matrix.

The single home of every privacy check in rldp (designers, the server and the client
all call these functions):

* :func:`audit_rldp` — the exact robust audit of DESIGN.md. For every output y and
  s₁ ≠ s₂ it takes the worst case of P(Y=y|S=s₁)/P(Y=y|S=s₂) = (Q_y|s₁·P_U|s₁)/(Q_y|s₂·P_U|s₂)
  over every P whose conditionals lie in the projected balls F_U|s (Theorem 1). Those
  conditionals vary independently, so the worst case is max_R Q_y|s₁·R / min_R Q_y|s₂·R,
  both computed by the Lagrange search of :mod:`rldp.shared.uncertainty`. The set
  F' = {P : P_U|s ∈ F_U|s ∀s} contains F, so the result is a valid (ε, F)-RLDP guarantee.
* :func:`ldp_epsilon` — ordinary ε-LDP with respect to all of X (Definition 2).
* :func:`all_distributions_epsilon` — (ε, P_X)-RLDP, i.e. F = the whole simplex (Prop. 3).
* :func:`realised_epsilon` — ε* of Sec. 8.3 for one given (true) distribution.
* :func:`audit_document` — dispatch on the document's ``privacy.notion``.

A mechanism passes when its audited ε ≤ claimed ε + AUDIT_TOLERANCE. The tolerance is
the audit's own floating-point accuracy (the Lagrange search is accurate to ~1e-12 and
rounds towards leakage); designers keep their own margin below it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

from .uncertainty import UncertaintySet, confidence_radius

__all__ = [
    "AUDIT_TOLERANCE",
    "AuditResult",
    "audit_rldp",
    "rldp_epsilon",
    "ldp_epsilon",
    "all_distributions_epsilon",
    "realised_epsilon",
    "audit_document",
]

AUDIT_TOLERANCE = 1e-9  # nats


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit. ``epsilon`` is the audited worst case (nats, may be inf)."""

    notion: str
    epsilon: float
    claimed: float | None = None
    passed: bool | None = None
    worst: dict[str, int] = field(default_factory=dict)  # where the worst ratio occurs
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["epsilon"] = None if math.isinf(self.epsilon) else self.epsilon
        d["reasons"] = list(self.reasons)
        return d


def _matrix(matrix: Any) -> np.ndarray:
    q = np.asarray(matrix, dtype=float)
    if q.ndim != 2:
        raise ValueError(f"matrix must be 2-D (|Y|, |X|); got shape {q.shape}")
    if not np.all(np.isfinite(q)) or np.any(q < 0):
        raise ValueError("matrix entries must be finite and non-negative")
    return q


def _log_ratios(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """log(num/den) with 0/0 → −inf (no event, no leakage) and x/0 → +inf (x > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    out = np.where(num <= 0, -np.inf, out)
    return np.where((num > 0) & (den <= 0), np.inf, out)


def rldp_epsilon(matrix: Any, uncertainty: UncertaintySet) -> tuple[float, dict[str, int]]:
    """Exact worst-case ε of Q over F' = {P : P_U|s ∈ F_U|s for all s} (Theorem 1).

    ε = max_{y, s₁ ≠ s₂} log(max_{R ∈ F_U|s₁} Q_y|s₁·R / min_{R ∈ F_U|s₂} Q_y|s₂·R).
    Returns (ε, {"output": y, "s1": s₁, "s2": s₂}) for the worst triple.
    """
    q = _matrix(matrix)
    a1, a2 = uncertainty.n_sensitive, uncertainty.n_released
    if q.shape[1] != a1 * a2:
        raise ValueError(f"matrix has {q.shape[1]} columns; the alphabet has |X| = {a1}·{a2} = {a1 * a2}")
    hi, lo = uncertainty.extremes(q.reshape(-1, a1, a2))
    lo = np.maximum(lo, 0.0)
    ratios = _log_ratios(hi[:, :, None], lo[:, None, :])  # (y, s1, s2)
    ratios[:, np.arange(a1), np.arange(a1)] = -np.inf  # s₁ = s₂ is not a constraint
    return _worst(ratios, ("output", "s1", "s2"))


def _worst(ratios: np.ndarray, names: tuple[str, ...]) -> tuple[float, dict[str, int]]:
    if ratios.size == 0:
        return 0.0, {}
    idx = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    eps = float(ratios[idx])
    if eps == -math.inf:  # every row is zero: nothing is ever released
        return 0.0, {}
    return max(eps, 0.0), {name: int(i) for name, i in zip(names, idx)}


def ldp_epsilon(matrix: Any) -> float:
    """Ordinary LDP ε w.r.t. X: max_{y, x, x'} log(Q_y|x / Q_y|x') (Definition 2)."""
    q = _matrix(matrix)
    top, bottom = q.max(axis=1), q.min(axis=1)
    eps, _ = _worst(_log_ratios(top, bottom), ("output",))
    return eps


def all_distributions_epsilon(matrix: Any, n_sensitive: int) -> float:
    """ε such that Q is (ε, P_X)-RLDP: max over y and s ≠ s' of log(Q_y|s,u / Q_y|s',u') (Prop. 3)."""
    q = _matrix(matrix)
    if n_sensitive < 2 or q.shape[1] % n_sensitive:
        raise ValueError(f"|X| = {q.shape[1]} is not a multiple of |S| = {n_sensitive} ≥ 2")
    blocks = q.reshape(q.shape[0], n_sensitive, -1)
    ratios = _log_ratios(blocks.max(axis=2)[:, :, None], blocks.min(axis=2)[:, None, :])
    ratios[:, np.arange(n_sensitive), np.arange(n_sensitive)] = -np.inf
    eps, _ = _worst(ratios, ("output", "s1", "s2"))
    return eps


def realised_epsilon(matrix: Any, distribution: Any) -> float:
    """Realised ε* for one distribution P (seed 000, Sec. 8.3):

    ε* = max_{y, s₁, s₂} log(Σ_u Q_y|s₁,u P_u|s₁ / Σ_u Q_y|s₂,u P_u|s₂); +inf if some
    P(Y=y|S=s₂) = 0 < P(Y=y|S=s₁). Values s with P_s = 0 are skipped (no such users).
    """
    q = _matrix(matrix)
    p = np.asarray(distribution, dtype=float)
    if p.ndim != 2 or p.size != q.shape[1]:
        raise ValueError(f"distribution must have shape (|S|, |U|) with |S|·|U| = {q.shape[1]}; got {p.shape}")
    marg = p.sum(axis=1)
    keep = marg > 0
    cond = p[keep] / marg[keep, None]
    rows = q.reshape(q.shape[0], p.shape[0], p.shape[1])[:, keep, :]
    given = np.einsum("ysu,su->ys", rows, cond)
    ratios = _log_ratios(given[:, :, None], given[:, None, :])
    k = int(keep.sum())
    ratios[:, np.arange(k), np.arange(k)] = -np.inf
    eps, _ = _worst(ratios, ("output", "s1", "s2"))
    return eps


def audit_rldp(matrix: Any, uncertainty: UncertaintySet, claimed: float | None = None) -> AuditResult:
    """Run the exact RLDP audit; ``passed`` compares with ``claimed`` when given."""
    eps, worst = rldp_epsilon(matrix, uncertainty)
    passed = None if claimed is None else bool(eps <= claimed + AUDIT_TOLERANCE)
    reasons = () if passed in (None, True) else (
        f"audited epsilon {eps:.12g} exceeds the claimed {claimed:.12g} at output {worst.get('output')} "
        f"(s1={worst.get('s1')}, s2={worst.get('s2')})",)
    return AuditResult("rldp", eps, claimed, passed, worst, reasons)


def audit_document(doc: Mapping[str, Any]) -> AuditResult:
    """Audit a mechanism document against the guarantee it claims (``privacy.notion``).

    * ``rldp``: the exact robust audit over the document's uncertainty set; when the
      document also states ``n`` and ``beta``, its radius must be at least the confidence
      radius they imply (a smaller radius would overstate the confidence level).
    * ``ldp``: ordinary LDP w.r.t. X.
    The document's structure is validated first (rldp.shared.document).
    """
    from . import document as _doc  # local import: document does not depend on audit

    _doc.validate_document(doc)
    q = _doc.mechanism_matrix(doc)
    claimed = _doc.epsilon(doc)
    notion = _doc.notion(doc)
    if notion == "ldp":
        eps = ldp_epsilon(q)
        ok = eps <= claimed + AUDIT_TOLERANCE
        reasons = () if ok else (f"audited LDP epsilon {eps:.12g} exceeds the claimed {claimed:.12g}",)
        return AuditResult("ldp", eps, claimed, ok, {}, reasons)
    if notion != "rldp":
        raise ValueError(f"unknown privacy notion {notion!r}; this version audits 'rldp' and 'ldp'")
    params = _doc.uncertainty_parameters(doc)
    uset = UncertaintySet(_doc.public_distribution(doc), params["radius"], params["order"])
    result = audit_rldp(q, uset, claimed)
    n, beta = params.get("n"), params.get("beta")
    if n is not None and beta is not None and math.isfinite(uset.radius):
        needed = confidence_radius(int(n), float(beta), uset.public_distribution.size, uset.order)
        if uset.radius < needed * (1 - 1e-9):
            return AuditResult("rldp", result.epsilon, claimed, False, result.worst, result.reasons + (
                f"radius {uset.radius:.12g} is smaller than the {1 - beta:g}-confidence radius "
                f"{needed:.12g} implied by n={n} and beta={beta}",))
    return result
