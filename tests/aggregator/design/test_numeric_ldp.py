"""The LDP baselines for a numeric U as published matrices (issue 38): ``square-wave`` [LLW20, Sec 4] and
``piecewise`` [WXY19, Sec III-B] — stochastic, ε-LDP on U, equal to the continuous mechanisms bucketised,
audited as documents, sampled by the client, refused on a categorical U, and designed from the CLI."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from rldp.aggregator.design import (
    DesignError,
    auto_methods,
    design,
    design_matrix,
    epsilon_on_u,
    piecewise_matrix,
    square_wave_matrix,
)
from rldp.cli import main
from rldp.client import Mechanism
from rldp.shared.audit import audit_document
from rldp.shared.document import from_json, from_msgpack, mechanism_matrix, read_document, to_json, to_msgpack
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

BUILDERS = {"square-wave": square_wave_matrix, "piecewise": piecewise_matrix}
SEX = Attribute("sex", ("Female", "Male"))
EDGES = (17.0, 22.0, 28.0, 37.0, 48.0, 61.0, 90.0)  # unequal bins: positions are the midpoints, not 0..k−1
P_HAT = np.array([[0.05, 0.06, 0.08, 0.07, 0.05, 0.03], [0.07, 0.09, 0.15, 0.14, 0.13, 0.08]])
N = 20_000


def _alphabet(latent: bool = False, edges: tuple[float, ...] = EDGES) -> Alphabet:
    return Alphabet(SEX, [Attribute.binned("age", NumericSpec(edges))], latent=latent)


def _brute_epsilon(q: np.ndarray) -> float:
    """max over y, u, u' of log Q(y|u)/Q(y|u'), every pair written out (independent of epsilon_on_u)."""
    ratios = np.log(q[:, :, None]) - np.log(q[:, None, :])
    return float(ratios.max())


@pytest.mark.parametrize("method", list(BUILDERS))
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("bins", [2, 7, 16, 100])
def test_columns_sum_to_one_and_the_matrix_is_epsilon_ldp_on_u(method, epsilon, bins):
    positions = (np.arange(bins) + 0.5) / bins
    q, params = BUILDERS[method](positions, epsilon, bins)
    assert q.shape == (bins, bins) and params["buckets"] == bins
    assert np.all(q > 0)
    np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-12)
    brute = _brute_epsilon(q)
    assert epsilon_on_u(q) == pytest.approx(brute, abs=1e-12)
    assert brute <= epsilon + 1e-12
    if method == "square-wave":  # b = (εe^ε − e^ε + 1)/(2e^ε(e^ε − 1 − ε)) [LLW20, Sec 4]
        e = math.exp(epsilon)
        assert params["b"] == pytest.approx((epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon)), rel=1e-12)
    else:  # C = (e^{ε/2} + 1)/(e^{ε/2} − 1) [WXY19, Sec III-B]
        h = math.exp(epsilon / 2)
        assert params["C"] == pytest.approx((h + 1) / (h - 1), rel=1e-12)


def _simulate(method: str, v: float, epsilon: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """n continuous reports of v ∈ [0, 1] drawn from the papers' definitions; (reports, the output's half range)."""
    e = math.exp(epsilon)
    if method == "square-wave":
        b = (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
        p = e / (2 * b * e + 1)
        near = rng.random(n) < 2 * b * p  # the window [v − b, v + b] has mass 2bp
        inside = v - b + 2 * b * rng.random(n)
        w = rng.random(n)  # the rest, [−b, v − b) ∪ (v + b, 1 + b], has length 1
        outside = np.where(w < v, -b + w, v + b + (w - v))
        return np.where(near, inside, outside) - 0.5, 0.5 + b  # centred on 0
    h = math.exp(epsilon / 2)
    c = (h + 1) / (h - 1)
    t = 2 * v - 1
    left = (c + 1) / 2 * t - (c - 1) / 2
    near = rng.random(n) < h / (h + 1)
    inside = left + (c - 1) * rng.random(n)
    w = rng.random(n) * (c + 1)
    outside = np.where(w < left + c, -c + w, left + c - 1 + (w - (left + c)))
    return np.where(near, inside, outside), c


@pytest.mark.parametrize("method", list(BUILDERS))
def test_the_matrix_is_the_continuous_mechanism_bucketised(method):
    """Q(y|u) against the frequency of bucket y among 200,000 continuous reports drawn from the paper's
    definition (fixed seed; within 5 standard errors per cell)."""
    rng = np.random.default_rng(38)
    positions = np.array([0.0, 0.13, 0.5, 0.91, 1.0])
    buckets, epsilon, n = 9, 1.3, 200_000
    q, _ = BUILDERS[method](positions, epsilon, buckets)
    for i, v in enumerate(positions):
        reports, half = _simulate(method, float(v), epsilon, n, rng)
        assert np.all(np.abs(reports) <= half + 1e-12)
        idx = np.minimum(((reports + half) / (2 * half) * buckets).astype(int), buckets - 1)
        freq = np.bincount(idx, minlength=buckets) / n
        se = np.sqrt(q[:, i] * (1 - q[:, i]) / n)
        assert np.all(np.abs(freq - q[:, i]) <= 5 * se), (v, freq, q[:, i])


def test_discretised_piecewise_is_nearly_unbiased_for_the_mean():
    """E[t̃] = t for the continuous Piecewise mechanism: reading each bucket as its midpoint is off by at
    most half a bucket, C/k."""
    positions = np.linspace(0, 1, 11)
    for epsilon in (0.5, 1.0, 3.0):
        k = 400
        q, params = piecewise_matrix(positions, epsilon, k)
        c = params["C"]
        mids = -c + (np.arange(k) + 0.5) * 2 * c / k
        np.testing.assert_allclose(mids @ q, 2 * positions - 1, atol=c / k)


@pytest.mark.parametrize("method", list(BUILDERS))
@pytest.mark.parametrize("notion", ["rldp", "distp"])
@pytest.mark.parametrize("latent", [False, True])
def test_the_document_passes_its_audit_and_records_epsilon_on_u(method, notion, latent):
    doc = design(method, alphabet=_alphabet(latent), public_distribution=P_HAT, epsilon=1.0, n=N, notion=notion)
    q = mechanism_matrix(doc)
    k = len(EDGES) - 1
    assert q.shape == (k, k if latent else 2 * k)
    if not latent:  # reads U only: the columns repeat over S
        np.testing.assert_array_equal(q[:, :k], q[:, k:])
    result = audit_document(doc)  # recomputed from the matrix
    assert result.passed and doc["audit"]["passed"] is True
    assert result.epsilon <= 1.0 + 1e-9
    params = doc["parameters"]
    assert params["buckets"] == k
    assert params["epsilon_on_u"] == pytest.approx(_brute_epsilon(q[:, :k]), abs=1e-12)
    assert params["epsilon_on_u"] <= 1.0 + 1e-12
    # the bins' midpoints normalised by the edges' range: unequal bins give an unequal spread of columns
    mid = (np.array(EDGES[:-1]) + np.array(EDGES[1:])) / 2
    positions = (mid - EDGES[0]) / (EDGES[-1] - EDGES[0])
    np.testing.assert_allclose(q[:, :k], BUILDERS[method](positions, 1.0, k)[0], atol=1e-15)


@pytest.mark.parametrize("method", list(BUILDERS))
def test_the_python_client_verifies_and_samples_the_document(method):
    """The document is a plain matrix: the client verifies it (JSON and msgpack) and samples Q's columns."""
    doc = design(method, alphabet=_alphabet(), public_distribution=P_HAT, epsilon=1.0, n=N)
    q = mechanism_matrix(doc)
    for read in (from_json(to_json(doc)), from_msgpack(to_msgpack(doc))):
        mech = Mechanism.from_document(read, expected_id=doc["id"])
        np.testing.assert_array_equal(mech.matrix, q)
    n = 60_000
    reports = mech.privatize([{"sex": "Male", "age": 40}] * n, np.random.default_rng(7))
    x = int(mech.alphabet.encode_one({"sex": "Male", "age": 40}))
    assert x == 6 + 3  # (Male, [37, 48))
    column = q[:, x]
    freq = np.bincount(reports, minlength=q.shape[0]) / n
    assert np.all(np.abs(freq - column) <= 5 * np.sqrt(column * (1 - column) / n))


def test_a_categorical_or_missing_u_is_refused_naming_it():
    race = Alphabet(SEX, [Attribute("race", ("White", "Black", "Other"))])
    with pytest.raises(DesignError, match=r"'square-wave' needs a numeric released attribute.*'race' is categorical"):
        design("square-wave", alphabet=race, public_distribution=np.full((2, 3), 1 / 6), epsilon=1.0, n=N)
    two = Alphabet(SEX, [Attribute.binned("age", NumericSpec(EDGES)), Attribute("race", ("a", "b"))])
    with pytest.raises(DesignError, match=r"'piecewise' needs exactly one released attribute U.*got 2: 'age', 'race'"):
        design("piecewise", alphabet=two, public_distribution=np.full((2, 12), 1 / 24), epsilon=1.0, n=N)
    uset = UncertaintySet.from_confidence(P_HAT, N, 0.05)  # no alphabet, no bins
    with pytest.raises(DesignError, match="needs exactly one released attribute U, numeric.*got 0: none"):
        design_matrix("square-wave", uset, 1.0)


def test_auto_does_not_pick_the_baselines():
    assert not {"square-wave", "piecewise"} & {*auto_methods("rldp"), *auto_methods("rldp", latent=True)}


@pytest.mark.slow
def test_rldp_design_square_wave_on_adult_age(adult_csv: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "sw.json"
    args = ["--sensitive", "sex", "--released", "age", "--numeric", "age", "--epsilon", "1", "--out", str(out)]
    code = main(["design", str(adult_csv), *args, "--method", "square-wave"])
    text = capsys.readouterr().out
    assert code == 0, text
    doc = read_document(out)
    assert doc["method"] == "square-wave" and doc["audit"]["passed"] is True
    assert 0 < doc["parameters"]["epsilon_on_u"] <= 1.0 + 1e-12
    assert doc["parameters"]["buckets"] == len(doc["released"][0]["values"])
    assert re.search(r"claim    rldp eps = 1; audited eps = 0\.\d+ <= claimed eps = 1 \(pass\)", text), text
    json.dumps(doc["parameters"])  # plain JSON
    on_u = doc["parameters"]["epsilon_on_u"]
    assert f"  on U     age itself is {on_u:.4g}-LDP" in text and "protected only as far as it reveals sex" in text
