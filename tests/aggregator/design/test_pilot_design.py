"""The pilot mechanism (private for every distribution, chosen to learn P̂ fastest), the switch after it
(never to less utility), one entry point for sources of P̂, and ``rldp audit --pilot``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helpers import run_cli as run

from rldp.aggregator.design import DesignError, DesignParameterError, DesignRequest
from rldp.aggregator.design.orchestration.pilot import PILOT_CANDIDATES, design_pilot, switch_after_pilot
from rldp.aggregator.design.orchestration.sources import PilotData, design_from
from rldp.shared.audit import audit_document, realised_epsilon
from rldp.shared.document import build_document, mechanism_matrix, report_matrix, write_document
from rldp.shared.records import Alphabet

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "race", "values": list("abcde")}]}
)
TRUTH = np.array([[0.004, 0.011, 0.048, 0.003, 0.265], [0.006, 0.021, 0.048, 0.005, 0.589]])
TRUTH = TRUTH / TRUTH.sum()


@pytest.fixture(scope="module")
def pilot() -> dict:
    return design_pilot(ALPHABET, 1.0, planned_reports=10_000, time_budget=5.0).document


@pytest.mark.slow
def test_the_pilot_is_private_for_every_distribution_and_learns_fastest(pilot):
    choice = design_pilot(ALPHABET, 1.0, planned_reports=10_000, time_budget=5.0)
    assert choice.document["id"] == pilot["id"]  # deterministic
    assert pilot["privacy"]["uncertainty"]["radius"] is None  # F = every distribution
    assert audit_document(pilot).passed
    scored = [c for c in choice.candidates if c.get("identifiable")]
    assert {c["method"] for c in choice.candidates} == set(PILOT_CANDIDATES)
    best = min(scored, key=lambda c: c["expected_radius"])
    assert pilot["method"] == best["method"]
    # Its claim holds at a population it never saw (any P): the realised ε* is within ε.
    assert realised_epsilon(report_matrix(pilot), TRUTH) <= 1.0 + 1e-9


@pytest.mark.slow
def test_too_few_planned_reports_for_every_candidate_chooses_the_pilot_that_learns_p_sooner():
    """At n₁ = 50 every candidate's expected radius is ∞, and the NMI alone picked PolyOpt, whose radius is
    larger than SRR's at every size where it is finite (on race × education: ∞ until 10⁶ reports, where SRR's
    is 0.34). The comparison moves to 10× n₁, 100× n₁, …: the choice is the one a finite radius makes."""
    small = design_pilot(ALPHABET, 1.0, planned_reports=50, time_budget=5.0)
    assert all(c["expected_radius"] == math.inf for c in small.candidates if c.get("identifiable"))
    larger = design_pilot(ALPHABET, 1.0, planned_reports=5_000, time_budget=5.0)
    finite = [c for c in larger.candidates if c.get("identifiable") and math.isfinite(c["expected_radius"])]
    assert len(finite) >= 2  # a real choice at 5,000
    assert small.document["method"] == larger.document["method"] == "srr"


def test_a_small_pilot_keeps_the_pilot_and_says_why(pilot):
    counts = np.random.default_rng(1).multinomial(2_000, report_matrix(pilot) @ TRUTH.ravel())
    outcome = switch_after_pilot(DesignRequest(method="srr", epsilon=1.0), pilot, counts.tolist())
    assert not outcome.switch and outcome.nmi <= outcome.pilot_nmi
    assert "kept the pilot" in outcome.reason and "more pilot reports" in outcome.reason


def test_a_design_that_ties_the_pilot_up_to_round_off_keeps_the_pilot(pilot, monkeypatch):
    """Two designs for every distribution can tie up to a solver's round-off: a switch on a tie would swap the
    pilot for an equal mechanism on noise (the demo switched, or not, from run to run)."""
    from rldp.aggregator.design.orchestration import pilot as module

    counts = np.random.default_rng(1).multinomial(2_000, report_matrix(pilot) @ TRUTH.ravel())
    for above, switches in ((1e-12, False), (1e-3, True)):
        scores = iter([0.0675, 0.0675 * (1 + above)])  # the pilot's NMI, then the design's
        monkeypatch.setattr(module, "normalized_mutual_information", lambda q, p, scores=scores: next(scores))
        outcome = switch_after_pilot(DesignRequest(method="srr", epsilon=1.0), pilot, counts.tolist())
        assert outcome.switch is switches, (above, outcome.reason)


@pytest.mark.slow
def test_a_large_pilot_switches_to_a_design_over_its_confidence_set(pilot, tmp_path):
    counts = np.random.default_rng(2).multinomial(2_000_000, report_matrix(pilot) @ TRUTH.ravel())
    outcome = switch_after_pilot(
        DesignRequest(method="polyopt", epsilon=1.0, time_budget=5.0), pilot, counts.tolist(), collection="app"
    )
    assert outcome.switch and outcome.nmi > outcome.pilot_nmi, outcome.reason
    doc = outcome.document
    prov = doc["provenance"]
    assert prov["source"] == "pilot" and prov["pilot_mechanism"] == pilot["id"] and prov["n"] == 2_000_000
    assert prov["collection"] == "app" and math.isfinite(outcome.radius)
    assert audit_document(doc).passed
    assert realised_epsilon(report_matrix(doc), TRUTH) <= 1.0 + 1e-9  # the true P lies in F here
    # rldp audit --pilot recomputes P̂ and the radius from the counts the provenance records.
    write_document(doc, tmp_path / "m.json")
    write_document(pilot, tmp_path / "pilot.json")
    proc = run("audit", tmp_path / "m.json", "--pilot", tmp_path / "pilot.json", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["pilot"]["passed"] is True
    # ... and a document that claims the same pilot with a shrunk radius fails it.
    shrunk = design_from(PilotData(pilot, counts.tolist(), 0.05), DesignRequest(method="srr", epsilon=1.0), ALPHABET)
    shrunk["privacy"]["uncertainty"]["radius"] /= 2
    shrunk.pop("id")
    rebuilt = build_document(
        method=shrunk["method"],
        matrix=mechanism_matrix(shrunk),
        alphabet=ALPHABET,
        public_distribution=np.asarray(shrunk["public_distribution"]),
        privacy=shrunk["privacy"],
        extra={"provenance": shrunk["provenance"]},
    )
    write_document(rebuilt, tmp_path / "shrunk.json")
    proc = run("audit", tmp_path / "shrunk.json", "--pilot", tmp_path / "pilot.json")
    assert proc.returncode == 1 and "radius" in proc.stdout, proc.stdout + proc.stderr


def test_a_pilot_source_sets_the_radius_itself(pilot):
    counts = np.random.default_rng(3).multinomial(50_000, report_matrix(pilot) @ TRUTH.ravel())
    with pytest.raises(DesignParameterError, match="takes its radius from the pilot"):
        design_from(
            PilotData(pilot, counts.tolist(), 0.05), DesignRequest(method="srr", epsilon=1.0, beta=0.05), ALPHABET
        )


def test_a_latent_pilot_is_refused():
    latent = Alphabet(ALPHABET.sensitive, ALPHABET.released, latent=True)
    with pytest.raises(DesignError, match="latent"):
        design_pilot(latent, 1.0, planned_reports=100)


def test_a_pilot_design_at_a_large_beta_is_refused_by_the_client_and_the_service(pilot, tmp_path):
    """A pilot document states its β in its provenance (its uncertainty block has only the radius): the
    trust checks read it there too, so β = 0.5 (a far smaller F) cannot slip past max_beta / MAX_BETA."""
    from rldp_live import ADMIN, in_process_app

    from rldp.client import Mechanism, MechanismRejected
    from rldp.shared.provenance import stated_beta

    counts = np.random.default_rng(4).multinomial(200_000, report_matrix(pilot) @ TRUTH.ravel())
    doc = design_from(PilotData(pilot, counts.tolist(), 0.5), DesignRequest(method="srr", epsilon=1.0), ALPHABET)
    assert "beta" not in doc["privacy"]["uncertainty"] and stated_beta(doc) == 0.5
    with pytest.raises(MechanismRejected, match="beta = 0.5, above max_beta = 0.05"):
        Mechanism.from_document(doc)
    with in_process_app(tmp_path) as app:
        resp = app.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 422 and "beta = 0.5" in resp.json["detail"], resp.json


def test_the_pilot_collects_by_day_and_its_switch_keeps_its_window(pilot):
    """Windows by default (issue 24): the pilot collects by P1D, and the design that ends it collects by the
    pilot's window whatever its request says (a collection's mechanisms share one window)."""
    assert pilot["collection"]["window"] == "P1D"
    counts = np.random.default_rng(4).multinomial(2_000, report_matrix(pilot) @ TRUTH.ravel())
    for asked in ("PT6H", None):
        outcome = switch_after_pilot(DesignRequest(method="srr", epsilon=1.0, window=asked), pilot, counts.tolist())
        assert outcome.document["collection"]["window"] == "P1D", asked
    bare = design_pilot(ALPHABET, 1.0, planned_reports=10_000, time_budget=5.0, window=None).document
    outcome = switch_after_pilot(DesignRequest(method="srr", epsilon=1.0), bare, counts.tolist())
    assert "collection" not in bare and "collection" not in outcome.document
