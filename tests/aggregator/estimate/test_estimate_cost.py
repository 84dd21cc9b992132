"""What an estimate costs at large |X| (issue 34, item 7): no product with Q computed twice, no copy of Q.

The speed-ups keep every result the same bits: EM is compared with the loop it replaced
(``_em_before``, kept here), and the memory tests check the copies and temporaries are gone.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rldp.aggregator.design import grr_matrix
from rldp.aggregator.estimate.inputs import validate_matrix
from rldp.aggregator.estimate.likelihood import Likelihood, _squarem_point
from rldp.shared.audit.base import as_matrix
from rldp.shared.audit.rldp import realised_epsilon
from rldp.shared.errors import ValidationError


def _em_before(lik: Likelihood, theta0: np.ndarray, tol: float, max_updates: int):
    """Likelihood.em as it was before the safeguard's products were reused (each objective recomputed Qθ)."""
    theta = np.array(theta0, dtype=float, copy=True)
    b = theta.shape[0]
    rows = np.arange(b)
    converged = np.zeros(b, dtype=bool)
    gap = np.full(b, np.inf)
    active = np.arange(b)
    evals = 0
    while active.size and evals < max_updates:
        t0 = theta[active]
        t1, g0 = lik.step(t0, rows[active])
        evals += 1
        gap[active] = g0
        done = g0 <= tol
        converged[active[done]] = True
        keep = ~done
        active, t0, t1 = active[keep], t0[keep], t1[keep]
        if not active.size:
            break
        if evals >= max_updates:
            theta[active] = t1
            gap[active] = lik.gap(t1, rows[active])
            break
        t2, _ = lik.step(t1, rows[active])
        evals += 1
        tp = _squarem_point(t0, t1, t2)
        if evals >= max_updates:
            theta[active] = t2
            gap[active] = lik.gap(t2, rows[active])
            break
        t3, _ = lik.step(tp, rows[active])
        evals += 1
        better = lik.objective(t3, rows[active]) >= lik.objective(t2, rows[active])
        theta[active] = np.where(better[:, None], t3, t2)
    return theta, evals, converged, gap


class _Counted(np.ndarray):
    """Q that counts the products (@) it takes part in."""

    products = 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul:
            _Counted.products += 1
        args = [np.asarray(x) if isinstance(x, _Counted) else x for x in inputs]
        return getattr(ufunc, method)(*args, **kwargs)


def _case(k: int, n: int, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = grr_matrix(k, 1.0)
    theta = rng.dirichlet(np.full(k, 0.5))
    return q, rng.multinomial(n, q @ theta, size=rows).astype(float)


@pytest.mark.parametrize(
    ("k", "rows", "prior_weight", "max_updates"),
    [(6, 1, 0.0, 10_000), (40, 3, 0.0, 10_000), (40, 1, 25.0, 10_000), (600, 2, 0.0, 40), (600, 1, 10.0, 41)],
)
def test_em_gives_the_same_bits_as_before(k: int, rows: int, prior_weight: float, max_updates: int) -> None:
    q, counts = _case(k, 10**5, rows, seed=k + rows)
    prior = np.random.default_rng(1).dirichlet(np.ones(k)) if prior_weight else None
    start = np.full((rows, k), 1.0 / k)
    new = Likelihood(q, counts, prior, prior_weight).em(start, 1e-10, max_updates)
    old = _em_before(Likelihood(q, counts, prior, prior_weight), start, 1e-10, max_updates)
    assert new[1] == old[1]
    for a, b in zip((new[0], new[2], new[3]), (old[0], old[2], old[3]), strict=True):
        assert a.tobytes() == b.tobytes()


def test_em_takes_seven_products_with_q_per_extrapolation() -> None:
    # Each SQUAREM cycle: three EM updates (two products each) and the safeguard's two objectives; the
    # next cycle's first update reuses the product of the point the safeguard kept: 7 + 1 for the first.
    q, counts = _case(600, 10**6, 1, seed=3)
    counted = q.view(_Counted)
    lik = Likelihood(counted, counts, None, 0.0)
    _Counted.products = 0
    _, evals, converged, _ = lik.em(np.full((1, 600), 1 / 600), 1e-30, 30)
    assert evals == 30 and not converged[0]
    cycles = evals // 3
    assert _Counted.products == 7 * cycles + 1


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_realised_epsilon_does_not_copy_q_when_every_s_has_users() -> None:
    k = 1000
    q = grr_matrix(k, 1.0)
    p = np.random.default_rng(2).dirichlet(np.ones(k)).reshape(2, k // 2)
    value = realised_epsilon(q, p)
    assert _peak(lambda: realised_epsilon(q, p)) < q.nbytes / 4
    # the same number as over Q's blocks copied out
    blocks = q.reshape(k, 2, k // 2).copy()
    cond = p / p.sum(axis=1, keepdims=True)
    pyx = np.einsum("ysu,su->ys", blocks, cond)
    assert value == pytest.approx(float(np.max(np.abs(np.log(pyx[:, 0] / pyx[:, 1])))), rel=1e-12)
    # an s without users is still skipped (a copy then)
    skipped = p.copy()
    skipped[1] = 0.0
    assert realised_epsilon(q, skipped) == 0.0


def test_audit_matrix_check_makes_no_k_by_k_temporary() -> None:
    q = grr_matrix(1000, 1.0)
    assert _peak(lambda: as_matrix(q)) < q.nbytes / 16  # a K × K bool is q.nbytes / 8


def test_estimate_matrix_check_makes_no_k_by_k_temporary() -> None:
    q = grr_matrix(1000, 1.0)
    assert _peak(lambda: validate_matrix(q)) < q.nbytes * (1 + 1 / 16)  # its one copy of Q, nothing K × K more


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -0.5])
def test_matrix_checks_still_refuse_bad_entries(bad: float) -> None:
    q = grr_matrix(5, 1.0)
    q[2, 3] = bad
    with pytest.raises(ValidationError, match="finite|NaN|negative"):
        as_matrix(q)
    with pytest.raises(ValidationError, match="NaN or infinite|negative entry"):
        validate_matrix(q)
