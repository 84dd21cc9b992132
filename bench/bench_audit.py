"""The exact RLDP audit of a dense mechanism: seconds at K = 1,000 and 4,000.

Q is a random dense column-stochastic matrix (squared Gamma entries: no constant or one-spike
blocks, so every (output, s) block goes to the Lagrange search, as for a PolyOpt design),
|S| = 2, P̂ a Dirichlet draw, a Rényi-2 ball of radius 0.1. The audit runs with the Illinois
bracket search (the default) and, at K = 1,000 in the same run, with the 64-step bisection it
replaced, over all rows at once as before (the baseline); their ε agree to ~1e-13.

    python bench/bench_audit.py            # K = 1,000 (both searches) and 4,000 (Illinois only)
    python bench/bench_audit.py --quick    # K = 1,000 only
    python bench/bench_audit.py --baseline-4000   # also the bisection at K = 4,000 (~100 s more)
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from rldp.shared import ball_search, uncertainty
from rldp.shared.audit.rldp import rldp_epsilon
from rldp.shared.uncertainty import UncertaintySet


def _case(k: int) -> tuple[np.ndarray, UncertaintySet]:
    rng = np.random.default_rng(k)
    q = rng.gamma(2.0, size=(k, k)) ** 2
    q /= q.sum(axis=0)
    p = rng.dirichlet(np.full(k, 0.7)).reshape(2, k // 2)
    return q, UncertaintySet(p, 0.1, 2.0)


def _timed(q: np.ndarray, uset: UncertaintySet) -> tuple[float, float]:
    start = time.perf_counter()
    eps, _ = rldp_epsilon(q, uset)
    return time.perf_counter() - start, eps


def _baseline(q: np.ndarray, uset: UncertaintySet) -> tuple[float, float]:
    """The code before: the 64-step bisection over all rows at once."""
    fast, chunk = uncertainty._ball_maximum, ball_search._CHUNK_ENTRIES
    uncertainty._ball_maximum = lambda *a: ball_search.ball_maximum(*a, search="bisection")
    ball_search._CHUNK_ENTRIES = 1 << 62
    try:
        return _timed(q, uset)
    finally:
        uncertainty._ball_maximum, ball_search._CHUNK_ENTRIES = fast, chunk


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    print(f"# load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    q, uset = _case(1000)
    t_new, eps_new = _timed(q, uset)
    # The baseline is the code before: the 64-step bisection over all rows at once.
    t_old, eps_old = _baseline(q, uset)
    print(f"audit_dense_k1000_seconds {t_new:.3g} s")
    print(f"audit_dense_k1000_bisection_seconds {t_old:.3g} s  # the search it replaced, same run")
    print(f"audit_dense_k1000_speedup {t_old / t_new:.3g} x")
    print(f"audit_dense_k1000_epsilon_relative_difference {abs(eps_new - eps_old) / eps_old:.2g} 1")
    if not quick:
        q, uset = _case(4000)
        t_big, _ = _timed(q, uset)
        print(f"audit_dense_k4000_seconds {t_big:.3g} s")
        if "--baseline-4000" in argv:
            t_old, _ = _baseline(q, uset)
            print(f"audit_dense_k4000_bisection_seconds {t_old:.3g} s  # the search it replaced, same run")
            print(f"audit_dense_k4000_speedup {t_old / t_big:.3g} x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
