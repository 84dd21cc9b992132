"""The demo's figure of the averaging attack (:mod:`rldp.demo.run.attack`): accuracy against windows.

One panel: the share of users whose S the aggregator guesses right after T linked reports,
without memoisation (fresh draws: climbs towards 1) and with it (the SDK's state file: flat),
against the Bayes optimum from one report (what memoisation holds the aggregator to) and
the guess without any report (the most common S). Why a figure: the gap between the two
curves is what a state file buys an app that reports every day.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .plots import method_label, pyplot

__all__ = ["plot_averaging_attack"]


def plot_averaging_attack(path: Path, attack: Mapping[str, Any], mechanism: Mapping[str, Any], sensitive: str) -> Path:
    """Write the attack's accuracy curves to ``path`` (PNG); ``attack`` is the summary's
    ``"attack"`` entry, ``mechanism`` its ``"mechanism"`` entry. Returns ``path``."""
    plt = pyplot()
    fresh = 100 * np.asarray(attack["fresh"], dtype=float)
    memoised = 100 * np.asarray(attack["memoised"], dtype=float)
    windows = np.arange(1, fresh.size + 1)
    bayes, none = 100 * attack["one_report_bayes"], 100 * attack["no_report"]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax.plot(
        windows,
        fresh,
        marker="o",
        markersize=4,
        color="tab:red",
        label=f"without memoisation (a fresh draw each window): {fresh[-1]:.1f} % after {windows[-1]}",
    )
    ax.plot(
        windows,
        memoised,
        marker="s",
        markersize=4,
        markerfacecolor="white",
        color="tab:blue",
        label=f"with memoisation (Client(state_path=…) repeats the first draw): {memoised[-1]:.1f} % after {windows[-1]}",
    )
    ax.axhline(
        bayes,
        color="black",
        linestyle="--",
        linewidth=1.2,
        label=f"Bayes optimum from one report, Σ_y max_s Σ_u Q(y|s,u)P(s,u), P the users' distribution: {bayes:.1f} %",
    )
    ax.axhline(
        none,
        color="0.5",
        linestyle=":",
        linewidth=1.2,
        label=f"no report: guess the most common {sensitive}: {none:.1f} %",
    )
    ax.set_xlabel("windows reported T (the aggregator links a user's T reports)")
    ax.set_ylabel(f"users whose {sensitive} is guessed right (%)")
    ax.set_xlim(0.5, windows[-1] + 0.5)
    low = min(float(memoised.min()), none) - 3
    ax.set_ylim(max(0.0, low), 101)
    ax.grid(alpha=0.3)
    ax.set_title(
        f"Averaging attack on S = {sensitive}: {method_label(mechanism['method'])} at ε = {mechanism['epsilon']:g} nats, "
        f"{attack['users']:,} users",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)  # below: hides no point
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
