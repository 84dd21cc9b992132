"""200,000 simulated users through a real server: the estimate is as accurate as the variance says.

Mechanism: PolyOpt for S = sex, U = race at ε = 1, designed from adult.data (the public
side data). Users: 200,000 records drawn (fixed seed) from adult.test; the truth θ is their
empirical distribution. Each user privatises with the SDK (seeded generator) and uploads
through HTTP; the server estimates.

Bound. For an identifiable Q the estimator is asymptotically unbiased with covariance
V = Q⁺ (diag π − ππᵀ) Q⁺ᵀ / n, π = Qθ (multinomial counts through the unbiased inverse;
the MLE has the same asymptotic covariance). With sd_x = √V_xx and e = θ̂ − θ,
E‖e‖₁ ≈ Σ_x sd_x √(2/π) and sd(‖e‖₁) ≤ Σ_x sd(|e_x|) = Σ_x sd_x √(1 − 2/π), so
‖e‖₁ ≤ E + 4·sd fails with probability ≤ 1/17 (Cantelli) — and the seed is fixed.
Each cell must also satisfy |e_x| ≤ 4.5 sd_x. If Q were not identifiable, the same checks
are made on P_Y = Qθ (multinomial covariance), which the reports do determine.
"""

from __future__ import annotations

import math

import numpy as np
from helpers import ADULT_COLUMNS, adult_path
from rldp_live import READ_TOKEN

from rldp.aggregator.design import design
from rldp.client import Client
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, read_csv

N_USERS = 200_000


def test_estimate_error_within_predicted_variance(live_server):
    public = read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)
    alpha = Alphabet.from_table(public, "sex", ["race"])
    doc = design(
        "polyopt",
        alphabet=alpha,
        public_distribution=alpha.empirical_distribution(public),
        epsilon=1.0,
        n=public.n_rows,
        beta=0.05,
        window=None,  # one stateless client stands for every user here (windows: tests/client/test_client_windows.py)
    )
    assert live_server.publish(doc).status_code in (200, 201)

    test = read_csv(adult_path("adult.test.csv.gz"))
    rng = np.random.default_rng(2024)
    rows = rng.integers(0, test.n_rows, N_USERS)
    users = Table.from_columns({"sex": test.column("sex")[rows], "race": test.column("race")[rows]})
    truth = alpha.empirical_distribution(users).reshape(-1)

    client = Client(live_server.url, token=READ_TOKEN, rng=np.random.default_rng(99), state_path=None)
    receipt = client.submit(doc["id"], users, batch_size=10_000)
    assert (receipt.accepted, receipt.batches, receipt.duplicates) == (N_USERS, 20, 0)
    est = client.estimate(doc["id"])
    client.close()
    assert est.n == N_USERS

    q = np.array(doc["matrix"])
    pi = q @ truth
    multinomial = (np.diag(pi) - np.outer(pi, pi)) / N_USERS
    joint = np.array(est.joint, dtype=float).reshape(-1)
    if est.identifiable:
        pinv = np.linalg.pinv(q)
        cov = pinv @ multinomial @ pinv.T
        err = joint - truth
        # A wrong estimator (e.g. reading Y's frequencies as X's, or using Q instead of Qᵀ)
        # would miss by this much: the bound below must be far tighter to mean anything.
        naive = np.linalg.norm(pi - truth, 1)
    else:
        cov = multinomial
        err = q @ joint - pi
        naive = np.linalg.norm(q @ alpha.empirical_distribution(public).reshape(-1) - pi, 1)
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    mean_l1 = sd.sum() * math.sqrt(2 / math.pi)
    bound = mean_l1 + 4 * sd.sum() * math.sqrt(1 - 2 / math.pi)
    l1 = float(np.abs(err).sum())
    assert l1 <= bound, f"L1 error {l1:.5f} exceeds the variance bound {bound:.5f} (expected ≈ {mean_l1:.5f})"
    assert np.all(np.abs(err) <= 4.5 * sd + 1e-12), np.abs(err) / sd
    assert bound < naive / 3, (bound, naive)
