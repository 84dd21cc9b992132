"""What the demo shows on the terminal: progress on stderr, the report on stdout."""

from __future__ import annotations

import math
import sys

import numpy as np
from tqdm import tqdm

from rldp.admin.output import numeric_lines, realised_figure

from .config import DemoConfig

__all__ = ["bar", "progress_bar", "say", "print_report", "p_value_text", "radius_text"]


def p_value_text(p: float) -> str:
    """A p-value as printed; one that underflowed to 0 is below the smallest double, not zero."""
    return "p < 1e-300" if p == 0 else f"p = {p:.2g}"


def bar(cfg: DemoConfig, total: int, desc: str, unit: str = "it") -> tqdm:
    """A tqdm progress bar on stderr (silent when progress is off)."""
    return progress_bar(cfg.progress, total, desc, unit)


def progress_bar(enabled: bool, total: int, desc: str, unit: str = "it") -> tqdm:
    """A tqdm progress bar on stderr, silent unless ``enabled``."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not enabled,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=True,
        unit_scale=unit == "reports",
    )


def radius_text(radius: float | None) -> str:
    """A radius in nats, "∞" for an unbounded ball (a document writes it as null)."""
    return "∞" if radius is None or math.isinf(radius) else f"{radius:.3g}"


def say(cfg: DemoConfig, text: str) -> None:
    """A progress line on stderr (silent when progress is off)."""
    if cfg.progress:
        print(text, file=sys.stderr, flush=True)


def print_report(cfg: DemoConfig, summary: dict) -> None:
    """The human-readable table and headline figures (stdout)."""
    _print_table(summary)
    mech = summary["mechanism"]
    print(f"mechanism   {mech['method']} ({mech['outputs']} outputs), id {mech['id'][:16]}…")
    print(
        f"privacy     ε = {mech['epsilon']:g} claimed, {mech['epsilon_audited']:.4f} audited over the "
        f"95 % confidence set (radius {radius_text(mech['radius'])} nats)"
    )
    verdict = "within" if summary["within_bound"] else "OUTSIDE"
    print(
        f"accuracy    L1 error {summary['l1_error']:.4f} ({verdict} the bound {summary['l1_bound']:.4f} its "
        f"variance predicts; expected {summary['l1_expected']:.4f})"
    )
    print(
        f"utility     NMI {mech['nmi']:.3f}  vs  GRR at the same ε: NMI {summary['grr']['nmi']:.3f}, "
        f"L1 error {summary['grr']['l1_error']:.4f}"
    )
    print(
        f"traffic     {summary['accepted']:,} reports in {summary['upload_seconds']:.1f} s "
        f"({summary['reports_per_second']:,.0f} reports/s over HTTP)"
    )
    for line in numeric_lines({"numeric": summary.get("numeric")}):  # a numeric U: mean, quantiles, the note
        print(line)
    attack = summary.get("attack")
    figures = ["estimate.png"] + (["privacy_utility.png"] if summary.get("curves") else [])
    if attack:
        print(
            f"averaging attack  after {attack['windows']} windows: {cfg.sensitive} guessed for "
            f"{100 * attack['fresh'][-1]:.1f} % of {attack['users']:,} users without memoisation, "
            f"{100 * attack['memoised'][-1]:.1f} % with it (one report: {100 * attack['one_report_bayes']:.1f} % at "
            f"best, {100 * attack['fresh'][0]:.1f} % measured; no report: {100 * attack['no_report']:.1f} %)"
        )
        figures.append("averaging_attack.png")
    _print_no_public_data(summary.get("no_public_data"))
    print(f"output      {cfg.out}/summary.json, " + ", ".join(f"{cfg.out}/{name}" for name in figures))


def _print_table(summary: dict) -> None:
    """One line per symbol: the users' truth, P̂, and the private estimate with its 95 % interval."""
    labels = summary["labels"]
    truth = np.ravel(summary["truth"])
    public = np.ravel(summary["public"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    width = max(12, max(len(label) for label in labels))
    print()
    print(f"{'(s, u)':<{width}}  {'true':>7}  {'public':>7}  {'private estimate (95 % CI)':>30}")
    for i, label in enumerate(labels):
        print(f"{label:<{width}}  {truth[i]:7.4f}  {public[i]:7.4f}  {est[i]:9.4f}  [{low[i]:.4f}, {high[i]:.4f}]")
    print()


def _print_no_public_data(nopub: dict | None) -> None:
    """The path without public data: the pilot, the switch and the drift watch, in a few lines."""
    if not nopub:
        return
    if "skipped" in nopub:
        print(f"no public data  skipped ({nopub['skipped']})")
    else:
        pilot = nopub["pilot"]
        line = (
            f"no public data  pilot {pilot['method']} (private for every distribution), {pilot['reports']:,} reports, "
            f"NMI {pilot['nmi']:.3f}"
        )
        if nopub["switched"]:
            d = nopub["designed"]
            line += f" -> switched to {d['method']} over the pilot's F (radius {radius_text(d['radius'])}): NMI {d['nmi']:.3f}"
        else:
            line += f"; the pilot was kept ({nopub.get('reason')})"
        print(line)
        drift = nopub.get("drift")
        if drift:
            verdict = "FLAGGED" if drift.get("rejected") else "not flagged"
            print(
                f"drift watch     {drift['users']:,} drifted users ({100 * drift['share']:.0f} % {drift['cell']}): {verdict} "
                f"({p_value_text(drift.get('p_value', float('nan')))}); {realised_figure(drift)}, against the "
                f"claim ε = {drift.get('claimed_epsilon', float('nan')):g}"
            )
