"""The per-report layer on the aggregator side: publish, ingest, estimate, the designer, the CLI.

A published document with ``collection.per_report`` = (R, ε₁) receives reports y' ∈ [0, |Y'|)
(R's rows), and estimates read them through R·Q (``rldp.shared.document.report_matrix``). The
designer (``rldp.aggregator.design.add_per_report_layer``) picks R = λI + (1 − λ)·m·1ᵀ at the
largest λ whose R·Q passes the audit at ε₁. Fixed seeds; tolerances from the sample sizes.
"""

from __future__ import annotations

import json
import math

import msgpack
import numpy as np
import pytest
from cli_helpers import assert_one_line_error, design_args, run_cli
from helpers import ADULT_COLUMNS, adult_path
from rldp_live import ADMIN, READ, SMALL_ALPHABET, in_process_app

from rldp.aggregator.design import DesignError, add_per_report_layer, design, grr_matrix, per_report_matrix
from rldp.aggregator.estimate import estimate_distribution
from rldp.shared.audit import audit_document, audit_rldp
from rldp.shared.document import build_document, read_document, report_matrix
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv
from rldp.shared.uncertainty import UncertaintySet

K = SMALL_ALPHABET.size  # |X| = |Y| = 6
P_HAT = np.full(SMALL_ALPHABET.shape, 1 / K)
R8 = np.random.default_rng(11).dirichlet(np.ones(8), size=K).T  # |Y'| = 8 > |Y|: y' = 6, 7 only exist with R


def single_epsilon(r: np.ndarray) -> float:
    return audit_rldp(r @ grr_matrix(K, 2.0), UncertaintySet(P_HAT, math.inf, 2.0)).epsilon


def layered(per_report_epsilon: float, tag: str) -> dict:
    """GRR(ε = 2) on the small alphabet, (ε, all distributions)-RLDP, with the layer R8 claiming ε₁."""
    return build_document(
        method="grr",
        matrix=grr_matrix(K, 2.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 2.0, "uncertainty": {"order": 2, "radius": None}},
        extra={"collection": {"per_report": {"matrix": R8.tolist(), "epsilon": per_report_epsilon}}, "test": tag},
    )


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, MAX_BODY_BYTES=2_000_000, MAX_BATCH_REPORTS=100_000) as app:
        yield app


def publish(http, doc: dict) -> str:
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 201, resp.json
    return doc["id"]


def post(http, mid: str, batch: str, ys, kind: str = "msgpack"):
    payload = {"mechanism": mid, "batch": batch, "reports": [int(y) for y in ys]}
    if kind == "json":
        return http.post("/v1/reports", json=payload)
    return http.post("/v1/reports", data=msgpack.packb(payload), headers={"Content-Type": "application/msgpack"})


@pytest.mark.parametrize("kind", ["json", "msgpack"])
def test_reports_are_outputs_of_the_layer(http, app, kind):
    mid = publish(http, layered(single_epsilon(R8) + 1e-6, "range"))
    listed = {m["id"]: m for m in http.get("/v1/mechanisms").json["mechanisms"]}
    assert listed[mid]["outputs"] == 8  # |Y'|, not the 6 rows of Q
    resp = post(http, mid, "all", range(8), kind)  # 6 and 7 are reports only the layer produces
    assert resp.status_code == 201 and resp.json["accepted"] == 8
    for bad in ([8], [0, 9], [-1]):
        resp = post(http, mid, f"bad-{bad[-1]}", bad, kind)
        assert resp.status_code == 422 and resp.json["reason"] == "report-out-of-range", resp.json
    np.testing.assert_array_equal(app.extensions["rldp"].storage.counts(mid, 8), np.ones(8))


def test_a_document_whose_single_report_claim_fails_is_not_published(http):
    doc = layered(single_epsilon(R8) * 0.9, "leaky")
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 422 and resp.json["reason"] == "audit-failed"
    assert "per-report guarantee (collection.per_report.epsilon)" in resp.json["detail"]
    assert http.get(f"/v1/mechanisms/{doc['id']}").status_code == 404


def test_estimates_read_reports_through_the_report_matrix(http):
    doc = layered(single_epsilon(R8) + 1e-6, "estimate")
    mid = publish(http, doc)
    rq = report_matrix(doc)
    n = 400_000
    truth = np.array([0.05, 0.1, 0.25, 0.2, 0.3, 0.1])
    rng = np.random.default_rng(12)
    per_x = rng.multinomial(n, truth)
    counts = sum(rng.multinomial(int(m), rq[:, x]) for x, m in enumerate(per_x))
    reports = rng.permutation(np.repeat(np.arange(8), counts))
    for i, start in enumerate(range(0, n, 100_000)):
        assert post(http, mid, f"b{i}", reports[start : start + 100_000]).status_code == 201
    est = http.get(f"/v1/mechanisms/{mid}/estimate", headers=READ).json
    assert est["n"] == n and est["identifiable"]
    joint = np.array(est["joint"]).reshape(-1)
    # The service's estimate is the estimator run on R·Q and these counts, nothing else.
    direct = estimate_distribution(rq, counts, SMALL_ALPHABET.shape, prior=P_HAT).to_dict(SMALL_ALPHABET)
    np.testing.assert_allclose(joint, np.array(direct["joint"]).reshape(-1), rtol=0, atol=1e-12)
    # Within its intervals of the truth: the delta-method sd of the unbiased inverse through R·Q,
    # |error| ≤ 4.5 sd per cell, and the 95 % interval's half-width is 1.96 sd (±25 %).
    frequencies = rq @ truth
    pinv = np.linalg.pinv(rq)
    sd = np.sqrt(np.diag(pinv @ ((np.diag(frequencies) - np.outer(frequencies, frequencies)) / n) @ pinv.T))
    half = (np.array(est["ci95"]["high"]).reshape(-1) - np.array(est["ci95"]["low"]).reshape(-1)) / 2
    assert np.all(np.abs(joint - truth) <= 4.5 * sd), np.abs(joint - truth) / sd
    assert np.all(np.abs(half / (1.96 * sd) - 1) <= 0.25), half / (1.96 * sd)
    # Reading the same reports through Q alone would miss the truth by far more than that.
    wrong = estimate_distribution(grr_matrix(K, 2.0), counts[:K], SMALL_ALPHABET.shape).joint.reshape(-1)
    assert np.abs(wrong - truth).sum() > 10 * sd.sum()


# --------------------------------------------------------------------------- the designer


@pytest.fixture(scope="module")
def adult_polyopt() -> dict:
    public = read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)
    alpha = Alphabet.from_table(public, "sex", ["race"])
    counts = PublicCounts.from_table(public, alpha, name="adult.data")
    return design(
        "polyopt",
        alphabet=alpha,
        public_distribution=counts.distribution,
        epsilon=1.0,
        beta=0.05,
        provenance=counts.provenance(),
        extra={"collection": {"window": "P1D"}},
    )


@pytest.mark.slow
def test_the_designer_adds_the_least_noise_that_meets_the_single_report_claim(adult_polyopt):
    doc = add_per_report_layer(adult_polyopt, 0.5)
    result = audit_document(doc)
    assert result.passed and result.epsilon == adult_polyopt["audit"]["epsilon"]
    single = result.per_report
    assert single is not None and 0.5 * (1 - 1e-6) <= single.epsilon <= 0.5
    # Q, the long-run claim and every other field are kept; the layer is recorded.
    for field in ("matrix", "privacy", "public_distribution", "provenance", "sensitive", "released"):
        assert doc[field] == adult_polyopt[field], field
    assert doc["collection"]["window"] == "P1D" and doc["collection"]["per_report"]["epsilon"] == 0.5
    assert doc["audit"]["per_report"]["epsilon"] == single.epsilon
    params = doc["parameters"]["per_report"]
    assert params["family"] == "public" and 0 < params["keep"] < 1
    # The largest λ: keeping the memoised output a little more often fails the claim.
    q = np.array(doc["matrix"])
    m = q @ np.array(doc["public_distribution"]).reshape(-1)
    uset = UncertaintySet.from_confidence(np.array(doc["public_distribution"]), 32561, 0.05, 2.0)
    for keep, passes in ((params["keep"], True), (params["keep"] + 1e-6, False)):
        r = keep * np.eye(q.shape[0]) + (1 - keep) * np.outer(m, np.ones(q.shape[0]))
        assert (audit_rldp(r @ q, uset).epsilon <= 0.5) is passes
    # One report keeps less than the memoised output, and mixing with the public output
    # distribution keeps more than GRR on Y at the same ε₁.
    grr = add_per_report_layer(adult_polyopt, 0.5, family="grr")
    assert doc["utility"]["per_report"]["nmi"] < doc["utility"]["nmi"]
    assert doc["utility"]["per_report"]["nmi"] > 2 * grr["utility"]["per_report"]["nmi"]
    assert grr["parameters"]["per_report"]["epsilon"] == pytest.approx(
        math.log1p(q.shape[0] * grr["parameters"]["per_report"]["keep"] / (1 - grr["parameters"]["per_report"]["keep"]))
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("epsilon", "family", "message"),
    [
        (1.0, "public", "below the document's epsilon 1"),
        (0.0, "public", "finite number > 0"),
        (math.nan, "public", "finite number > 0"),
        (0.5, "rappor", "unknown per-report family 'rappor'"),
        (0.995, "public", "already gives epsilon 0.995 per report"),  # PolyOpt's audited ε is 0.9922
    ],
)
def test_the_designer_refuses_what_it_cannot_state(adult_polyopt, epsilon, family, message):
    with pytest.raises(DesignError, match=message):
        per_report_matrix(adult_polyopt, epsilon, family)


@pytest.mark.slow
def test_the_cli_builds_a_layered_document(tmp_path):
    rng = np.random.default_rng(13)
    sexes, colours = rng.choice(["Female", "Male"], 3000), rng.choice(["blue", "green", "red"], 3000)
    public = tmp_path / "public.csv"
    public.write_text("sex,colour\n" + "".join(f"{s},{c}\n" for s, c in zip(sexes, colours, strict=True)))
    out = tmp_path / "mech.json"
    args = design_args(public, out, method="polyopt", released="colour")
    proc = run_cli(*args, "--window", "P1D", "--per-report-epsilon", "0.5", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    doc = read_document(out)
    assert doc["collection"]["window"] == "P1D" and doc["collection"]["per_report"]["epsilon"] == 0.5
    assert record["per_report"]["claimed"] == 0.5 and record["per_report"]["passed"] is True
    assert audit_document(doc).passed
    assert run_cli("audit", out).returncode == 0
    refused = run_cli(*args, "--per-report-epsilon", "1")
    assert refused.returncode == 2
    assert_one_line_error(refused, "--per-report-epsilon must be below --epsilon = 1")
