"""``rldp experiment field``: its shipped tables say what docs/experiments/field.md claims, and a quick run
reproduces the deterministic rows (the attacks) and keeps the claims (false alarms ≤ a, coverage ≥ 1 − β)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rldp.demo.experiments.runner import load_result

ROOT = Path(__file__).resolve().parents[2]


def _rows(result, panel_prefix: str, statistic: str) -> dict[tuple[str, int], float]:
    return {
        (r["method"], int(r["n"] or 0)): float(r["value"])
        for r in result.rows
        if r["panel"].startswith(panel_prefix) and r["statistic"] == statistic
    }


def _claims_hold(result) -> None:
    for rate in _rows(result, "false alarms", "rate").values():
        assert rate <= 0.05
    for (method, n), coverage in _rows(result, "pilot coverage", "coverage").items():
        assert coverage >= 0.95 - 3 * (0.05 * 0.95 / 200) ** 0.5, (method, n, coverage)
    for flagged in _rows(result, "power against ε* = 2", "flagged").values():
        assert flagged >= 0.95


def test_the_shipped_tables_keep_their_claims():
    _claims_hold(load_result("field", ROOT / "docs" / "experiments"))


@pytest.mark.slow
def test_a_quick_run_reproduces_the_attack_rows_and_keeps_the_claims():
    from rldp.demo.experiments.config import Config
    from rldp.demo.experiments.runner import run_experiment

    result = run_experiment("field", Config(quick=True, seed=1))
    _claims_hold(result)
    shipped = load_result("field", ROOT / "docs" / "experiments")
    # The attack rows use the expected counts: no randomness, the same figures in every run.
    assert _rows(result, "attacks", "forged_needed") == _rows(shipped, "attacks", "forged_needed")
