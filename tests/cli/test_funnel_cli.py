"""``rldp audit`` and ``rldp evaluate`` on the funnel and lift notions: both sides' ε, the worst (y, s), the scope."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helpers import run_cli as run

from rldp.shared.audit import lip_epsilons, secret_ldp_epsilon
from rldp.shared.document import build_document, write_document
from rldp.shared.lift import lift_measures
from rldp.shared.records import Alphabet, Attribute

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
P_HAT = np.array([[0.1, 0.2, 0.15], [0.25, 0.1, 0.2]])
Q = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])  # latent S: reads the colour only


def _write(tmp_path, privacy: dict, name: str) -> object:
    doc = build_document(
        method="grr",
        matrix=Q,
        alphabet=Alphabet(SEX, [COLOUR], latent=True),
        public_distribution=P_HAT,
        privacy=privacy,
    )
    path = tmp_path / f"{name}.json"
    write_document(doc, path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("radius", [0.0, 0.02])
def test_audit_reports_both_sides_the_worst_place_and_the_scope(tmp_path, radius: float) -> None:
    lower, upper = lip_epsilons(Q, P_HAT)
    claim = {
        "notion": "alip",
        "epsilon": 1.0,
        "epsilon_lower": 1.0,
        "epsilon_upper": 0.5,
        "uncertainty": {"order": 2.0, "radius": radius},
    }
    proc = run("audit", _write(tmp_path, claim, "alip"), "--json")
    record = json.loads(proc.stdout)
    assert record["notion"] == "alip" and record["epsilon_lower"] == 1.0 and record["epsilon_upper"] == 0.5
    assert record["scope"] == ("at P̂ only" if radius == 0 else "robust over F")
    if radius == 0:
        assert proc.returncode == 0, proc.stderr
        assert record["epsilon_lower_audited"] == pytest.approx(lower)
        assert record["epsilon_upper_audited"] == pytest.approx(upper)
    assert set(record["worst"]) == {"output", "s"}
    text = run("audit", _write(tmp_path, {**claim, "epsilon_upper": upper * 0.5, "epsilon": 1.0}, "tight"))
    assert text.returncode == 1 and "max-lift side epsilon_upper" in text.stdout and "FAIL" in text.stdout
    assert "worst upper lift at output" in text.stdout


@pytest.mark.slow
def test_evaluate_reports_lift_measures_and_the_funnel_epsilons(tmp_path) -> None:
    path = _write(tmp_path, {"notion": "lip", "epsilon": 1.0, "uncertainty": {"order": 2.0, "radius": 0.0}}, "lip")
    proc = run("evaluate", path, "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    lower, upper = lip_epsilons(Q, P_HAT)
    assert record["epsilon_lower"] == pytest.approx(lower) and record["epsilon_upper"] == pytest.approx(upper)
    assert record["epsilon_ldp_wrt_s"] == pytest.approx(secret_ldp_epsilon(Q, P_HAT)[0])
    expected = lift_measures(Q, P_HAT)
    assert record["lift"]["chi2_lift_inverse"] == pytest.approx(expected["chi2_lift_inverse"])
    assert record["lift"]["log_min_lift"] == pytest.approx(-lower) and math.isfinite(record["lift"]["sibson"])
    text = run("evaluate", path).stdout
    assert "LIP epsilon" in text and "l1-lift" in text and "Sibson" in text
