"""What every audit shares: the result type and the arithmetic of worst-case log-ratios."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import ValidationError

__all__ = ["AuditResult", "as_matrix", "joint_matrix", "log_ratios", "worst_case", "pairwise_worst"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit. ``epsilon`` is the audited worst case (nats, may be inf).

    ``extra`` holds a notion's further audited quantities (e.g. distp's ``delta``); it appears in
    :meth:`to_dict` under ``"extra"`` only when non-empty, so the dict of every other notion (which
    designers store in documents, under the id) is unchanged.
    """

    notion: str
    epsilon: float
    claimed: float | None = None
    passed: bool | None = None
    worst: dict[str, int] = field(default_factory=dict)  # where the worst ratio occurs
    reasons: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["epsilon"] = None if math.isinf(self.epsilon) else self.epsilon
        d["reasons"] = list(self.reasons)
        extra = d.pop("extra")
        if extra:  # JSON has no infinity: an infinite value is written as null, like epsilon
            d["extra"] = {k: None if isinstance(v, float) and math.isinf(v) else v for k, v in extra.items()}
        return d


def as_matrix(matrix: Any) -> np.ndarray:
    """Q as a float array of shape (|Y|, |X|) with finite, non-negative entries."""
    q = np.asarray(matrix, dtype=float)
    if q.ndim != 2:
        raise ValidationError(f"matrix must be 2-D (|Y|, |X|); got shape {q.shape}")
    # One pass each and no K × K boolean temporaries: a NaN makes both reductions NaN, which fails both tests.
    if q.size and not (float(q.min()) >= 0.0 and float(q.max()) < math.inf):
        raise ValidationError("matrix entries must be finite and non-negative")
    return q


def joint_matrix(matrix: Any, n_sensitive: int, n_released: int) -> np.ndarray:
    """Q as a function of (s, u), shape (|Y|, |S|·|U|), s major.

    A mechanism that reads S and U has those columns already. One whose S is latent reads
    U only (|U| columns): then Q(y | s, u) = Q(y | u) for every s, so its columns are
    repeated once per s. Why: every S-centred audit is then one formula for both cases.
    """
    q = as_matrix(matrix)
    if q.shape[1] == n_sensitive * n_released:
        return q
    if q.shape[1] == n_released:  # latent S (|S| ≥ 2, so the two cases never coincide)
        return np.tile(q, (1, n_sensitive))
    raise ValidationError(
        f"matrix has {q.shape[1]} columns; expected |S|·|U| = {n_sensitive}·{n_released} = "
        f"{n_sensitive * n_released} (S an input) or |U| = {n_released} (S latent)"
    )


def log_ratios(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """log(num/den) with 0/0 → −inf (no event, no leakage) and x/0 → +inf (x > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    out = np.where(num <= 0, -np.inf, out)
    return np.where((num > 0) & (den <= 0), np.inf, out)


def worst_case(ratios: np.ndarray, names: tuple[str, ...]) -> tuple[float, dict[str, int]]:
    """The largest log-ratio (floored at 0) and where it occurs, named by ``names``."""
    if ratios.size == 0:
        return 0.0, {}
    idx = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    eps = float(ratios[idx])
    if eps == -math.inf:  # every row is zero: nothing is ever released
        return 0.0, {}
    return max(eps, 0.0), {name: int(i) for name, i in zip(names, idx, strict=True)}


def pairwise_worst(num: np.ndarray, den: np.ndarray, keep: np.ndarray | None = None) -> tuple[float, dict[str, int]]:
    """max over y and s₁ ≠ s₂ of log(num[y, s₁] / den[y, s₂]) with :func:`log_ratios`' conventions, floored
    at 0, and where: ``(ε, {"output": y, "s1": s₁, "s2": s₂})``; ``keep`` (|S|,) drops values s from both sides.

    Why not the (|Y|, |S|, |S|) table of every pair: |S| is the document's choice, and 8,192 values of
    S with one output would be 4 GiB. Per row only the best s₁ and the best s₂ ≠ s₁ matter: with
    i = argmax num and j = argmin den, the optimum is (i, best s₂ ≠ i) or (best s₁ ≠ j, j).
    """
    b, k = num.shape
    if b == 0 or k < 2:
        return 0.0, {}
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.where(num > 0, np.log(num), -np.inf)  # log num: −inf where nothing is released
        bottom = np.where(den > 0, np.log(den), -np.inf)  # log den: −inf makes x/0 = +inf
    if keep is not None:
        top[:, ~keep] = -np.inf
        bottom[:, ~keep] = np.inf  # never a denominator
    rows = np.arange(b)
    i1, j1 = np.argmax(top, axis=1), np.argmin(bottom, axis=1)
    bottom_other = bottom.copy()
    bottom_other[rows, i1] = np.inf  # s₂ ≠ i1
    j2 = np.argmin(bottom_other, axis=1)
    top_other = top.copy()
    top_other[rows, j1] = -np.inf  # s₁ ≠ j1
    i2 = np.argmax(top_other, axis=1)

    def value(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.where(hi == -np.inf, -np.inf, hi - lo)  # 0/x → −inf whatever x (log_ratios)

    first = value(top[rows, i1], bottom_other[rows, j2])
    second = value(top_other[rows, i2], bottom[rows, j1])
    take_first = first >= second
    best = np.where(take_first, first, second)
    y = int(np.argmax(best))
    eps = float(best[y])
    if eps == -math.inf:
        return 0.0, {}
    s1, s2 = (int(i1[y]), int(j2[y])) if take_first[y] else (int(i2[y]), int(j1[y]))
    return max(eps, 0.0), {"output": y, "s1": s1, "s2": s2}
