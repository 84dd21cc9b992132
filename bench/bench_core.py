"""Mechanism core benchmarks.

1. Exact PolyOpt design time for shapes (2,5), (5,2), (3,3), (3,4) on Jeffreys draws
   (n = 32,561 public records, β = 0.05), as seconds and as a ratio against the
   calibrated IR designer on the same input in the same run.
2. NMI of every method on the Adult pairs sex/race and race/sex at ε ∈ {0.5, 1, 2}, and
   each method's NMI as a ratio against GRR (the LDP baseline) in the same run.

Run: python bench/bench_core.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers import ADULT_COLUMNS, adult_path

from rldp.aggregator.design import METHODS, design_matrix
from rldp.shared.information import normalized_mutual_information
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv
from rldp.shared.uncertainty import UncertaintySet


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def polyopt_times(quick: bool) -> None:
    rng = np.random.default_rng(2024)
    shapes = [(2, 5), (5, 2), (3, 3)] + ([] if quick else [(3, 4)])
    for a1, a2 in shapes:
        p_true = rng.dirichlet(np.full(a1 * a2, 0.5))
        n = 32561
        p_hat = rng.multinomial(n, p_true).reshape(a1, a2) / n
        uset = UncertaintySet.from_confidence(p_hat, n, 0.05)
        (_, params), t_poly = timed(design_matrix, "polyopt", uset, 1.0, solver="exact")
        _, t_ir = timed(design_matrix, "ir-calibrated", uset, 1.0)
        print(f"polyopt_exact_seconds_{a1}x{a2} {t_poly:.3f} s", flush=True)
        print(f"polyopt_exact_vertices_{a1}x{a2} {params.get('vertices', 0)} vertices")
        print(f"polyopt_exact_vs_ir_calibrated_time_{a1}x{a2} {t_poly / t_ir:.2f} ratio")


def adult_nmi(quick: bool) -> None:
    table = read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)
    for s, u in (("sex", "race"), ("race", "sex")):
        alphabet = Alphabet.from_table(table, s, [u])
        p_hat = alphabet.empirical_distribution(table)
        uset = UncertaintySet.from_confidence(p_hat, table.n_rows, 0.05)
        for eps in (1.0,) if quick else (0.5, 1.0, 2.0):
            nmi = {m: normalized_mutual_information(design_matrix(m, uset, eps)[0], p_hat) for m in METHODS}
            for m, v in nmi.items():
                print(f"nmi_{s}_{u}_eps{eps:g}_{m} {v:.4f} nmi")
            for m, v in nmi.items():
                if m != "grr":
                    print(f"nmi_ratio_vs_grr_{s}_{u}_eps{eps:g}_{m} {v / nmi['grr']:.2f} ratio")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    polyopt_times(quick)
    adult_nmi(quick)
