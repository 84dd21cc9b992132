"""What the operator's commands print: aligned tables, short numbers and times, JSON, the cells of an estimate.

Kept apart from :mod:`.cli` (which talks to the server) so that a table's layout is
one function, testable without a server.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rldp.client.estimate import ESTIMATE_INTERVALS, ESTIMATE_METHODS

__all__ = [
    "add_estimate_options",
    "render_table",
    "utc_minute",
    "short_number",
    "print_json",
    "estimate_rows",
    "drift_line",
    "realised_figure",
    "numeric_lines",
]


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int] = frozenset()) -> str:
    """Columns padded to their widest cell, two spaces apart; the columns in ``right`` (numbers) right-aligned."""
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [
            str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return "\n".join(line(row) for row in (header, *rows))


def utc_minute(iso: str | None) -> str:
    """An API timestamp ("2026-11-24T06:00:00.000Z") to the minute, in UTC."""
    return "-" if not iso else iso[:16].replace("T", " ")


def short_number(value: Any, digits: int = 6) -> str:
    """A number to ``digits`` significant digits ("-" for None: a value the API could not give)."""
    return "-" if value is None else f"{float(value):.{digits}g}"


def print_json(value: Any) -> None:
    """``value`` as one line of JSON on stdout (non-ASCII kept; NaN refused: it is not JSON)."""
    print(json.dumps(value, ensure_ascii=False, allow_nan=False))


def estimate_rows(estimate: dict[str, Any]) -> list[tuple[str, str, float | None, float | None, float | None]]:
    """(sensitive value, released label, estimate, 95 % low, 95 % high) per cell of P_X, s major like the
    document; labels from the answer's ``labels`` (cell numbers when it has none)."""
    joint = estimate["joint"]
    low, high = estimate["ci95"]["low"], estimate["ci95"]["high"]
    labels = estimate.get("labels") or {}
    s_values = labels.get("sensitive", {}).get("values") or [str(s) for s in range(len(joint))]
    u_values = labels.get("released", {}).get("values") or [str(u) for u in range(len(joint[0]) if joint else 0)]
    return [
        (str(s_values[s]), str(u_values[u]), joint[s][u], low[s][u], high[s][u])
        for s in range(len(joint))
        for u in range(len(joint[s]))
    ]


def drift_line(estimate: dict[str, Any]) -> str:
    """One line on the estimate's drift watch: the server's statement (WARNING first when it rejects), or why
    there is none (a server without the drift watch: "drift: not reported by this server")."""
    drift = estimate.get("drift")
    if drift is None:
        return f"drift: {estimate.get('drift_unavailable') or 'not reported by this server'}"
    prefix = "WARNING drift: " if drift.get("rejected") else "drift: "
    return prefix + str(drift.get("statement", ""))


def realised_figure(drift: dict[str, Any]) -> str:
    """The drift object's realised ε* in words: 'realised ε* ≈ X (95 % interval [L, U])' — X the calibrated
    point, [L, U] the interval over the 95 % confidence region (null: ∞; all null: not identified)."""
    keys = ("realised_epsilon", "realised_epsilon_lower", "realised_epsilon_upper")
    point, low, high = (drift.get(key) for key in keys)

    def num(value: Any) -> str:
        return "∞" if value is None else f"{float(value):.3g}"

    if point is None and low is None and high is None:
        return "realised ε* not identified"
    if point is None:  # a mechanism of rank < |X|: the reports bound ε*, they do not point at it
        return f"realised ε* not identified by these reports, 95 % interval [{num(low)}, {num(high)}]"

    if "realised_epsilon_lower" not in drift:  # a server from before the interval: its upper bound only
        return f"realised ε* {num(point)}, at most {num(high)} at 95 %"
    return f"realised ε* ≈ {num(point)} (95 % interval [{num(low)}, {num(high)}])"


def add_estimate_options(parser: argparse.ArgumentParser) -> None:
    """``--method`` and ``--interval`` of an estimate (argparse names the choices when one is wrong)."""
    parser.add_argument(
        "--method",
        choices=ESTIMATE_METHODS,
        default=None,
        help="the estimator: auto or em (maximum likelihood by EM) or inverse (default: the server's, auto)",
    )
    parser.add_argument(
        "--interval",
        choices=ESTIMATE_INTERVALS,
        default=None,
        help="the 95 %% intervals: delta (the delta method) or bootstrap (default: the server's, delta)",
    )


def _interval(entry: dict[str, Any]) -> str:
    est = short_number(entry.get("estimate"), 4)
    if entry.get("ci95_low") is None or entry.get("ci95_high") is None:
        return f"{est} (not identified from these reports)" if not entry.get("identified", True) else est
    return f"{est} [{short_number(entry['ci95_low'], 4)}, {short_number(entry['ci95_high'], 4)}]"


def numeric_lines(estimate: dict[str, Any]) -> list[str]:
    """The mean, quantiles, and means and quantiles per value of S of each numeric released attribute, with 95 % intervals,
    and the note that the number itself is protected only as far as it reveals S."""
    lines = []
    for name, summary in (estimate.get("numeric") or {}).items():
        q = summary.get("quantiles", {})
        lines.append(f"{name} (values {summary.get('spread', 'uniform within each bin')}), 95 % intervals:")
        lines.append(f"  mean    {_interval(summary['mean'])}")
        for p, label in (("0.5", "median"), ("0.9", "p90"), ("0.99", "p99")):
            if p in q:
                lines.append(f"  {label:<7} {_interval(q[p])}")
        for s_name, by in (summary.get("mean_by") or {}).items():
            for value, entry in by.items():
                lines.append(f"  mean | {s_name}={value}: {_interval(entry)}")
        for s_name, by_q in (summary.get("quantiles_by") or {}).items():
            for value, quantiles in by_q.items():
                for p, label in (("0.5", "median"), ("0.9", "p90"), ("0.99", "p99")):
                    if p in quantiles:
                        lines.append(f"  {label} | {s_name}={value}: {_interval(quantiles[p])}")
        lines.append(f"note: {summary.get('note', name + ' itself is protected only as far as it reveals S')}")
    return lines
