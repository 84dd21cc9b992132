"""The result of an estimation: :class:`Estimate`, with its intervals and JSON form."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rldp.shared.attributes import value_product
from rldp.shared.errors import ValidationError
from rldp.shared.records import Alphabet

from .intervals import LEVEL, FactoredCovariance, Uncertainty, as_weights
from .score import MIN_COUNT

__all__ = ["Estimate", "WITHHELD_REASON"]

#: Why an interval is withheld (the JSON form's ``ci95.withheld_reason``, shown by the CLI and dashboard).
WITHHELD_REASON = (
    f"too few reports carry this quantity (its estimate is as skewed as a count of fewer than {MIN_COUNT:g}) "
    "for an honest 95 % interval; collect more reports"
)


def _json(arr: np.ndarray) -> Any:
    """Numbers as JSON: non-finite entries (an unbounded interval end) become null."""
    arr = np.asarray(arr, dtype=float)
    if not arr.ndim:
        return float(arr) if np.isfinite(arr) else None
    out = arr.astype(object)
    out[~np.isfinite(arr)] = None
    return out.tolist()


def _json_field(key: str, value: Any) -> Any:
    if key == "labels":
        return list(value)
    if key in ("identified", "withheld"):
        return np.asarray(value, dtype=bool).tolist()
    return _json(value)


@dataclass(frozen=True, eq=False)
class Estimate:
    """An estimate of P_X from n reports, with 95 % intervals (see :mod:`rldp.aggregator.estimate.intervals`).

    ``joint[s, u]`` is the estimated P(S = s, U = u) (the document's s-major order) and sums
    to 1; ``ci95_low`` / ``ci95_high`` bound each cell. ``method`` is the estimator used
    ("em" or "inverse"), ``interval`` how the intervals were made ("delta" or "bootstrap").
    ``identifiable`` is False when Q is rank deficient: ``joint`` is then one of many
    distributions that fit the reports equally well (``fitted`` = Qθ̂ is what the data
    determine) and intervals of non-identifiable quantities are partial-identification
    bounds. ``iterations`` counts EM updates plus interior-point steps (0 for "inverse");
    ``converged`` is False if ``max_iter`` was reached before the optimality gap ``gap``
    (nats per report) reached ``tol`` — the estimate is then still a distribution, only
    not certified to be the maximum-likelihood one. A cell whose interval cannot be honest
    because too few reports carry it (:mod:`.score`) has NaN in ``ci95_low`` / ``ci95_high``
    (null in JSON) and True in :attr:`withheld`; :data:`WITHHELD_REASON` says why.
    """

    n: int
    joint: np.ndarray
    ci95_low: np.ndarray
    ci95_high: np.ndarray
    method: str
    identifiable: bool
    iterations: int
    converged: bool
    interval: str = "delta"
    rank: int = 0
    fitted: np.ndarray | None = None  # (|Y|,) implied P_Y = Qθ̂
    log_likelihood: float = math.nan  # Σ_y c_y log (Qθ̂)_y, nats
    gap: float = 0.0  # per-report optimality gap certificate at the estimate (EM), nats
    newton_steps: int = 0  # of ``iterations``, how many were interior-point steps
    prior_weight: float = 0.0
    bootstrap_converged: float | None = None  # share of bootstrap re-fits that converged
    _uncertainty: Uncertainty | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(|S|, |U|)."""
        return tuple(self.joint.shape)  # type: ignore[return-value]

    @property
    def covariance(self) -> np.ndarray | None:
        """Asymptotic covariance of the flattened joint (``interval == "delta"``), (|X|, |X|).

        Meaningful only for identifiable functionals (all of them when ``identifiable``).
        """
        cov = None if self._uncertainty is None else self._uncertainty.covariance
        return cov.dense() if isinstance(cov, FactoredCovariance) else cov

    @property
    def withheld(self) -> np.ndarray:
        """Per cell (|S| × |U|), whether its interval is withheld (NaN bounds; see :data:`WITHHELD_REASON`)."""
        return np.isnan(self.ci95_low) | np.isnan(self.ci95_high)

    @property
    def replicates(self) -> np.ndarray | None:
        """Bootstrap re-estimates of the flattened joint (``interval == "bootstrap"``), (B, |X|)."""
        return None if self._uncertainty is None else self._uncertainty.replicates

    def linear(self, weights: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimate and 95 % interval of the functionals Σ_x w_x θ_x, one per row of ``weights``.

        ``weights`` has shape (k, |X|), (k, |S|, |U|) or is a single such row. Returns
        (estimate, low, high), each of shape (k,). Same interval method as the cells.
        """
        if self._uncertainty is None:
            raise ValidationError("this Estimate carries no uncertainty information")
        return self._uncertainty.intervals(as_weights(weights, self.joint.size, self.shape))

    def identified(self, weights: Any) -> np.ndarray:
        """Whether each functional Σ_x w_x θ_x is identifiable (w in the row space of Q).

        Its interval is then a delta-method or bootstrap interval; otherwise it is a
        partial-identification bound (see :mod:`rldp.aggregator.estimate.intervals`). All True when
        ``identifiable``.
        """
        if self._uncertainty is None:
            raise ValidationError("this Estimate carries no uncertainty information")
        return self._uncertainty.identifiable(as_weights(weights, self.joint.size, self.shape))

    def marginals(self, alphabet: Alphabet | None = None) -> dict[str, dict[str, Any]]:
        """Marginal distributions with 95 % intervals.

        Without an alphabet: ``{"sensitive": {...}, "U": {...}}`` (U = all released
        attributes together). With one: keyed by attribute name — the sensitive attribute
        and each released attribute separately (U is their product, last fastest) — each
        entry also carrying its ``labels``. Each entry holds numpy arrays ``estimate``,
        ``ci95_low``, ``ci95_high`` (NaN where withheld), ``identified`` (see :meth:`identified`)
        and ``withheld``.
        """
        a1, a2 = self.shape
        a = a1 * a2
        s_of_x, u_of_x = np.divmod(np.arange(a), a2)
        groups: list[tuple[str, np.ndarray, int, list[str] | None]]
        if alphabet is None:
            groups = [("sensitive", s_of_x, a1, None), ("U", u_of_x, a2, None)]
        else:
            self._check_alphabet(alphabet)
            groups = [(alphabet.sensitive.name, s_of_x, a1, list(alphabet.sensitive.values))]
            sizes = [attr.size for attr in alphabet.released]
            if sizes:
                codes = np.unravel_index(u_of_x, sizes)  # C order: last attribute fastest
                for attr, code in zip(alphabet.released, codes, strict=True):
                    groups.append((attr.name, code, attr.size, list(attr.values)))
        out: dict[str, dict[str, Any]] = {}
        for name, code, size, labels in groups:
            w = (code[None, :] == np.arange(size)[:, None]).astype(float)
            est, low, high = self.linear(w)
            entry: dict[str, Any] = {
                "estimate": est,
                "ci95_low": low,
                "ci95_high": high,
                "identified": self.identified(w),
                "withheld": np.isnan(low) | np.isnan(high),
            }
            if labels is not None:
                entry["labels"] = labels
            out[name] = entry
        return out

    def _check_alphabet(self, alphabet: Alphabet) -> None:
        if not isinstance(alphabet, Alphabet):
            raise ValidationError(f"alphabet must be an rldp Alphabet; got {type(alphabet).__name__}")
        if alphabet.shape != self.shape:
            raise ValidationError(f"alphabet has shape {alphabet.shape} (|S|, |U|) but the estimate has {self.shape}")

    def to_frame(self, alphabet: Alphabet | None = None) -> Any:
        """A pandas DataFrame, one row per cell x = (s, u): the attribute values (with an alphabet;
        ``s`` and ``u`` indices without), ``estimate``, ``ci95_low``, ``ci95_high`` and ``identified``.
        Needs pandas (``pip install 'rldp[pandas]'``), imported only here."""
        try:
            import pandas as pd
        except ModuleNotFoundError:
            raise ValidationError("to_frame() needs pandas: pip install 'rldp[pandas]'") from None
        a = self.joint.size
        if alphabet is not None:
            self._check_alphabet(alphabet)
            names = [attr.name for attr in alphabet.joint_attributes]
            cells = value_product([attr.values for attr in alphabet.joint_attributes])
            columns: dict[str, Any] = {name: [cell[i] for cell in cells] for i, name in enumerate(names)}
        else:
            s, u = np.divmod(np.arange(a), self.shape[1])
            columns = {"s": s, "u": u}
        columns.update(
            estimate=self.joint.ravel(),
            ci95_low=self.ci95_low.ravel(),
            ci95_high=self.ci95_high.ravel(),
            identified=self.identified(np.eye(a)),
        )
        return pd.DataFrame(columns)

    def to_dict(self, alphabet: Alphabet | None = None) -> dict[str, Any]:
        """JSON-ready form (plain lists and floats; non-finite numbers become None).

        ``{"n", "joint", "marginals", "ci95": {"low", "high", "level", "method", "identified", "withheld",
        "withheld_reason"},
        "method", "identifiable", "rank", "iterations", "converged", "gap", "log_likelihood",
        "prior_weight", "fitted"}`` (bootstrap adds ``ci95.replicates`` and
        ``ci95.replicates_converged``); with an alphabet, marginals are
        keyed by attribute name and ``labels`` names the rows (sensitive values) and
        columns (U values, released attributes joined by "|") of ``joint``.
        """
        marg = self.marginals(alphabet)
        out: dict[str, Any] = {
            "n": int(self.n),
            "joint": _json(self.joint),
            "marginals": {name: {k: _json_field(k, v) for k, v in entry.items()} for name, entry in marg.items()},
            "ci95": {
                "low": _json(self.ci95_low),
                "high": _json(self.ci95_high),
                "level": LEVEL,
                "method": self.interval,
                "identified": self.identified(np.eye(self.joint.size)).reshape(self.shape).tolist(),
                "withheld": self.withheld.tolist(),
                "withheld_reason": WITHHELD_REASON if self.withheld.any() else None,
            },
            "method": self.method,
            "identifiable": bool(self.identifiable),
            "rank": int(self.rank),
            "iterations": int(self.iterations),
            "converged": bool(self.converged),
            "gap": _json(np.asarray(self.gap)),
            "log_likelihood": _json(np.asarray(self.log_likelihood)),
            "prior_weight": float(self.prior_weight),
        }
        if self.fitted is not None:
            out["fitted"] = _json(self.fitted)
        if self.replicates is not None:
            out["ci95"]["replicates"] = int(self.replicates.shape[0])
            out["ci95"]["replicates_converged"] = self.bootstrap_converged
        if alphabet is not None:
            u_labels = ["|".join(rec[1:]) for rec in alphabet.decode(np.arange(self.shape[1]))]
            out["labels"] = {
                "sensitive": {"name": alphabet.sensitive.name, "values": list(alphabet.sensitive.values)},
                "released": {"names": [attr.name for attr in alphabet.released], "values": u_labels},
            }
        return out
