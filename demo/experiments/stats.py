"""Summaries of the per-draw records: tidy statistic rows and notes on failed designs."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .config import COLUMNS, GROUP

__all__ = ["quantile", "statistic", "row", "group", "summarise", "failure_notes"]

_QUANTILES = {"q25": 0.25, "median": 0.5, "q75": 0.75}


def quantile(values: np.ndarray, q: float) -> float:
    """Linear-interpolation quantile that treats +inf (ε* with a zero denominator) as
    larger than everything: a quantile touching an infinite neighbour is inf."""
    s = np.sort(np.asarray(values, dtype=float))
    pos = q * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if math.isinf(s[hi]) or math.isinf(s[lo]):
        return math.inf
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))


def statistic(values: np.ndarray, stat: str) -> float:
    """``stat`` (mean/value, sem, min, max, q25, median, q75) of ``values``."""
    if stat in ("mean", "value"):
        return float(np.mean(values))
    if stat == "sem":
        return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0
    if stat == "min":
        return float(np.min(values))
    if stat == "max":
        return float(np.max(values))
    return quantile(values, _QUANTILES[stat])


def row(name: str, key: Mapping[str, Any], stat: str, value: float, draws: int | str) -> dict[str, Any]:
    """One tidy CSV row of experiment ``name`` for the group ``key``."""
    out = {c: key.get(c, "") for c in COLUMNS}
    out.update(experiment=name, statistic=stat, value=value, draws=draws)
    return out


def group(records: Iterable[Mapping[str, Any]]) -> dict[tuple, list[Mapping[str, Any]]]:
    """Records grouped by (panel, shape, n, β, method, ε), in first-seen order."""
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        groups[tuple(r.get(k) for k in GROUP)].append(r)
    return groups


def summarise(
    name: str, records: Iterable[Mapping[str, Any]], fields: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """Group records by (panel, shape, n, β, method, ε) and emit ``{field}_{stat}`` rows
    (``field`` itself for stat "value"), over the draws that were designed, plus a
    ``failures`` row counting the draws that could not be designed."""
    rows = []
    for key_t, recs in group(records).items():
        key = dict(zip(GROUP, key_t))
        ok = [r for r in recs if not r.get("failed")]
        if len(ok) < len(recs):
            rows.append(row(name, key, "failures", len(recs) - len(ok), len(recs)))
        for fld, stats in fields.items():
            vals = np.array([r[fld] for r in ok if r.get(fld) is not None], dtype=float)
            if not vals.size:
                continue
            for stat in stats:
                rows.append(
                    row(name, key, fld if stat == "value" else f"{fld}_{stat}", statistic(vals, stat), len(vals))
                )
    return rows


def failure_notes(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Human-readable notes on the designs that failed, one line per (method, reason):
    the panels where the method was omitted altogether, and the (panel, ε) points where
    only some draws failed."""
    fails: dict[tuple[str, str, str], dict[float, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[tuple[str, str, float], int] = defaultdict(int)
    for r in records:
        totals[(r["panel"], r["method"], r["epsilon"])] += 1
        if r.get("failed"):
            fails[(r["method"], r["failed"][:200], r["panel"])][r["epsilon"]] += 1
    omitted: dict[tuple[str, str], list[str]] = defaultdict(list)
    partial: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (method, reason, panel), by_eps in fails.items():
        eps_all = {e for (p, m, e) in totals if p == panel and m == method}
        if set(by_eps) == eps_all and all(by_eps[e] == totals[(panel, method, e)] for e in by_eps):
            omitted[(method, reason)].append(panel)
        else:
            where = ", ".join(f"ε={e:g} ({by_eps[e]} of {totals[(panel, method, e)]})" for e in sorted(by_eps))
            partial[(method, reason)].append(f"{panel} at {where}")
    notes = [f"{method} omitted on {', '.join(panels)}: {reason}" for (method, reason), panels in omitted.items()]
    notes += [
        f"{method} failed on {'; '.join(where)}: {reason}. Those points (* in the tables) average the "
        "remaining draws and are left out of the figure if more than 5 % of the draws failed"
        for (method, reason), where in partial.items()
    ]
    return sorted(notes)
