"""`rldp demo --quick` end to end: a real aggregator on loopback, SDK workers, estimate."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


@pytest.mark.slow
def test_demo_quick_end_to_end(tmp_path):
    out = tmp_path / "demo-output"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rldp.cli",
            "demo",
            "--quick",
            "--users",
            "20000",
            "--workers",
            "2",
            "--seed",
            "7",
            "--out",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    # Every user's report was acknowledged and counted once.
    assert summary["accepted"] == summary["users"] == 20000
    # The mechanism is certified and identifiable, so the estimate is meaningful...
    assert summary["mechanism"]["epsilon_audited"] <= summary["mechanism"]["epsilon"] + 1e-9
    assert summary["identifiable"]
    # ...and its error stays within the bound its variance predicts.
    assert summary["l1_error"] <= summary["l1_bound"], (summary["l1_error"], summary["l1_bound"])
    est = np.array(summary["estimate"])
    assert abs(est.sum() - 1) < 1e-9
    low, high = np.array(summary["ci95_low"]), np.array(summary["ci95_high"])
    assert np.all(low <= est + 1e-12) and np.all(est <= high + 1e-12)
    # RLDP beats plain LDP at the same ε on this pair (the point of the demo).
    assert summary["mechanism"]["nmi"] > 2 * summary["grr"]["nmi"]
    # The averaging attack (tests/demo/test_attack.py checks its figures): linking 30 fresh draws
    # reads S; the SDK's memoised reports keep the aggregator at the one-report level.
    attack = summary["attack"]
    assert len(attack["fresh"]) == len(attack["memoised"]) == attack["windows"] == 30
    assert attack["fresh"][-1] > attack["memoised"][-1] + 0.15
    assert attack["memoised"][-1] <= attack["one_report_bayes"] + 4 / (2 * attack["users"] ** 0.5)
    for name in ("estimate.png", "privacy_utility.png", "averaging_attack.png"):
        assert (out / name).stat().st_size > 10_000
    assert "L1 error" in proc.stdout and "reports/s" in proc.stdout
    assert "averaging attack  after 30 windows" in proc.stdout
    # Without public data: the pilot (private for every distribution) learns P̂, the collection switches
    # to a design over the pilot's confidence set with more utility, and the drifted population is flagged.
    nopub = summary["no_public_data"]
    assert nopub["pilot"]["reports"] == 20000
    assert nopub["switched"] and nopub["designed"]["nmi"] > nopub["pilot"]["nmi"], nopub
    assert nopub["drift"]["rejected"] and nopub["drift"]["realised_epsilon_upper"] > summary["mechanism"]["epsilon"]
    assert "no public data  pilot" in proc.stdout and "drift watch" in proc.stdout and "FLAGGED" in proc.stdout
    assert "realised ε* " in proc.stdout and "95 % interval [" in proc.stdout  # a point (if identified) in an interval


@pytest.mark.slow
def test_demo_bad_options_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rldp.cli", "demo", "--epsilon", "-1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "--epsilon must be" in proc.stderr.strip().splitlines()[-1]
    proc = subprocess.run(
        [sys.executable, "-m", "rldp.cli", "demo", "--sensitive", "nope", "--out", str(tmp_path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "no column 'nope'" in proc.stderr
    proc = subprocess.run(  # a continuous column: its 54 KB list of values is cut
        [sys.executable, "-m", "rldp.cli", "demo", "--sensitive", "fnlwgt", "--out", str(tmp_path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and len(proc.stderr) < 400, proc.stderr[:500]
    assert "values of 'fnlwgt' absent from the public data" in proc.stderr and "more" in proc.stderr


@pytest.mark.slow
def test_demo_without_curves_draws_no_bars_into_a_file(tmp_path):
    """stderr is a pipe here, not a terminal: no progress bars by default; --no-curves designs at
    --epsilon only and draws no privacy-utility figure."""
    out = tmp_path / "demo-output"
    proc = subprocess.run(
        [sys.executable, "-m", "rldp.cli", "demo", "--quick", "--users", "3000", "--seed", "3"]
        + ["--workers", "1", "--no-attack", "--no-curves", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "\r" not in proc.stderr and "it/s" not in proc.stderr, proc.stderr[-2000:]
    assert (out / "estimate.png").exists() and not (out / "privacy_utility.png").exists()
    assert json.loads((out / "summary.json").read_text())["curves"] == []
    assert "privacy_utility.png" not in proc.stdout


def test_experiment_writes_outside_the_tracked_docs_by_default():
    from rldp.cli import build_parser

    args = build_parser("experiment").parse_args(["experiment", "fig4"])
    assert str(args.out) == "experiments-output"


def _quick_summary(out, *extra):
    proc = subprocess.run(
        [sys.executable, "-m", "rldp.cli", "demo", "--quick", "--users", "3000", "--workers", "2", "--no-curves",
         "--no-attack", "--no-progress", "--out", str(out), *extra],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_the_default_seed_gives_the_same_figures_on_every_run(tmp_path):
    """Issue 37: the README printed one run's figures while every run drew a new seed (and the users'
    reports came from the OS CSPRNG): now the default seed fixes the users and their draws."""
    first, second = (_quick_summary(tmp_path / f"run{i}") for i in (1, 2))
    assert first["seed"] == second["seed"] == 0
    for key in ("truth", "estimate", "ci95_low", "ci95_high", "l1_error", "grr"):
        assert first[key] == second[key], key
    pilot, again = first["no_public_data"], second["no_public_data"]
    assert pilot["pilot"] == again["pilot"] and pilot.get("designed") == again.get("designed")
    # 3,000 pilot reports: the design over the pilot's F ties the pilot's NMI, so the pilot is kept (a tie is
    # not a switch: SWITCH_MARGIN) and no drift step runs; when it switches, the drift figures repeat too.
    assert pilot["switched"] == again["switched"] and ("drift" in pilot) == ("drift" in again)
    if "drift" in pilot:
        assert pilot["drift"]["realised_epsilon"] == again["drift"]["realised_epsilon"]
    other = _quick_summary(tmp_path / "run3", "--seed", "5")
    assert other["seed"] == 5 and other["estimate"] != first["estimate"]
