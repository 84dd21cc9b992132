"""``rldp experiment pilot``: P̂ from a private pilot — coverage of its confidence set and utility.

No paper has this experiment: it is the evidence for rldp's pilot (docs/design.md, "P̂ from a private
pilot"; :mod:`rldp.shared.pilot`, :mod:`rldp.aggregator.design.orchestration.pilot`). The true P is Adult's
(adult.data) on two pairs — sex × race (10 symbols) and race × education (80 symbols) — at ε = 1.

* **Coverage.** For each pilot size n₁, ``draws`` simulated pilots: n₁ reports of the pilot mechanism
  drawn from P, the confidence set F computed from their counts, and whether P ∈ F (D_α(P₀‖P) ≤ B);
  F's median radius by the current construction and by the previous one (v3) from the same counts.
  Then, for the first 50 draws of each size (a design costs seconds), a mechanism designed over that
  F (CR calibrated to the exact audit over F: it depends on F, unlike GRR or SRR) is audited at the
  true P: realised ε* [LZG24, Sec 8.3] ≤ ε? Both rates come with their Monte-Carlo standard error
  √(r(1 − r)/draws).
* **Utility.** N = 2·10⁶ users: n₁ report with the pilot, the rest with PolyOpt designed over the
  pilot's F (if it beats the pilot at P̂; else the pilot continues). Total NMI = the users' mean NMI
  at the true P, and the L1 error of the maximum-likelihood estimate from both phases' reports
  together (EM over both matrices); against GRR for everyone and the public-data design (PolyOpt from
  adult.data's 32,561 records) for everyone. The break-even n₁ is the smallest one on the grid whose
  total NMI beats GRR for everyone.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.aggregator.design import DesignError, DesignRequest, design, grr_matrix
from rldp.aggregator.design.orchestration.pilot import design_pilot, switch_after_pilot
from rldp.aggregator.design.orchestration.sources import PilotData, design_from
from rldp.aggregator.estimate import estimate_combined
from rldp.shared.audit import realised_epsilon
from rldp.shared.divergence import confidence_radius, renyi_divergence
from rldp.shared.document import report_matrix
from rldp.shared.information import normalized_mutual_information
from rldp.shared.pilot import pilot_confidence_set

from ..datasets import adult_distribution
from .config import Config, Result
from .stats import row

__all__ = ["PILOT_PAIRS", "PILOT_SIZES", "USERS", "run_pilot"]

PILOT_PAIRS = (("sex", "race"), ("race", "education"))
PILOT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
USERS = 2_000_000
EPSILON = 1.0
BETA = 0.05
NAME = "pilot"
#: The construction before ``CONSTRUCTION``, whose median radius the coverage table shows beside it.
PREVIOUS_CONSTRUCTION = "empirical-bernstein-box/v3"


def _estimate(matrices: list[np.ndarray], counts: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """The maximum-likelihood P from every phase's reports at once (one likelihood over both matrices)."""
    estimate, _ = estimate_combined(matrices, counts, shape, method="em")
    return np.asarray(estimate.joint).ravel()


def _coverage(pair: tuple[str, str], cfg: Config, draws: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    alphabet, p, _ = adult_distribution(*pair)
    shape, truth = p.shape, p.ravel()
    choice = design_pilot(alphabet, EPSILON, planned_reports=10_000, time_budget=cfg.time_budget)
    q = report_matrix(choice.document)
    records = []
    designed_draws = min(draws, 10 if cfg.quick else 50)  # a design each (seconds): the first draws only
    sizes = PILOT_SIZES[:3] if cfg.quick else PILOT_SIZES
    for n1 in sizes:
        for d in range(draws):
            counts = rng.multinomial(n1, q @ truth)
            pset = pilot_confidence_set(q, counts, BETA, 2.0, shape)
            inside = pset.holds(truth)
            before = pilot_confidence_set(q, counts, BETA, 2.0, construction=PREVIOUS_CONSTRUCTION).radius
            # What the public-data construction would claim for n₁ samples around the same estimate: far too small.
            naive_center = np.clip(pset.estimate.ravel(), 1e-12, None)
            naive_center /= naive_center.sum()
            naive = bool(renyi_divergence(naive_center, truth, 2.0) <= confidence_radius(n1, BETA, truth.size, 2.0))
            eps_true = math.nan
            if d < designed_draws and math.isfinite(pset.radius):
                try:
                    doc = design_from(
                        PilotData(choice.document, counts.tolist(), BETA),
                        DesignRequest(method="cr-calibrated", epsilon=EPSILON),
                        alphabet,
                    )
                    eps_true = realised_epsilon(report_matrix(doc), p)
                except DesignError:
                    pass
            records.append(
                {
                    "pair": "×".join(pair),
                    "k": truth.size,
                    "n1": n1,
                    "draw": d,
                    "covered": inside,
                    "naive_covered": naive,
                    "radius": pset.radius,
                    "radius_v3": before,
                    "epsilon_true": eps_true,
                    "pilot": choice.document["method"],
                }
            )
    return records


def _utility(pair: tuple[str, str], cfg: Config, rng: np.random.Generator) -> list[dict[str, Any]]:
    alphabet, p, n_public = adult_distribution(*pair)
    truth = p.ravel()
    choice = design_pilot(alphabet, EPSILON, planned_reports=10_000, time_budget=cfg.time_budget)
    pilot_q = report_matrix(choice.document)
    users = USERS // 10 if cfg.quick else USERS
    out = []
    grr = grr_matrix(truth.size, EPSILON)
    public = report_matrix(
        design(
            "polyopt",
            alphabet=alphabet,
            public_distribution=p,
            epsilon=EPSILON,
            n=n_public,
            time_budget=cfg.time_budget,
        )
    )
    for label, q in (("grr-everyone", grr), ("public-design", public)):
        est = _estimate([q], [rng.multinomial(users, q @ truth)], p.shape)
        out.append(
            {
                "pair": "×".join(pair),
                "method": label,
                "n1": 0,
                "nmi": normalized_mutual_information(q, truth),
                "l1": float(np.abs(est - truth).sum()),
            }
        )
    sizes = PILOT_SIZES[:3] if cfg.quick else PILOT_SIZES
    for n1 in sizes:
        counts = rng.multinomial(n1, pilot_q @ truth)
        sw = switch_after_pilot(
            DesignRequest(method="polyopt", epsilon=EPSILON, time_budget=cfg.time_budget),
            choice.document,
            counts.tolist(),
        )
        main = report_matrix(sw.document) if sw.switch else pilot_q
        rest = rng.multinomial(users - n1, main @ truth)
        est = _estimate([pilot_q, main], [counts, rest], p.shape)
        nmi = (
            n1 * normalized_mutual_information(pilot_q, truth)
            + (users - n1) * normalized_mutual_information(main, truth)
        ) / users
        out.append(
            {
                "pair": "×".join(pair),
                "method": "pilot-then-design",
                "n1": n1,
                "nmi": nmi,
                "l1": float(np.abs(est - truth).sum()),
                "switched": sw.switch,
                "radius": sw.radius,
                "epsilon_true": realised_epsilon(main, p),
            }
        )
    return out


def run_pilot(cfg: Config) -> Result:
    """Coverage and utility of the pilot on Adult (see the module docstring)."""
    rng = np.random.default_rng(cfg.seed)
    draws = cfg.draws or (200 if cfg.quick else 1000)
    records: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    panels: list[str] = []
    titles: dict[str, str] = {}
    for pair in PILOT_PAIRS:
        label = "×".join(pair)
        alphabet, _, _ = adult_distribution(*pair)
        sizes_of = {"n_sensitive": alphabet.n_sensitive, "n_released": alphabet.n_released}
        panels += [f"coverage {label}", f"utility {label}"]
        titles[f"coverage {label}"] = f"{label} ({alphabet.size} symbols): P ∈ F and the claim at the true P"
        titles[f"utility {label}"] = f"{label}: total NMI over all users vs pilot size n₁"
        cov = _coverage(pair, cfg, draws, rng)
        records += cov
        k = cov[0]["k"]
        cov_rows, notes_pilot = _coverage_rows(label, sizes_of, cov)
        rows += cov_rows
        util = _utility(pair, cfg, rng)
        records += util
        rows += _utility_rows(label, sizes_of, util)
        notes.append(f"{label}: the pilot mechanism is {notes_pilot} (over every distribution, ε = {EPSILON:g})")
        notes.append(_break_even_note(pair, k, util))
    return Result(
        NAME,
        rows,
        records,
        panels,
        titles,
        ["pilot", "pilot-then-design", "grr-everyone", "public-design"],
        {
            "epsilon": EPSILON,
            "beta": BETA,
            "draws": draws,
            "users": USERS // 10 if cfg.quick else USERS,
            "pairs": ["×".join(p) for p in PILOT_PAIRS],
        },
        notes,
    )


def _coverage_rows(label: str, sizes_of: dict[str, int], cov: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Per pilot size: how often P ∈ F (and the naive ball's rate), how often the claim holds at the true P, each with
    its Monte-Carlo standard error, and F's median radius; and the pilot mechanism's name."""
    rows: list[dict[str, Any]] = []
    for n1 in sorted({r["n1"] for r in cov}):
        these = [r for r in cov if r["n1"] == n1]
        key = {
            "panel": f"coverage {label}",
            **sizes_of,
            "n": n1,
            "beta": BETA,
            "method": "pilot",
            "epsilon": EPSILON,
        }
        rate = float(np.mean([r["covered"] for r in these]))
        rows.append(row(NAME, key, "coverage", rate, len(these)))
        rows.append(row(NAME, key, "coverage_se", math.sqrt(rate * (1 - rate) / len(these)), len(these)))
        naive = float(np.mean([r["naive_covered"] for r in these]))
        rows.append(row(NAME, key, "naive_coverage", naive, len(these)))
        rows.append(row(NAME, key, "naive_coverage_se", math.sqrt(naive * (1 - naive) / len(these)), len(these)))
        designed = [r for r in these if not math.isnan(r["epsilon_true"])]
        within = float(np.mean([r["epsilon_true"] <= EPSILON * (1 + 1e-9) for r in designed])) if designed else math.nan
        rows.append(row(NAME, key, "claim_holds", within, len(designed)))
        if designed:
            rows.append(
                row(NAME, key, "claim_holds_se", math.sqrt(within * (1 - within) / len(designed)), len(designed))
            )
        rows.append(row(NAME, key, "radius_median", float(np.median([r["radius"] for r in these])), len(these)))
        rows.append(row(NAME, key, "radius_median_v3", float(np.median([r["radius_v3"] for r in these])), len(these)))
        notes_pilot = these[0]["pilot"]
    return rows, notes_pilot


def _utility_rows(label: str, sizes_of: dict[str, int], util: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """NMI and L1 error over all users per pilot size and method (and whether the design switched)."""
    rows: list[dict[str, Any]] = []
    for u in util:
        key = {
            "panel": f"utility {label}",
            **sizes_of,
            "n": u["n1"],
            "beta": BETA,
            "method": u["method"],
            "epsilon": EPSILON,
        }
        rows.append(row(NAME, key, "nmi", u["nmi"], 1))
        rows.append(row(NAME, key, "l1", u["l1"], 1))
        if "switched" in u:
            rows.append(row(NAME, key, "switched", float(u["switched"]), 1))
    return rows


def _break_even_note(pair: tuple[str, ...], k: int, util: list[dict[str, Any]]) -> str:
    """The smallest pilot size on the grid whose total NMI beats GRR for everyone."""
    grr_nmi = next(u["nmi"] for u in util if u["method"] == "grr-everyone")
    better = [u["n1"] for u in util if u["method"] == "pilot-then-design" and u["nmi"] > grr_nmi]
    return f"{'×'.join(pair)} ({k} symbols): break-even pilot size " + (
        f"n₁ = {min(better):,} (the smallest on the grid whose total NMI beats GRR for everyone)"
        if better
        else "not reached on the grid"
    )
