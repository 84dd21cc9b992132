"""The pilot's half of ``rldp experiment field`` (:mod:`.field`): whether a pilot's F holds the honest P when a share
γ of its reports is forged, and what a design over that F keeps (NMI after the switch), for F = ball ∩ box and for
the ball alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignRequest, design, srr_matrix
from rldp.aggregator.design.orchestration.build import design_document
from rldp.aggregator.design.orchestration.sources import PilotData
from rldp.shared.document import report_matrix
from rldp.shared.information import normalized_mutual_information
from rldp.shared.pilot import left_inverse, pilot_confidence_set

from ..datasets import adult_distribution
from .config import Config

__all__ = ["SWITCH_DESIGNS", "SWITCH_PILOTS", "pilot_coverage", "switch_nmi"]

#: One table row: (panel, γ, n, statistic, value, draws) → the experiment's tidy row.
Row = Callable[[str, float, int, str, float, int], dict[str, Any]]

#: Pilots per (n₁, γ) of the "NMI after the switch" panel (one PolyOpt design of each of SWITCH_DESIGNS each).
SWITCH_PILOTS = 10

#: The designs the panel compares, statistic → (over the box too, tuned to the pilot's estimate): the product's
#: (F = ball ∩ box, tuned to the estimate kept in the box and kept identifiable), the same F designed for its
#: centre (v5 before the tuning), and the ball alone at its centre (v4).
SWITCH_DESIGNS = {"nmi": (True, True), "nmi_centre": (True, False), "nmi_ball_only": (False, False)}


def switch_nmi(
    cfg: Config, rng: np.random.Generator, gammas: tuple[float, ...], alpha: float, row: Row
) -> list[dict[str, Any]]:
    """NMI at the true P of PolyOpt designed over the F of SWITCH_PILOTS SRR pilots per (n₁, γ), their reports
    holding a share γ forged on the worst output, F built with the budget γ: the mean and its Monte-Carlo
    error for each of SWITCH_DESIGNS (the product's, and the earlier ones from the same pilots), and F's median
    radius."""
    alphabet, truth, _ = adult_distribution("sex", "race")
    p = truth.ravel()
    pilot = design(
        "srr", alphabet=alphabet, public_distribution=np.full(truth.shape, 1 / p.size), epsilon=1.0, radius=math.inf
    )
    q = report_matrix(pilot)
    worst = int(np.argmax(left_inverse(q)[int(np.argmin(p))]))
    own = normalized_mutual_information(q, p)  # the pilot's, kept when no design beats it
    pilots = 2 if cfg.quick else SWITCH_PILOTS
    rows = []
    for n1 in (1_000, 10_000, 100_000) if cfg.quick else (1_000, 10_000, 100_000, 1_000_000):
        honest = rng.multinomial(n1, q @ p, size=pilots)
        for gamma in gammas:
            nmi: dict[str, list[float]] = {stat: [] for stat in SWITCH_DESIGNS}
            radii = []
            for draw in honest:
                counts = draw.copy()
                counts[worst] += int(gamma * n1 / (1 - gamma))
                source = PilotData(pilot, counts.tolist(), alpha, contamination=gamma)
                radii.append(source.confidence_set.radius)
                for stat, (box, tuning) in SWITCH_DESIGNS.items():
                    value = own
                    if math.isfinite(radii[-1]):
                        request = DesignRequest(method="polyopt", epsilon=1.0, time_budget=cfg.time_budget)
                        doc = design_document(
                            source.bind(request),
                            alphabet=alphabet,
                            public_distribution=source.distribution,
                            provenance=source.provenance(),
                            box=source.box if box else None,
                            tuning=source.tuning if tuning else None,
                        )
                        value = max(own, normalized_mutual_information(report_matrix(doc), p))
                    nmi[stat].append(value)
            panel = "NMI after the switch"
            for stat, values in nmi.items():
                mean, se = float(np.mean(values)), float(np.std(values, ddof=1) / math.sqrt(len(values)))
                rows += [row(panel, gamma, n1, stat, mean, pilots), row(panel, gamma, n1, f"{stat}_se", se, pilots)]
            rows.append(row(panel, gamma, n1, "radius", float(np.median(radii)), pilots))
    return rows


def pilot_coverage(
    cfg: Config, rng: np.random.Generator, gammas: tuple[float, ...], alpha: float, row: Row
) -> list[dict[str, Any]]:
    """The share of 1,000 SRR pilots per (n₁, γ), a share γ of their reports forged on the worst output, whose F
    (ball and box) holds the honest P: built with the budget γ, and as if nothing were forged."""
    _, truth, _ = adult_distribution("sex", "race")
    p = truth.ravel()
    q = srr_matrix(2, 5, 1.0)
    worst = int(np.argmax(left_inverse(q)[int(np.argmin(p))]))
    pilots = 200 if cfg.quick else 1000
    rows = []
    for n1 in (10_000, 100_000, 1_000_000):
        for gamma in gammas:
            forged = int(gamma * n1)
            robust = naive = 0
            for honest in rng.multinomial(n1 - forged, q @ p, size=pilots):
                honest[worst] += forged
                for built, g in (("robust", gamma), ("naive", 0.0)):
                    pset = pilot_confidence_set(q, honest, alpha, contamination=g)
                    inside = pset.holds(p)
                    robust += int(inside and built == "robust")
                    naive += int(inside and built == "naive")
            panel = "pilot coverage under forgery"
            rows += [
                row(panel, gamma, n1, "coverage", robust / pilots, pilots),
                row(panel, gamma, n1, "coverage_if_ignored", naive / pilots, pilots),
            ]
    return rows
