"""The per-report layer on the client: the memo keeps Y ~ Q(·|x), every report sends y' ~ R(·|Y) afresh.

Against the recording stub aggregator (tests/client/aggregator_stub.py). Two layers:

* ``SPLIT``: |Y'| = 12, y' = Y with probability 0.7 and Y + 6 otherwise. It reveals no less than Y
  (its claim ε₁ = ε), but Y can be read off every report (Y = y' mod 6), so the tests can check
  that the memo holds Y, that every report carries the memoised Y, and that the coin is fresh.
* the designer's layer (rldp.aggregator.design.add_per_report_layer) at ε₁ = 0.5 on GRR(ε = 1):
  one owner's reports over many windows are i.i.d. R(·|Y_memo).

Statistical tolerances are 5 standard errors of the sample sizes used (fixed seeds).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from aggregator_stub import DAY, Clock, grr_document
from service.rldp_live import SMALL_ALPHABET

from rldp.aggregator.design import add_per_report_layer, grr_matrix
from rldp.client import Client, MechanismRejected
from rldp.client.mechanism import Mechanism
from rldp.shared.document import build_document, content_id, report_matrix

KEEP = 0.7
K = SMALL_ALPHABET.size  # |X| = |Y| = 6


def split_layer() -> np.ndarray:
    """R (12 × 6): y' = y w.p. KEEP, y + 6 otherwise."""
    r = np.zeros((2 * K, K))
    r[np.arange(K), np.arange(K)] = KEEP
    r[np.arange(K) + K, np.arange(K)] = 1 - KEEP
    return r


def layered_document(layer: np.ndarray, per_report_epsilon: float, window: str | None = "P1D") -> dict:
    collection: dict = {"per_report": {"matrix": layer.tolist(), "epsilon": per_report_epsilon}}
    if window is not None:
        collection["window"] = window
    return build_document(
        method="grr",
        matrix=grr_matrix(K, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=np.full(SMALL_ALPHABET.shape, 1 / K),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
        extra={"collection": collection},
    )


def memo(path) -> dict[tuple[str, int], int]:
    with sqlite3.connect(path) as conn:
        return {(o, x): y for o, x, y in conn.execute("SELECT owner, x, y FROM memo")}


def within(freq: np.ndarray, p: np.ndarray, n: int) -> bool:
    """Every cell of an empirical distribution of n draws is within 5 standard errors of p."""
    return bool(np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12))


def test_the_mechanism_exposes_both_guarantees_and_both_alphabets():
    doc = add_per_report_layer(grr_document(epsilon=1.0), 0.5)
    mech = Mechanism.from_document(doc)
    assert (mech.outputs, mech.memo_outputs, mech.size) == (K, K, K)
    assert mech.epsilon == 1.0 and mech.epsilon_per_report == 0.5
    assert mech.epsilon_per_report_audited is not None and 0.5 * (1 - 1e-6) < mech.epsilon_per_report_audited <= 0.5
    np.testing.assert_allclose(mech.report_matrix, report_matrix(doc), rtol=0, atol=0)
    split = Mechanism.from_document(layered_document(split_layer(), 1.0))
    assert (split.outputs, split.memo_outputs) == (2 * K, K)
    plain = Mechanism.from_document(grr_document())
    assert plain.per_report is None and plain.epsilon_per_report is None and plain.epsilon_per_report_audited is None


def test_a_document_whose_single_report_claim_fails_is_rejected():
    doc = add_per_report_layer(grr_document(epsilon=1.0), 0.5)
    doc["collection"]["per_report"]["epsilon"] = 0.4  # claims more than the layer gives
    doc["id"] = content_id(doc)
    with pytest.raises(MechanismRejected, match=r"privacy audit failed: per-report guarantee"):
        Mechanism.from_document(doc)


def test_the_memo_stores_y_and_every_window_sends_a_fresh_report_of_it(aggregator, tmp_path):
    doc = layered_document(split_layer(), 1.0)
    agg = aggregator(doc)
    clock = Clock()
    n, windows = 3_000, 20
    owners = np.arange(n)
    path = tmp_path / "s.sqlite3"
    with Client(agg.url, state_path=path, clock=clock, rng=np.random.default_rng(7)) as client:
        labels = []
        for _ in range(windows):
            receipt = client.submit(doc["id"], [("Female", "green"), ("Male", "red")] * (n // 2), owners=owners)
            assert receipt.accepted == n and receipt.skipped == 0
            labels.append(receipt.window)
            clock.now += DAY
    sent = np.array([agg.reports(label) for label in labels])  # (windows, owners)
    stored = memo(path)
    assert len(stored) == n  # one memo entry per owner; never one per report
    y_memo = np.array([stored[(str(o), x)] for o, x in zip(owners, np.tile([1, 5], n // 2), strict=True)])
    assert y_memo.max() < K  # the memo holds Y, never a y' ≥ |Y|
    assert (sent % K == y_memo).all()  # every report is a report of the memoised Y
    high = (sent >= K).astype(float)  # the layer's coin, drawn afresh for every report
    total = high.size
    assert abs(high.mean() - (1 - KEEP)) <= 5 * np.sqrt(KEEP * (1 - KEEP) / total)
    # Fresh across windows: a memoised y' would give per-owner counts with variance windows²·p(1-p) = 84,
    # independent coins windows·p(1-p) = 4.2; the sample variance over 3000 owners is within ~5 % of it.
    per_owner = high.sum(axis=0)
    assert per_owner.var() == pytest.approx(windows * KEEP * (1 - KEEP), rel=0.15)
    both = (high[1:] * high[:-1]).mean()  # consecutive windows: independent coins
    pairs = (windows - 1) * n
    assert abs(both - (1 - KEEP) ** 2) <= 5 * np.sqrt(3 * (1 - KEEP) ** 2 / pairs)


def test_one_owners_reports_over_many_windows_are_iid_draws_of_the_layer(aggregator, tmp_path):
    doc = add_per_report_layer(grr_document(epsilon=1.0, window="P1D"), 0.5)
    r = np.array(doc["collection"]["per_report"]["matrix"])
    agg = aggregator(doc)
    clock = Clock()
    windows = 400
    path = tmp_path / "s.sqlite3"
    with Client(agg.url, state_path=path, clock=clock, rng=np.random.default_rng(8)) as client:
        for _ in range(windows):
            assert client.submit(doc["id"], [("Male", "red")]).accepted == 1
            clock.now += DAY
    reports = np.array(agg.reports())
    ((_, y_memo),) = [(key, y) for key, y in memo(path).items()]
    assert reports.size == windows
    assert within(np.bincount(reports, minlength=K) / windows, r[:, y_memo], windows)
    # Independence: disjoint pairs of windows report the same y' with probability Σ R(y'|y)².
    same = (reports[0::2] == reports[1::2]).astype(float)
    p_same = float((r[:, y_memo] ** 2).sum())
    assert abs(same.mean() - p_same) <= 5 * np.sqrt(p_same * (1 - p_same) / same.size)
    assert len(set(reports.tolist())) > 1  # not the memoised value sent again and again


def test_privatize_with_a_state_file_draws_a_fresh_report_per_call(aggregator, tmp_path):
    doc = layered_document(split_layer(), 1.0, window=None)
    agg = aggregator(doc)
    path = tmp_path / "s.sqlite3"
    records = [("Male", "red")] * 2_000
    with Client(agg.url, state_path=path, rng=np.random.default_rng(9)) as client:
        first = client.privatize(doc["id"], records)
        second = client.privatize(doc["id"], records)
    (y,) = memo(path).values()
    assert set(first.tolist()) | set(second.tolist()) == {y, y + K}  # one memoised Y, both faces of its coin
    assert not np.array_equal(first, second)
    n = first.size + second.size
    assert abs(np.concatenate([first, second]).__ge__(K).mean() - (1 - KEEP)) <= 5 * np.sqrt(KEEP * (1 - KEEP) / n)


def test_without_a_state_file_every_report_is_drawn_from_the_report_matrix(aggregator):
    doc = add_per_report_layer(grr_document(epsilon=1.0), 0.5)
    agg = aggregator(doc)
    n = 60_000
    with Client(agg.url, rng=np.random.default_rng(10), state_path=None) as client:
        ys = client.privatize(doc["id"], [("Female", "green")] * n)
        assert client.submit(doc["id"], [("Female", "green")] * 10).accepted == 10
    x = SMALL_ALPHABET.encode_one(("Female", "green"))
    assert within(np.bincount(ys, minlength=K) / n, report_matrix(doc)[:, x], n)
    assert not within(np.bincount(ys, minlength=K) / n, np.array(doc["matrix"])[:, x], n)  # not Q's column
