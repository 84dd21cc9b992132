"""The demo run's figures: estimate.png (the truth, the public estimate and the private one with its intervals,
and each one's error) and privacy_utility.png (NMI against ε for each certified method on the run's pair)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..plots import method_label, pyplot

__all__ = ["plot_demo"]


def plot_demo(out: Path, summary: Mapping[str, Any]) -> list[Path]:
    """The demo's figures in ``out``: estimate.png and, if the summary has curves, privacy_utility.png. Returns the
    paths written."""
    plt = pyplot()
    paths = [_plot_estimate(plt, out / "estimate.png", summary)]
    if summary["curves"]:
        paths.append(_plot_privacy_utility(plt, out / "privacy_utility.png", summary))
    return paths


def _plot_estimate(plt: Any, path: Path, summary: Mapping[str, Any]) -> Path:
    """Top: the users' truth, P̂ and the private estimate with its 95 % intervals (log scale); bottom: the private
    estimate's error and plain GRR's at the same ε."""
    labels = summary["labels"]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(7.5, 0.75 * len(labels) + 2), 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    _draw_frequencies(top, summary)
    _draw_errors(bottom, summary)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _draw_frequencies(top: Any, summary: Mapping[str, Any]) -> None:
    """The users' truth, P̂ and the private estimate with its 95 % intervals, on a log scale."""
    x = np.arange(len(summary["labels"]))
    truth = np.ravel(summary["truth"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    method = summary["mechanism"]["method"]
    w = 0.38
    top.bar(x - w / 2, truth, w, label="users' true frequency (adult.test)", color="0.55")
    top.bar(
        x + w / 2, np.ravel(summary["public"]), w, label="public estimate P̂ (adult.data)", color="tab:blue", alpha=0.6
    )
    top.errorbar(
        x,
        est,
        yerr=[est - low, high - est],
        fmt="o",
        color="tab:orange",
        capsize=3,
        markersize=4,
        label=f"private estimate, {method} (95 % CI)",
    )
    top.set_yscale("log")
    top.set_ylabel("frequency (fraction of users, log scale)")
    top.set_title(f"P(S, U) for {summary['users']:,} users at ε = {summary['mechanism']['epsilon']:g} nats")
    top.legend(fontsize=8, loc="upper left")


def _draw_errors(bottom: Any, summary: Mapping[str, Any]) -> None:
    """The private estimate's error with its 95 % intervals, and plain GRR's at the same ε."""
    x = np.arange(len(summary["labels"]))
    truth = np.ravel(summary["truth"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    method = summary["mechanism"]["method"]
    grr = np.ravel(summary["grr"]["joint"])
    labels = summary["labels"]
    bottom.axhline(0.0, color="0.3", linewidth=0.8)
    bottom.errorbar(
        x - 0.12,
        est - truth,
        yerr=[est - low, high - est],
        fmt="o",
        color="tab:orange",
        capsize=3,
        markersize=4,
        label=f"{method}: estimate − truth (95 % CI)  L1 = {summary['l1_error']:.4f}",
    )
    bottom.plot(
        x + 0.12,
        grr - truth,
        "x",
        color="tab:red",
        label=f"GRR (plain LDP, same ε): estimate − truth  L1 = {summary['grr']['l1_error']:.4f}",
    )
    bottom.set_ylabel("estimation error (fraction)")
    bottom.set_xticks(x, labels, rotation=45, ha="right")
    # Headroom above every point (error bars included) so the legend never hides one.
    errors = np.concatenate([low - truth, high - truth, grr - truth])
    lo, hi = float(errors.min()), float(errors.max())
    span = max(hi - lo, 1e-6)
    bottom.set_ylim(lo - 0.08 * span, hi + 0.5 * span)
    bottom.legend(fontsize=8, loc="upper left")


def _plot_privacy_utility(plt: Any, path: Path, summary: Mapping[str, Any]) -> Path:
    """NMI against ε, one line per certified method, the run's ε marked."""
    rows = summary["curves"]
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r["epsilon"], r["nmi"]) for r in rows if r["method"] == method)
        if len(pts) > 1:
            ax.plot(*zip(*pts), marker="o", label=method_label(method))
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("NMI = I(X;Y)/H(X) under P̂")
    ax.set_title(
        f"Privacy–utility on S = {summary['config']['sensitive']}, U = {', '.join(summary['config']['released'])}"
    )
    ax.axvline(summary["mechanism"]["epsilon"], color="0.5", linestyle=":", linewidth=1, label="ε of this run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
