"""The experiments of [ZDS23] (lift, ALIP, the watchdog family): ``lift-fig1`` … ``lift-fig12``.

* ``lift-fig1`` — [ZDS23, Fig 1]: histograms of log Ψ(x) and log Λ(x) (Y = X) over random P_SX,
  |X| = 17, |S| = 5 (each P_SX: uniform entries normalised, as the paper's MATLAB ``rand``).
* ``lift-fig2``/``3`` — the watchdog with complete merging [ZDS23, eqs 6–8], synthetic / Adult, under
  ε-LDP w.r.t. S and (λε, (1 − λ)ε)-ALIP, λ ∈ {0.35, 0.5, 0.65}: the paper's (unenforced) watchdog and
  rldp's (grown until the exact audit passes).
* ``lift-fig4``/``5`` — AORR [ZDS23, eq 12] (optimal ALIP: vertices + one LP), synthetic / Adult.
* ``lift-fig6``/``7`` — subset merging [ZDS23, Alg 1], paper's and audit-enforced, synthetic / Adult.
* ``lift-fig8``/``9`` — AORR vs subset RR [ZDS23, Alg 2] vs subset merging at λ = 0.65, with run time.
* ``lift-fig10`` — subset RR vs subset merging on a large alphabet (|X| = 200, |S| = 15, λ = 0.5,
  ε ∈ {1, 1.25, …, 8}), with run time [ZDS23, Fig 10].
* ``lift-fig11``/``12`` — subset merging under ALIP vs ℓ1- and χ²-privacy (lift-based + lift-inverse
  bounds, [ZDS23, Sec 6.2]), λ ∈ {0.5, 0.65}, synthetic / Adult.
* ``lift-fig13`` — subset merging under ALIP vs α-lift privacy, Λ_α ≤ e^{ε_u} and Ψ_α ≤ e^{ε_l}
  (α ∈ {2, 10, 100}, λ = 0.5, [ZDS23, Sec 6.2, Fig 13]), synthetic.

Adult: S = relationship, X = occupation ('?' kept as a value: |S| = 6, |X| = 15; the paper states
|S| = 5). Statistics per line and ε: NMI = I(X;Y)/H(X), the audited log max_y Λ(y) and log min_y Ψ(y),
the fraction of designs whose exact audit (the product's, over F for the robust lines) meets the budget, and seconds per design (means over the
draws on synthetic data, with standard deviations).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignError, SolverError
from rldp.aggregator.design.solvers.funnel.claim import symbol_lifts
from rldp.shared.errors import one_line
from rldp.shared.uncertainty import UncertaintySet

from ..datasets import adult_distribution
from . import product
from .config import BETA, N_ADULT, ORDER, Config, Result
from .stats import row
from .watchdog import EXPERIMENT_NOTIONS, Budget, epsilon_grid, groups_matrix, paper_subset_rr, subset_merging_groups

__all__ = ["SYNTHETIC_SHAPE", "ADULT_PAIR", "METHODS", "Sweep", "SWEEPS", "random_joint", "run_sweep", "run_fig1"]

SYNTHETIC_SHAPE = (5, 17)  # (|S|, |X|) of [ZDS23, Sec 3.1.3]
ADULT_PAIR = ("relationship", "occupation")


def random_joint(rng: np.random.Generator, shape: tuple[int, int] = SYNTHETIC_SHAPE) -> np.ndarray:
    """A P_SX with i.i.d. uniform entries, normalised (MATLAB's ``rand`` in [ZDS23, Sec 3.1.3])."""
    p = rng.random(shape)
    out: np.ndarray = p / p.sum()
    return out


def _merging(enforce: bool) -> Callable[[np.ndarray, Budget], np.ndarray]:
    def design(joint: np.ndarray, budget: Budget) -> np.ndarray:
        return groups_matrix(subset_merging_groups(joint, budget, enforce=enforce), joint.shape[1])

    return design


# The experiment's own designs (:mod:`.watchdog`), for what the product has no designer for: subset
# merging under the ℓ1/χ²/α-lift budgets (lift-fig11 to 13).
_OWN: dict[str, Callable[[np.ndarray, Budget], np.ndarray]] = {
    "subset-merging-paper": _merging(False),
    "subset-merging": _merging(True),
}

# method -> legend label; "-robust" methods are designed over the 95 % confidence set of adult.data
METHODS: dict[str, str] = {
    "watchdog-paper": "watchdog, complete merging [ZDS23, eqs 6–8] (unenforced)",
    "watchdog": "watchdog grown until the exact audit passes (rldp)",
    "subset-merging-paper": "subset merging [ZDS23, Alg 1] (unenforced)",
    "subset-merging": "subset merging grown until the audit passes (rldp)",
    "aorr": "AORR / optimal [ZDS23, eq 12], [LTS20, Thms 2–3] (rldp)",
    "subset-rr-paper": "subset RR [ZDS23, Alg 2] (unenforced: the experiment's, from the product's parts)",
    "subset-rr": "subset RR, enforced (rldp)",
    "aorr-robust": "optimal, robust over the 95 % set (rldp: via LDP w.r.t. S over F)",
    "watchdog-robust": "watchdog enforced over the 95 % set (rldp)",
}


def _design(
    method: str, joint: np.ndarray, budget: Budget, uset: UncertaintySet | None, time_budget: float = 60.0
) -> np.ndarray:
    if method.endswith("-robust"):
        return product.design(method.removesuffix("-robust"), joint, budget, uset, time_budget)
    if method == "subset-rr-paper":
        return paper_subset_rr(product.claim(joint, budget))
    if budget.notion in EXPERIMENT_NOTIONS:
        if method not in _OWN:
            raise ValueError(
                f"no design {method!r} under the {budget.notion} budget (the experiment has {', '.join(_OWN)})"
            )
        return _OWN[method](joint, budget)
    return product.design(method, joint, budget, time_budget=time_budget)


PAPER_METHODS = ("watchdog-paper", "subset-merging-paper", "aorr", "subset-rr-paper")  # drawn solid


@dataclass(frozen=True)
class Sweep:
    """One privacy–utility figure: designs × budgets × ε on synthetic or Adult data."""

    name: str
    source: str
    summary: str
    data: str  # "synthetic" or "adult"
    methods: tuple[str, ...]
    budgets: tuple[tuple[str, float | None], ...]  # (notion, λ or None for LDP)
    draws: int  # synthetic draws of the full run
    quick_draws: int = 3
    shape: tuple[int, int] = SYNTHETIC_SHAPE  # (|S|, |X|) of the synthetic draws
    epsilons: tuple[float, ...] | None = None  # the full run's ε grid (default: epsilon_grid)


def _budget_label(notion: str, lam: float | None) -> str:
    names = {"ldp": "ε-LDP w.r.t. S", "alip": "ALIP", "l1": "ℓ1-privacy", "chi2": "χ²-privacy"}
    name = f"α-lift privacy α={notion[5:]}" if notion.startswith("alpha") else names[notion]
    return name if lam is None else f"{name} λ={lam:g}"


def _budget(notion: str, lam: float | None, eps: float) -> Budget:
    """``notion`` is ldp, alip, l1, chi2 or alphaK (α-lift privacy of order K, [ZDS23, Sec 6.2])."""
    if lam is None:
        return Budget("ldp", eps, eps)
    if notion.startswith("alpha"):
        return Budget.split(eps, lam, "alpha", float(notion[5:]))
    return Budget.split(eps, lam, notion)


def _data(sweep: Sweep, cfg: Config) -> tuple[list[np.ndarray], str]:
    if sweep.data == "adult":
        _, p, _ = adult_distribution(*ADULT_PAIR)
        return [p], f"Adult: S = {ADULT_PAIR[0]} ({p.shape[0]}), X = {ADULT_PAIR[1]} ({p.shape[1]})"
    draws = cfg.draws or (sweep.quick_draws if cfg.quick else sweep.draws)
    rng = np.random.default_rng([cfg.seed, *sweep.shape])
    joints = [random_joint(rng, sweep.shape) for _ in range(draws)]
    return joints, f"synthetic: |S| = {sweep.shape[0]}, |X| = {sweep.shape[1]}, {draws} random P_SX"


def _measure(q: np.ndarray, joint: np.ndarray, budget: Budget, uset: UncertaintySet | None) -> dict[str, float]:
    """The product's NMI and exact audit of the lift at P̂, and whether the claim's audit passes (the product's;
    for the ℓ1/χ²/α-lift budgets, which have no product notion, the experiment's check on the product's measures)."""
    eps_l, eps_u = product.audited(q, joint)
    ok = budget.audit(q, joint) if budget.notion in EXPERIMENT_NOTIONS else product.passes(q, joint, budget, uset)
    return {"nmi": product.released_nmi(q, joint), "log_max_lift": eps_u, "log_min_lift": -eps_l, "passes": float(ok)}


def run_sweep(sweep: Sweep, cfg: Config) -> Result:
    """Every method × budget × ε on every P_SX; mean (and sd) of each statistic."""
    joints, title = _data(sweep, cfg)
    robust_sets = {id(j): UncertaintySet.from_confidence(j, N_ADULT, BETA, ORDER) for j in joints}
    grid = cfg.epsilons or (sweep.epsilons if sweep.epsilons and not cfg.quick else epsilon_grid(cfg.quick))
    budgets = [b for b in sweep.budgets if not (cfg.quick and b[1] == 0.35)]
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    failed: dict[str, float] = {}
    shape = {"n_sensitive": joints[0].shape[0], "n_released": joints[0].shape[1]}
    for notion, lam in budgets:
        panel = _budget_label(notion, lam)
        for method in sweep.methods:
            if method.startswith("subset-rr") and notion != "alip":
                continue
            for eps in grid:
                budget = _budget(notion, lam, eps)
                stats: dict[str, list[float]] = {}
                if any(k.startswith(f"{method} under {panel}:") for k in failed):
                    continue
                for joint in joints:
                    start = time.perf_counter()
                    uset = robust_sets[id(joint)] if method.endswith("-robust") else None
                    try:
                        q = _design(method, joint, budget, uset, cfg.time_budget)
                    except (DesignError, SolverError) as exc:
                        failed.setdefault(f"{method} under {panel}: {one_line(exc)}", eps)
                        break
                    seconds = time.perf_counter() - start
                    for k, v in {**_measure(q, joint, budget, uset), "seconds": seconds}.items():
                        stats.setdefault(k, []).append(v)
                if not stats:
                    continue
                key = {"panel": panel, "method": method, "epsilon": eps, **shape}
                for k, values in stats.items():
                    arr = np.asarray(values)
                    rows.append(row(sweep.name, key, k, float(arr.mean()), len(arr)))
                    if len(arr) > 1:
                        rows.append(row(sweep.name, key, f"{k}_sd", float(arr.std(ddof=1)), len(arr)))
                if min(stats["passes"]) < 1.0:
                    notes.append(f"{method} under {panel} at ε = {eps:g}: the exact audit fails on "
                                 f"{100 * (1 - float(np.mean(stats['passes']))):.0f} % of the P_SX")  # fmt: skip
    notes += [f"omitted from ε = {eps:g} on: {what}" for what, eps in failed.items()]
    panels = [_budget_label(n, lam) for n, lam in budgets]
    settings = {"data": title, "epsilons": list(grid), "draws": len(joints), "budgets": panels,
                "lambda": "ε_l = λε, ε_u = (1 − λ)ε"}  # fmt: skip
    return Result(sweep.name, rows, [], panels, {p: p for p in panels}, list(sweep.methods), settings, notes)


_ALL = (("ldp", None), ("alip", 0.35), ("alip", 0.5), ("alip", 0.65))
_ALIP = (("alip", 0.35), ("alip", 0.5), ("alip", 0.65))
_MEASURES = (("alip", 0.5), ("l1", 0.5), ("l1", 0.65), ("chi2", 0.5), ("chi2", 0.65))
_WD, _SM = ("watchdog-paper", "watchdog"), ("subset-merging-paper", "subset-merging")
_ALPHA = (("alip", 0.5), ("alpha2", 0.5), ("alpha10", 0.5), ("alpha100", 0.5))
_LARGE = ("subset-rr-paper", "subset-rr", "subset-merging-paper", "subset-merging")
_CMP = ("aorr", "subset-rr-paper", "subset-rr", "subset-merging-paper", "subset-merging")

SWEEPS: tuple[Sweep, ...] = (
    Sweep("lift-fig2", "[ZDS23, Fig 2]", "watchdog (complete merging) under LDP and ALIP, synthetic", "synthetic",
          _WD, _ALL, 1000),
    Sweep("lift-fig3", "[ZDS23, Fig 3]", "watchdog (complete merging) under LDP and ALIP, Adult", "adult",
          (*_WD, "watchdog-robust"), _ALL, 1),
    Sweep("lift-fig4", "[ZDS23, Fig 4]", "AORR (optimal ALIP) and optimal LDP w.r.t. S, synthetic", "synthetic",
          ("aorr",), _ALL, 5),
    Sweep("lift-fig5", "[ZDS23, Fig 5]", "AORR (optimal ALIP) and optimal LDP w.r.t. S, Adult", "adult",
          ("aorr", "aorr-robust"), _ALL, 1),
    Sweep("lift-fig6", "[ZDS23, Fig 6]", "subset merging under LDP and ALIP, synthetic", "synthetic", _SM, _ALL, 300),
    Sweep("lift-fig7", "[ZDS23, Fig 7]", "subset merging under LDP and ALIP, Adult", "adult", _SM, _ALL, 1),
    Sweep("lift-fig8", "[ZDS23, Fig 8]", "AORR vs subset RR vs subset merging at λ = 0.65, synthetic", "synthetic",
          _CMP, (("alip", 0.65),), 6),
    Sweep("lift-fig9", "[ZDS23, Fig 9]", "AORR vs subset RR vs subset merging at λ = 0.65, Adult", "adult",
          _CMP, (("alip", 0.65),), 1),
    Sweep("lift-fig10", "[ZDS23, Fig 10]", "subset RR vs subset merging on |X| = 200, |S| = 15, λ = 0.5, synthetic",
          "synthetic", _LARGE, (("alip", 0.5),), 10, 1, (15, 200), tuple(1.0 + 0.25 * k for k in range(29))),
    Sweep("lift-fig11", "[ZDS23, Fig 11]", "subset merging under ALIP vs ℓ1- and χ²-privacy, synthetic",
          "synthetic", _SM, _MEASURES, 100),
    Sweep("lift-fig12", "[ZDS23, Fig 12]", "subset merging under ALIP vs ℓ1- and χ²-privacy, Adult", "adult",
          _SM, _MEASURES, 1),
    Sweep("lift-fig13", "[ZDS23, Fig 13]", "subset merging under ALIP vs α-lift privacy (α = 2, 10, 100), synthetic",
          "synthetic", _SM, _ALPHA, 100),
)  # fmt: skip


# ----------------------------------------------------------------------------- lift-fig1

FIG1_BINS = np.linspace(-13.0, 2.0, 61)  # log-lift bins (nats), 0.25 wide


def run_fig1(cfg: Config) -> Result:
    """``lift-fig1``: histograms of log Ψ(x) and log Λ(x) over random P_SX (Y = X), [ZDS23, Fig 1]."""
    name = "lift-fig1"
    draws = cfg.draws or (50 if cfg.quick else 1000)
    rng = np.random.default_rng([cfg.seed, *SYNTHETIC_SHAPE])
    psi, lam = [], []
    for _ in range(draws):
        big, small = symbol_lifts(random_joint(rng))  # the product's (Λ(x), Ψ(x)) of Y = X
        psi.append(np.log(small))
        lam.append(np.log(big))
    values = {"log_min_lift": np.concatenate(psi), "log_max_lift": np.concatenate(lam)}
    rows: list[dict[str, Any]] = []
    shape = {"n_sensitive": SYNTHETIC_SHAPE[0], "n_released": SYNTHETIC_SHAPE[1]}
    for method, v in values.items():
        key = {"panel": "histogram", "method": method, **shape}
        for stat, x in (("min", v.min()), ("max", v.max()), ("mean", v.mean())):
            rows.append(row(name, key, stat, float(x), draws))
        counts, _ = np.histogram(v, bins=FIG1_BINS)
        for lo, count in zip(FIG1_BINS[:-1], counts):
            rows.append(row(name, dict(key, epsilon=float(lo)), "fraction", float(count) / len(v), draws))
    settings = {"draws": draws, "shape": list(SYNTHETIC_SHAPE), "bins": [float(FIG1_BINS[0]), float(FIG1_BINS[-1]), 0.25],
                "epsilons": [], "note": "the epsilon column holds each bin's lower edge (nats)"}  # fmt: skip
    notes = [
        f"log Ψ ranges over [{values['log_min_lift'].min():.2f}, {values['log_min_lift'].max():.2f}] and "
        f"log Λ over [{values['log_max_lift'].min():.2f}, {values['log_max_lift'].max():.2f}] "
        "(the paper: [−12, −0.06] and [0.02, 1.64])"
    ]
    title = {"histogram": f"log-lifts of {draws} random P_SX, |X| = 17, |S| = 5"}
    return Result(name, rows, [], ["histogram"], title, list(values), settings, notes)
