"""The distribution-privacy notion on the command line: ``rldp design --notion distp`` options and output.

``--delta`` (the δ of the claim), ``--target`` and ``--cost`` (the coupling mechanism, [KM19, Defs 16, 18]),
the lines ``rldp design`` prints for a distp document, and what ``rldp evaluate`` adds for one.
"""

from __future__ import annotations

import argparse
import csv
import math
from typing import Any

import numpy as np

from rldp.shared.audit import audit_document, distp_delta, distp_epsilon
from rldp.shared.distp_measures import divergence_distp
from rldp.shared.document import mechanism_matrix

from ..design.solvers.coupling import TARGET_RULES, expected_loss
from ..design.solvers.optimal_transport import COST_RULES, DEFAULT_COST
from ..design.solvers.xdistp import xdistp_epsilon
from .common import CommandError, finite, fmt

__all__ = ["parse_target", "read_cost", "design_lines", "evaluate_distp"]


def design_lines(doc: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """The distp claim and audit (and the coupling's parameters) as lines; adds them to ``record``."""
    extra = doc["audit"].get("extra", {})
    params = doc.get("parameters", {})
    record.update(
        notion="distp",
        delta=doc["privacy"]["delta"],
        delta_audited=extra.get("delta"),
        delta_at_p_hat=extra.get("delta_at_p_hat"),
        scope=extra.get("scope"),
    )
    lines = [
        f"  distp    (epsilon {record['epsilon']:.6g}, delta {record['delta']:.6g}) claimed; audited delta "
        f"{extra.get('delta', 0.0):.6g} {extra.get('scope', '')}, {extra.get('delta_at_p_hat', 0.0):.6g} at P̂"
    ]
    if "expected_loss" in params:
        record.update(expected_loss=params["expected_loss"], target=params["target"], mix=params["mix"])
        cost = params["cost"] if isinstance(params["cost"], str) else "matrix"
        kept = ""
        if "released_nmi" in params:  # the information kept about U: what the default target is chosen for
            record.update(released_information=params["released_information"], released_nmi=params["released_nmi"])
            chosen = " (the target keeping the most)" if params.get("target_chosen_by") else ""
            kept = f"; keeps I(U;Y) = {params['released_information']:.4f} nats of U, NMI_U {params['released_nmi']:.3f}{chosen}"
        lines.append(
            f"  coupling target {params['target_rule']} ({', '.join(f'{v:.4g}' for v in params['target'])}), "
            f"cost {cost}, expected loss {params['expected_loss']:.6g}"
            + (f", mixed {params['mix']:.4g} with the independent coupling" if params["mix"] > 0 else "")
            + kept
        )
    return lines


def parse_target(text: str) -> str | list[float]:
    """``--target``: a named rule, or comma-separated probabilities (checked against U by the designer)."""
    if text in TARGET_RULES:
        return text
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"target must be one of {', '.join(TARGET_RULES)} or comma-separated probabilities; got {text!r}"
        ) from None


def read_cost(spec: str | None) -> str | list[list[float]] | None:
    """``--cost``: a named cost, or a CSV file of |U|×|U| numbers (row x, column y, U's order)."""
    if spec is None or spec in COST_RULES:
        return spec
    rows: list[list[float]] = []
    with open(spec, newline="", encoding="utf-8") as fh:
        for number, row in enumerate(csv.reader(fh), start=1):
            if not any(cell.strip() for cell in row):
                continue
            try:
                rows.append([float(cell) for cell in row])
            except ValueError:
                raise CommandError(
                    f"--cost {spec}: row {number} is not all numbers ({row!r}); expected a |U|×|U| matrix of "
                    "costs c(x, y) ≥ 0 without a header, rows x and columns y in the released alphabet's order"
                ) from None
    if not rows or len({len(r) for r in rows}) != 1:
        raise CommandError(f"--cost {spec}: expected a |U|×|U| matrix of numbers (every row the same length)")
    return rows


def evaluate_distp(doc: dict[str, Any], distribution: np.ndarray, source: str, cost: str | None) -> tuple[dict, list]:
    """What ``rldp evaluate`` adds for a distp document under ``distribution`` (P̂ or --data): the
    smallest δ at the claimed ε and ε at the claimed δ (exact at that distribution; the robust δ over
    the document's uncertainty set from its audit), the divergence DistP of every divergence [KM19,
    Def 11], XDistP with the Earth mover's distance [KM19, Def 12] and, for a coupling document, the
    expected loss E c(X, Y) [KM19, Def 17]. The cost is ``cost``, else the document's, else hamming (:data:`DEFAULT_COST`)."""
    q = mechanism_matrix(doc)
    eps, delta = float(doc["privacy"]["epsilon"]), float(doc["privacy"].get("delta", 0.0))
    params = doc.get("parameters", {})
    chosen: Any = cost if cost is not None else params.get("cost", DEFAULT_COST)
    if isinstance(chosen, str) and chosen not in COST_RULES:
        chosen = read_cost(chosen)
    delta_here, pair = distp_delta(q, distribution, eps)
    eps_here, _ = distp_epsilon(q, distribution, delta)
    robust = audit_document(doc)
    divergences = divergence_distp(q, distribution)
    extended = xdistp_epsilon(q, distribution, chosen)
    record: dict[str, Any] = {
        "delta_at_epsilon": delta_here,
        "delta_pair": pair,
        "epsilon_at_delta": finite(eps_here),
        "delta_at_p_hat": robust.extra.get("delta_at_p_hat"),
        "delta_robust": robust.extra.get("delta"),
        "scope": robust.extra.get("scope"),
        "divergence_distp": {k: finite(v) for k, v in divergences.items()},
        "xdistp_emd": {k: finite(v) for k, v in extended.items()},
        "cost": chosen if isinstance(chosen, str) else "matrix",
    }
    lines = [
        f"  distp    delta {delta_here:.6g} at epsilon {eps:.4g} under the {source} distribution "
        f"(at P̂: {robust.extra.get('delta_at_p_hat', math.nan):.6g}; audited {robust.extra.get('delta', math.nan):.6g} "
        f"{robust.extra.get('scope')}); epsilon {fmt(record['epsilon_at_delta'])} at delta {delta:.4g}",
        "  (eps, D)-DistP  " + ", ".join(f"{k} {fmt(finite(v))}" for k, v in divergences.items()),
        f"  XDistP w.r.t. EMD ({record['cost']} cost)  "
        + ", ".join(f"{k} {fmt(finite(v))}" for k, v in extended.items()),
    ]
    if "outputs" in params:  # the outputs are released values: the loss is defined [KM19, Def 17]
        record["expected_loss"] = expected_loss(q, distribution, chosen, params["outputs"])
        lines.append(f"  expected loss E c(X, Y) = {record['expected_loss']:.6g} ({record['cost']} cost)")
    return record, lines
