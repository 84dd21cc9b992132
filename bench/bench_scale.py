"""Large alphabets (issue 17): how the client sampler and the estimator scale with |X| = |Y| = K.

Prints small tables, then one line per target in the usual ``name value unit`` form, each
measured against a baseline taken in the same run (the machine is shared: ratios, not
absolute times, are what carry over). Client figures are process CPU time (best of a few
runs), which load from other processes distorts far less than wall time.

  client: ns/record of ``ColumnSampler.sample`` (OS CSPRNG, GRR at ε = 1) by batch size and K,
          and string encoding (``Alphabet.encode`` of two string columns) per record.
  estimate: EM from 10⁷ reports' counts (GRR at ε = 1, a Jeffreys-Dirichlet truth) by K,
          as a ratio to one ``numpy.linalg.solve`` of a K × K system with the same BLAS
          threads; "cold" computes the mechanism's row space, "warm" finds it cached; peak
          memory (tracemalloc) in units of one dense K × K float64 matrix.

Targets (floors): K = 4,000 ≤ 20 ns/record at 10⁶ records; 10⁴-record batches ≤ 2× the
per-record cost of 10⁶; estimation at K = 4,000 ≤ 10× one solve, peak ≤ 3 K × K matrices.

    python bench/bench_scale.py            # K up to 4,000 (several minutes on 2 busy cores)
    python bench/bench_scale.py --quick    # K up to 1,000
    python bench/bench_scale.py --estimate # the estimate section alone (--client: the client's alone)
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from rldp.aggregator.design import grr_matrix
from rldp.aggregator.estimate import estimate_distribution
from rldp.aggregator.estimate.linalg import blas_threads, clear_cache
from rldp.client.sampling import ColumnSampler
from rldp.shared.records import Alphabet, Attribute

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

EPSILON = 1.0
SEX = ("Female", "Male")
RACE = ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")


def _cpu_best(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _emit(name: str, value: float, unit: str, note: str = "") -> None:
    print(f"{name} {value:.4g} {unit}" + (f"  # {note}" if note else ""), flush=True)


def client_section(quick: bool) -> None:
    ks = (4, 40, 400, 4000)
    batches = (10**2, 10**3, 10**4, 10**5, 10**6)
    rng = np.random.default_rng(1)
    table: dict[int, dict[int, float]] = {}
    build: dict[int, float] = {}
    for k in ks:
        start = time.process_time()
        sampler = ColumnSampler(grr_matrix(k, EPSILON))
        build[k] = time.process_time() - start
        table[k] = {n: _sampling_cost(sampler, rng.integers(0, k, n), quick) for n in batches}
    print("# client: ns/record (CPU) of ColumnSampler.sample, GRR ε = 1, OS CSPRNG")
    print("# K      " + "".join(f"{n:>10.0e}" for n in batches) + "   build s")
    for k in ks:
        print(f"# {k:<7d}" + "".join(f"{table[k][n]:10.1f}" for n in batches) + f"   {build[k]:7.2f}")
    _emit("client_k4000_ns_per_record_1e6", table[4000][10**6], "ns", "floor ≤ 20")
    _emit("client_k4000_vs_k4_1e6", table[4000][10**6] / table[4][10**6], "x")
    for k in (4, 4000):
        _emit(f"client_k{k}_batch_1e4_vs_1e6", table[k][10**4] / table[k][10**6], "x", "floor ≤ 2")

    # String columns: encoding against sampling of the same records (same run).
    alpha = Alphabet(Attribute("sex", SEX), [Attribute("race", RACE)])
    n = 10**6
    x = rng.integers(0, alpha.size, n)
    arrays = {"sex": np.array(SEX)[x // len(RACE)], "race": np.array(RACE)[x % len(RACE)]}
    lists = {name: col.tolist() for name, col in arrays.items()}
    objects = {name: col.astype(object) for name, col in arrays.items()}  # as pandas gives them
    sampler = ColumnSampler(grr_matrix(alpha.size, EPSILON))
    t_sample = _cpu_best(lambda: sampler.sample(x), 3)
    t_arrays = _cpu_best(lambda: alpha.encode(arrays), 3)
    t_lists = _cpu_best(lambda: alpha.encode(lists), 3)
    t_objects = _cpu_best(lambda: alpha.encode(objects), 3)
    # Baseline (same run): what object columns cost before, through fixed-width strings.
    t_objects_before = _cpu_best(lambda: alpha.encode({k: v.astype(str) for k, v in objects.items()}), 3)
    _emit("encode_numpy_strings_ns_per_record", t_arrays / n * 1e9, "ns", "2 columns")
    _emit("encode_list_strings_ns_per_record", t_lists / n * 1e9, "ns", "2 columns")
    _emit("encode_object_strings_ns_per_record", t_objects / n * 1e9, "ns", "2 columns of dtype object")
    _emit("encode_object_strings_speedup", t_objects_before / t_objects, "x", "vs via fixed-width strings; floor ≥ 4")
    _emit("encode_numpy_strings_vs_sampling", t_arrays / t_sample, "x")
    _emit("encode_list_strings_vs_sampling", t_lists / t_sample, "x")


def _sampling_cost(sampler: ColumnSampler, x: np.ndarray, quick: bool) -> float:
    """CPU ns/record of sampling ``x`` (repeated to a few 10⁵ records per timing)."""
    n = x.size
    calls = max(1, (5 * 10**5 if quick else 2 * 10**6) // n)

    def run() -> None:
        for _ in range(calls):
            sampler.sample(x)

    return _cpu_best(run, 3) / (calls * n) * 1e9


def _draw_counts(k: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    q = grr_matrix(k, EPSILON)
    theta = rng.dirichlet(np.full(k, 0.5))
    pi = q @ theta
    return q, rng.multinomial(n, pi / pi.sum())


def _measured(q: np.ndarray, counts: np.ndarray) -> tuple[float, int, Any]:
    """(wall seconds, peak bytes traced during the estimate, the estimate)."""
    tracemalloc.start()
    start = time.perf_counter()
    est = estimate_distribution(q, counts, (q.shape[1], 1))
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak, est


def _solve_time(k: int, threads: int, rng: np.random.Generator) -> float:
    """Best of 3 wall times of one numpy.linalg.solve of a K × K system, with ``threads`` BLAS threads."""
    a = rng.standard_normal((k, k))
    b = rng.standard_normal(k)
    limiter = threadpool_limits(limits=threads, user_api="blas") if threadpool_limits is not None else None
    try:
        return min(_timed(lambda: np.linalg.solve(a, b)) for _ in range(3))
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def estimate_section(quick: bool) -> None:
    ks = (250, 500, 1000) if quick else (250, 500, 1000, 2000, 4000)
    rng = np.random.default_rng(7)
    rows = []
    for k in ks:
        q, counts = _draw_counts(k, 10**7, rng)
        threads = blas_threads(k)
        t_solve = _solve_time(k, threads, rng)
        clear_cache()
        t_cold, peak_cold, _ = _measured(q, counts)
        t_warm, peak_warm, est = _measured(q, counts)
        dense = 8.0 * k * k
        rows.append((k, threads, t_solve, t_cold, t_warm, peak_cold / dense, peak_warm / dense, est))
    print("# estimate: EM from counts, GRR ε = 1, 10⁷ reports; time as a multiple of one K × K solve")
    print("# K      threads  solve s   cold x   warm x   peak cold (K×K)  peak warm (K×K)  EM+Newton")
    for k, th, ts, tc, tw, pc, pw, est in rows:
        print(
            f"# {k:<7d}{th:7d}  {ts:7.3f}  {tc / ts:7.1f}  {tw / ts:7.1f}  {pc:15.2f}  {pw:15.2f}  "
            f"{est.iterations - est.newton_steps}+{est.newton_steps}"
        )
    k, th, ts, tc, tw, pc, pw, _ = rows[-1]
    _emit(f"estimate_k{k}_warm_vs_solve", tw / ts, "x", "floor ≤ 10")
    _emit(f"estimate_k{k}_cold_vs_solve", tc / ts, "x")
    _emit(f"estimate_k{k}_peak_dense_matrices", max(pc, pw), "KxK", "floor ≤ 3")


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at start: {load:.2f} on {os.cpu_count()} cores", flush=True)
    if "--estimate" not in argv:
        client_section(quick)
    if "--client" not in argv:
        estimate_section(quick)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
