"""The pilot's confidence set: it holds the true P in ≥ 1 − β of simulated pilots (with its Monte-Carlo
error), where the public-data radius misapplied to the pilot's estimate does not; its provenance is
recomputed exactly and a tampered document is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import adult_path

from rldp.aggregator.design import design, grr_matrix, srr_matrix
from rldp.shared.divergence import confidence_radius, renyi_divergence
from rldp.shared.errors import DocumentError, ValidationError
from rldp.shared.pilot import (
    CONSTRUCTION,
    expected_pilot_radius,
    left_inverse,
    pilot_confidence_set,
    pilot_mismatches,
    pilot_provenance,
    validate_pilot_provenance,
)
from rldp.shared.provenance import validate_provenance
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv

BETA = 0.05
PILOTS = 1000


def _adult(sensitive: str, released: str) -> np.ndarray:
    from helpers import ADULT_COLUMNS

    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(table, sensitive, [released])
    return alphabet.empirical_distribution(table)


def _coverage(q: np.ndarray, truth: np.ndarray, n1: int, pilots: int, seed: int) -> tuple[float, float]:
    """(coverage of the pilot's ball, coverage of the χ² ball of n₁ public samples around its estimate)."""
    rng = np.random.default_rng(seed)
    p = truth.ravel()
    inside = naive = 0
    radius_naive = confidence_radius(n1, BETA, p.size, 2.0)
    for counts in rng.multinomial(n1, q @ p, size=pilots):
        pset = pilot_confidence_set(q, counts, BETA)
        inside += renyi_divergence(pset.center, p, 2.0) <= pset.radius
        est = np.clip(pset.estimate, 1e-12, None)
        naive += renyi_divergence(est / est.sum(), p, 2.0) <= radius_naive
    return inside / pilots, naive / pilots


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pair", "n1", "pilots"),
    [(("sex", "race"), 20_000, PILOTS), (("race", "education"), 200_000, 300)],
    ids=["sex-race-10-symbols", "race-education-80-symbols"],
)
def test_the_true_p_lies_in_the_pilots_confidence_set(pair, n1, pilots):
    truth = _adult(*pair)
    q = srr_matrix(truth.shape[0], truth.shape[1], 1.0)
    covered, naive = _coverage(q, truth, n1, pilots, seed=11)
    # The claim: coverage ≥ 1 − β. Tolerance: 3 Monte-Carlo standard errors at the claimed rate.
    se = math.sqrt(BETA * (1 - BETA) / pilots)
    assert covered >= 1 - BETA - 3 * se, (covered, se)
    # The multinomial radius for public data ignores the privatisation noise: far too small here.
    assert naive < 0.5, naive


@pytest.mark.slow
def test_the_radius_shrinks_with_the_pilot_and_is_infinite_for_a_tiny_one():
    truth = _adult("sex", "race").ravel()
    q = srr_matrix(2, 5, 1.0)
    radii = [expected_pilot_radius(q, truth, n, BETA) for n in (100, 10_000, 1_000_000)]
    assert math.isinf(radii[0]) and radii[1] > radii[2] > 0


def test_a_pilot_that_cannot_identify_p_is_refused():
    rank_two = np.array([[0.5, 0.5, 0.2], [0.5, 0.5, 0.8]])
    with pytest.raises(ValidationError, match="rank 2 < |X| = 3"):
        left_inverse(rank_two)
    with pytest.raises(ValidationError, match="at least 2 reports"):
        pilot_confidence_set(grr_matrix(3, 1.0), [1, 0, 0], BETA)
    with pytest.raises(ValidationError, match="whole numbers"):
        pilot_confidence_set(grr_matrix(3, 1.0), [1.5, 2, 3], BETA)


@pytest.mark.slow
def test_orders_above_two_use_the_box_ball_only():
    q = srr_matrix(2, 5, 1.0)
    counts = np.random.default_rng(3).multinomial(10**7, q @ _adult("sex", "race").ravel())
    two, three = pilot_confidence_set(q, counts, BETA, 2.0), pilot_confidence_set(q, counts, BETA, 3.0)
    assert two.radius < three.radius  # at 10⁷ reports the χ² ball (α ≤ 2) is the smaller one
    assert math.isclose(three.radius, -math.log(three.lower.sum()))


def _pilot_design(radius: float, counts: list[int], pilot_id: str) -> tuple[dict, np.ndarray]:
    alphabet = Alphabet.from_dict(
        {
            "sensitive": {"name": "sex", "values": ["F", "M"]},
            "released": [{"name": "colour", "values": ["r", "g", "b"]}],
        }
    )
    q = srr_matrix(2, 3, 1.0)
    pset = pilot_confidence_set(q, counts, BETA, shape=(2, 3))
    prov = pilot_provenance(pilot_id=pilot_id, counts=counts, beta=BETA, columns=["sex", "colour"])
    doc = design("grr", alphabet=alphabet, public_distribution=pset.center, epsilon=1.0, radius=radius, provenance=prov)
    return doc, q


def test_the_provenance_is_recomputed_and_a_smaller_radius_is_caught():
    counts = [4000, 3000, 1000, 1500, 2500, 3000]
    pilot_id = "ab" * 32
    pset = pilot_confidence_set(srr_matrix(2, 3, 1.0), counts, BETA, shape=(2, 3))
    doc, q = _pilot_design(pset.radius, counts, pilot_id)
    assert doc["provenance"]["construction"] == CONSTRUCTION
    assert pilot_mismatches(doc, q, pilot_id) == []
    smaller, _ = _pilot_design(pset.radius / 2, counts, pilot_id)
    [(field, *_rest)] = pilot_mismatches(smaller, q, pilot_id)
    assert field == "radius"
    assert pilot_mismatches(doc, q, "cd" * 32)[0][0] == "pilot_mechanism"


def test_pilot_provenance_is_checked_for_form():
    good = pilot_provenance(pilot_id="ab" * 32, counts=[1, 2, 3], beta=BETA, columns=["s", "u"])
    assert validate_provenance(good) == good
    for broken, message in (
        ({**good, "n": 7}, "sum to 6"),
        ({**good, "beta": 0.0}, "provenance.beta"),
        ({**good, "construction": "other/v9"}, "not one this version recomputes"),
        ({**good, "counts": [1, -2]}, "whole numbers"),
    ):
        with pytest.raises(DocumentError, match=message):
            validate_pilot_provenance(broken)


def test_the_box_both_balls_hold_is_simultaneous_at_beta():
    """[issue 34, point 4] The χ² ball uses lower and upper bounds: 2K one-sided statements, each at
    β/(2K) (ln(4K/β)), and the box ball is built from the same box, so the ball kept holds with
    probability ≥ 1 − β (v2 took every side at β/K: ≥ 1 − 2β only). Orders > 2 use lower bounds only."""
    q = srr_matrix(2, 3, 1.0)
    counts = np.random.default_rng(3).multinomial(5000, q @ np.full(6, 1 / 6))
    a, qhat, n, k = left_inverse(q), counts / 5000, 5000, 6
    estimate = a @ qhat
    variance = np.maximum((a * a) @ qhat - estimate**2, 0.0) * n / (n - 1)
    span = a.max(axis=1) - a.min(axis=1)

    def width(log_term: float) -> np.ndarray:
        return np.sqrt(2 * variance * log_term / n) + 7 * span * log_term / (3 * (n - 1))

    two_sided = pilot_confidence_set(q, counts, BETA, 2.0, construction="empirical-bernstein-box/v3")
    np.testing.assert_allclose(two_sided.upper, np.clip(estimate + width(math.log(4 * k / BETA)), 0, 1), rtol=1e-12)
    np.testing.assert_allclose(two_sided.lower, np.clip(estimate - width(math.log(4 * k / BETA)), 0, 1), rtol=1e-12)
    lower_only = pilot_confidence_set(q, counts, BETA, 3.0)
    np.testing.assert_allclose(lower_only.lower, np.clip(estimate - width(math.log(2 * k / BETA)), 0, 1), rtol=1e-12)


@pytest.mark.slow
def test_forged_pilot_reports_within_the_budget_keep_the_honest_p_inside():
    """[issue 34, point 1] A forger who knows Q puts a share γ of the pilot's reports on the output that moves
    P̂ furthest towards the rarest cell. With the contamination budget γ the set still holds the honest P in
    ≥ 1 − β of pilots (3 Monte-Carlo standard errors); built as if no report were forged, it misses it."""
    truth = _adult("sex", "race")
    p = truth.ravel()
    q = srr_matrix(2, 5, 1.0)
    a = left_inverse(q)
    rare = int(np.argmin(p))
    worst = int(np.argmax(a[rare]))  # the output whose report raises the rare cell's estimate most
    gamma, n1, pilots = 0.01, 1_000_000, 400
    forged = int(gamma * n1)
    rng = np.random.default_rng(21)
    robust = naive = 0
    for honest in rng.multinomial(n1 - forged, q @ p, size=pilots):
        counts = honest.copy()
        counts[worst] += forged
        robust += _covers(pilot_confidence_set(q, counts, BETA, contamination=gamma), p)
        naive += _covers(pilot_confidence_set(q, counts, BETA), p)
    se = math.sqrt(BETA * (1 - BETA) / pilots)
    assert robust / pilots >= 1 - BETA - 3 * se, robust
    assert naive / pilots < 0.5, naive


def _covers(pset, p: np.ndarray) -> bool:
    return bool(renyi_divergence(pset.center.ravel(), p, 2.0) <= pset.radius)
