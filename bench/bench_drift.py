"""The drift watch: its cost per check, and how many drifted reports it needs.

Sex/race PolyOpt at ε = 1.5 from the Adult public data. Exposure: N₀ reports from P̂, then m from a
drifted population (the skewed one, 60 % Female|Amer-Indian-Eskimo, and the first point
towards it whose realised ε* is 2 × the claim); the smallest m on a grid at which ≥ 95 % of
``--runs`` simulated runs reject H0 (seeds m + N₀). Prints one figure per line, ``name value unit``.

    python bench/bench_drift.py              # ~3-6 min on 2 cores (the exposure grid)
    python bench/bench_drift.py --runs 10    # quicker, coarser
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rldp.aggregator.estimate.drift import _p_value, projection_statistic, watch
from rldp.aggregator.frames import design_from_frame
from rldp.demo.datasets import load_adult
from rldp.shared.audit import realised_epsilon
from rldp.shared.document import mechanism_matrix, public_distribution
from rldp.shared.uncertainty import UncertaintySet

GRID = (25, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000)


def _emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    doc = design_from_frame(load_adult(), sensitive="sex", released=["race"], method="polyopt", epsilon=1.5)
    q, p = mechanism_matrix(doc), public_distribution(doc)
    unc = doc["privacy"]["uncertainty"]
    ball = UncertaintySet(p.reshape(1, -1), unc["radius"], unc["order"])
    skew = p * 0.4
    skew.flat[0] += 0.6
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if realised_epsilon(q, (1 - mid) * p + mid * skew) >= 3.0 else (mid, hi)
    twice = (1 - hi) * p + hi * skew
    _emit("drift_twice_share", hi, "of the way to the skewed population")

    counts = np.random.default_rng(0).multinomial(5000, q @ p.ravel())
    watch(doc, counts)  # imports scipy's optimiser and stats once
    t0 = time.perf_counter()
    for _ in range(10):
        watch(doc, counts)
    _emit("drift_watch_check", (time.perf_counter() - t0) / 10 * 1e3, "ms (5,000 reports, estimate included)")

    for name, pop in (("skewed", skew), ("twice", twice)):
        for n0 in (0, 10_000, 100_000):
            found = None
            for m in GRID:
                rng = np.random.default_rng(m + n0)
                hits = 0
                for _ in range(args.runs):
                    c = rng.multinomial(m, q @ pop.ravel()) + (rng.multinomial(n0, q @ p.ravel()) if n0 else 0)
                    hits += _p_value(*projection_statistic(q, c, ball)) < 0.05
                if hits >= 0.95 * args.runs:
                    found = m
                    break
            _emit(f"drift_exposure_{name}_n0_{n0}", float("inf") if found is None else found, "drifted reports")


if __name__ == "__main__":
    main()
