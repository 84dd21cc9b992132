"""Benchmark: the exact funnel/lift designers (optimal LIP, AORR, optimal LDP w.r.t. a latent S).

Prints one line per figure, ``name value unit``:

* ``lip_17x5_*``: exact optimal ε-LIP [LTS20, Thm 3] and AORR [ZDS23, eq 12] (λ = 0.65) on
  |X| = 17, |S| = 5 (P_SX = normalised uniform draws, as in [ZDS23, Sec 3.1.3]), worst seconds over
  the draws at each ε, and that worst time / the 2 s target (``*_vs_target``, must be ≤ 1).
* ``latent_vs_polyopt_*``: exact optimal LDP w.r.t. a latent S (the cone over U, radius from
  n = 32561, β = 0.05) / exact PolyOpt on the same P̂ and set (S an input), seconds measured in
  this run on Jeffreys draws at the shapes where ``solver="auto"`` runs PolyOpt exactly
  (|S|·|U| ≤ 10). Target ≤ 1.
* ``lip_cg_17x5_*``: optimal LIP/AORR by column generation (:mod:`rldp.aggregator.design.solvers.funnel.lip_cg`)
  against the exact enumeration on the same |X| = 17, |S| = 5 draws, budgets (2λε, 2(1 − λ)ε), λ = 0.5
  (lip) or 0.65 (aorr): summed time CG / exact
  (``*_time_ratio``) and the worst information CG / exact (``*_info_ratio``, target ≥ 0.995), for the
  default (exact) pricing and for heuristic pricing forced.
* ``lip_cg_adult87_*``: Adult, S = relationship an input, U = occupation (X = (S, U), 87 symbols with
  p_x > 0, beyond the exact method): the optimal design's seconds and I(X;Y) (nats) through
  ``design()``, the watchdog's and GRR's I(X;Y) at the same budget, and optimal / GRR (the best family
  designer there: the watchdog merges every symbol, since each reveals S alone).

    .venv/bin/python bench/bench_funnel.py            # ~1 minute
    .venv/bin/python bench/bench_funnel.py --quick    # fewer draws
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rldp.aggregator.design import design, solve_polyopt
from rldp.aggregator.design.solvers.funnel.ldp import latent_polyopt
from rldp.aggregator.design.solvers.funnel.lip import optimal_lip
from rldp.shared.uncertainty import UncertaintySet

N = 32561
LIP_TARGET_SECONDS = 2.0


def emit(name: str, value: float, unit: str) -> None:
    print(f"{name} {value:.6g} {unit}", flush=True)


def lip_section(draws: int) -> None:
    rng = np.random.default_rng(17)
    joints = [rng.random((5, 17)) for _ in range(draws)]
    joints = [j / j.sum() for j in joints]
    for eps in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0):
        for label, lam in (("lip", 0.5), ("aorr", 0.65)):
            worst = 0.0
            for j in joints:
                start = time.perf_counter()
                optimal_lip(j, lam * eps, (1 - lam) * eps)
                worst = max(worst, time.perf_counter() - start)
            emit(f"lip_17x5_{label}_eps{eps:g}_seconds", worst, "s")
            emit(f"lip_17x5_{label}_eps{eps:g}_vs_target", worst / LIP_TARGET_SECONDS, "ratio")


def jeffreys(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    while True:
        p_hat = rng.multinomial(N, rng.dirichlet(np.full(shape[0] * shape[1], 0.5))).reshape(shape) / N
        if np.all(p_hat.sum(axis=1) > 0):
            return p_hat


def latent_section(draws: int) -> None:
    rng = np.random.default_rng(2)
    for shape in ((2, 3), (2, 4), (2, 5), (3, 3), (5, 2)):
        for eps in (0.5, 1.0, 2.0):
            latent = polyopt = 0.0
            for _ in range(draws):
                uset = UncertaintySet.from_confidence(jeffreys(shape, rng), N, 0.05)
                start = time.perf_counter()
                latent_polyopt(uset, eps)
                latent += time.perf_counter() - start
                start = time.perf_counter()
                solve_polyopt(uset.public_distribution, uset.lower_bounds(), eps)
                polyopt += time.perf_counter() - start
            name = f"latent_vs_polyopt_{shape[0]}x{shape[1]}_eps{eps:g}"
            emit(f"{name}_polyopt_seconds", polyopt / draws, "s")
            emit(name, latent / polyopt, "ratio")


def lip_cg_section(draws: int) -> None:
    from rldp.aggregator.design.solvers.funnel.lip_cg import lip_cg

    rng = np.random.default_rng(17)
    joints = [rng.random((5, 17)) for _ in range(draws)]
    joints = [j / j.sum() for j in joints]
    for eps in (0.5, 1.0, 2.0):
        for label, lam in (("lip", 0.5), ("aorr", 0.65)):
            budgets = (2 * lam * eps, 2 * (1 - lam) * eps)
            for pricing in ("auto", "heuristic"):
                t_exact = t_cg = 0.0
                worst = np.inf
                for j in joints:
                    start = time.perf_counter()
                    exact = optimal_lip(j, *budgets, solver="exact")
                    t_exact += time.perf_counter() - start
                    p_x, p_s = j.sum(axis=0), j.sum(axis=1)
                    start = time.perf_counter()
                    res = lip_cg(j / p_x, p_s, p_x, budgets, pricing=pricing)
                    t_cg += time.perf_counter() - start
                    worst = min(worst, res.information / exact.information)
                name = f"lip_cg_17x5_{label}_eps{eps:g}_{'exact_pricing' if pricing == 'auto' else 'heuristic'}"
                emit(f"{name}_time_ratio", t_cg / t_exact, "ratio")
                emit(f"{name}_info_ratio", worst, "ratio")


def adult87_section() -> None:
    from rldp.demo.datasets import adult_distribution

    alph, p, _ = adult_distribution("relationship", "occupation")
    for notion, budget in (
        ("lip", {"epsilon": 1.0}),
        ("lip", {"epsilon": 2.0}),
        ("alip", {"epsilon_lower": 2.0, "epsilon_upper": 1.0}),
    ):
        kwargs = dict(alphabet=alph, public_distribution=p, radius=0.0, notion=notion, **budget)
        tag = "_".join(f"{k.replace('epsilon', 'eps')}{v:g}" for k, v in budget.items())
        start = time.perf_counter()
        doc = design("optimal", **kwargs)
        seconds = time.perf_counter() - start
        info = doc["utility"]["mutual_information"]
        others = {m: design(m, **kwargs)["utility"]["mutual_information"] for m in ("watchdog", "grr")}
        name = f"lip_cg_adult87_{notion}_{tag}"
        emit(f"{name}_seconds", seconds, "s")
        emit(f"{name}_information", info, "nats")
        emit(f"{name}_upper_bound", doc["parameters"]["upper_bound"], "nats")
        emit(f"{name}_watchdog_information", others["watchdog"], "nats")
        emit(f"{name}_grr_information", others["grr"], "nats")
        emit(f"{name}_vs_grr", info / others["grr"], "ratio")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer draws")
    args = parser.parse_args()
    draws = 2 if args.quick else 5
    lip_section(draws)
    latent_section(draws)
    lip_cg_section(draws)
    adult87_section()


if __name__ == "__main__":
    main()
