"""The pilot's confidence set by construction: coverage and median radius of v3 and v4 from the same counts,
and (``--nmi``) the NMI after the switch as ``rldp experiment field`` measures it at γ = 0.

SRR pilot on Adult sex × race at ε = 1, β = 0.05 (the field experiment's pilot). ``--draws`` simulated pilots
per n₁ ∈ {10³, 10⁴, 10⁵, 10⁶} (multinomial output counts, seed 0): the share whose F holds the true P (with
its Monte-Carlo standard error; for a rate of 1, that of one miss) and the median radius, per construction.
``--nmi R``: R pilots per n₁ (seed 7), PolyOpt designed over each construction's F (``--time-budget``), NMI at
the true P (the pilot's own when F is unbounded or the design does not beat it). Prints one figure per line.

    python bench/bench_pilot_radius.py                 # 1,000 draws: ~10 min on the loaded 2-core machine
    python bench/bench_pilot_radius.py --draws 0 --nmi 3
"""

from __future__ import annotations

import argparse
import functools
import math

import numpy as np

from rldp.aggregator.design import DesignRequest, design
from rldp.aggregator.design.orchestration import sources
from rldp.demo.datasets import adult_distribution
from rldp.shared.document import report_matrix
from rldp.shared.information import normalized_mutual_information
from rldp.shared.pilot import CONSTRUCTION, pilot_confidence_set

SIZES = (1_000, 10_000, 100_000, 1_000_000)
BETA = 0.05
BUILDS = (("v3", "empirical-bernstein-box/v3"), ("v4", CONSTRUCTION))


def _coverage(q: np.ndarray, p: np.ndarray, draws: int) -> None:
    rng = np.random.default_rng(0)
    for n1 in SIZES:
        radii: dict[str, list[float]] = {label: [] for label, _ in BUILDS}
        covered = dict.fromkeys(radii, 0)
        for counts in rng.multinomial(n1, q @ p, size=draws):
            for label, construction in BUILDS:
                pset = pilot_confidence_set(q, counts, BETA, construction=construction)
                radii[label].append(pset.radius)
                covered[label] += pset.holds(p)
        for label in radii:
            rate = covered[label] / draws
            se = math.sqrt(max(rate * (1 - rate), (1 - 1 / draws) / draws) / draws)
            print(f"coverage_{label}@{n1} {rate:.4f} ± {se:.4f}")
            print(f"radius_median_{label}@{n1} {float(np.median(radii[label])):.4g} nats")


def _nmi(alphabet, pilot: dict, q: np.ndarray, p: np.ndarray, reps: int, budget: float) -> None:
    rng = np.random.default_rng(7)
    own = normalized_mutual_information(q, p)
    original = sources.pilot_confidence_set
    try:
        for n1 in SIZES:
            nmis: dict[str, list[float]] = {label: [] for label, _ in BUILDS}
            for counts in (rng.multinomial(n1, q @ p) for _ in range(reps)):
                for label, construction in BUILDS:
                    sources.pilot_confidence_set = functools.partial(original, construction=construction)
                    source = sources.PilotData(pilot, counts.tolist(), BETA)
                    nmi = own
                    if math.isfinite(source.confidence_set.radius):
                        request = DesignRequest(method="polyopt", epsilon=1.0, time_budget=budget)
                        doc = sources.design_from(source, request, alphabet)
                        nmi = max(nmi, normalized_mutual_information(report_matrix(doc), p))
                    nmis[label].append(nmi)
            for label, values in nmis.items():
                print(
                    f"nmi_after_switch_{label}@{n1} {float(np.mean(values)):.4f} (runs {np.round(values, 4).tolist()})"
                )
    finally:
        sources.pilot_confidence_set = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--nmi", type=int, default=0, metavar="R")
    parser.add_argument("--time-budget", type=float, default=30.0)
    args = parser.parse_args()
    alphabet, truth, _ = adult_distribution("sex", "race")
    p = truth.ravel()
    pilot = design(
        "srr", alphabet=alphabet, public_distribution=np.full(truth.shape, 1 / p.size), epsilon=1.0, radius=math.inf
    )
    q = report_matrix(pilot)
    if args.draws:
        _coverage(q, p, args.draws)
    if args.nmi:
        _nmi(alphabet, pilot, q, p, args.nmi, args.time_budget)


if __name__ == "__main__":
    main()
