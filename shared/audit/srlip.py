"""The notion ``srlip``: ε-side-channel-resistant LIP over several released attributes [LTS20, Def 3].

X = U = Π_j X^j (the document's released attributes, last fastest). Q is ε-SRLIP w.r.t. S when for
every output y, every s, every subset J of the attributes and every x^J ∈ X^J [LTS20, eq 22]:

    e^{−ε} ≤ P(Y=y | S=s, X^J=x^J) / P(Y=y | X^J=x^J) ≤ e^{ε},

i.e. ε-LIP w.r.t. the attacker's prior P_{S,X|x^J} whatever attributes J it learns by a side
channel; J = ∅ is plain ε-LIP [LTS20, Lemma 2]. P(y|s,x^J) = Σ_{u: u^J = x^J} Q(y|s,u) P(u|s,x^J)
(``joint_matrix``: S latent or an input). Pairs (s, x^J) without mass have no users and are skipped.

The exact audit (:func:`srlip_leakage`) enumerates the 2^m subsets J; its work is
|Y|·|S|·Π_j (|X^j| + 1) numbers, refused with :class:`~rldp.shared.errors.AuditError` beyond
:data:`SRLIP_MAX_ENTRIES` or :data:`SRLIP_MAX_ATTRIBUTES` attributes (the server and the client
then agree: the limit depends on the shape only).

Over an uncertainty set of positive radius the audit is the sound bound valid for *every*
distribution: P(y|s,x^J) and P(y|x^J) both lie between the smallest and largest Q(y|·) over the
inputs, so ε-LDP w.r.t. the input (``ldp_epsilon``) implies ε-SRLIP everywhere. No exact robust
version is implemented (the conditionals given x^J do not vary independently over F).

[LTS20, Thm 4] is false: a product Π_j Q^j whose factors each satisfy ε^j-LIP w.r.t. every prior
P_{S,X^j|x^J} (J ⊆ the other attributes) need not be Σ_j ε^j-SRLIP. With |S| = 2, two binary
attributes and ε = 0.5 (ε^j = 0.25) a product leaks 0.544, another 0.700 — already at J = ∅, so it
is not even 0.5-LIP (tests/shared/test_srlip.py holds both instances). The proof factorises
P(x^{∖J} | s, x^J) as Π_j P(x^j | s, x^{J[j]}) (eqs 39–41), which needs the attributes to be
independent given S. So no designer may certify SRLIP by Theorem 4; a product design must pass this audit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..document import alphabet, epsilon, mechanism_matrix
from ..errors import AuditError, ValidationError
from ..tolerances import AUDIT_TOLERANCE
from ..uncertainty import UncertaintySet
from .base import AuditResult, joint_matrix, log_ratios
from .ldp import ldp_epsilon
from .rldp import confidence_shortfall, document_uncertainty
from .secret import LipLeakage, scope

__all__ = ["SRLIP_MAX_ATTRIBUTES", "SRLIP_MAX_ENTRIES", "srlip_leakage", "robust_srlip_leakage", "SrlipAudit"]

#: The exact audit enumerates 2^m side channels J: at most this many released attributes…
SRLIP_MAX_ATTRIBUTES = 16
#: …and at most this many numbers |Y|·|S|·Π_j (|X^j| + 1) (a few seconds on one shared core at the limit).
SRLIP_MAX_ENTRIES = 2**21


def _check_size(outputs: int, n_sensitive: int, sizes: Sequence[int]) -> None:
    work = outputs * n_sensitive * math.prod(k + 1 for k in sizes)
    if len(sizes) > SRLIP_MAX_ATTRIBUTES or work > SRLIP_MAX_ENTRIES:
        raise AuditError(
            f"the exact srlip audit is exponential in the number of released attributes: this mechanism "
            f"({len(sizes)} attributes of sizes {list(sizes)}, {outputs} outputs, |S| = {n_sensitive}) needs "
            f"{work} numbers; this version audits at most {SRLIP_MAX_ENTRIES} and {SRLIP_MAX_ATTRIBUTES} attributes"
        )


def srlip_leakage(matrix: Any, joint: Any, sizes: Sequence[int]) -> LipLeakage:
    """Both sides of the SRLIP ratio at one distribution, exact [LTS20, Def 3, eq 22].

    ``joint`` is P over (S, U), shape (|S|, |U|); ``sizes`` the released attributes' sizes (their
    product is |U|, last fastest). ``worst_lower``/``worst_upper`` name the output, s, the side channel
    J (``subset``: bit j set when attribute j is known) and x^J (``value``: its index in X^J, last fastest).
    """
    p = np.asarray(joint, dtype=float)
    dims = tuple(int(k) for k in sizes)
    if p.ndim != 2 or not dims or math.prod(dims) != p.shape[1] or min(dims) < 1:
        raise ValidationError(f"sizes {list(dims)} must multiply to |U| = {p.shape[-1]} (joint shape (|S|, |U|))")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValidationError("joint must have finite entries ≥ 0 and a positive total")
    _check_size(int(np.shape(matrix)[0]) if np.ndim(matrix) == 2 else 1, p.shape[0], dims)
    p = p / p.sum()
    c, m = p.shape[0], len(dims)
    q = joint_matrix(matrix, c, p.shape[1])
    mass = (q.reshape(-1, c, p.shape[1]) * p[None]).reshape(-1, c, *dims)  # P(y, s, u)
    prior = p.reshape(c, *dims)
    best = {"lower": (0.0, {}), "upper": (0.0, {})}  # type: dict[str, tuple[float, dict[str, int]]]
    for subset in range(2**m):
        hidden = tuple(2 + j for j in range(m) if not subset >> j & 1)
        n_j = mass.sum(axis=hidden)  # P(y, s, x^J), shape (|Y|, |S|, *sizes_J)
        p_j = prior.sum(axis=tuple(h - 1 for h in hidden))  # P(s, x^J)
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.where(p_j[None] > 0, n_j / p_j[None], 0.0)
            marg = n_j.sum(axis=1) / p_j.sum(axis=0)[None]  # P(y | x^J)
        keep = np.broadcast_to(p_j[None] > 0, cond.shape)
        upper = np.where(keep, log_ratios(cond, marg[:, None]), -np.inf)
        lower = np.where(keep & (marg[:, None] > 0), log_ratios(marg[:, None], cond), -np.inf)
        for side, table in (("upper", upper), ("lower", lower)):
            if table.size == 0:
                continue
            flat = int(np.argmax(table))
            value = float(table.reshape(-1)[flat])
            if value > best[side][0]:
                idx = np.unravel_index(flat, table.shape)
                x_index = int(np.ravel_multi_index(idx[2:], table.shape[2:])) if len(idx) > 2 else 0
                best[side] = (value, {"output": int(idx[0]), "s": int(idx[1]), "subset": subset, "value": x_index})
    return LipLeakage(best["lower"][0], best["upper"][0], best["lower"][1], best["upper"][1])


def robust_srlip_leakage(matrix: Any, uncertainty: UncertaintySet, sizes: Sequence[int]) -> LipLeakage:
    """Exact at P̂ when the radius is 0; otherwise the bound valid for every distribution (ε-LDP w.r.t. the input)."""
    at_p_hat = srlip_leakage(matrix, uncertainty.public_distribution, sizes)
    if uncertainty.radius == 0:
        return at_p_hat
    q = joint_matrix(matrix, uncertainty.n_sensitive, uncertainty.n_released)
    bound = max(ldp_epsilon(q), at_p_hat.epsilon)
    return LipLeakage(bound, bound, {}, {})


class SrlipAudit:
    """Notion ``"srlip"``: ε-SRLIP over the document's released attributes, at P̂ (radius 0) or for every P."""

    name = "srlip"
    supports_per_report = False

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        claimed = epsilon(doc)
        uset, params = document_uncertainty(doc)
        sizes = [a.size for a in alphabet(doc).released]
        q = mechanism_matrix(doc)
        leak = robust_srlip_leakage(q, uset, sizes)
        at_p_hat = leak if uset.radius == 0 else srlip_leakage(q, uset.public_distribution, sizes)
        worst = leak.worst_lower if leak.lower > leak.upper else leak.worst_upper
        reasons = []
        if leak.epsilon > claimed + AUDIT_TOLERANCE:
            reasons.append(
                f"audited SRLIP epsilon {leak.epsilon:.12g} exceeds the claimed {claimed:.12g} (output "
                f"{worst.get('output')}, s={worst.get('s')}, side channel {worst.get('subset')}, {scope(uset.radius)})"
            )
        shortfall = confidence_shortfall(uset, params)
        if shortfall is not None:
            reasons.append(shortfall)
        extra = {
            "epsilon_lower": leak.lower,
            "epsilon_upper": leak.upper,
            "epsilon_at_p_hat": at_p_hat.epsilon,
            "exact": uset.radius == 0,
            "scope": scope(uset.radius) if uset.radius == 0 else "for every distribution (bound: LDP w.r.t. X)",
        }
        return AuditResult(self.name, leak.epsilon, claimed, not reasons, worst, tuple(reasons), extra)
