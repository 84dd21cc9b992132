"""Estimation speed: 10⁷ reports over |X| = 240 (issue 3, target (c): "well under a second").

Prints one figure per line, ``name value unit``. Baselines measured in the same run:
``np.bincount`` of the same reports (one pass over the data — estimation should cost a
small multiple of it) and one EM iteration computed per report rather than from the
counts (what an implementation that never aggregates pays for *each* of its iterations;
timed on the first 10⁶ reports and scaled linearly, as its work is exactly linear in n,
to keep the run short).

    python bench/bench_estimate.py            # ~10-30 s on 2 cores
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from rldp.aggregator.design import grr_matrix, ir_matrix
from rldp.aggregator.estimate import estimate_distribution, report_counts

SHAPE = (15, 16)  # |X| = 240
A = SHAPE[0] * SHAPE[1]


def _emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def _median_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time of ``repeat`` runs (and the last result)."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def draw_reports(q: np.ndarray, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n privatised reports, vectorised per input symbol: x ~ θ, then y ~ Q(·|x), shuffled."""
    per_x = rng.multinomial(n, theta)
    parts = [rng.choice(q.shape[0], size=int(k), p=q[:, x]) for x, k in enumerate(per_x) if k]
    reports = np.concatenate(parts).astype(np.int64)
    rng.shuffle(reports)
    return reports


def per_report_em_iteration(q: np.ndarray, reports: np.ndarray, theta: np.ndarray, chunk: int = 20_000) -> np.ndarray:
    """One EM update computed report by report (vectorised in chunks, no aggregation):
    θ'_x = (1/n) Σ_i Q(y_i|x) θ_x / Σ_x' Q(y_i|x') θ_x'."""
    acc = np.zeros_like(theta)
    for start in range(0, reports.size, chunk):
        rows = q[reports[start : start + chunk]] * theta  # (chunk, |X|) unnormalised posteriors
        acc += (rows / rows.sum(axis=1, keepdims=True)).sum(axis=0)
    return acc / reports.size


def _bench_mechanism(
    name: str, q: np.ndarray, theta: np.ndarray, n: int, tag: str, repeat: int, rng: np.random.Generator
) -> None:
    """All figures for one mechanism (reports drawn once)."""
    reports = draw_reports(q, theta, n, rng)
    k = q.shape[0]
    suffix = "" if name == "ir" else f"_{name}"

    t_bincount, _ = _median_time(lambda: np.bincount(reports, minlength=k), repeat)
    t_count, counts = _median_time(lambda: report_counts(reports, k), repeat)
    t_em, est = _median_time(lambda: estimate_distribution(q, counts, SHAPE), repeat)
    t_inv, inv = _median_time(lambda: estimate_distribution(q, counts, SHAPE, method="inverse"), repeat)
    sub = reports[: min(n, 10**6)]
    t_sub, _ = _median_time(lambda: per_report_em_iteration(q, sub, np.full(A, 1.0 / A)), 1)
    t_iter = t_sub * n / sub.size
    if not est.converged:
        print(f"warning: EM did not converge for {name} (gap {est.gap:.3g})", file=sys.stderr)

    total_em = t_count + t_em
    _emit(f"bincount_{tag}{suffix}_seconds", t_bincount, "s")
    _emit(f"report_counts_{tag}{suffix}_seconds", t_count, "s")
    _emit(f"estimate_em_{tag}_x{A}{suffix}_seconds", total_em, "s")
    _emit(f"estimate_em_from_counts_x{A}{suffix}_seconds", t_em, "s")
    _emit(f"estimate_em_x{A}{suffix}_iterations", est.iterations, "updates")
    _emit(f"estimate_em_x{A}{suffix}_newton_steps", est.newton_steps, "steps")
    _emit(f"estimate_em_x{A}{suffix}_gap", est.gap, "nats_per_report")
    _emit(f"estimate_inverse_{tag}_x{A}{suffix}_seconds", t_count + t_inv, "s")
    _emit(f"estimate_em_{tag}_x{A}{suffix}_vs_bincount", total_em / t_bincount, "x")
    _emit(f"estimate_inverse_{tag}_x{A}{suffix}_vs_bincount", (t_count + t_inv) / t_bincount, "x")
    _emit(f"em_iteration_per_report_{tag}_x{A}{suffix}_seconds", t_iter, "s")  # scaled from 10^6 reports
    _emit(f"estimate_em_{tag}_x{A}{suffix}_speedup_vs_one_per_report_iteration", t_iter / total_em, "x")
    _emit(f"estimate_em_x{A}{suffix}_l1_error", float(np.abs(est.joint.ravel() - theta).sum()), "l1")
    _emit(f"estimate_inverse_x{A}{suffix}_l1_error", float(np.abs(inv.joint.ravel() - theta).sum()), "l1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=10**7, help="number of reports (default 10^7)")
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions (median)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.reports
    tag = f"1e{round(np.log10(n))}" if n == 10 ** round(np.log10(n)) else str(n)
    rng = np.random.default_rng(args.seed)
    # A skewed truth with rare cells (Jeffreys prior, as in [LZG24, Sec 8]): the MLE then
    # sits on the boundary of the simplex, the harder case for EM.
    theta = rng.dirichlet(np.full(A, 0.5))
    mechanisms = {
        "ir": ir_matrix(*SHAPE, 1.0, 2.0),  # IR(GRR_1(S), GRR_2(U))
        "grr": grr_matrix(A, 1.0),  # LDP baseline: little signal per report, slow plain EM
    }
    total_t0 = time.perf_counter()
    for name, q in mechanisms.items():
        _bench_mechanism(name, q, theta, n, tag, args.repeat, rng)
    _emit("bench_estimate_total_seconds", time.perf_counter() - total_t0, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
