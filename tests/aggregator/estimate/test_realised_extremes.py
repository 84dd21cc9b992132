"""The box extremes behind the realised ε* interval, fast (issue 34, point 7: an estimate's drift object at
K = 4,000): :func:`box_ratio_extremes` (Dinkelbach's iteration, no row sorted) gives the values of the
sorting method :func:`box_ratio_max`, which it replaced in :func:`realised`, up to round-off — on random,
tied, GRR-like and vanishing boxes, when a row is left to the sorting method, and for the interval the
drift watch shows."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import adult_sex_race_polyopt

import rldp.aggregator.estimate.realised as realised_module
from rldp.aggregator.design import grr_matrix
from rldp.aggregator.estimate import estimate_distribution
from rldp.aggregator.estimate.realised import (
    box_ratio_extremes,
    box_ratio_max,
    realised,
    simultaneous_box,
)
from rldp.shared.audit import joint_matrix
from rldp.shared.document import mechanism_matrix, public_distribution


def _by_sorting(a: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return box_ratio_max(a, low, high), -box_ratio_max(-a, low, high)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite) and np.array_equal(got[~finite], want[~finite])
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-300)


def _cases(rng: np.random.Generator):
    for trial in range(400):
        k, rows = int(rng.integers(1, 30)), int(rng.integers(1, 20))
        kind = trial % 4
        if kind == 0:
            a = rng.random((rows, k))
        elif kind == 1:  # many ties
            a = rng.integers(0, 3, (rows, k)) / 3.0
        elif kind == 2:  # GRR-like: one value per row and another everywhere else
            a = np.full((rows, k), 0.1)
            a[np.arange(rows), rng.integers(0, k, rows)] = 0.7
        else:  # heavy-tailed
            a = rng.random((rows, k)) ** 6
        low = rng.random(k) * (rng.random(k) < 0.7)
        high = low + rng.random(k) * (rng.random(k) < 0.8)
        if trial % 5 == 0:
            low[:] = 0.0  # a box that holds each x = h_u e_u
        if trial % 50 == 0:
            high[:] = 0.0
        yield a, low, high


def test_the_extremes_are_the_sorting_method_s_and_need_no_sorting(monkeypatch):
    sorted_rows = []
    monkeypatch.setattr(
        realised_module, "box_ratio_max", lambda a, lo, hi: sorted_rows.append(len(a)) or box_ratio_max(a, lo, hi)
    )
    for a, low, high in _cases(np.random.default_rng(11)):
        top, bottom = box_ratio_extremes(a, low, high)
        want_top, want_bottom = _by_sorting(a, low, high)
        _same(top, want_top)
        _same(bottom, want_bottom)
    assert sorted_rows == []  # every row settled by Dinkelbach's steps
    for low in (np.zeros(3), np.full(3, 0.1)):  # no rows: nothing, for either kind of box
        assert [x.shape for x in box_ratio_extremes(np.zeros((0, 3)), low, np.full(3, 0.2))] == [(0,), (0,)]


def test_a_row_still_moving_after_the_last_step_is_decided_by_sorting(monkeypatch):
    monkeypatch.setattr(realised_module, "_STEPS", 1)
    for a, low, high in _cases(np.random.default_rng(12)):
        top, bottom = box_ratio_extremes(a, low, high)
        want_top, want_bottom = _by_sorting(a, low, high)
        _same(top, want_top)
        _same(bottom, want_bottom)


def test_large_rows_are_taken_in_chunks_with_the_same_values(monkeypatch):
    rng = np.random.default_rng(13)
    a = rng.random((300, 64)) ** 3
    low, high = rng.random(64) * 0.01, rng.random(64) * 0.01 + 0.01
    whole = box_ratio_extremes(a, low, high)
    monkeypatch.setattr(realised_module, "_CHUNK_ENTRIES", 64 * 7)  # 7 rows at a time, a partial last chunk
    for got, want in zip(box_ratio_extremes(a, low, high), whole, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(whole, _by_sorting(a, low, high), strict=True):
        _same(got, want)


def _interval_by_sorting(matrix: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    """[L, U] as realised() computed them before (the extremes by sorting every row)."""
    k = low.shape[0]
    q = joint_matrix(matrix, k, low.shape[1]).reshape(-1, k, low.shape[1])
    top = np.stack([box_ratio_max(q[:, s, :], low[s], high[s]) for s in range(k)], axis=1)
    bottom = np.maximum(np.stack([-box_ratio_max(-q[:, s, :], low[s], high[s]) for s in range(k)], axis=1), 0.0)
    upper = realised_module._worst_pair(top, bottom)
    return min(realised_module._lower_from(top, bottom, low), upper), upper


@pytest.mark.parametrize("n", [2_000, 200_000, 20_000_000])
def test_the_interval_shown_is_the_one_the_sorting_method_gave(n):
    """The drift watch's example (the sex/race PolyOpt document) and a GRR over 2 × 200 cells, from few
    reports (a box whose low corner is 0) to many (every low > 0: Dinkelbach's steps decide)."""
    rng = np.random.default_rng(n)
    doc = adult_sex_race_polyopt(1.5)
    grr = grr_matrix(400, 1.0)
    for matrix, p_hat in ((mechanism_matrix(doc), public_distribution(doc)), (grr, rng.dirichlet(np.ones(400)))):
        shape = np.shape(p_hat) if np.ndim(p_hat) == 2 else (2, 200)
        truth = rng.dirichlet(np.full(matrix.shape[1], 2.0))
        counts = rng.multinomial(n, matrix @ truth)
        estimate = estimate_distribution(matrix, counts, shape)
        low, high = simultaneous_box(estimate)
        if n == 20_000_000:  # every low > 0: the extremes come from Dinkelbach's steps, not the vanishing box
            assert (low.sum(axis=1) > 0).all()
        shown = realised(matrix, matrix, counts, estimate, np.reshape(p_hat, shape))
        lower, upper = _interval_by_sorting(matrix, low, high)
        # ε* in nats: a log-ratio, so round-off is absolute (1e-15 of each log) and 1e-12 nats is far below it
        assert shown.upper == pytest.approx(upper, rel=1e-12, abs=1e-12), (n, shown, upper)
        assert shown.lower == pytest.approx(lower, rel=1e-12, abs=1e-12), (n, shown, lower)


def test_the_watch_given_the_parsed_report_matrix_answers_as_without_it():
    """The service passes its catalog's parsed report matrix (parsed once per mechanism) instead of letting
    every check expand the document again: the answer is the same, to the last bit."""
    from rldp.aggregator.estimate.drift import watch
    from rldp.shared.document import report_matrix

    doc = adult_sex_race_polyopt(1.5)
    q = report_matrix(doc)
    rng = np.random.default_rng(4)
    counts = rng.multinomial(5_000, q @ public_distribution(doc).ravel())
    estimate = estimate_distribution(q, counts, public_distribution(doc).shape)
    assert watch(doc, counts, estimate, reports=q).to_dict() == watch(doc, counts, estimate).to_dict()
