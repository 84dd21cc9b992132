"""Lift measures, audits and mechanisms of [LTS20] and [ZDS23] for the ``funnel-*`` / ``lift-*`` experiments.

Everything here takes the joint P over S × X (shape (|S|, |X|)) and a mechanism Q[y, x] = P(y|x)
that reads X only (S latent), except Conditional Reporting, which reads (S, X) (Q of shape
(|Y|, |S|, |X|)). With P(y|s) = Σ_x Q(y|x) P(x|s) and P(y) = Σ_x Q(y|x) P(x), the lift is
l(s, y) = P(y|s)/P(y) [ZDS23, eq 1], Ψ(y) = min_s l(s, y) and Λ(y) = max_s l(s, y) [ZDS23, eq 2].

Audits (exact, at the given P): ε-LDP w.r.t. S [LTS20, Def 1] = max_y ln Λ(y)/Ψ(y); ε-LIP
[LTS20, Def 2] = max_y max(ln Λ(y), −ln Ψ(y)); (ε_l, ε_u)-ALIP [ZDS23, Def 3] = (max_y −ln Ψ(y),
max_y ln Λ(y)). Outputs of probability 0 are never observed and are skipped.

Optimal designs: every one of these notions constrains each output row v = Q(y|·) by linear
inequalities homogeneous in v (LDP: v·P_X|s ≤ e^ε v·P_X|s′; ALIP: e^{−ε_l} v·P_X ≤ v·P_X|s ≤
e^{ε_u} v·P_X), so the optimum is PolyOpt's: enumerate the vertices of the cone cut by Σ v = 1
and solve one LP over them (rldp.aggregator.design.primitives.exact: cddlib + HiGHS). For ALIP this is
[LTS20, Thm 3] / AORR [ZDS23, eq 12] written in Q instead of (R, q) (R_x|y = v_x P_x / P(y));
for LDP it is [LTS20, Thm 2] with the (|X| − 1)-dimensional row cone instead of the paper's
|X|(|X| − 1)-dimensional polytope of whole matrices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rldp.aggregator.design import PolyOptError, enumerate_vertices, optimal_weights

__all__ = [
    "lifts",
    "ldp_level",
    "lip_level",
    "alip_levels",
    "mutual_information",
    "partition_matrix",
    "RowCone",
    "optimal_matrix",
]

_TINY = 1e-15


def _conditionals(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P_S, P_X, P_X|S) of the joint (|S|, |X|)."""
    ps, px = joint.sum(axis=1), joint.sum(axis=0)
    return ps, px, joint / ps[:, None]


def lifts(q: np.ndarray, joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(l[s, y] for the observed outputs, P(y) of those outputs) — [ZDS23, eq 1]."""
    ps, px, pxs = _conditionals(joint)
    if q.ndim == 3:  # Conditional Reporting: Q[y, s, x] reads S too
        pys = np.einsum("ysx,sx->sy", q, pxs)
    else:
        pys = pxs @ q.T  # [s, y]
    py = ps @ pys
    seen = py > _TINY
    return pys[:, seen] / py[seen], py[seen]


def ldp_level(q: np.ndarray, joint: np.ndarray) -> float:
    """ε of ε-LDP w.r.t. S [LTS20, Def 1]: max_y ln max_s P(y|s) / min_s P(y|s) (inf if a zero)."""
    lift, _ = lifts(q, joint)
    lo, hi = lift.min(axis=0), lift.max(axis=0)
    with np.errstate(divide="ignore"):
        return float(np.max(np.log(hi) - np.log(lo)))


def alip_levels(q: np.ndarray, joint: np.ndarray) -> tuple[float, float]:
    """(ε_l, ε_u) of (ε_l, ε_u)-ALIP [ZDS23, Def 3]: (max_y −ln Ψ(y), max_y ln Λ(y))."""
    lift, _ = lifts(q, joint)
    with np.errstate(divide="ignore"):
        return float(-np.log(lift.min())), float(np.log(lift.max()))


def lip_level(q: np.ndarray, joint: np.ndarray) -> float:
    """ε of ε-LIP [LTS20, Def 2]: max(ε_l, ε_u)."""
    return max(alip_levels(q, joint))


def mutual_information(q: np.ndarray, joint: np.ndarray) -> float:
    """I(X;Y) in nats, for Q[y, x] or Conditional Reporting's Q[y, s, x]."""
    if q.ndim == 3:
        pxy = np.einsum("ysx,sx->xy", q, joint)
    else:
        pxy = joint.sum(axis=0)[:, None] * q.T
    px, py = pxy.sum(axis=1), pxy.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pxy > 0, pxy * (np.log(pxy) - np.log(np.outer(px, py))), 0.0)
    return float(terms.sum())


# ----------------------------------------------------------------------------- watchdog family


def partition_matrix(groups: Sequence[Sequence[int]], size: int) -> np.ndarray:
    """The deterministic mechanism that publishes each low-risk symbol as itself and each
    group as one merged output (X-invariant randomisation, complete merging per group)."""
    grouped = {x for g in groups for x in g}
    singles = [x for x in range(size) if x not in grouped]
    q = np.zeros((len(singles) + len(groups), size))
    for y, x in enumerate(singles):
        q[y, x] = 1.0
    for i, g in enumerate(groups):
        q[len(singles) + i, list(g)] = 1.0
    return q


# ----------------------------------------------------------------------------- optimal designs


class RowCone:
    """The cone {v ≥ 0 : A v ≤ 0} of admissible output rows, duck-typed for
    :func:`rldp.aggregator.design.enumerate_vertices` (``inequalities``, ``violations``)."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = np.asarray(rows, dtype=float)

    @classmethod
    def ldp(cls, joint: np.ndarray, epsilon: float) -> RowCone:
        """v·P_X|s − e^ε v·P_X|s′ ≤ 0 for every s ≠ s′ [LTS20, eq 7]."""
        _, _, pxs = _conditionals(joint)
        c = len(pxs)
        pairs = [(s, t) for s in range(c) for t in range(c) if s != t]
        return cls(np.array([pxs[s] - math.exp(epsilon) * pxs[t] for s, t in pairs]))

    @classmethod
    def alip(
        cls, joint: np.ndarray, eps_lower: float, eps_upper: float, columns: Sequence[int] | None = None
    ) -> RowCone:
        """v·P_X|s − e^{ε_u} v·P_X ≤ 0 and e^{−ε_l} v·P_X − v·P_X|s ≤ 0 [LTS20, eq 13], [ZDS23, eq 12];
        with ``columns``, for rows supported on those symbols only ([ZDS23, eq 25], subset RR)."""
        _, px, pxs = _conditionals(joint)
        if columns is not None:
            px, pxs = px[list(columns)], pxs[:, list(columns)]
        upper = pxs - math.exp(eps_upper) * px[None, :]
        lower = math.exp(-eps_lower) * px[None, :] - pxs
        return cls(np.vstack([upper, lower]))

    def inequalities(self) -> np.ndarray:
        return self.rows

    def violations(self, points: np.ndarray) -> np.ndarray:
        scale = np.abs(self.rows).max(axis=1)
        out: np.ndarray = np.max((points @ self.rows.T) / scale[None, :], axis=1)
        return out


def optimal_matrix(cone: RowCone, px: np.ndarray) -> np.ndarray:
    """The I(X;Y)-optimal mechanism whose rows lie in ``cone``: vertices (cddlib) + one LP (HiGHS),
    one output per vertex of positive weight. Raises PolyOptError if the cone is only {0}."""
    try:
        verts = enumerate_vertices(cone)  # type: ignore[arg-type]
    except PolyOptError:
        verts = np.zeros((0, len(px)))
    if not len(verts):
        raise PolyOptError("no output row satisfies the constraints (empty polytope)")
    theta, _ = optimal_weights(verts, px / px.sum())  # μ is homogeneous in P: a subset's P_X rescaled
    keep = theta > 1e-12
    q = theta[keep, None] * verts[keep]
    q = q / q.sum(axis=0, keepdims=True)  # columns sum to 1 (LP round-off)
    return q
