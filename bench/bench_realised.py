"""The realised ε* the drift watch shows: the point's median for a few prior weights κ, and the interval's coverage.

Sex/race PolyOpt at ε = 1.5 from the Adult public data; honest reports from P̂ (inside F) and from the
skewed population (60 % Female|Amer-Indian-Eskimo, outside F), n ∈ {1,000, 5,000}, ``--runs`` runs each
(seed n + 1 for the skewed population, n for P̂). Per row: the true ε*, the medians of the plug-in ε* at the
maximum-likelihood θ̂ and of ε* at the maximum a-posteriori θ for κ ∈ {30, 100, 300} pseudo-reports from P̂
(κ = 100 is what the watch shows), and how often [L, U] holds the truth. Prints one figure per line,
``name value unit``.

    python bench/bench_realised.py              # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse

import numpy as np

from rldp.aggregator.estimate.estimator import estimate_distribution
from rldp.aggregator.estimate.realised import realised, shrunk_point
from rldp.aggregator.frames import design_from_frame
from rldp.demo.datasets import load_adult
from rldp.shared.audit import realised_epsilon
from rldp.shared.document import mechanism_matrix, public_distribution, report_matrix

WEIGHTS = (30.0, 100.0, 300.0)


def _emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    doc = design_from_frame(load_adult(), sensitive="sex", released=["race"], method="polyopt", epsilon=1.5)
    q, r, p = mechanism_matrix(doc), report_matrix(doc), public_distribution(doc)
    skew = p * 0.4
    skew.flat[0] += 0.6
    for name, pop in (("p_hat", p), ("skewed", skew)):
        truth = realised_epsilon(q, pop)
        _emit(f"{name}_true", truth, "nats")
        for n in (1000, 5000):
            rng = np.random.default_rng(n + (name == "skewed"))
            plug, points, covered = [], {w: [] for w in WEIGHTS}, 0
            for _ in range(args.runs):
                counts = rng.multinomial(n, r @ pop.ravel())
                est = estimate_distribution(r, counts, p.shape, prior=p)
                plug.append(realised_epsilon(q, est.joint))
                for w in WEIGHTS:
                    points[w].append(realised_epsilon(q, shrunk_point(r, counts, p, est.joint, w).reshape(p.shape)))
                shown = realised(q, r, counts, est, p)
                covered += shown.lower <= truth <= shown.upper
            _emit(f"{name}_{n}_plug_in_median", float(np.median(plug)), "nats")
            for w in WEIGHTS:
                _emit(f"{name}_{n}_map_kappa{w:g}_median", float(np.median(points[w])), "nats")
            _emit(f"{name}_{n}_interval_coverage", covered / args.runs, f"of {args.runs} runs")


if __name__ == "__main__":
    main()
