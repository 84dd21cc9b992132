"""P̂ and its confidence set F from a private pilot: no public data needed.

A collection without public data starts with a *pilot* mechanism that is private for every
distribution (its RLDP claim is over F = all distributions, radius ∞), run by n₁ users. From the
pilot's report counts this module computes a confidence set F = {P : D_α(P₀‖P) ≤ B} that holds
the true P with probability ≥ 1 − β *given the pilot's privatisation noise*, and the design of
the next mechanism is made over it (docs/design.md, "P̂ from a private pilot").

The construction (``empirical-bernstein-box/v5``; ``v4``, ``v3`` and ``v2`` documents are still recomputed by their own
rule):

1. **An unbiased linear estimate.** With Q the pilot's |Y| × |X| matrix of full column rank and
   A = Q⁺ its pseudo-inverse (A·Q = I), P̂ = A·q̂ with q̂ the empirical output frequencies, so
   P̂_x is the mean of the n₁ i.i.d. values Z_i = A[x, y_i], each in [min_y A[x, y], max_y A[x, y]]
   (a range R_x) with E Z = P_x.
2. **Simultaneous bounds** (v3; v4 replaces this box for α ≤ 2, see 5). The empirical Bernstein bound
   [MP09, Thm 4] is one-sided: with probability
   ≥ 1 − δ, P_x ≥ P̂_x − √(2 V_x ln(2/δ) / n₁) − 7 R_x ln(2/δ) / (3 (n₁ − 1)), V_x the sample variance of
   the Z_i (finite-sample, not asymptotic; clipped at 0). The box ball (3) needs lower bounds only: at
   δ = β/K per cell, all K hold with probability ≥ 1 − β. The χ² ball (4) needs lower *and* upper bounds,
   2K one-sided statements, so there every side is taken at δ = β/(2K) (ln(4K/β)), and *both* balls are
   built from that one two-sided box, so that the ball kept holds with probability ≥ 1 − β. (v2 took the
   upper bounds at β/K too: its χ² ball held with probability ≥ 1 − 2β only.)

   **Forged reports** (a contamination budget γ, recorded in the provenance): if up to a share γ of the
   n₁ reports were forged — each Z_i of a forged report still lies in the range R_x — the honest mean
   differs from P̂_x by at most γ R_x, their n_h ≥ ⌈(1 − γ) n₁⌉ values have an unbiased sample variance
   ≤ n₁ (V_x,b + (γ R_x)²) / (n_h − 1) (V_x,b the biased variance of all n₁), and the bound above, applied
   to the honest reports with that variance and n_h, widened by γ R_x, holds for their P whatever the
   forger sent (any adversary who knows Q). γ = 0 is the bound as stated.
3. **The Rényi ball that holds that box.** For any centre P₀ and P ≥ ℓ cell by cell, every order
   α > 1 has Σ P₀^α P^{1−α} ≤ Σ P₀^α ℓ^{1−α} (1 − α < 0), and the right side over the simplex is
   smallest at P₀ = ℓ / Σℓ (Lagrange), where it equals (Σℓ)^{1−α}. So D_α(P₀‖P) ≤ B = −log Σ_x ℓ_x
   for every P in the box, for every α > 1; for α = 1 the same bound follows from
   log(P₀/P) ≤ log(P₀/ℓ), and for α < 1 from D_α ≤ D_1 (D_α is nondecreasing in α, [vEH14, Thm 3]). The ball
   is centred at P₀ = ℓ/Σℓ with radius B_box.
4. **A second ball, for orders α ≤ 2.** D_2(P₀‖P) = log(1 + χ²(P₀‖P)) with χ²(P₀‖P) = Σ (P₀ − P)²/P,
   and each term is convex in P_x, so over the box it is at most g_x = max((P₀−ℓ_x)²/ℓ_x, (P₀−u_x)²/u_x)
   (u the upper bounds; a cell with ℓ_x = 0 gets P₀_x = 0 and g_x = u_x). With P₀ the estimate kept
   inside the box (0 where ℓ_x = 0) and normalised, D_2 ≤ B_χ = log(1 + Σ g_x), and D_α ≤ D_2 for
   α ≤ 2 [vEH14, Thm 3]. This bound shrinks like 1/n₁ (the box bound like 1/√n₁).

5. **v4, for orders α ≤ 2** (:mod:`rldp.shared.pilot_dual`, where the derivation is): the box of (2) is
   replaced by a Bernstein box with the true variance, bounded over the box itself (ln(2K/β) per side,
   no sample-variance term), and a third ball is added: both balls above bound max Σ P₀²/P over the
   box; weak duality for ΣP = 1 gives a family of bounds containing both, minimised over its centre
   and multiplier. (α > 2 keeps the lower-side box and ball (3) of v3.)

The document's ball is whichever has the smallest radius (the χ² ones only for α ≤ 2); all
hold every P of the box — one event, no further union bound — so it contains the true P with
probability ≥ 1 − β. Forged reports need nothing more: they widen the box (2), and every ball is a
function of the box alone. B is ∞ when the box holds distributions with empty cells where P₀ has mass
(too few pilot reports).

6. **v5: F = ball ∩ box** (α ≤ 2). The box of (5) is itself a confidence set on the same event, and far
   narrower than any ball that holds it where cells are rare; v5 records it in the document
   (``privacy.uncertainty.box``) and F is the intersection. It still holds the true P on the one event,
   so the coverage is unchanged; the audits narrow each conditional projection by the bounds the box
   implies (:mod:`rldp.shared.box_bounds`), which is what lets a design over F keep more of X.

The exact audit of the next mechanism is over this F, so its claim holds for the reporting
population with probability ≥ 1 − β over the pilot's noise — and, as for public data, only
while the population stays in F (the drift watch).

numpy and the standard library only (``rldp audit`` and the client recompute it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .divergence import renyi_divergence
from .errors import DocumentError, ValidationError
from .parameters import check_beta
from .pilot_dual import bernstein_box, dual_ball

__all__ = [
    "CONSTRUCTION",
    "PILOT_SOURCE",
    "PilotSet",
    "left_inverse",
    "pilot_confidence_set",
    "expected_pilot_radius",
    "pilot_provenance",
    "validate_pilot_provenance",
    "pilot_mismatches",
]

#: The name of the construction above, recorded in the provenance (a changed construction is a new name).
CONSTRUCTION = "empirical-bernstein-box/v5"
#: The earlier constructions, recomputed for their documents: v4 without the box in F (6); v3 also without
#: the dual ball (5); v2 also with a one-sided level for the χ² ball's upper bounds.
_CONSTRUCTION_V4 = "empirical-bernstein-box/v4"
_CONSTRUCTION_V3 = "empirical-bernstein-box/v3"
_CONSTRUCTION_V2 = "empirical-bernstein-box/v2"
_CONSTRUCTIONS = (CONSTRUCTION, _CONSTRUCTION_V4, _CONSTRUCTION_V3, _CONSTRUCTION_V2)
#: The constructions whose box (5) is two-sided at level β for α ≤ 2: v5 states it in F.
_BERNSTEIN = (CONSTRUCTION, _CONSTRUCTION_V4)
#: ``provenance.source`` of a document whose P̂ came from a pilot.
PILOT_SOURCE = "pilot"
#: The relative tolerance a recomputed centre and radius are compared with (float summation order).
_RTOL = 1e-9


def left_inverse(matrix: Any) -> np.ndarray:
    """A = Q⁺ (|X| × |Y|) with A·Q = I; ValidationError if Q (|Y| × |X|) is not of full column rank
    (the pilot could not identify P: no unbiased estimate exists)."""
    q = np.asarray(matrix, dtype=np.float64)
    if q.ndim != 2:
        raise ValidationError(f"the pilot's matrix must be 2-D (|Y| × |X|); got shape {q.shape}")
    if np.linalg.matrix_rank(q) < q.shape[1]:
        raise ValidationError(
            f"the pilot's matrix has rank {np.linalg.matrix_rank(q)} < |X| = {q.shape[1]}: its reports cannot "
            "identify P (choose a pilot mechanism of full column rank)"
        )
    return np.linalg.pinv(q)


def _half_widths(
    a: np.ndarray, q: np.ndarray, n: int, delta: float, gamma: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(P̂, half-width w) per cell: [MP09, Thm 4] at level ``delta`` per side and cell, for the honest
    reports among n when up to a share ``gamma`` of them were forged (module docstring)."""
    log_term = math.log(2 / delta)
    estimate = a @ q
    second = (a * a) @ q
    biased = np.maximum(second - estimate * estimate, 0.0)
    span = a.max(axis=1) - a.min(axis=1)
    honest = max(math.ceil((1.0 - gamma) * n), 2)
    variance = n * (biased + (gamma * span) ** 2) / (honest - 1)  # ≥ the honest reports' unbiased variance
    width = np.sqrt(2 * variance * log_term / honest) + 7 * span * log_term / (3 * (honest - 1)) + gamma * span
    return estimate, width


def _box(
    matrix: np.ndarray,
    a: np.ndarray,
    q: np.ndarray,
    n: int,
    beta: float,
    order: float,
    gamma: float,
    construction: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P̂, ℓ, u): the simultaneous box of the module docstring, each side at the level its ball needs
    (v4, α ≤ 2: the Bernstein box of :mod:`rldp.shared.pilot_dual`)."""
    if order <= 2 and construction in _BERNSTEIN:
        return bernstein_box(matrix, a, q, n, beta, gamma)
    k = a.shape[0]
    sides = 1 if (order > 2 or construction == _CONSTRUCTION_V2) else 2  # the χ² ball needs both sides
    estimate, width = _half_widths(a, q, n, beta / (sides * k), gamma)
    return estimate, np.clip(estimate - width, 0.0, 1.0), np.clip(estimate + width, 0.0, 1.0)


@dataclass(frozen=True)
class PilotSet:
    """The confidence set from a pilot (see the module docstring): the ball of centre P₀ and radius B."""

    estimate: np.ndarray  # P̂ = A·q̂, unbiased (cells may be < 0)
    lower: np.ndarray  # ℓ, simultaneous lower bounds (≥ 0)
    upper: np.ndarray  # simultaneous upper bounds (≤ 1)
    center: np.ndarray  # P₀, the ball's centre (the design's public_distribution)
    radius: float  # B (nats), ∞ when Σℓ = 0
    n: int
    beta: float
    box: tuple[np.ndarray, np.ndarray] | None = None  # (ℓ, u) when F = ball ∩ box (v5, α ≤ 2; module docstring)

    def holds(self, distribution: Any, order: float = 2.0) -> bool:
        """Whether F (the ball of this ``order``, and the box when F has one) holds ``distribution``."""
        p = np.asarray(distribution, dtype=np.float64)
        if not renyi_divergence(self.center.ravel(), p.ravel(), order) <= self.radius:
            return False
        return self.box is None or bool(
            np.all(self.box[0] <= p.reshape(self.box[0].shape)) and np.all(p.reshape(self.box[1].shape) <= self.box[1])
        )


def _balls(
    estimate: np.ndarray, lower: np.ndarray, upper: np.ndarray, order: float, construction: str = CONSTRUCTION
) -> tuple[np.ndarray, float]:
    """(centre, radius) of the smallest of the balls of the module docstring that hold the box (the dual
    ball (5) from v4 on)."""
    center, radius = _box_balls(estimate, lower, upper, order)
    if order > 2 or construction not in _BERNSTEIN:
        return center, radius
    dual = dual_ball(lower, upper)
    return dual if dual[1] < radius else (center, radius)


def _box_balls(estimate: np.ndarray, lower: np.ndarray, upper: np.ndarray, order: float) -> tuple[np.ndarray, float]:
    """(centre, radius) of the smaller of the balls (3) and (4) of the module docstring."""
    mass = float(lower.sum())
    box = (lower / mass, max(-math.log(mass), 0.0)) if mass > 0 else (np.full(lower.shape, 1.0 / lower.size), math.inf)
    if order > 2:
        return box
    inside = np.where(lower > 0, np.clip(estimate, lower, upper), 0.0)
    total = float(inside.sum())
    if total <= 0:
        return box
    center = inside / total
    with np.errstate(divide="ignore", invalid="ignore"):
        at_lower = np.where(lower > 0, (center - lower) ** 2 / np.where(lower > 0, lower, 1.0), upper)
        at_upper = np.where(upper > 0, (center - upper) ** 2 / np.where(upper > 0, upper, 1.0), 0.0)
    radius = math.log1p(float(np.maximum(at_lower, at_upper).sum()))
    return (center, radius) if radius < box[1] else box


def pilot_confidence_set(
    matrix: Any,
    counts: Any,
    beta: float,
    order: float = 2.0,
    shape: tuple[int, int] | None = None,
    *,
    contamination: float = 0.0,
    construction: str = CONSTRUCTION,
) -> PilotSet:
    """The confidence set from a pilot's report counts (one per output y of ``matrix`` Q, |Y| × |X|), for
    a Rényi ball of ``order`` α, holding the honest users' P with probability ≥ 1 − β when up to a share
    ``contamination`` of the reports were forged. ``shape`` = (|S|, |U|) reshapes the cells (row-major over
    S × U)."""
    beta = check_beta(beta)
    gamma = _check_contamination(contamination)
    c = np.asarray(counts, dtype=np.float64)
    q = np.asarray(matrix, dtype=np.float64)
    if c.ndim != 1 or c.size != q.shape[0] or np.any(c < 0) or np.any(c != np.rint(c)):
        raise ValidationError(f"pilot counts must be {q.shape[0]} whole numbers ≥ 0, one per output of the pilot")
    n = int(c.sum())
    if n < 2:
        raise ValidationError(f"a pilot needs at least 2 reports; got {n}")
    a = left_inverse(q)
    estimate, lower, upper = _box(q, a, c / n, n, beta, float(order), gamma, construction)
    center, radius = _balls(estimate, lower, upper, float(order), construction)
    if shape is not None:
        estimate, lower, upper, center = (v.reshape(shape) for v in (estimate, lower, upper, center))
    # The box meets the simplex on the confidence event (it holds P); off it there is no box to state.
    stated = construction == CONSTRUCTION and order <= 2 and lower.sum() <= 1 <= upper.sum()
    return PilotSet(estimate, lower, upper, center, radius, n, beta, (lower, upper) if stated else None)


def expected_pilot_radius(
    matrix: Any, distribution: Any, n: int, beta: float, order: float = 2.0, contamination: float = 0.0
) -> float:
    """The radius B a pilot of ``n`` reports would give if the population were ``distribution`` and the
    sample variances were their expectations (a planning figure: how to choose a pilot and its size)."""
    a = left_inverse(matrix)
    p = np.asarray(distribution, dtype=np.float64).ravel()
    q = np.asarray(matrix, dtype=np.float64) @ p
    estimate, lower, upper = _box(
        np.asarray(matrix, dtype=np.float64),
        a,
        q,
        n,
        beta,
        float(order),
        _check_contamination(contamination),
        CONSTRUCTION,
    )
    return _balls(estimate, lower, upper, float(order))[1]


def _check_contamination(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) < 0.5:
        raise ValidationError(f"contamination must be a number in [0, 0.5); got {value!r}")
    return float(value)


def pilot_provenance(
    *,
    pilot_id: str,
    counts: Sequence[int],
    beta: float,
    columns: Sequence[str],
    collection: str | None = None,
    contamination: float = 0.0,
) -> dict[str, Any]:
    """The ``provenance`` of a document designed over a pilot's confidence set (covered by its id)."""
    counts = [int(c) for c in counts]
    return validate_pilot_provenance(
        {
            "source": PILOT_SOURCE,
            "construction": CONSTRUCTION,
            "pilot_mechanism": pilot_id,
            "collection": collection,
            "counts": counts,
            "n": sum(counts),
            "beta": float(beta),
            "contamination": float(contamination),
            "columns": list(columns),
        }
    )


def validate_pilot_provenance(value: Mapping[str, Any]) -> dict[str, Any]:
    """A pilot provenance checked for form (DocumentError naming the field otherwise)."""
    for key in ("construction", "pilot_mechanism", "counts", "n", "beta", "columns"):
        if key not in value:
            raise DocumentError(f"a pilot provenance needs {key!r}")
    if value["construction"] not in _CONSTRUCTIONS:
        raise DocumentError(
            f"provenance.construction {value['construction']!r} is not one this version recomputes ({CONSTRUCTION!r})"
        )
    if "contamination" in value:
        try:
            _check_contamination(value["contamination"])
        except ValidationError as exc:
            raise DocumentError(f"provenance.{exc}") from None
    if not isinstance(value["pilot_mechanism"], str) or len(value["pilot_mechanism"]) != 64:
        raise DocumentError("provenance.pilot_mechanism must be the pilot's content id (64 hex characters)")
    counts = value["counts"]
    if not isinstance(counts, list) or not counts or not all(type(c) is int and c >= 0 for c in counts):
        raise DocumentError("provenance.counts must be a non-empty list of whole numbers ≥ 0 (one per pilot output)")
    if value["n"] != sum(counts):
        raise DocumentError(f"provenance.n is {value['n']!r} but the pilot counts sum to {sum(counts)}")
    try:
        check_beta(value["beta"], "provenance.beta")
    except ValidationError as exc:
        raise DocumentError(str(exc)) from None
    columns = value["columns"]
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) and c for c in columns):
        raise DocumentError("provenance.columns must be a non-empty list of column names")
    if value.get("collection") is not None and not isinstance(value["collection"], str):
        raise DocumentError("provenance.collection must be a collection name or null")
    return dict(value)


def pilot_mismatches(doc: Mapping[str, Any], pilot_matrix: Any, pilot_id: str) -> list[tuple[str, Any, Any, str]]:
    """The document's P̂ and radius against those recomputed from its pilot provenance and the pilot's
    matrix: (field, document's, recomputed, message) for each that differs (empty: they agree)."""
    prov = validate_pilot_provenance(doc["provenance"])
    out: list[tuple[str, Any, Any, str]] = []
    if prov["pilot_mechanism"] != pilot_id:
        message = (
            f"pilot_mechanism: the document names {prov['pilot_mechanism'][:16]}…, the pilot given is {pilot_id[:16]}…"
        )
        return [("pilot_mechanism", prov["pilot_mechanism"], pilot_id, message)]
    p_hat = np.asarray(doc["public_distribution"], dtype=np.float64)
    unc = doc["privacy"].get("uncertainty") or {}
    order = float(unc.get("order", 2.0))
    recomputed = pilot_confidence_set(
        pilot_matrix,
        prov["counts"],
        prov["beta"],
        order,
        shape=p_hat.shape,
        contamination=float(prov.get("contamination", 0.0)),
        construction=str(prov["construction"]),
    )
    gap = float(np.max(np.abs(p_hat - recomputed.center)))
    if gap > _RTOL:
        out.append(
            ("public_distribution", None, None, f"public_distribution: differs from the pilot's centre by {gap:.3g}")
        )
    radius = unc.get("radius")
    stated = math.inf if radius is None else float(radius)
    if stated < recomputed.radius * (1 - _RTOL):
        out.append(
            (
                "radius",
                stated,
                recomputed.radius,
                f"radius: the document's {stated:.6g} is smaller than {recomputed.radius:.6g}, the pilot's "
                f"{100 * (1 - prov['beta']):g} % confidence radius",
            )
        )
    return out + _box_mismatches(unc.get("box"), recomputed, str(prov["construction"]))


def _box_mismatches(box: Any, recomputed: PilotSet, construction: str) -> list[tuple[str, Any, Any, str]]:
    """A stated box must not be narrower than the one the construction recomputes (a wider one only widens F)."""
    if box is None:
        return []
    if recomputed.box is None:
        message = f"box: the construction {construction!r} at this order states no box, the document does"
        return [("box", None, None, message)]
    lower, upper = (np.asarray(box.get(side), dtype=np.float64) for side in ("lower", "upper"))
    low, high = recomputed.box
    if lower.shape != low.shape or upper.shape != high.shape:
        return [("box", None, None, f"box: shape {lower.shape} differs from the pilot's {low.shape}")]
    slack = _RTOL * np.maximum(np.abs(low), np.abs(high)) + 1e-15
    over = float(np.max(np.maximum(lower - low - slack, high - upper - slack)))
    if over > 0:
        return [("box", None, None, f"box: narrower than the pilot's confidence box (by up to {over:.3g})")]
    return []
