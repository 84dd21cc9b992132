"""Benchmark: PolyOpt by column generation against the baselines of the same run.

Prints one line per figure, ``name value unit``; every target is a ratio against a baseline
measured in this run:

* ``cg_vs_exact_*``: column generation / exact vertex enumeration (Theorem 3), on random
  Jeffreys draws (n = 32561) for every shape |S| ≤ 3, |U| ≤ 4 and on Adult sex/race,
  race/sex, at ε ∈ {0.5, 1, 2}. Target ≥ 0.995.
* ``cg_{4x4,5x5}_*``: seconds to convergence where exact enumeration does not finish
  (> 11 min at 4×4), and the gap to the proven upper bound.
* ``adult_{oe,nr}_eps*_*``: Adult occupation×education (15×16) and
  native-country×relationship (42×6) with a 60 s budget: NMI of PolyOpt / NMI of the paper's
  IR (target ≥ 2) and / the best other certified design (target ≥ 1).
  Designs at increasing ε are warm-started with the previous ε's rows (``warm_start``), so
  ``*_monotone`` (1 = NMI non-decreasing in ε, as the optimum is) must be 1; ``*_nr_vs_polyopt``
  is NR (the non-robust optimum, same budget) / PolyOpt, ≥ 1 since NR's optimum bounds PolyOpt's.
* ``exact_robust_*``: the exact solver at large ε (random 3×3 Jeffreys draws, n = 1000,
  ε = 7) where floating-point cddlib misses vertices: designs failing, below GRR (nr) or
  SRR (polyopt, when SRR's rows lie in Γ), or failing the audit. Target 0 of each.
* ``exact_set_*`` (stretch): rows certified by the exact audit instead of the polytope, on
  Adult sex/race: ratio to PolyOpt and the share of the PolyOpt→NR headroom captured.

    .venv/bin/python bench/bench_polyopt.py            # full (~15 minutes)
    .venv/bin/python bench/bench_polyopt.py --quick    # a short run (~2 minutes)
    .venv/bin/python bench/bench_polyopt.py --only adult,robust   # some sections only

``adult_*_upper_bound_nmi`` is the best proven bound (polytope Lagrangian bound at the lifted
duals of the coarse problem, NR bound, or the entropy = 1); ``*_coarse_KxL_nmi`` the value of
the aggregated problem solved first (see rldp.aggregator.design.solvers.cg.coarsen).
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

from rldp.aggregator.design import (  # noqa: E402
    DesignError,
    GammaCone,
    design_matrix,
    grr_matrix,
    solve_exact_set_cg,
    solve_nr_cg,
    solve_polyopt,
    solve_polyopt_cg,
    srr_matrix,
)
from rldp.shared.audit import audit_rldp  # noqa: E402
from rldp.shared.information import entropy, mutual_information  # noqa: E402
from rldp.shared.records import Alphabet  # noqa: E402
from rldp.shared.tables import read_csv  # noqa: E402
from rldp.shared.tolerances import DESIGN_MARGIN  # noqa: E402
from rldp.shared.uncertainty import UncertaintySet  # noqa: E402

N = 32561
BETA = 0.05
MARGIN = 1 - DESIGN_MARGIN
OTHERS = ("ir-calibrated", "cr-calibrated", "srr", "grr", "cr")


def emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def jeffreys(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """P̂ from n = 32561 draws of a P* ~ Dirichlet(1/2) ([LZG24, Sec 8.2]); every s seen."""
    while True:
        p_star = rng.dirichlet(np.full(shape[0] * shape[1], 0.5))
        p_hat = rng.multinomial(N, p_star).reshape(shape) / N
        if np.all(p_hat.sum(axis=1) > 0):
            return p_hat


def adult(sensitive: str, released: str) -> np.ndarray:
    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(table, sensitive, [released])
    return alphabet.empirical_distribution(table)


def compare_exact(cases: list[tuple[str, np.ndarray, float]], budget: float) -> None:
    ratios, t_exact, t_cg = [], 0.0, 0.0
    for label, p, eps in cases:
        uset = UncertaintySet.from_confidence(p, N, BETA)
        low = uset.lower_bounds()
        for variant, same in (("polyopt", False), ("polyopt-paper", True)):
            t0 = time.perf_counter()
            exact = solve_polyopt(p, low, eps * MARGIN, same_sensitive=same)
            t1 = time.perf_counter()
            cg = solve_polyopt_cg(p, low, eps * MARGIN, same_sensitive=same, time_budget=budget, bound_epsilon=eps)
            t2 = time.perf_counter()
            assert audit_rldp(cg.matrix, uset, eps).passed, (label, eps)
            ratio = cg.information / exact.information
            ratios.append(ratio)
            t_exact += t1 - t0
            t_cg += t2 - t1
            emit(f"cg_vs_exact_{label}_eps{eps:g}_{variant}", ratio, "ratio")
    emit("cg_vs_exact_min", min(ratios), "ratio")
    emit("cg_vs_exact_mean", float(np.mean(ratios)), "ratio")
    emit("cg_vs_exact_cases", len(ratios), "count")
    emit("cg_vs_exact_speedup", t_exact / t_cg, "ratio")


def large_synthetic(shapes: list[tuple[int, int]], rng: np.random.Generator, budget: float) -> None:
    for shape in shapes:
        p = jeffreys(shape, rng)
        uset = UncertaintySet.from_confidence(p, N, BETA)
        for eps in (0.5, 1.0, 2.0):
            tag = f"cg_{shape[0]}x{shape[1]}_eps{eps:g}"
            cg = solve_polyopt_cg(p, uset.lower_bounds(), eps * MARGIN, time_budget=budget, bound_epsilon=eps)
            nr = solve_nr_cg(p, eps * MARGIN, time_budget=budget, bound_epsilon=eps)
            assert audit_rldp(cg.matrix, uset, eps).passed
            emit(f"{tag}_seconds", cg.seconds, "s")
            emit(f"{tag}_converged", float(cg.converged), "bool")
            bound = min(x for x in (cg.upper_bound, nr.upper_bound) if x is not None)
            emit(f"{tag}_vs_upper_bound", cg.information / bound, "ratio")


def adult_large(pairs: list[tuple[str, str, str]], epsilons: list[float], budget: float, with_nr: bool) -> None:
    for tag, s, u in pairs:
        p = adult(s, u)
        h = entropy(p)
        uset = UncertaintySet.from_confidence(p, N, BETA)
        warm, nmis = [], []
        for eps in epsilons:
            base = {m: mutual_information(design_matrix(m, uset, eps)[0], p) / h for m in ("ir",) + OTHERS}
            t0 = time.perf_counter()
            q, params = design_matrix("polyopt", uset, eps, solver="cg", time_budget=budget, warm_start=warm)
            seconds = time.perf_counter() - t0
            assert audit_rldp(q, uset, eps).passed
            warm = [q]
            nmi = mutual_information(q, p) / h
            nmis.append(nmi)
            best_other = max(base[m] for m in OTHERS)
            name = f"adult_{tag}_eps{eps:g}"
            emit(f"{name}_nmi_polyopt", nmi, "nmi")
            emit(f"{name}_nmi_ir", base["ir"], "nmi")
            emit(f"{name}_polyopt_vs_ir", nmi / base["ir"], "ratio")
            emit(f"{name}_polyopt_vs_best_other", nmi / best_other, "ratio")
            emit(f"{name}_seconds", seconds, "s")
            emit(f"{name}_upper_bound_nmi", params["upper_bound"] / h, "nmi")
            for stage in params.get("stages", []):
                emit(f"{name}_coarse_{stage['shape'][0]}x{stage['shape'][1]}_nmi", stage["information"] / h, "nmi")
            if with_nr:
                q_nr, nr_params = design_matrix("nr", uset, eps, solver="cg", time_budget=budget)
                emit(f"{name}_nr_vs_polyopt", mutual_information(q_nr, p) / h / nmi, "ratio")
                emit(f"{name}_nr_upper_bound_nmi", nr_params["upper_bound"] / h, "nmi")
        emit(f"adult_{tag}_monotone", float(all(b >= a - 1e-12 for a, b in zip(nmis, nmis[1:]))), "bool")


def exact_robust(draws: int, eps: float = 7.0, n: int = 1000) -> None:
    """design_matrix(..., solver="exact") where floating-point vertex enumeration struggles."""
    rng = np.random.default_rng(7)
    failed = below = audit_failed = 0
    for _ in range(draws):
        while True:
            p = rng.multinomial(n, rng.dirichlet(np.full(9, 0.5))).reshape(3, 3) / n
            if np.all(p.sum(axis=1) > 0):
                break
        uset = UncertaintySet.from_confidence(p, n, BETA)
        point = UncertaintySet(p, 0.0)
        srr = srr_matrix(3, 3, eps * MARGIN)
        srr_in = bool(np.all(GammaCone(uset.lower_bounds(), eps * MARGIN).contains(srr)))
        for method, claimed, baseline in (
            ("nr", point, mutual_information(grr_matrix(9, eps), p)),
            ("polyopt", uset, mutual_information(srr, p) if srr_in else 0.0),
        ):
            try:
                q, _ = design_matrix(method, uset, eps, solver="exact", time_budget=10.0)
            except DesignError:
                failed += 1
                continue
            audit_failed += int(not audit_rldp(q, claimed, eps).passed)
            below += int(mutual_information(q, p) < baseline - 1e-9)
    emit("exact_robust_designs", 2 * draws, "count")
    emit("exact_robust_failed", failed, "count")
    emit("exact_robust_below_baseline", below, "count")
    emit("exact_robust_audit_failed", audit_failed, "count")


def exact_set(epsilons: list[float], budget: float) -> None:
    """Stretch: rows certified by the exact audit (cone K ⊇ Γ) vs PolyOpt, on Adult sex/race."""
    p = adult("sex", "race")
    uset = UncertaintySet.from_confidence(p, N, BETA)
    for eps in epsilons:
        res = solve_exact_set_cg(uset, eps, time_budget=budget)
        assert audit_rldp(res.matrix, uset, eps).passed
        po = solve_polyopt(p, uset.lower_bounds(), eps * MARGIN).information
        nr = solve_nr_cg(p, eps * MARGIN, time_budget=budget).information
        emit(f"exact_set_sex_race_eps{eps:g}_vs_polyopt", res.information / po, "ratio")
        emit(f"exact_set_sex_race_eps{eps:g}_headroom_captured", (res.information - po) / (nr - po), "fraction")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (fewer cases, 20 s budgets)")
    parser.add_argument(
        "--only",
        default="exact,synthetic,adult,robust,exact_set",
        help="comma-separated sections to run (default: all)",
    )
    args = parser.parse_args()
    sections = {"exact", "synthetic", "adult", "robust", "exact_set"}
    only = set(args.only.split(","))
    if not only <= sections:
        parser.error(
            f"--only: unknown section(s) {', '.join(sorted(only - sections))}; "
            f"expected a comma-separated subset of {', '.join(sorted(sections))}"
        )
    rng = np.random.default_rng(20240501)

    shapes = [(2, 2), (2, 3), (3, 2), (2, 4), (3, 3), (3, 4)]
    epsilons = [1.0] if args.quick else [0.5, 1.0, 2.0]
    cases = []
    for shape in shapes[:4] if args.quick else shapes:
        for draw in range(1 if args.quick else 2):
            p = jeffreys(shape, rng)
            cases += [(f"jeffreys{shape[0]}x{shape[1]}_{draw}", p, eps) for eps in epsilons]
    for tag, s, u in (("sex_race", "sex", "race"), ("race_sex", "race", "sex")):
        p = adult(s, u)
        cases += [(f"adult_{tag}", p, eps) for eps in ([1.0] if args.quick else [0.5, 1.0, 2.0])]
    if "exact" in only:
        compare_exact(cases, budget=20.0)
    if "synthetic" in only:
        large_synthetic([(4, 4)] if args.quick else [(4, 4), (5, 5)], rng, budget=30.0)
    pairs = [("oe", "occupation", "education"), ("nr", "native-country", "relationship")]
    if "adult" in only:
        adult_large(
            pairs, [1.0] if args.quick else [0.5, 1.0, 1.5], budget=20.0 if args.quick else 60.0, with_nr=not args.quick
        )
    if "robust" in only:
        exact_robust(5 if args.quick else 40)
    if "exact_set" in only:
        exact_set([1.0] if args.quick else [0.5, 1.0, 2.0], budget=20.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
