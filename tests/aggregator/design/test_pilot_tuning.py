"""A design over a pilot's F is tuned to the pilot's estimate kept in its box (not F's centre), and a
rank-deficient one is completed by a share of SRR reports so that every cell stays identifiable
(:mod:`rldp.aggregator.design.orchestration.pilot_tuning`). F, and so the claim, is the same either way."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import DesignRequest, design, srr_matrix
from rldp.aggregator.design.orchestration.build import design_document
from rldp.aggregator.design.orchestration.pilot import switch_after_pilot
from rldp.aggregator.design.orchestration.pilot_tuning import IDENTIFYING_SHARE, PilotTuning
from rldp.aggregator.design.orchestration.sources import PilotData, design_from
from rldp.shared.audit import audit_document
from rldp.shared.document import report_matrix
from rldp.shared.errors import ValidationError
from rldp.shared.information import mutual_information, normalized_mutual_information
from rldp.shared.records import Alphabet

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "race", "values": list("abcde")}]}
)
# Adult's sex × race: four of the ten cells below 0.006.
TRUTH = np.array([[0.0037, 0.0106, 0.0478, 0.0033, 0.2654], [0.0059, 0.0213, 0.0482, 0.005, 0.5888]])
TRUTH = TRUTH / TRUTH.sum()
N1 = 1_000  # a small pilot: F is wide (radius ≈ 0.7) and its centre puts no mass on the rare cells
REQUEST = DesignRequest(method="polyopt", epsilon=1.0)


@pytest.fixture(scope="module")
def pilot() -> dict:
    return design("srr", alphabet=ALPHABET, public_distribution=np.full((2, 5), 0.1), epsilon=1.0, radius=math.inf)


@pytest.fixture(scope="module")
def source(pilot) -> PilotData:
    counts = np.random.default_rng(3).multinomial(N1, report_matrix(pilot) @ TRUTH.ravel())
    return PilotData(pilot, counts.tolist(), 0.05)


@pytest.fixture(scope="module")
def tuned(source) -> dict:
    return design_from(source, REQUEST, ALPHABET)


def _over(source: PilotData, tuning: PilotTuning | None) -> dict:
    return design_document(
        source.bind(REQUEST),
        alphabet=ALPHABET,
        public_distribution=source.distribution,
        provenance=source.provenance(),
        box=source.box,
        tuning=tuning,
    )


def _cramer_rao(matrices: list[np.ndarray], reports: list[int], p: np.ndarray) -> float:
    """trace of the inverse Fisher information of n_i reports through Q_i about P on the simplex (∞ when some
    direction of P is not identified): the least total variance of an unbiased estimate of P."""
    info = sum(n * (q.T / np.maximum(q @ p, 1e-300)) @ q for q, n in zip(matrices, reports, strict=True))
    k = p.size
    basis = np.linalg.qr(np.eye(k) - 1.0 / k)[0][:, : k - 1]  # the simplex's tangent space (Σ dP = 0)
    reduced = basis.T @ info @ basis
    if np.linalg.matrix_rank(reduced) < k - 1:
        return math.inf
    return float(np.trace(np.linalg.inv(reduced)))


def test_the_design_is_tuned_to_the_estimate_kept_in_the_box_and_f_is_unchanged(source, tuned):
    point = source.design_point
    assert point.shape == (2, 5) and abs(point.sum() - 1) < 1e-12 and np.all(point >= 0)
    assert np.any((source.distribution == 0) & (point > 0)), "the centre misses cells the estimate keeps"
    np.testing.assert_allclose(tuned["parameters"]["objective"]["distribution"], point)
    np.testing.assert_array_equal(np.array(tuned["public_distribution"]), source.distribution)
    assert tuned["privacy"]["uncertainty"]["radius"] == source.confidence_set.radius
    assert audit_document(tuned).passed
    at_centre = _over(source, None)
    assert "objective" not in at_centre["parameters"]
    nmi = normalized_mutual_information(report_matrix(tuned), TRUTH.ravel())
    assert nmi > normalized_mutual_information(report_matrix(at_centre), TRUTH.ravel())


def test_a_rank_deficient_design_is_completed_by_a_share_of_srr_and_passes_its_audit(source, tuned):
    uncompleted = report_matrix(_over(source, PilotTuning(source.design_point, identifying_share=0.0)))
    rank = int(np.linalg.matrix_rank(uncompleted))
    assert rank < ALPHABET.size, "this pilot's tuned design merges cells (else the test shows nothing)"
    block = tuned["parameters"]["identifiability"]
    assert block == {**block, "rank": rank, "completed_with": "srr", "share": IDENTIFYING_SHARE}
    q = report_matrix(tuned)
    assert np.linalg.matrix_rank(q) == ALPHABET.size
    np.testing.assert_allclose(q[: len(uncompleted)], (1 - IDENTIFYING_SHARE) * uncompleted, atol=1e-12)
    np.testing.assert_allclose(q[len(uncompleted) :], IDENTIFYING_SHARE * srr_matrix(2, 5, 1.0), atol=1e-15)
    assert audit_document(tuned).passed
    # I(X; Y) of a disjoint union is the mixture of the two: the completion costs exactly a share λ of the gap.
    p = TRUTH.ravel()
    mixed = (1 - IDENTIFYING_SHARE) * mutual_information(uncompleted, p) + IDENTIFYING_SHARE * mutual_information(
        srr_matrix(2, 5, 1.0), p
    )
    assert mutual_information(q, p) == pytest.approx(mixed, rel=1e-9)


def test_the_completion_keeps_the_two_phase_estimate_precise(pilot, source, tuned):
    """Without the completion the cells the design merges are told apart by the pilot's 10³ reports alone, whatever
    the reports after the switch: the least variance of the two-phase estimate is then ~ that of the pilot."""
    uncompleted = report_matrix(_over(source, PilotTuning(source.design_point, identifying_share=0.0)))
    p, after = TRUTH.ravel(), 2_000_000
    pilot_q = report_matrix(pilot)
    before = _cramer_rao([pilot_q, uncompleted], [N1, after], p)
    now = _cramer_rao([pilot_q, report_matrix(tuned)], [N1, after], p)
    pilot_alone = _cramer_rao([pilot_q], [N1], p)
    assert before > pilot_alone / 10, (before, pilot_alone)  # merged cells: the pilot's precision, near enough
    assert now < before / 20, (now, before)  # every cell now learned from 5 % of 2·10⁶ reports


def test_a_full_rank_design_task_design_or_zero_share_is_left_alone(pilot):
    counts = np.random.default_rng(7).multinomial(1_000_000, report_matrix(pilot) @ TRUTH.ravel())
    source = PilotData(pilot, counts.tolist(), 0.05)
    doc = design_from(source, REQUEST, ALPHABET)
    assert np.linalg.matrix_rank(report_matrix(_over(source, PilotTuning(source.design_point, 0.0)))) == 10
    assert "identifiability" not in doc["parameters"] and "objective" in doc["parameters"]
    small = PilotData(pilot, np.random.default_rng(3).multinomial(N1, report_matrix(pilot) @ TRUTH.ravel()), 0.05)
    task = design_from(small, DesignRequest(method="polyopt", epsilon=1.0, task="distribution"), ALPHABET)
    assert "identifiability" not in task["parameters"] and audit_document(task).passed
    with pytest.raises(ValidationError, match="identifying_share must be in"):
        PilotTuning(source.design_point, identifying_share=1.0)


def test_the_switch_compares_both_utilities_at_the_pilots_estimate(pilot, source, tuned):
    switch = switch_after_pilot(REQUEST, pilot, list(source.counts))
    point = source.design_point.ravel()
    assert switch.nmi == pytest.approx(normalized_mutual_information(report_matrix(switch.document), point))
    assert switch.pilot_nmi == pytest.approx(normalized_mutual_information(report_matrix(pilot), point))
    assert "at the pilot's estimate" in switch.reason


def test_only_the_designer_that_used_the_objective_states_it(source):
    """``parameters.objective`` is PolyOpt's statement of where its figures are; a task design that kept
    randomised response on U (which never saw the objective) does not carry it."""
    task = design_from(source, DesignRequest(method="polyopt", epsilon=1.0, task="distribution"), ALPHABET)
    chosen = task["parameters"]["task"]["chosen"]
    assert ("objective" in task["parameters"]) == (chosen == "polyopt"), chosen
    grr = design_from(source, DesignRequest(method="grr", epsilon=1.0), ALPHABET)
    assert "objective" not in grr["parameters"]


def test_no_nr_bound_is_claimed_at_an_objective_outside_f(source, monkeypatch):
    """The NR bound at a point bounds every (ε, F)-RLDP mechanism only if the point is in F (P̂ is; the pilot's
    estimate need not be): column-generation PolyOpt computes it at P̂ only."""
    from rldp.aggregator.design.solvers import polyopt as module

    calls = []
    real = module.solve_nr_cg
    monkeypatch.setattr(module, "solve_nr_cg", lambda *a, **k: calls.append(1) or real(*a, **k))
    request = DesignRequest(method="polyopt", epsilon=1.0, solver="cg", time_budget=2.0)
    with_objective = design_document(
        source.bind(request),
        alphabet=ALPHABET,
        public_distribution=source.distribution,
        box=source.box,
        tuning=source.tuning,
    )
    assert not calls and "nr-lagrangian" not in with_objective["parameters"]["upper_bounds"]
    assert "objective" in with_objective["parameters"]
    design_document(source.bind(request), alphabet=ALPHABET, public_distribution=source.distribution, box=source.box)
    assert calls, "without an objective the NR bound is computed (at P̂ ∈ F)"
