"""The [KM19] experiments (quick): ``distp-example`` through the API, ``distp-adult`` through the CLI.

Invariants tested are the ones the theory guarantees: Example 2's coupling, EMD and mechanism exactly;
the coupling is exactly private at P̂ (δ = 0 at every ε, ε = 0); GRR is ε-LDP on X, so its DistP ε is
≤ ε under every distribution (P̂, adult.test); PolyOpt at radius 0 keeps ε at P̂; a coupling designed
over the 95 % set at (ε, 0) has robust δ 0; the Bayes decoder never loses to reading Y as X.
"""

from __future__ import annotations

import csv
import json
import math

import pytest
from cli_helpers import run_cli

experiments = pytest.importorskip("rldp.demo.experiments")
pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOL = 1e-9


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    result = experiments.run_experiment("distp-example", experiments.Config(quick=True, progress=False))
    out = tmp_path_factory.mktemp("km19")
    paths = experiments.write_outputs(result, out)
    return result, out, paths


def _value(result, panel, method, statistic, epsilon=None):
    value = result.value(panel, method, statistic, epsilon=epsilon)
    assert value is not None, (panel, method, statistic, epsilon)
    return value


@pytest.mark.slow
def test_example_2_is_reproduced(example):
    result, _, _ = example
    assert _value(result, "coupling", "coupling", "emd") == pytest.approx(0.3, abs=1e-12)
    fig2 = {"11": 0.2, "21": 0.1, "22": 0.2, "23": 0.2, "33": 0.3}
    for x in "123":
        for y in "123":
            expected = fig2.get(x + y, 0.0)
            assert _value(result, "coupling", "coupling", f"gamma_{x}{y}") == pytest.approx(expected, abs=1e-12)
    mechanism = [_value(result, "coupling", "coupling", f"A_2{y}") for y in "123"]
    assert mechanism == pytest.approx([0.2, 0.4, 0.4], abs=1e-12)


@pytest.mark.slow
def test_example_delta_curves(example):
    result, _, _ = example
    grid = result.settings["epsilons"]
    for eps in grid:  # exact at the λ's: nothing to distinguish
        assert _value(result, "delta", "coupling", "delta_p_hat", eps) <= 1e-12
    for method in ("coupling", "grr-1", "grr-2"):
        curve = [_value(result, "delta", method, "delta_robust", e) for e in grid]
        assert all(a >= b - TOL for a, b in zip(curve, curve[1:], strict=False))  # δ(ε) never increases
        at_p_hat = [_value(result, "delta", method, "delta_p_hat", e) for e in grid]
        assert all(r >= p - TOL for r, p in zip(curve, at_p_hat, strict=True))  # F contains P̂
    assert _value(result, "delta", "grr-1", "delta_p_hat", 1.0) <= TOL  # ε-LDP ⇒ (ε, 0)-DistP
    assert _value(result, "delta", "grr-2", "delta_p_hat", 0.0) > 0.1


@pytest.mark.slow
def test_example_losses(example):
    result, _, _ = example
    assert _value(result, "loss", "coupling", "loss", 0.0) == pytest.approx(0.15, abs=1e-12)  # ½·EMD (Prop 2)
    grr = [_value(result, "loss", "grr", "loss", e) for e in (0.1, 0.5, 1.0, 2.0)]
    assert all(a > b for a, b in zip(grr, grr[1:], strict=False))
    robust = [_value(result, "loss", "coupling-robust", "loss", e) for e in (0.1, 0.5, 1.0, 2.0)]
    assert all(r >= 0.15 - TOL for r in robust) and robust[0] >= robust[-1]


@pytest.mark.slow
def test_example_outputs_on_disk(example):
    result, out, paths = example
    assert {p.name for p in paths} == {"distp-example.csv", "distp-example.png", "distp-example.json"}
    assert (out / "distp-example.png").read_bytes()[:8] == PNG_MAGIC
    meta = json.loads((out / "distp-example.json").read_text())
    assert meta["source"] == "[KM19, Example 2 / Fig 2]" and meta["settings"]["robust_n"] == 1000
    again = experiments.load_result("distp-example", out)
    assert again.value("coupling", "coupling", "emd") == pytest.approx(0.3)
    assert "paper: 0.2, 0.4, 0.4" in experiments.report(again)


@pytest.mark.slow
def test_distp_adult_quick_through_the_cli(tmp_path):
    proc = run_cli("experiment", "distp-adult", "--quick", "--out", tmp_path, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "θ = sex (2), X = relationship (6) at ε = 1" in proc.stdout
    with open(tmp_path / "distp-adult.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    value = {(r["method"], float(r["epsilon"]), r["statistic"]): float(r["value"]) for r in rows}
    epsilons = sorted({e for _, e, _ in value})
    assert epsilons == [0.5, 1.0, 2.0]
    for eps in epsilons:
        assert value[("coupling", eps, "delta_p_hat")] <= 1e-12 and value[("coupling", eps, "eps_p_hat")] <= 1e-9
        for where in ("eps_p_hat", "eps_test", "eps_robust"):  # GRR: ε-LDP on X, any distribution
            assert value[("grr", eps, where)] <= eps + TOL
        assert value[("polyopt", eps, "eps_p_hat")] <= eps + TOL  # optimal ε-LDP w.r.t. S at P̂
        assert value[("coupling-robust", eps, "delta_robust")] <= TOL  # designed over F at (ε, 0)
        for method in ("coupling", "coupling-robust", "grr"):
            assert value[(method, eps, "loss_decoded")] <= value[(method, eps, "loss")] + TOL
        for method in ("coupling", "coupling-robust", "grr", "polyopt"):
            assert 0 <= value[(method, eps, "nmi_u")] <= 1 + TOL
    assert value[("coupling", 1.0, "nmi_u")] > 5 * value[("grr", 1.0, "nmi_u")]  # the point of the coupling
    assert math.isfinite(value[("coupling", 1.0, "eps_test")])
    assert (tmp_path / "distp-adult.png").read_bytes()[:8] == PNG_MAGIC
