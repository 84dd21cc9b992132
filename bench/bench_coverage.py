"""Coverage of the estimate's 95 % intervals for every shipped kind of design.

Set-up: Adult sex × race (10 cells; Male|Other has p = 0.0055). P̂ is the adult.data distribution
(32,561 rows, β = 0.05), each design is made from it at ε = 1, and the users follow the adult.test
distribution P. With users i.i.d. from P the report counts of one collection are exactly
Multinomial(n, Q·P), so R collections are R count vectors drawn at once (no per-user
simulation). Each is estimated by ``estimate_distribution(..., method="auto")`` with the public
prior, as the service does. A cell is covered when P_x lies in its interval; an interval the
estimate withholds (``Estimate.withheld``) is counted as neither covered nor missed, and the
share of withheld intervals is printed too. A design with no identified cell (rank-deficient Q) gets
partial-identification bounds for every cell, whose coverage is bounded below by how often Q·P lies in
the box they are computed from (``..._bounds_n<n>_worst_at_least``; delta and bootstrap alike).

Lines ``name value unit`` (as every bench): ``coverage_<design>_<interval>_n<n>_worst`` (the
worst cell's coverage), ``..._worst_se`` (its Monte-Carlo standard error √(c(1−c)/R)),
``..._worst_cell``, ``..._withheld`` (share of withheld cell intervals) and
``..._median_width`` (median width over cells and collections).

Run: python bench/bench_coverage.py [--quick] [--designs grr,polyopt,...] [--n 1000,3000,10000]
(full: R = 2,000 collections for delta intervals, 1,000 for bootstrap; --quick: 400 / 200).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

from rldp.aggregator.design import design
from rldp.aggregator.estimate import estimate_distribution
from rldp.demo.datasets import adult_distribution
from rldp.shared.document import mechanism_matrix

#: design name → (method, notion): the recommended PolyOpt, the baseline GRR, IR calibrated to the
#: exact audit, and designs of the funnel notion ε-LDP w.r.t. S (the optimum, GRR^α, CR^α).
DESIGNS: dict[str, tuple[str, str]] = {
    "grr": ("grr", "rldp"),
    "polyopt": ("polyopt", "rldp"),
    "ir-calibrated": ("ir-calibrated", "rldp"),  # rank 5 of 10: half the cells get partial-identification bounds
    "ldp-optimal": ("optimal", "ldp"),  # here the same Q as polyopt
    "ldp-grr": ("grr", "ldp"),
    "ldp-cr": ("cr", "ldp"),  # rank 5
}
EPSILON = 1.0


def setting() -> tuple[np.ndarray, Callable[[str], np.ndarray], list[str]]:
    """(true P of adult.test, flattened; design name → Q; cell labels)."""
    alphabet, p_hat, n_public = adult_distribution("sex", "race", "data")
    test_alphabet, p_test, _ = adult_distribution("sex", "race", "test")
    if test_alphabet.shape != alphabet.shape or [a.values for a in test_alphabet.joint_attributes] != [
        a.values for a in alphabet.joint_attributes
    ]:
        raise SystemExit("adult.test has other sex/race values than adult.data")
    labels = [f"{s}|{u}" for s in alphabet.sensitive.values for u in alphabet.released[0].values]

    def matrix(name: str) -> np.ndarray:
        method, notion = DESIGNS[name]
        doc = design(method, alphabet=alphabet, public_distribution=p_hat, epsilon=EPSILON, n=n_public, notion=notion)
        return mechanism_matrix(doc)

    return p_test.ravel(), matrix, labels


def coverage(
    q: np.ndarray,
    p: np.ndarray,
    prior: np.ndarray,
    n: int,
    reps: int,
    interval: str,
    seed: int,
    n_bootstrap: int = 300,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coverage per cell, share withheld per cell, interval widths (reps, cells)) of R collections."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, q @ p, size=reps)
    hit = np.zeros((reps, p.size))
    held = np.zeros((reps, p.size), dtype=bool)
    width = np.full((reps, p.size), np.nan)
    shape = (1, p.size)
    for r, c in enumerate(counts):
        est = estimate_distribution(
            q, c, shape, prior=prior.reshape(shape), interval=interval, rng=rng, n_bootstrap=n_bootstrap
        )
        low, high = est.ci95_low.ravel(), est.ci95_high.ravel()
        flag = getattr(est, "withheld", None)
        withheld = np.zeros(p.size, dtype=bool) if flag is None else np.asarray(flag).ravel()
        held[r] = withheld
        hit[r] = (low <= p) & (p <= high)
        width[r] = np.where(withheld, np.nan, high - low)
    shown = (~held).sum(axis=0)
    cover = np.where(shown > 0, (hit * ~held).sum(axis=0) / np.maximum(shown, 1), np.nan)
    return cover, held.mean(axis=0), width


def _baseline() -> None:
    """Patch out the score intervals and the withholding (estimate/score.py), for the before figures."""
    from rldp.aggregator.estimate import intervals

    def nothing(*args: object, **kwargs: object) -> tuple[np.ndarray, np.ndarray]:
        k = np.shape(args[0])[0]  # Q⁺ or the weights: one row per interval
        return np.full(k, np.nan), np.full(k, np.nan)

    intervals.score_cells = nothing  # fmin / fmax ignore NaN: the Wald intervals alone
    intervals.score_bounds = nothing
    intervals.MIN_COUNT = -1.0  # nothing withheld


def box_coverage(q: np.ndarray, p: np.ndarray, n: int, reps: int, seed: int) -> float:
    """P(Q·P ∈ C) over R collections, C the estimate's simultaneous Clopper–Pearson box for P_Y: a lower
    bound on the coverage of every partial-identification interval (P is feasible whenever Q·P ∈ C), for
    designs with no identified cell, whose two linear programs per cell and collection cost minutes."""
    from rldp.aggregator.estimate.intervals import clopper_pearson_box

    rng = np.random.default_rng(seed)
    pi = q @ p
    inside = 0
    for c in rng.multinomial(n, pi, size=reps):
        lo, hi = clopper_pearson_box(c, c / n)  # c/n lies in every Clopper–Pearson interval: no widening
        inside += bool(np.all((lo <= pi) & (pi <= hi)))
    return inside / reps


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--n", default="1000,3000,10000")
    ap.add_argument("--intervals", default="delta,bootstrap")
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument(
        "--baseline",
        action="store_true",
        help="the intervals before the score intervals: none joined, nothing withheld",
    )
    args = ap.parse_args(argv)
    if args.baseline:
        _baseline()
    reps = {"delta": 400, "bootstrap": 200} if args.quick else {"delta": 2000, "bootstrap": 1000}
    p, matrix, labels = setting()
    _, p_hat, _ = adult_distribution("sex", "race", "data")
    for name in args.designs.split(","):
        q = matrix(name)
        identified = estimate_distribution(q, np.ones(q.shape[0]), (1, p.size)).identified(np.eye(p.size))
        for n in (int(v) for v in args.n.split(",")):
            if not identified.any():  # every cell's interval is the partial-identification bound
                c, r = box_coverage(q, p, n, reps["delta"], args.seed + n), reps["delta"]
                print(f"coverage_{name}_bounds_n{n}_worst_at_least {c:.4f} share")
                print(f"coverage_{name}_bounds_n{n}_worst_se {np.sqrt(c * (1 - c) / r):.4f} share", flush=True)
                continue
            for interval in args.intervals.split(","):
                start = time.perf_counter()
                cover, held, width = coverage(q, p, p_hat.ravel(), n, reps[interval], interval, args.seed + n)
                k = int(np.nanargmin(cover))
                c, r = float(cover[k]), reps[interval]
                key = f"coverage_{name}_{interval}_n{n}"
                print(f"{key}_worst {c:.4f} share")
                print(f"{key}_worst_se {np.sqrt(c * (1 - c) / r):.4f} share")
                print(f"{key}_worst_cell {labels[k]} cell")
                print(f"{key}_withheld {float(held.mean()):.4f} share")
                print(f"{key}_median_width {float(np.nanmedian(width)):.5f} probability")
                print(f"{key}_seconds {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
