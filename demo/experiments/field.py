"""``rldp experiment field``: the field loop under attack and over time — the drift watch's false alarms over
every look, its power, what a forger needs, and the pilot's coverage under forgery, at each contamination
budget γ (docs/design.md, "The drift watch under attack"; :mod:`rldp.aggregator.estimate.evidence`).

The mechanism is the drift watch's example: sex/race PolyOpt at ε = 1.5 designed from adult.data.

* **False alarms.** ``collections`` simulated collections (one window, the mechanism's first: level a/2)
  of 50,000 honest reports each, looked at after every 100 (500 looks), from P̂ and from a point on F's
  boundary: the share ever flagged, with its Monte-Carlo standard error √(r(1 − r)/collections).
  Each look is settled exactly: a feasible point of the null gives an upper bound of the statistic, and
  only looks whose bound reaches the threshold are computed (certified) — a look is never skipped.
* **Power.** The first population towards the skewed one (60 % Female|Amer-Indian-Eskimo) whose realised
  ε* is 2 × the claim, and smaller rare-cell drifts: the share of runs flagged within 5,000 and within
  50,000 reports (looks every 100 up to 5,000, every 1,000 beyond).
* **Attacks.** 3,000 honest reports from P̂ in the current window; the forger puts its reports on the
  output that P̂ makes rarest (the one that moves the statistic most). The fewest forged reports that
  raise the alarm; the forged share that takes; whether the issue's attacks (112 forged = 3.6 %, 2,000
  forged) raise it. A label of the next window is never judged (the watch follows the server's clock),
  so there the forger must fill a whole window: at least the minimum of reports judged.
* **Pilot coverage under forgery.** SRR pilots on sex/race at ε = 1 whose reports hold a share γ forged on
  the output that raises the rarest cell's estimate most: the share of pilots whose F holds the honest P,
  built with the budget γ and as if nothing were forged.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rldp.aggregator.design import design
from rldp.aggregator.estimate.evidence import evidence, kt_regret, spent_significance
from rldp.shared.audit import realised_epsilon
from rldp.shared.collection import DEFAULT_CONTAMINATION, DRIFT_MIN_REPORTS
from rldp.shared.divergence import renyi_divergence
from rldp.shared.document import mechanism_matrix, public_distribution, uncertainty_parameters
from rldp.shared.uncertainty import UncertaintySet

from .. import plots
from ..datasets import adult_distribution
from .config import N_ADULT, Config, Experiment, Result
from .field_closest import LOOKS, closest_population
from .field_pilot import pilot_coverage, switch_nmi
from .stats import row as _tidy_row

__all__ = ["EXPERIMENTS", "GAMMAS", "plot_field", "run_field", "table_field"]

NAME = "field"
GAMMAS = (0.0, 0.001, 0.01, 0.05)
ALPHA = 0.05
EPSILON = 1.5


def row(name: str, key: dict[str, Any], stat: str, value: Any, draws: int) -> dict[str, Any]:
    """One tidy row, its value a plain float (numpy scalars would be written as their repr)."""
    return _tidy_row(name, key, stat, float(value), draws)


def _key(panel: str, gamma: float, n: int) -> dict[str, Any]:
    return {"panel": panel, "method": f"gamma={gamma:g}", "n": n, "epsilon": EPSILON, "beta": ALPHA}


def _pilot_row(panel: str, gamma: float, n: int, stat: str, value: float, draws: int) -> dict[str, Any]:
    return row(NAME, _key(panel, gamma, n), stat, value, draws)


def _setup() -> tuple[np.ndarray, np.ndarray, UncertaintySet]:
    alphabet, p_hat, n = adult_distribution("sex", "race")
    doc = design("polyopt", alphabet=alphabet, public_distribution=p_hat, epsilon=EPSILON, n=n or N_ADULT)
    unc = uncertainty_parameters(doc)
    p = public_distribution(doc)
    return mechanism_matrix(doc), p, UncertaintySet(p.reshape(1, -1), unc["radius"], unc["order"])


def _towards(p: np.ndarray, target: np.ndarray, predicate: Any) -> np.ndarray:
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if predicate((1 - mid) * p + mid * target) else (mid, hi)
    return (1 - hi) * p + hi * target


def _skewed(p: np.ndarray, share: float) -> np.ndarray:
    out = p.ravel() * (1 - share)
    out[0] += share
    return out.reshape(p.shape)


def _flagged_at(
    q: np.ndarray, ball: UncertaintySet, pop: np.ndarray, gamma: float, runs: int, looks: list[int], rng: Any
) -> np.ndarray:
    """For each run, the first look (a report count) at which the watch flags it, or 0 (never): all runs
    at once, every look settled exactly (an upper bound at a null point first, the certified value if it
    reaches the threshold)."""
    k = q.shape[0]
    probs = q @ pop.ravel()
    threshold = math.log(1 / spent_significance(ALPHA, 1))
    counts = np.zeros((runs, k))
    first = np.zeros(runs, dtype=int)
    done = 0
    in_null = renyi_divergence(ball.public_distribution.ravel(), pop.ravel(), ball.order) <= ball.radius
    for n in looks:
        counts += rng.multinomial(n - done, probs, size=runs)
        done = n
        live = first == 0
        qhat = counts[live] / n
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = np.where(qhat > 0, qhat * np.log(qhat / probs), 0.0).sum(axis=1)
        maybe = np.flatnonzero(live)[(n * kl - kt_regret(k, n) >= threshold) | (not in_null)]
        for i in maybe:
            proof = evidence(q, counts[i], ball, gamma=gamma, level=ALPHA / 2, start=pop.ravel())
            if proof.rejected:
                first[i] = n
    return first


def _false_alarms(q, p, ball, cfg: Config, rng) -> list[dict[str, Any]]:
    runs = 200 if cfg.quick else 1000
    boundary = _towards(p, _skewed(p, 0.6), lambda x: renyi_divergence(p.ravel(), x.ravel(), 2.0) > ball.radius)
    boundary = (1 - 1e-9) * boundary + 1e-9 * p
    rows = []
    for where, pop in (("P̂", p), ("F's boundary", boundary)):
        for gamma in (0.0, 0.01):
            first = _flagged_at(q, ball, pop, gamma, runs, list(range(100, 50_001, 100)), rng)
            rate = float(np.mean(first > 0))
            key = _key(f"false alarms from {where}", gamma, 50_000)
            rows += [
                row(NAME, key, "rate", rate, runs),
                row(NAME, key, "rate_se", math.sqrt(max(rate * (1 - rate), 1 / runs) / runs), runs),
            ]
    return rows


def _power(q, p, ball, cfg: Config, rng) -> list[dict[str, Any]]:
    runs = 20 if cfg.quick else 100
    twice = _towards(p, _skewed(p, 0.6), lambda x: realised_epsilon(q, x) >= 2 * EPSILON)
    looks = [*range(500, 5_001, 500), *range(10_000, 50_001, 5_000)]  # flagged within: at or before a look
    rows = []
    onehalf = _towards(p, _skewed(p, 0.6), lambda x: realised_epsilon(q, x) >= 1.5 * EPSILON)
    for label, pop in (("ε* = 2 × claim", twice), ("ε* = 1.5 × claim", onehalf)):
        for gamma in GAMMAS:
            first = _flagged_at(q, ball, pop, gamma, runs, looks, rng)
            rows += _power_rows(first, _key(f"power against {label}", gamma, 0), (5_000, 50_000))
    return rows


def _power_rows(first: np.ndarray, key: dict[str, Any], withins: tuple[int, ...]) -> list[dict[str, Any]]:
    """The share of runs flagged at or before each of ``withins`` reports, and the reports it takes to flag 95 %
    of them (−1: not within the last look); ``first``: each run's first flagged look, 0 for never."""
    runs = first.size
    rows = [
        row(NAME, {**key, "n": within}, "flagged", float(np.mean((first > 0) & (first <= within))), runs)
        for within in withins
    ]
    hit = np.sort(first[first > 0])
    need = int(hit[math.ceil(0.95 * runs) - 1]) if hit.size >= math.ceil(0.95 * runs) else -1
    return [*rows, row(NAME, key, "reports_for_95pc", need, runs)]


def _least_detectable(q, p, ball, cfg: Config, rng) -> list[dict[str, Any]]:
    """Power against the closest population with ε* = 2 × claim (:mod:`.field_closest`), at γ = 0 and the
    default γ; looks up to 10⁶ reports."""
    runs = 10 if cfg.quick else 40
    towards = _towards(p, _skewed(p, 0.6), lambda x: realised_epsilon(q, x) >= 2 * EPSILON)
    pop, distance = closest_population(q, p, ball, 2 * EPSILON, [towards])
    key = _key("power against the closest ε* = 2 × claim", 0.0, 0)
    rows = [
        row(NAME, key, "divergence_from_p_hat", distance, 1),
        row(NAME, key, "divergence_of_the_skewed_one", renyi_divergence(p.ravel(), towards.ravel(), ball.order), 1),
        row(NAME, key, "realised_epsilon", realised_epsilon(q, pop), 1),
    ]
    for gamma in (0.0, DEFAULT_CONTAMINATION):
        first = _flagged_at(q, ball, pop, gamma, runs, LOOKS, rng)
        key = _key("power against the closest ε* = 2 × claim", gamma, 0)
        rows += _power_rows(first, key, (5_000, 50_000, 200_000, 1_000_000))
    return rows


def _attacks(q, p, ball) -> list[dict[str, Any]]:
    rows = []
    for window in (3_000, 100_000):
        rows += _attacks_on(q, p, ball, window)
    return rows


def _attacks_on(q, p, ball, window: int) -> list[dict[str, Any]]:
    honest = np.round(q @ p.ravel() * window)  # the expected counts of the window's honest reports
    rare = int(np.argmin(q @ p.ravel()))
    level = spent_significance(ALPHA, 1)
    rows = []
    for gamma in GAMMAS:

        def flags(forged: int, g: float = gamma) -> bool:
            counts = honest.copy()
            counts[rare] += forged
            return evidence(q, counts, ball, gamma=g, level=level, start=p.ravel()).rejected

        lo, hi = 0, 1
        while not flags(hi) and hi < 1_000_000:
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if flags(mid) else (mid, hi)
        key = _key(f"attacks on a window of {window:,} honest reports", gamma, 0)
        rows += [
            row(NAME, key, "forged_needed", hi, 1),
            row(NAME, key, "forged_share_needed", hi / (hi + honest.sum()), 1),
        ]
        if window == 3_000:  # the attacks
            rows += [
                row(NAME, key, "flags_112_forged", float(flags(112)), 1),
                row(NAME, key, "flags_2000_forged", float(flags(2000)), 1),
                row(NAME, key, "next_window_forged_needed", DRIFT_MIN_REPORTS, 1),
            ]
    return rows


def run_field(cfg: Config) -> Result:
    rng = np.random.default_rng(cfg.seed)
    q, p, ball = _setup()
    rows = [*_false_alarms(q, p, ball, cfg, rng), *_power(q, p, ball, cfg, rng), *_attacks(q, p, ball)]
    rows += pilot_coverage(cfg, rng, GAMMAS, ALPHA, _pilot_row)
    rows += switch_nmi(cfg, rng, GAMMAS, ALPHA, _pilot_row)
    rows += _least_detectable(q, p, ball, cfg, np.random.default_rng([cfg.seed, 2]))  # its own stream: added last
    panels = list(dict.fromkeys(r["panel"] for r in rows))
    return Result(
        name=NAME,
        rows=rows,
        records=[],
        panels=panels,
        panel_titles={x: x for x in panels},
        methods=[f"gamma={g:g}" for g in GAMMAS],
        settings={"alpha": ALPHA, "epsilon": EPSILON, "min_reports": DRIFT_MIN_REPORTS, "gammas": list(GAMMAS)},
        notes=[
            "Rates with their Monte-Carlo standard error; a look after every 100 reports counts every look.",
            f"A window is judged once it holds {DRIFT_MIN_REPORTS} reports; a label ahead of the server's clock "
            "never decides, so a forger using it must fill a whole window (next_window_forged_needed).",
        ],
    )


def table_field(result: Result) -> str:
    """One table per panel: a row per γ, a column per statistic (and report count)."""
    parts = []
    for panel in result.panels:
        rows = [r for r in result.rows if r["panel"] == panel]
        columns = list(dict.fromkeys(f"{r['statistic']} @ {r['n']:,}" if r["n"] else r["statistic"] for r in rows))
        lines = [f"### {panel}", "", "| γ | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
        for method in result.methods:
            cells = {
                (f"{r['statistic']} @ {r['n']:,}" if r["n"] else r["statistic"]): r["value"]
                for r in rows
                if r["method"] == method
            }
            if cells:
                values = [_cell(cells.get(c)) for c in columns]
                lines.append(f"| {method.split('=')[1]} | " + " | ".join(values) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n\n" + "\n".join(result.notes) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    v = float(value)
    return f"{int(v):,}" if v.is_integer() and abs(v) >= 1 else f"{v:.4g}"


def _switch_nmi(ax: Any, result: Result, n1: int, colour: str, xs: list[int]) -> None:
    """The "NMI after the switch" means (± 2 SE) of each design the panel compares, for pilots of n1 reports."""
    switch = {
        (r["method"], r["statistic"]): r["value"]
        for r in result.rows
        if r["panel"] == "NMI after the switch" and r["n"] == n1
    }
    for stat, style in (("nmi", "-s"), ("nmi_centre", "--d"), ("nmi_ball_only", ":^")):
        means = [switch.get((m, stat), math.nan) for m in result.methods]
        errors = [2 * switch.get((m, f"{stat}_se"), 0.0) for m in result.methods]
        ax.errorbar(xs, means, yerr=errors, fmt=style, color=colour, capsize=3)


def plot_field(result: Result, out: Path) -> Path:
    """False alarms, pilot coverage and NMI after the switch against γ, rates with ±2 Monte-Carlo errors."""
    plt = plots.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(17.0, 4.8))
    handles = {}
    gammas = [float(m.split("=")[1]) for m in result.methods]
    xs = list(range(len(gammas)))
    false_alarms = [x for x in result.panels if x.startswith("false alarms")]
    for shift, panel, colour in zip((-0.06, 0.06), false_alarms, ("tab:blue", "tab:orange")):
        rate = {r["method"]: r for r in result.rows if r["panel"] == panel and r["statistic"] == "rate"}
        se = {r["method"]: r["value"] for r in result.rows if r["panel"] == panel and r["statistic"] == "rate_se"}
        ms = [m for m in result.methods if m in rate]
        pos = [result.methods.index(m) + shift for m in ms]
        handles[panel] = axes[0].errorbar(
            pos, [rate[m]["value"] for m in ms], yerr=[2 * se[m] for m in ms], fmt="o", color=colour, capsize=3
        )
        for x, m in zip(pos, ms, strict=True):
            hits = round(rate[m]["value"] * rate[m]["draws"])
            axes[0].annotate(
                f"{hits}/{rate[m]['draws']}",
                (x, rate[m]["value"]),
                textcoords="offset points",
                xytext=(0, 8 if shift < 0 else -14),
                ha="center",
                fontsize=8,
                color=colour,
            )
    handles[f"a = {ALPHA:g} (the level over every look)"] = axes[0].axhline(ALPHA, color="grey", linestyle="--")
    axes[0].set_ylim(-0.01, 0.08)
    axes[0].set_ylabel("share of collections ever flagged")
    axes[0].set_title("False alarms: 50,000 honest reports, a look every 100", fontsize=10)
    for n1, colour in ((10_000, "tab:blue"), (100_000, "tab:orange"), (1_000_000, "tab:green")):
        for stat, style in (("coverage", "-o"), ("coverage_if_ignored", ":x")):
            ys = {
                r["method"]: r["value"]
                for r in result.rows
                if r["panel"] == "pilot coverage under forgery" and r["n"] == n1 and r["statistic"] == stat
            }
            label = f"n₁ = {n1:,}: " + ("F with budget γ" if stat == "coverage" else "F as if none were forged")
            handles[label] = axes[1].plot(xs, [ys.get(m, math.nan) for m in result.methods], style, color=colour)[0]
        _switch_nmi(axes[2], result, n1, colour, xs)
    # The coverage panel starts at 10,000 pilot reports; the NMI panel also has the smallest pilot.
    _switch_nmi(axes[2], result, 1_000, "tab:purple", xs)
    handles["n₁ = 1,000 (NMI only)"] = axes[2].plot([], [], "-s", color="tab:purple")[0]
    handles["NMI: ball ∩ box, tuned to the estimate (mean ± 2 SE)"] = axes[2].plot([], [], "-s", color="grey")[0]
    handles["NMI: ball ∩ box, tuned to its centre"] = axes[2].plot([], [], "--d", color="grey")[0]
    handles["NMI: the ball alone (v4)"] = axes[2].plot([], [], ":^", color="grey")[0]
    handles[f"1 − β = {1 - ALPHA:g}"] = axes[1].axhline(1 - ALPHA, color="grey", linestyle="-.")
    axes[1].set_ylim(-0.03, 1.05)
    axes[1].set_ylabel("share of pilots whose F holds the honest P")
    axes[1].set_title("Pilot coverage, a share γ forged on the worst output", fontsize=10)
    axes[2].set_ylabel("NMI at the true P after the switch")
    axes[2].set_title("The price: NMI after the switch (same colours: n₁)", fontsize=10)
    for ax in axes:
        ax.set_xticks(xs, [f"γ = {g:g}" for g in gammas])
    path = out / f"{result.name}.png"
    return plots.finish(plt, fig, handles, "The field loop under attack (sex/race on Adult)", path, legend_cols=3)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "field",
        "rldp (docs/design.md, The drift watch under attack)",
        "false alarms over every look, power, forged reports needed, pilot coverage under forgery, per γ",
        run_field,
        plot_field,
        table_field,
        solver="auto",
    ),
)
