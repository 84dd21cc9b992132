"""A pilot's F is the ball ∩ its confidence box (construction v5): the design over it keeps more of X than
over the ball alone, its audit needs the box, the box is recomputed from the provenance like the radius,
and the drift watch holds the population to the box too."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from rldp.aggregator.design import DesignRequest, design, srr_matrix
from rldp.aggregator.design.orchestration.sources import PilotData, design_from
from rldp.aggregator.estimate.ball_fit import ball_fit, certified_lower_bound
from rldp.shared.audit import audit_document
from rldp.shared.divergence import renyi_divergence
from rldp.shared.document import content_id, report_matrix, validate_document
from rldp.shared.errors import DocumentError
from rldp.shared.information import normalized_mutual_information
from rldp.shared.pilot import CONSTRUCTION, pilot_confidence_set, pilot_mismatches
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "race", "values": list("abcde")}]}
)
# Adult's sex × race: four of the ten cells below 0.006.
TRUTH = np.array([[0.0037, 0.0106, 0.0478, 0.0033, 0.2654], [0.0059, 0.0213, 0.0482, 0.005, 0.5888]])
TRUTH = TRUTH / TRUTH.sum()
N1 = 1_000_000


@pytest.fixture(scope="module")
def pilot() -> dict:
    return design("srr", alphabet=ALPHABET, public_distribution=np.full((2, 5), 0.1), epsilon=1.0, radius=math.inf)


@pytest.fixture(scope="module")
def counts(pilot) -> list[int]:
    return np.random.default_rng(7).multinomial(N1, report_matrix(pilot) @ TRUTH.ravel()).tolist()


@pytest.fixture(scope="module")
def switched(pilot, counts) -> dict:
    return design_from(PilotData(pilot, counts, 0.05), DesignRequest(method="polyopt", epsilon=1.0), ALPHABET)


def _without_box(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    del out["privacy"]["uncertainty"]["box"]
    out.pop("audit", None)
    out["id"] = content_id(out)
    return out


def test_the_switched_design_states_the_box_and_keeps_more_than_over_the_ball_alone(pilot, counts, switched):
    assert switched["provenance"]["construction"] == CONSTRUCTION
    box = switched["privacy"]["uncertainty"]["box"]
    pset = pilot_confidence_set(report_matrix(pilot), counts, 0.05, shape=(2, 5))
    np.testing.assert_array_equal(np.array(box["lower"]), pset.lower)
    assert np.all(np.array(box["lower"]) <= TRUTH) and np.all(TRUTH <= np.array(box["upper"]))
    result = audit_document(validate_document(switched))
    assert result.passed and result.epsilon > 0.99
    ball_only = PilotData(pilot, counts, 0.05)
    object.__setattr__(ball_only, "confidence_set", pset.__class__(**{**pset.__dict__, "box": None}))
    over_ball = design_from(ball_only, DesignRequest(method="polyopt", epsilon=1.0), ALPHABET)
    assert "box" not in over_ball["privacy"]["uncertainty"]
    with_box = normalized_mutual_information(report_matrix(switched), TRUTH.ravel())
    without = normalized_mutual_information(report_matrix(over_ball), TRUTH.ravel())
    assert with_box > without + 0.03, (with_box, without)


def test_the_audit_needs_the_box_the_design_was_made_for(switched):
    stripped = _without_box(switched)
    result = audit_document(validate_document(stripped))
    assert not result.passed and result.epsilon > 1.0


def test_the_box_is_recomputed_from_the_provenance_and_may_not_be_narrower(pilot, switched):
    q, pid = report_matrix(pilot), pilot["id"]
    assert pilot_mismatches(switched, q, pid) == []
    narrower = copy.deepcopy(switched)
    narrower["privacy"]["uncertainty"]["box"]["lower"][0][4] += 1e-3
    [(field, *_, message)] = pilot_mismatches(narrower, q, pid)
    assert field == "box" and "narrower than the pilot's confidence box" in message
    wider = copy.deepcopy(switched)
    wider["privacy"]["uncertainty"]["box"]["upper"][1][4] = 1.0
    assert pilot_mismatches(wider, q, pid) == []
    older = copy.deepcopy(switched)
    older["provenance"]["construction"] = "empirical-bernstein-box/v4"
    assert [m[0] for m in pilot_mismatches(older, q, pid)] == ["box"]


def test_a_document_with_a_box_of_another_shape_is_refused_naming_it(switched):
    bad = copy.deepcopy(switched)
    bad["privacy"]["uncertainty"]["box"]["lower"] = [[0.0] * 5]
    with pytest.raises(DocumentError, match=r"privacy\.uncertainty\.box\.lower has shape \(1, 5\); expected 2×5"):
        validate_document(bad)
    bad["privacy"]["uncertainty"]["box"] = {"lower": [[0.0] * 5] * 2}
    with pytest.raises(DocumentError, match="exactly the fields 'lower' and 'upper'"):
        validate_document(bad)


def test_the_watch_holds_the_population_to_the_box_too():
    """A population inside the ball but outside the box: the certified divergence from Q·F is larger with the
    box than over the ball alone (the watch's statistic), and 0 for the honest population."""
    q = srr_matrix(2, 5, 1.0)
    pset = pilot_confidence_set(q, np.rint(q @ TRUTH.ravel() * N1), 0.05)
    ball = UncertaintySet(pset.center.reshape(1, -1), pset.radius)
    boxed = UncertaintySet(pset.center.reshape(1, -1), pset.radius, box=(pset.lower[None, :], pset.upper[None, :]))
    moved = TRUTH.ravel().copy()
    moved[4] += 0.02  # the common Female cell, well past its box; the ball still holds it
    moved[9] -= 0.02
    assert moved[4] > pset.upper[4]
    qhat = q @ moved
    fits = {name: ball_fit(qhat, q, s, moved, 100_000) for name, s in (("ball", ball), ("box", boxed))}
    assert np.all(fits["box"] >= pset.lower - 1e-12) and np.all(fits["box"] <= pset.upper + 1e-12)
    at_ball = certified_lower_bound(qhat, q, fits["ball"], ball)
    at_box = certified_lower_bound(qhat, q, fits["box"], boxed)
    # in 100,000 reports: 2n·KL = 0 over the ball, > 10 once the box counts (the watch's certified statistic)
    assert at_ball < 1e-9 and 2 * 100_000 * at_box > 10, (at_box, at_ball)
    # the honest population (inside the box) is explained by the box too
    honest = q @ TRUTH.ravel()
    assert certified_lower_bound(honest, q, ball_fit(honest, q, boxed, TRUTH.ravel(), 100_000), boxed) < 1e-7


def test_f_holds_a_distribution_only_inside_both_the_ball_and_the_box(pilot, counts):
    pset = pilot_confidence_set(report_matrix(pilot), counts, 0.05, shape=(2, 5))
    assert pset.holds(TRUTH)
    moved = TRUTH.copy()
    moved[0, 4] += 0.02
    moved[1, 4] -= 0.02
    assert not pset.holds(moved)
    assert renyi_divergence(pset.center.ravel(), moved.ravel(), 2.0) <= pset.radius


def test_the_watch_of_a_boxed_document_flags_a_population_that_left_the_box(pilot, counts):
    """Through :func:`watch` (the service's path): 10⁶ reports from a population inside the ball but past the box
    are flagged for the document as published, and not for the same design stated over the ball alone (log
    e-value 74.0 with the box against a threshold of 3.7; −59.6 without). GRR: a design with no time budget."""
    from rldp.aggregator.estimate.drift import watch

    boxed = design_from(PilotData(pilot, counts, 0.05), DesignRequest(method="grr", epsilon=1.0), ALPHABET)
    box = boxed["privacy"]["uncertainty"]["box"]
    moved = TRUTH.copy()
    moved[0, 4] = box["upper"][0][4] + 0.03  # past the common cell's upper bound
    moved[1, 4] -= moved[0, 4] - TRUTH[0, 4]
    centre = np.array(boxed["public_distribution"]).ravel()
    assert renyi_divergence(centre, moved.ravel(), 2.0) < boxed["privacy"]["uncertainty"]["radius"]
    reports = np.rint(report_matrix(boxed) @ moved.ravel() * 1_000_000)
    assert watch(validate_document(boxed), reports, contamination=0.0).rejected
    assert not watch(validate_document(_without_box(boxed)), reports, contamination=0.0).rejected
