"""``rldp demo`` end to end: public data → design → publish → users → estimate → report.

1. The aggregator learns P̂ from the public Adult training file (shipped with rldp),
   designs the best certified mechanism for (S, U) at level ε, and publishes it on an
   aggregator service started on loopback (SQLite in a temporary folder), or on the
   one given with ``--server``.
2. Simulated users are rows of the Adult *test* file — so the public estimate and the
   users' true distribution really differ, as in life. They run in ``--workers``
   processes, each using the client SDK for real: download the mechanism, verify its
   content id and audit, privatise locally, submit in batches over HTTP.
3. The aggregator estimates P_X with 95 % intervals; the demo prints, for each (s, u),
   the true frequency, the public estimate and the private estimate ± interval, with the
   headline figures (L1 error and the bound its variance predicts, NMI, audited ε,
   reports per second), and writes ``demo-output/`` (summary.json, PNG plots).
4. The averaging attack (:mod:`.attack`, skipped with ``--no-attack``): an aggregator that
   links each of a few thousand users' reports over 30 windows guesses their S, once from
   fresh draws and once from the SDK's memoised ones.
5. The path without public data (:mod:`.no_public_data`, skipped with ``--no-pilot``): a pilot
   collection, the switch to a design over the pilot's confidence set, and a drifted population
   flagged by the drift watch.

The same users are also privatised with GRR at the same ε (plain LDP on X, in process)
to show what robust local privacy buys.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from rldp.aggregator.design import design
from rldp.aggregator.estimate import estimate_distribution, report_counts
from rldp.client import Mechanism
from rldp.shared.document import mechanism_matrix
from rldp.shared.errors import LISTED_IN_ERRORS, ValidationError, cut_list
from rldp.shared.numeric import looks_numeric, spec_from_cells
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from ..attack_plot import plot_averaging_attack
from ..datasets import load_adult
from .attack import attack_users, run_averaging_attack
from .candidates import choose_method, design_candidates
from .config import CURVE_EPSILONS, QUICK_CURVE_EPSILONS, DemoConfig
from .console import print_report, say
from .figures import plot_demo
from .no_public_data import run_no_public_data
from .server import aggregator, fetch_estimate, publish
from .users import simulate_users

__all__ = ["run_demo", "predicted_l1_bound"]

Z_95 = 1.959964  # two-sided 95 % quantile of the standard normal: interval half-width / sd


def predicted_l1_bound(sd: np.ndarray) -> tuple[float, float]:
    """(expected L1 error, a bound it stays under) from per-cell standard deviations.

    For Gaussian errors e_x ~ N(0, sd_x²), E|e_x| = sd_x·sqrt(2/π), so E‖e‖₁ = Σ sd_x·sqrt(2/π).
    sd(‖e‖₁) ≤ Σ_x sd(|e_x|) = Σ sd_x·sqrt(1 − 2/π) whatever the correlations, so by
    Chebyshev the error exceeds E + 4·Σ sd_x·sqrt(1 − 2/π) with probability < 1/16.
    """
    expected = float(np.sum(sd) * math.sqrt(2 / math.pi))
    return expected, expected + 4.0 * float(np.sum(sd) * math.sqrt(1 - 2 / math.pi))


def _grr_comparison(
    cfg: DemoConfig,
    alphabet: Alphabet,
    p_hat: np.ndarray,
    n_public: int,
    users: Table,
    names: Sequence[str],
    truth: np.ndarray,
    rng_seed: int,
) -> dict:
    """GRR at the same ε on the same users (SDK privatisation, in process), estimated by
    the same estimator: what plain LDP on X would have given."""
    doc = design("grr", alphabet=alphabet, public_distribution=p_hat, epsilon=cfg.epsilon, n=n_public, beta=cfg.beta)
    mech = Mechanism.from_document(doc)  # the SDK's own verification, as on a device
    ys = mech.privatize({name: np.asarray(users.column(name)) for name in names}, rng=np.random.default_rng(rng_seed))
    q = mechanism_matrix(doc)
    shape = (1, alphabet.size) if alphabet.latent else alphabet.shape  # the input's distribution
    est = estimate_distribution(q, report_counts(ys, q.shape[0]), shape)
    joint = est.joint.reshape(truth.shape)
    return {
        "method": "grr",
        "nmi": doc["utility"]["nmi"],
        "l1_error": float(np.abs(joint - truth).sum()),
        "joint": joint.tolist(),
    }


def _pick_users(cfg: DemoConfig, alphabet: Alphabet, names: Sequence[str], seed: int) -> Table:
    """cfg.users rows of the Adult test split (with replacement if more than it has)."""
    population = load_adult("test")
    attributes = {a.name: a for a in alphabet.joint_attributes}  # S too when it is latent
    for name in names:  # users' values must be in the public alphabet (the SDK refuses others)
        if attributes[name].numeric is not None:  # a number always has a bin (clamped)
            continue
        known = set(attributes[name].values)
        extra = sorted(set(np.unique(population.column(name))) - known)
        if extra:
            raise ValidationError(
                f"users have {len(extra):,} values of {name!r} absent from the public data: {cut_list(extra)}"
                + (" (a continuous column? the demo needs categorical ones)" if len(extra) > LISTED_IN_ERRORS else "")
            )
    rng = np.random.default_rng(seed)
    picked = rng.choice(population.n_rows, size=cfg.users, replace=cfg.users > population.n_rows)
    return Table.from_columns({name: np.asarray(population.column(name))[picked] for name in names})


def run_demo(cfg: DemoConfig) -> dict:
    """Run the whole demo; returns the JSON summary (also written to cfg.out/summary.json)."""
    started = time.perf_counter()
    seed = cfg.seed
    names = (cfg.sensitive, *cfg.released)

    public, alphabet = _public_alphabet(cfg)
    p_hat = alphabet.empirical_distribution(public)
    users = _pick_users(cfg, alphabet, names, seed)
    truth = alphabet.empirical_distribution(users)
    # What the reports estimate: P over the mechanism's input — S × U, or U alone when S is latent.
    truth_in, p_in = (truth.sum(axis=0), p_hat.sum(axis=0)) if cfg.latent else (truth, p_hat)

    say(
        cfg,
        f"rldp demo: S = {cfg.sensitive}, U = {', '.join(cfg.released)} (|X| = {alphabet.size}), "
        f"ε = {cfg.epsilon:g}, {cfg.users:,} users, {cfg.workers} workers",
    )
    epsilons = (QUICK_CURVE_EPSILONS if cfg.quick else CURVE_EPSILONS) if cfg.curves else ()
    curve_rows, docs = design_candidates(cfg, alphabet, p_hat, public.n_rows, epsilons)
    method = choose_method(cfg, docs, alphabet)
    doc = docs[method]

    traffic, estimate, attack, no_public = _collect(cfg, doc, method, alphabet, users, names, truth)
    accuracy = _accuracy(estimate, truth_in)
    grr = _grr_comparison(cfg, alphabet, p_hat, public.n_rows, users, names, truth_in, seed + 1)

    summary = {
        "config": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items() if k not in ("admin_token",)
        },
        "seed": seed,
        "mechanism": _mechanism_summary(cfg, doc, method),
        "users": cfg.users,
        "accepted": traffic["accepted"],
        "upload_seconds": traffic["seconds"],
        "reports_per_second": traffic["reports_per_second"],
        "labels": alphabet.labels(),
        "truth": truth_in.tolist(),
        "public": p_in.tolist(),
        **accuracy,
        "l1_public_vs_truth": float(np.abs(p_in - truth_in).sum()),
        "identifiable": bool(estimate.get("identifiable", True)),
        "grr": grr,
        "curves": curve_rows if cfg.curves else [],
        "attack": attack,
        "no_public_data": no_public,
        "numeric": estimate.get("numeric"),
        "seconds": time.perf_counter() - started,
    }
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=False))
    plot_demo(cfg.out, summary)
    if attack is not None:
        plot_averaging_attack(cfg.out / "averaging_attack.png", attack, summary["mechanism"], cfg.sensitive)
    print_report(cfg, summary)
    return summary


def _public_alphabet(cfg: DemoConfig) -> tuple[Table, Alphabet]:
    """The public data (adult.data) and the alphabet of the run's attributes over it."""
    public = load_adult("data")
    # A released column of numbers (age, hours-per-week) is binned by the default rule (rldp.shared.numeric).
    numeric = {
        name: spec_from_cells(public.column(name), name) for name in cfg.released if looks_numeric(public.column(name))
    }
    alphabet = Alphabet.from_table(public, cfg.sensitive, list(cfg.released), latent=cfg.latent, numeric=numeric)
    return public, alphabet


def _collect(
    cfg: DemoConfig,
    doc: dict[str, Any],
    method: str,
    alphabet: Alphabet,
    users: Table,
    names: Sequence[str],
    truth: np.ndarray,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
    """Publish ``doc`` on a fresh aggregator, let the users report, estimate, and run the attack and the path without
    public data when asked: (traffic, estimate, attack, no_public_data)."""
    with aggregator(cfg) as (url, token):
        published = publish(url, token, doc)
        say(
            cfg,
            f"published {method} as {published['id'][:16]}… on {url} "
            f"(audited ε = {published.get('epsilon_audited', doc['audit']['epsilon']):.4f})",
        )
        traffic = simulate_users(cfg, url, doc["id"], users, names)
        estimate = fetch_estimate(url, token, doc["id"])
        attack = None
        if cfg.attack:
            chosen = attack_users(names, cfg.attack_users)
            attack = run_averaging_attack(url, doc["id"], chosen, names, progress=cfg.progress).as_dict()
        no_public = None
        if cfg.pilot and cfg.notion == "rldp" and not cfg.latent:  # the path for a team without public data
            no_public = run_no_public_data(cfg, url, token, alphabet, users, names, truth)
    return traffic, estimate, attack, no_public


def _accuracy(estimate: dict[str, Any], truth_in: np.ndarray) -> dict[str, Any]:
    """The private estimate, its 95 % intervals, its L1 error and the error its intervals predict."""
    joint = np.asarray(estimate["joint"], dtype=float).reshape(truth_in.shape)
    low = np.asarray(estimate["ci95"]["low"], dtype=float).reshape(truth_in.shape)
    high = np.asarray(estimate["ci95"]["high"], dtype=float).reshape(truth_in.shape)
    sd = (high - low) / (2 * Z_95)
    l1 = float(np.abs(joint - truth_in).sum())
    expected, bound = predicted_l1_bound(sd)
    return {
        "estimate": joint.tolist(),
        "ci95_low": low.tolist(),
        "ci95_high": high.tolist(),
        "l1_error": l1,
        "l1_expected": expected,
        "l1_bound": bound,
        "within_bound": l1 <= bound,
    }


def _mechanism_summary(cfg: DemoConfig, doc: dict[str, Any], method: str) -> dict[str, Any]:
    """What the summary says of the published mechanism."""
    return {
        "id": doc["id"],
        "method": method,
        "epsilon": doc["privacy"]["epsilon"],
        "epsilon_audited": doc["audit"]["epsilon"],
        "notion": doc["privacy"].get("notion", cfg.notion),
        "latent": cfg.latent,
        "outputs": int(mechanism_matrix(doc).shape[0]),
        "nmi": doc["utility"]["nmi"],
        "radius": doc["privacy"].get("uncertainty", {}).get("radius", 0.0),
    }
