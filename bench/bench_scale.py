"""Large alphabets (issue 17): how the client sampler and the estimator scale with |X| = |Y| = K.

Prints small tables, then one line per target in the usual ``name value unit`` form, each
measured against a baseline taken in the same run (the machine is shared: ratios, not
absolute times, are what carry over). Client figures are process CPU time (best of a few
runs), which load from other processes distorts far less than wall time.

  client: ns/record of the sampler a mechanism uses (``sampler_for``: GRR from its two
          parameters from 64 symbols on, client/grr.py) with the OS CSPRNG, GRR at ε = 1, by
          batch size and K; at K = 4,000 its build time and both against the generic exact
          sampler (alias tables) on the same matrix, and the alias path against its previous
          feed (re-implemented, ``_alias_feed_before``) and against the numpy form of its lookup
          (the C loop of client/_alias.c switched off), its build against the numpy table; string encoding (``Alphabet.encode`` of two
          string columns: numpy fixed-width, lists, object arrays) against the previous encoder
          (a dict lookup for lists, else a binary search among fixed-width strings),
          re-implemented here (``_encode_before``), in the same run.
  estimate: EM from 10⁷ reports' counts (GRR at ε = 1, a Jeffreys-Dirichlet truth) by K,
          as a ratio to one ``numpy.linalg.solve`` of a K × K system with the same BLAS
          threads; "cold" computes the mechanism's row space, "warm" finds it cached; peak
          memory (tracemalloc) in units of one dense K × K float64 matrix.

Targets (floors): K = 4,000 ≤ 20 ns/record at 10⁶ records; 10⁴-record batches ≤ 2× the
per-record cost of 10⁶; sampler build at K = 4,000 ≤ 2 s; string encoding ≥ 4× the records/s
of the previous encoder; estimation at K = 4,000 ≤ 10× one solve, peak ≤ 3 K × K matrices.

    python bench/bench_scale.py            # K up to 4,000 (several minutes on 2 busy cores)
    python bench/bench_scale.py --quick    # K up to 1,000
    python bench/bench_scale.py --only=client    # one section (client or estimate; also --client, --estimate)
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
from rldp.client.alias import AliasTable
from rldp.client.grr import GrrSampler, sampler_for
from rldp.client.sampling import ColumnSampler, random_into
from rldp.shared.records import Alphabet, Attribute, product_strides

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
    kinds: dict[int, str] = {}
    for k in ks:
        q = grr_matrix(k, EPSILON)
        start = time.process_time()
        sampler = sampler_for(q)  # what a Mechanism builds (GRR from its two parameters from 64 symbols)
        build[k] = time.process_time() - start
        kinds[k] = type(sampler).__name__
        table[k] = {n: _sampling_cost(sampler, rng.integers(0, k, n), quick) for n in batches}
    print("# client: ns/record (CPU) of the sampler a mechanism uses (sampler_for), GRR ε = 1, OS CSPRNG")
    print("# K      " + "".join(f"{n:>10.0e}" for n in batches) + "   build s  sampler")
    for k in ks:
        print(f"# {k:<7d}" + "".join(f"{table[k][n]:10.1f}" for n in batches) + f"   {build[k]:7.3f}  {kinds[k]}")
    _emit("client_k4000_ns_per_record_1e6", table[4000][10**6], "ns", "floor ≤ 20")
    _emit("client_k4000_vs_k4_1e6", table[4000][10**6] / table[4][10**6], "x")
    for k in (4, 4000):
        _emit(f"client_k{k}_batch_1e4_vs_1e6", table[k][10**4] / table[k][10**6], "x", "floor ≤ 2")
    # Baseline (same run): the generic exact sampler (alias tables) on the same K = 4,000 matrix.
    q = grr_matrix(4000, EPSILON)
    start = time.process_time()
    generic = ColumnSampler(q)
    build_generic = time.process_time() - start
    start = time.process_time()
    from_spec = sampler_for(None, {"form": "grr", "size": 4000, "diagonal": q[0, 0], "off_diagonal": q[1, 0]})
    build_spec = time.process_time() - start
    x = rng.integers(0, 4000, 10**6)
    t_generic = _sampling_cost(generic, x, quick)
    _emit("client_k4000_build_s", build[4000], "s", f"{kinds[4000]} detected in the dense matrix; floor ≤ 2")
    _emit("client_k4000_build_from_spec_s", build_spec, "s", f"{type(from_spec).__name__} from a grr document")
    _emit("client_k4000_build_vs_alias", build[4000] / build_generic, "x", f"alias tables: {build_generic:.2f} s")
    _emit("client_k4000_vs_alias_1e6", table[4000][10**6] / t_generic, "x", f"alias tables: {t_generic:.1f} ns/record")
    # The alias path itself against its previous feed (2¹⁵-record chunks, each drawing its own
    # keystream), re-implemented here, on the same tables and records.
    t_before = _cpu_best(lambda: _alias_feed_before(generic, x), 3) / x.size * 1e9
    t_now = _cpu_best(lambda: generic.sample(x), 3) / x.size * 1e9
    native = generic.alias.native
    generic.alias.native = False  # the numpy form of the same lookup (no C accelerator)
    t_numpy = _cpu_best(lambda: generic.sample(x), 3) / x.size * 1e9
    generic.alias.native = native
    assert generic.alias is not None
    start = time.process_time()
    AliasTable(generic.thresholds, native=False)  # the same table built in numpy
    build_numpy = time.process_time() - start
    _emit("client_alias_k4000_build_s", build_generic, "s", "ColumnSampler on a dense K = 4,000 Q; floor ≤ 2")
    _emit(
        "client_alias_k4000_table_vs_numpy_build",
        build_generic / build_numpy,
        "x",
        f"numpy table alone: {build_numpy:.2f} s",
    )
    _emit("client_alias_k4000_ns_per_record_1e6", t_now, "ns", f"dense K = 4,000 Q, C loop: {native}; floor ≤ 20")
    _emit("client_alias_k4000_vs_previous_feed", t_now / t_before, "x", f"previous feed: {t_before:.1f} ns/record")
    _emit("client_alias_k4000_vs_numpy_lookup", t_now / t_numpy, "x", f"numpy lookup: {t_numpy:.1f} ns/record")
    encoding_section(rng)


def encoding_section(rng: np.random.Generator) -> None:
    """String columns: today's encoder against the previous encoder (same run)."""
    alpha = Alphabet(Attribute("sex", SEX), [Attribute("race", RACE)])
    n = 10**6
    x = rng.integers(0, alpha.size, n)
    arrays = {"sex": np.array(SEX)[x // len(RACE)], "race": np.array(RACE)[x % len(RACE)]}
    lists = {name: col.tolist() for name, col in arrays.items()}
    objects = {name: col.astype(object) for name, col in arrays.items()}  # as pandas gives them
    sampler = ColumnSampler(grr_matrix(alpha.size, EPSILON))
    for cols in (arrays, lists, objects):  # same codes, both encoders
        np.testing.assert_array_equal(alpha.encode(cols), x)
        np.testing.assert_array_equal(_encode_before(alpha, cols), x)
    t_sample = _cpu_best(lambda: sampler.sample(x), 3)
    print("# encoding 2 string columns (sex, race), ns/record (CPU): now, previous encoder, speed-up")
    for label, cols in (("numpy", arrays), ("list", lists), ("object", objects)):
        now = _cpu_best(lambda cols=cols: alpha.encode(cols), 3)
        before = _cpu_best(lambda cols=cols: _encode_before(alpha, cols), 3)
        print(f"# {label:8s}{now / n * 1e9:8.1f}{before / n * 1e9:8.1f}{before / now:8.2f}x")
        _emit(f"encode_{label}_strings_ns_per_record", now / n * 1e9, "ns", "2 columns")
        _emit(f"encode_{label}_strings_speedup", before / now, "x", "vs the previous encoder; floor ≥ 4")
        _emit(f"encode_{label}_strings_vs_sampling", now / t_sample, "x")
    # One numpy string column of an attribute with C values ("u0", "u1", ...): the key is a
    # perfect hash from C = 100 on (no single character position separates the values).
    print("# one numpy string column of C values, ns/record (CPU): now, previous encoder, speed-up")
    for size in (10, 100, 1000, 4000):
        attr = Attribute("u", tuple(f"u{i}" for i in range(size)))
        col = np.array(attr.values)[rng.integers(0, size, n)]
        now = _cpu_best(lambda attr=attr, col=col: attr.encode(col), 3)
        before = _cpu_best(lambda attr=attr, col=col: _codes_before(attr, col), 3)
        print(f"# C = {size:<6d}{now / n * 1e9:8.1f}{before / n * 1e9:8.1f}{before / now:8.2f}x")
    _emit(f"encode_numpy_{size}_values_speedup", before / now, "x", "one column")
    # What one C-level pass over 2 × 10⁶ Python str objects costs, without any lookup: the
    # floor of any encoder of lists written with numpy and the standard library.
    touch = _cpu_best(lambda: [np.fromiter(c, dtype=object, count=n) for c in lists.values()], 3)
    _emit("encode_list_touch_floor_ns_per_record", touch / n * 1e9, "ns", "np.fromiter(list, object), 2 columns")


def _encode_before(alpha: Alphabet, columns: dict[str, Any]) -> np.ndarray:
    """The previous encoder, re-implemented: a dict lookup for lists, else the
    column as fixed-width strings (objects and bytes converted) and a binary search."""
    x = np.zeros(len(next(iter(columns.values()))), dtype=np.int64)
    for attr, stride in zip(alpha.attributes, product_strides([a.size for a in alpha.attributes]), strict=True):
        x += _codes_before(attr, columns[attr.name]) * stride
    return x


def _codes_before(attr: Attribute, values: Any) -> np.ndarray:
    index = {v: i for i, v in enumerate(attr.values)}
    if isinstance(values, list):
        try:
            return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
        except (KeyError, TypeError):
            pass
    arr = np.asarray(values)
    if arr.dtype.kind != "U":
        arr = arr.astype(str)
    keys = np.array(attr.values, dtype=str)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    pos = np.searchsorted(keys, arr)
    np.minimum(pos, keys.size - 1, out=pos)
    if not np.all(keys[pos] == arr):
        raise ValueError("unknown value")
    return order[pos]


def _alias_feed_before(sampler: ColumnSampler, xs: np.ndarray) -> np.ndarray:
    """The alias tables' previous OS feed: 2¹⁵-record chunks, each drawing its own keystream."""
    assert sampler.alias is not None
    n = xs.size
    out = np.empty(n, dtype=np.int64)
    step = min(n, 1 << 15)
    buffers = sampler.alias.buffers(step)
    keystream = np.empty(8 * step + 15, dtype=np.uint8)
    for start in range(0, n, step):
        m = min(step, n - start)
        random_into(keystream, 8 * m)
        u = keystream[: 8 * m].view("<u8")
        u >>= np.uint64(11)
        sampler.alias.sample_chunk(xs[start : start + m], u, out[start : start + m], buffers)
    return out


def _sampling_cost(sampler: ColumnSampler | GrrSampler, x: np.ndarray, quick: bool) -> float:
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
    t_watch = _watch_time(q, counts)
    print(f"# drift watch on the same counts and estimate: {t_watch:.3f} s")
    _emit(f"estimate_k{k}_with_drift_vs_solve", (tw + t_watch) / ts, "x", "floor ≤ 5 (what GET …/estimate costs)")
    _emit(f"estimate_k{k}_warm_vs_solve", tw / ts, "x", "floor ≤ 10")
    _emit(f"estimate_k{k}_cold_vs_solve", tc / ts, "x")
    _emit(f"estimate_k{k}_peak_dense_matrices", max(pc, pw), "KxK", "floor ≤ 3")


def _watch_time(q: np.ndarray, counts: np.ndarray) -> float:
    """Wall seconds of the drift watch an estimate request runs beside the estimate (the document: the GRR
    matrix over S × U with |S| = 2, a small F around a Dirichlet P̂; scipy.stats imported beforehand)."""
    import scipy.stats  # noqa: F401  (a one-off import, not the watch's cost)

    from rldp.aggregator.estimate.drift import watch
    from rldp.shared.document import build_document
    from rldp.shared.records import Alphabet

    k = q.shape[1]
    alphabet = Alphabet.from_dict(
        {
            "sensitive": {"name": "s", "values": ["a", "b"]},
            "released": [{"name": "u", "values": [f"v{i}" for i in range(k // 2)]}],
        }
    )
    p_hat = np.random.default_rng(3).dirichlet(np.ones(k)).reshape(2, k // 2)
    privacy = {"notion": "rldp", "epsilon": EPSILON, "uncertainty": {"order": 2, "radius": 0.01}}
    doc = build_document(method="grr", matrix=q, alphabet=alphabet, public_distribution=p_hat, privacy=privacy)
    estimate = estimate_distribution(q, counts, (2, k // 2))  # the same estimate, over S × U
    return _timed(lambda: watch(doc, counts, estimate, reports=q))  # the service's catalog keeps Q parsed


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at start: {load:.2f} on {os.cpu_count()} cores", flush=True)
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), None)
    only = {"--client": "client", "--estimate": "estimate"}.get(
        next((a for a in argv if a in ("--client", "--estimate")), ""), only
    )
    if only not in (None, "client", "estimate"):
        print(f"--only must be client or estimate; got {only!r}", file=sys.stderr)
        return 2
    if only in (None, "client"):
        client_section(quick)
    if only in (None, "estimate"):
        estimate_section(quick)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
