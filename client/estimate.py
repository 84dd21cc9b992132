"""The server's estimate of P(S, U) as an object: :class:`Estimate`.

``Client.estimate(id)`` and ``Client.estimate_collection(name)`` return one. Its attributes are
the members of the API's answer (``n``, ``joint``, ``ci95``, ``marginals``, ``labels``, …);
:meth:`Estimate.to_dict` gives the answer back exactly as the server sent it, and
:meth:`Estimate.to_frame` the cells as a pandas DataFrame (pandas is not a dependency of the
client: it is imported only there).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import ProblemError

__all__ = ["Estimate", "ESTIMATE_METHODS", "ESTIMATE_INTERVALS", "FRAME_COLUMNS"]

#: The estimators and interval methods the server accepts (``method=``, ``interval=``; the aggregator's
#: ``rldp.aggregator.estimate`` lists the same: a test compares them).
ESTIMATE_METHODS = ("auto", "em", "inverse")
ESTIMATE_INTERVALS = ("delta", "bootstrap")
#: The columns of :meth:`Estimate.to_frame`.
FRAME_COLUMNS = ("sensitive", "released", "value", "estimate", "lower", "upper", "identified")
#: The quantiles a numeric estimate carries, by their key in the answer, and their names in a frame.
_QUANTILES = (("0.5", "median"), ("0.9", "p90"), ("0.99", "p99"))


@dataclass(frozen=True)
class Estimate:
    """One estimate as the server answered it (GET /v1/mechanisms/{id}/estimate or /v1/collections/{name}/estimate).

    ``joint[s][u]`` is P̂(S = s, U = u) with 95 % bounds ``ci95["low"][s][u]``, ``ci95["high"][s][u]``
    (None: unbounded); ``labels`` names s and u. ``mechanism`` (a mechanism's estimate) or ``collection``
    and ``mechanisms`` (a collection's); ``window`` / ``windows``, ``drift`` / ``drift_unavailable`` when the
    server gives them. ``extra``: members this version does not know (a newer server's).
    """

    n: int
    joint: list[list[float | None]]
    ci95: dict[str, Any]
    marginals: dict[str, Any]
    method: str
    identifiable: bool = True
    rank: int | None = None
    iterations: int | None = None
    converged: bool | None = None
    gap: float | None = None
    log_likelihood: float | None = None
    prior_weight: float = 0.0
    labels: dict[str, Any] | None = None
    fitted: list[float | None] | None = None
    latent: bool = False
    status: str | None = None
    mechanism: str | None = None
    collection: str | None = None
    mechanisms: list[dict[str, Any]] | None = None
    window: str | None = None
    windows: list[dict[str, Any]] | None = None
    drift: dict[str, Any] | None = None
    drift_unavailable: str | None = None
    #: Per numeric released attribute: histogram, CDF, mean, quantiles, means per value of S, each with a 95 %
    #: interval (values spread uniformly within a bin), and the note that S alone is protected.
    numeric: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _answer: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, answer: Mapping[str, Any]) -> Estimate:
        """The estimate of an API answer (a ProblemError naming what is missing when it is not one)."""
        missing = [k for k in ("n", "joint", "ci95", "marginals", "method") if k not in answer]
        if missing:
            raise ProblemError(200, {"reason": "not-rldp", "detail": f"the estimate answer lacks {', '.join(missing)}"})
        known = {f.name for f in fields(cls)} - {"extra", "_answer"}
        kept = {k: copy.deepcopy(v) for k, v in answer.items() if k in known}
        extra = {k: copy.deepcopy(v) for k, v in answer.items() if k not in known}
        return cls(**kept, extra=extra, _answer=copy.deepcopy(dict(answer)))

    def to_dict(self) -> dict[str, Any]:
        """The server's answer, as it was (the shape ``Client.estimate`` returned before it returned this object)."""
        return copy.deepcopy(self._answer)

    def rows(self) -> list[tuple[str, str, float | None, float | None, float | None, bool | None]]:
        """(sensitive value, released value, estimate, lower, upper, identified) per cell, s major."""
        labels = self.labels or {}
        s_values = (labels.get("sensitive") or {}).get("values") or [str(s) for s in range(len(self.joint))]
        u_values = (labels.get("released") or {}).get("values") or labels.get("columns") or []
        low, high = self.ci95.get("low"), self.ci95.get("high")
        identified = self.ci95.get("identified")
        out = []
        for s, row in enumerate(self.joint):
            for u, value in enumerate(row):
                out.append(
                    (
                        str(s_values[s]) if s < len(s_values) else str(s),
                        str(u_values[u]) if u < len(u_values) else str(u),
                        value,
                        None if low is None else low[s][u],
                        None if high is None else high[s][u],
                        None if identified is None else bool(identified[s][u]),
                    )
                )
        return out

    def numeric_frame(self, name: str) -> Any:
        """A numeric released attribute's figures as a pandas DataFrame: one row per statistic (mean, median,
        p90, p99, then the mean and the quantiles given each value of S) with ``estimate``, ``lower``, ``upper`` (95 %; NaN when not
        identified) and ``identified``; ``frame.attrs["note"]`` says what protects the number. Needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("numeric_frame needs pandas: pip install pandas") from None
        summary = (self.numeric or {}).get(name)
        if summary is None:
            raise KeyError(f"no numeric attribute {name!r} in this estimate; numeric: {', '.join(self.numeric or {})}")
        entries = [("mean", summary["mean"])]
        entries += [(label, summary["quantiles"][p]) for p, label in _QUANTILES]
        for s_name, by in (summary.get("mean_by") or {}).items():
            entries += [(f"mean | {s_name}={value}", entry) for value, entry in by.items()]
        for s_name, by_q in (summary.get("quantiles_by") or {}).items():  # servers before quantiles per S: none
            for value, quantiles in by_q.items():
                entries += [(f"{label} | {s_name}={value}", quantiles[p]) for p, label in _QUANTILES if p in quantiles]
        frame = pd.DataFrame.from_records(
            [(label, e["estimate"], e["ci95_low"], e["ci95_high"], e["identified"]) for label, e in entries],
            columns=["statistic", "estimate", "lower", "upper", "identified"],
        )
        for column in ("estimate", "lower", "upper"):
            frame[column] = frame[column].astype(float)
        frame.attrs["note"] = summary.get("note", "")
        return frame

    def to_frame(self) -> Any:
        """The cells as a pandas DataFrame: one row per x = (s, u), s major, with :data:`FRAME_COLUMNS`
        (``value`` is "s | u"; ``lower``/``upper`` the 95 % interval, NaN when unbounded). Needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas: pip install pandas") from None
        records = [(s, u, f"{s} | {u}", est, low, high, ident) for s, u, est, low, high, ident in self.rows()]
        frame = pd.DataFrame.from_records(records, columns=list(FRAME_COLUMNS))
        for column in ("estimate", "lower", "upper"):
            frame[column] = frame[column].astype(float)
        return frame
