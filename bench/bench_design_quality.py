"""Benchmark: design quality at large alphabets (PolyOpt by column generation) and honoured budgets.

Prints one line per figure, ``name value unit``; the targets are ratios:

* ``quality_{oe,nr}_eps*``: Adult occupation×education (S = occupation, 15×16) and
  native-country×relationship (S = native-country, 42×6), n = 32561, β = 0.05, as in fig2 and
  bench_polyopt, at ε ∈ {0.5, 1, 2} with ``time_budget`` T = 60 s: the certified NMI, the proven
  upper bound (NMI; the smallest of the bounds in the document, ``upper_bound_kind`` says which),
  ``_gap`` = certified / bound (the document's ``bound_gap``) and ``_vs_floor`` = gap / 0.9
  (target ≥ 1), the wall and CPU seconds. Every design passes the exact audit (asserted).
* ``budget_K*``: ``design()`` (design, audit, document) of PolyOpt with ``time_budget`` T = 10 s
  on Jeffreys draws of 60, 240, 480 and 1000 symbols: ``_elapsed_vs_limit`` = wall seconds /
  (1.1·T + 2) (target ≤ 1), the status and the certified NMI and bound of the result.

The machine is shared: note ``uptime`` with the figures; ``_cpu_vs_wall`` says how much of a
core the run got.

    .venv/bin/python bench/bench_design_quality.py            # 6 cases at 60 s + budgets (~8 min)
    .venv/bin/python bench/bench_design_quality.py --quick    # 2 cases at 10 s + 2 budget sizes
    .venv/bin/python bench/bench_design_quality.py --only budget
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers import ADULT_COLUMNS, adult_path  # noqa: E402

from rldp.aggregator.design import design, design_matrix  # noqa: E402
from rldp.shared.audit import audit_rldp  # noqa: E402
from rldp.shared.document import mechanism_matrix  # noqa: E402
from rldp.shared.information import entropy, mutual_information  # noqa: E402
from rldp.shared.records import Alphabet, Attribute  # noqa: E402
from rldp.shared.tables import read_csv  # noqa: E402
from rldp.shared.uncertainty import UncertaintySet  # noqa: E402

N = 32561
BETA = 0.05
FLOOR = 0.9
PAIRS = {"oe": ("occupation", "education"), "nr": ("native-country", "relationship")}
BUDGET_SHAPES = {60: (6, 10), 240: (15, 16), 480: (30, 16), 1000: (50, 20)}


def emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def adult(sensitive: str, released: str) -> np.ndarray:
    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    return Alphabet.from_table(table, sensitive, [released]).empirical_distribution(table)


def quality(cases: list[tuple[str, float]], budget: float) -> None:
    gaps = []
    for tag, eps in cases:
        p = adult(*PAIRS[tag])
        h = entropy(p)
        uset = UncertaintySet.from_confidence(p, N, BETA)
        wall, cpu = time.perf_counter(), time.process_time()
        q, params = design_matrix("polyopt", uset, eps, solver="cg", time_budget=budget)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert audit_rldp(q, uset, eps).passed, (tag, eps)
        nmi = mutual_information(q, p) / h
        name = f"quality_{tag}_eps{eps:g}"
        emit(f"{name}_nmi", nmi, "nmi")
        emit(f"{name}_bound_nmi", params["upper_bound"] / h, "nmi")
        print(f"{name}_bound_kind {params['upper_bound_kind']}", flush=True)
        emit(f"{name}_gap", params["bound_gap"], "ratio")
        emit(f"{name}_vs_floor", params["bound_gap"] / FLOOR, "ratio")
        emit(f"{name}_seconds", wall, "s")
        emit(f"{name}_cpu_vs_wall", cpu / wall, "ratio")
        stages = "; ".join(
            f"{s['shape'][0]}x{s['shape'][1]} {s['information'] / h:.4f}" for s in params.get("stages", [])
        )
        print(f"{name}_stages {stages or '-'}", flush=True)
        gaps.append(params["bound_gap"])
    emit("quality_min_vs_floor", min(gaps) / FLOOR, "ratio")
    emit("quality_cases_meeting_floor", sum(g >= FLOOR for g in gaps), "count")


def jeffreys(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    while True:
        p = rng.multinomial(N, rng.dirichlet(np.full(shape[0] * shape[1], 0.5))).reshape(shape) / N
        if np.all(p.sum(axis=1) > 0):
            return p


def budgets(sizes: list[int], budget: float) -> None:
    rng = np.random.default_rng(17)
    worst = 0.0
    for size in sizes:
        a1, a2 = BUDGET_SHAPES[size]
        p = jeffreys((a1, a2), rng)
        alphabet = Alphabet(
            Attribute("s", tuple(f"s{i}" for i in range(a1))), [Attribute("u", tuple(f"u{j}" for j in range(a2)))]
        )
        start = time.perf_counter()
        doc = design(
            "polyopt", alphabet=alphabet, public_distribution=p, epsilon=1.0, n=N, solver="cg", time_budget=budget
        )
        elapsed = time.perf_counter() - start
        params = doc["parameters"]
        ratio = elapsed / (1.1 * budget + 2.0)
        worst = max(worst, ratio)
        name = f"budget_K{size}"
        emit(f"{name}_elapsed_vs_limit", ratio, "ratio")
        emit(f"{name}_seconds", elapsed, "s")
        print(f"{name}_status {params.get('status')}", flush=True)
        emit(f"{name}_certified", float(doc["audit"]["epsilon"] <= 1.0), "bool")
        h = entropy(p)
        emit(f"{name}_nmi", mutual_information(mechanism_matrix(doc), p) / h, "nmi")
        emit(f"{name}_bound_nmi", params["upper_bound"] / h, "nmi")
    emit("budget_worst_elapsed_vs_limit", worst, "ratio")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 cases at 10 s and two budget sizes")
    parser.add_argument("--only", default="quality,budget", help="comma-separated sections: quality, budget")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if not only <= {"quality", "budget"}:
        parser.error(f"--only: unknown section(s) {', '.join(sorted(only - {'quality', 'budget'}))}")
    if "quality" in only:
        cases = [("oe", 1.0), ("nr", 1.0)] if args.quick else [(t, e) for t in PAIRS for e in (0.5, 1.0, 2.0)]
        quality(cases, budget=10.0 if args.quick else 60.0)
    if "budget" in only:
        budgets([60, 240] if args.quick else [60, 240, 480, 1000], budget=10.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
