"""Distribution privacy through the product: publish a coupling document, verify it in the client,
privatise (θ = sex is an input: records carry S), submit, estimate — on a real server.

Mechanism: the coupling mechanism [KM19, Defs 16, 18] for θ = sex, U = relationship, designed from
adult.data under notion distp at (ε, δ) = (1, 0.001) over the 95 % confidence set. Users: 60,000
records drawn (fixed seed) from adult.test, whose distribution differs from P̂.

What is checked, with bounds from the sample size (4 standard deviations, fixed seeds):
* the server publishes it (its audit: the registered distp audit) and refuses a leaky distp document;
* the client re-audits it and privatises: the outputs of women and men are distributed alike (their
  total variation is the one the mechanism gives under adult.test, up to sampling noise) although
  relationship itself differs hugely between them;
* the estimate reproduces the distribution of the reports (Q·P̂_joint = the observed P_Y, as the
  multinomial variance says): the coupling is not identifiable over S × U, and says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ADULT_COLUMNS, adult_path
from rldp_live import READ_TOKEN, assert_problem

from rldp.aggregator.design import design
from rldp.client import Client
from rldp.shared.audit import distp_delta
from rldp.shared.document import build_document, mechanism_matrix
from rldp.shared.errors import RecordError
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, read_csv

N_USERS = 60_000
EPSILON, DELTA = 1.0, 0.001


@pytest.fixture(scope="module")
def coupling():
    public = read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(public, "sex", ["relationship"])
    counts = PublicCounts.from_table(public, alphabet, name="adult.data")
    doc = design(
        "coupling",
        alphabet=alphabet,
        public_distribution=counts.distribution,
        epsilon=EPSILON,
        beta=0.05,
        provenance=counts.provenance(),
        window=None,  # one stateless client stands for every user here (windows: tests/client/test_client_windows.py)
        notion="distp",
        delta=DELTA,
    )
    test = read_csv(adult_path("adult.test.csv.gz"))
    rows = np.random.default_rng(2025).integers(0, test.n_rows, N_USERS)
    users = Table.from_columns({c: test.column(c)[rows] for c in ("sex", "relationship")})
    return doc, alphabet, users


def test_publish_verify_privatise_submit_estimate(live_server, coupling):
    doc, alphabet, users = coupling
    assert live_server.publish(doc).status_code in (200, 201)

    client = Client(live_server.url, token=READ_TOKEN, rng=np.random.default_rng(7), state_path=None)
    mech = client.mechanism(doc["id"])  # downloads, checks the id, re-runs the distp audit
    assert mech.notion == "distp" and mech.audit.passed
    assert mech.audit.extra["delta"] <= DELTA + 1e-9 and mech.audit.extra["delta_at_p_hat"] <= 1e-12
    with pytest.raises(RecordError):
        mech.privatize([{"relationship": "Wife"}])  # θ is an input of the mechanism: records carry S

    ys = mech.privatize(users, rng=np.random.default_rng(11))
    q = mechanism_matrix(doc)
    truth = alphabet.empirical_distribution(users)  # adult.test's joint, as sampled
    sex = users.column("sex")
    groups = [ys[sex == s] for s in alphabet.sensitive.values]
    freq = [np.bincount(g, minlength=q.shape[0]) / g.size for g in groups]
    tv_seen = 0.5 * np.abs(freq[0] - freq[1]).sum()
    tv_mechanism = distp_delta(q, truth, 0.0)[0]  # δ at ε = 0 is the total variation
    # |TV seen − TV| ≤ ½ Σ_y |e_y| with e_y the error of the difference of the two groups' frequencies:
    # E ≤ ½ Σ sd_y √(2/π), sd ≤ ½ Σ sd_y √(1 − 2/π); mean + 4 sd fails with probability ≤ 1/17 (Cantelli).
    sd_y = np.sqrt(sum(f * (1 - f) / g.size for f, g in zip(freq, groups, strict=True)))
    bound = 0.5 * sd_y.sum() * (math.sqrt(2 / math.pi) + 4 * math.sqrt(1 - 2 / math.pi))
    assert abs(tv_seen - tv_mechanism) <= bound, (tv_seen, tv_mechanism, bound)
    lam = truth / truth.sum(axis=1, keepdims=True)
    assert tv_mechanism < 0.05 < 0.5 * np.abs(lam[0] - lam[1]).sum()  # the input differs by far more

    receipt = client.submit(doc["id"], users, batch_size=10_000)
    assert (receipt.accepted, receipt.batches, receipt.duplicates) == (N_USERS, 6, 0)
    est = client.estimate(doc["id"])
    client.close()
    assert est.n == N_USERS and est.identifiable is False
    pi = q @ truth.reshape(-1)
    sd_pi = np.sqrt(pi * (1 - pi) / N_USERS)
    err = q @ np.array(est.joint, dtype=float).reshape(-1) - pi
    assert np.all(np.abs(err) <= 4.5 * sd_pi + 1e-12), np.abs(err) / sd_pi


def test_a_leaky_distp_document_is_refused(live_server, coupling):
    doc, alphabet, _ = coupling
    k = alphabet.n_released
    identity = np.tile(np.eye(k), (1, alphabet.n_sensitive))  # reports x itself: the groups' distributions show
    leaky = build_document(
        method="coupling",
        matrix=identity,
        alphabet=alphabet,
        public_distribution=np.array(doc["public_distribution"]),
        privacy=doc["privacy"],
        extra={"test": "leaky distp"},
    )
    body = assert_problem(live_server.publish(leaky), 422, "audit-failed")
    assert "distp delta" in body["detail"]
