"""The search over prices of cg.proof: the bins' cuts of (D1) (MassDP.binding with several bins)
and the trust-region step of the cutting-plane model."""

from __future__ import annotations

import numpy as np
from helpers import jeffreys

from rldp.aggregator.design import GammaCone
from rldp.aggregator.design.solvers.cg.bound import SectionBound
from rldp.aggregator.design.solvers.cg.massdp import MassDP
from rldp.aggregator.design.solvers.cg.proof import _Cuts
from rldp.shared.information import row_information
from rldp.shared.uncertainty import UncertaintySet


def test_more_bins_keep_the_binding_one_first_and_each_tuple_below_its_bins_rho():
    # ρ_K ≥ (μ(z) − λ·z)/P̂·z for the tuple z backtracked from bin K (its mass lies in I_K), and the
    # first bin is the one binding(λ) alone returns.
    p = jeffreys((3, 3), 7, n=800)
    low = UncertaintySet.from_confidence(p, 800, 0.05).lower_bounds()
    bound = SectionBound(GammaCone(low, 1.0), p, pieces=3)
    lam = np.random.default_rng(4).uniform(-0.05, 0.3, p.size)
    pf = p.reshape(-1)
    for others, wide, _ in bound.pieces:
        dp = MassDP(others, wide, p)
        one, many = dp.binding(lam), dp.binding(lam, 6)
        assert one is not None and many is not None
        rhos, tuples = many
        assert 1 < len(rhos) <= 6 and tuples.shape == (len(rhos), p.size)
        assert rhos[0] == one[0][0] and np.array_equal(tuples[0], one[1][0])
        assert np.all(np.diff(rhos) <= 0)
        for r, z in zip(rhos, tuples, strict=True):
            value = float((row_information(z[None], p) - z @ lam)[0] / (z @ pf))
            assert value <= r + 1e-9


def test_the_trust_region_step_minimises_the_cut_model_in_its_box():
    rng = np.random.default_rng(7)
    n, k = 6, 12
    z = rng.uniform(0.0, 2.0, (k, n))
    c = rng.normal(size=k)
    centre = rng.normal(scale=0.1, size=n)
    cuts = _Cuts(n)
    cuts.add(centre, c - z @ centre, z)  # ρ_i(centre) = c_i − z_i·centre: the cut c_i − z_i·λ

    def model(lam: np.ndarray) -> float:
        return float(lam.sum() + np.max(c - z @ lam))

    for radius in (0.01, 0.3):
        step = cuts.minimise(centre, radius)
        assert step is not None
        lam, value = step
        assert np.max(np.abs(lam - centre)) <= radius * (1 + 1e-9)
        assert abs(value - model(lam)) <= 1e-7 * (1 + abs(value))
        assert value <= model(centre) + 1e-9
        trials = centre + rng.uniform(-radius, radius, (500, n))
        assert value <= min(model(t) for t in trials) + 1e-7
