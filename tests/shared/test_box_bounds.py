"""A pilot's box in F (shared/box_bounds.py, UncertaintySet(box=...)): every bound holds every distribution of
the box, the support function is the LP's, and the set never claims more than the ball alone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from rldp.shared.box_bounds import check_box, conditional_bounds, knapsack_l1_radii, knapsack_maximum
from rldp.shared.divergence import renyi_divergence
from rldp.shared.errors import ValidationError
from rldp.shared.uncertainty import UncertaintySet

SHAPE = (2, 5)


def _box(seed: int, width: float = 0.02) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, ℓ, u): a random P with some rare cells and a box around it (ℓ clipped at 0 where P is rare)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(SHAPE[0] * SHAPE[1], 0.5)).reshape(SHAPE)
    w = width * rng.uniform(0.5, 1.5, SHAPE)
    return p, np.clip(p - w, 0, 1), np.clip(p + w, 0, 1)


def _inside(p: np.ndarray, lower: np.ndarray, upper: np.ndarray, rng, draws: int = 20_000) -> np.ndarray:
    """Distributions of the box ∩ simplex: Dirichlet draws around P kept when inside, plus box vertices'
    neighbours (pushing one cell to a side and renormalising the rest)."""
    cand = rng.dirichlet(p.ravel() * 400 + 1e-3, size=draws).reshape(-1, *p.shape)
    keep = np.all((cand >= lower) & (cand <= upper), axis=(1, 2))
    return cand[keep]


@pytest.mark.parametrize("seed", range(6))
def test_the_conditional_bounds_hold_every_distribution_of_the_box(seed):
    p, lower, upper = _box(seed)
    cond_l, cond_u = conditional_bounds(lower, upper)
    inside = _inside(p, lower, upper, np.random.default_rng(seed))
    assert len(inside) > 100
    cond = inside / inside.sum(axis=2, keepdims=True)
    assert np.all(cond >= cond_l - 1e-15) and np.all(cond <= cond_u + 1e-15)
    truth = p / p.sum(axis=1, keepdims=True)
    assert np.all(cond_l <= truth) and np.all(truth <= cond_u)
    # Not vacuous: where the box keeps a cell away from 0, so does its conditional bound.
    assert np.all(cond_l[lower > 0] > 0)


def test_a_single_row_box_bounds_are_the_box_itself():
    lower = np.array([[0.1, 0.2, 0.3]])
    upper = np.array([[0.3, 0.4, 0.5]])
    cond_l, cond_u = conditional_bounds(lower, upper)
    np.testing.assert_allclose(cond_l, lower, rtol=1e-14)
    np.testing.assert_allclose(cond_u, upper, rtol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_the_knapsack_maximum_is_the_lp_optimum_rounded_up(seed):
    rng = np.random.default_rng(seed)
    k = 7
    low = rng.dirichlet(np.ones(k)) * rng.uniform(0.3, 0.9)
    high = np.minimum(low + rng.uniform(0, 0.5, k), 1.0)
    high[np.argmax(high - low)] = 1.0  # Σ high ≥ 1
    q = rng.normal(size=(20, k))
    mine = knapsack_maximum(q, np.broadcast_to(low, q.shape), np.broadcast_to(high, q.shape))
    for row, value in zip(q, mine, strict=True):
        lp = linprog(-row, A_eq=np.ones((1, k)), b_eq=[1.0], bounds=list(zip(low, high, strict=True)))
        assert lp.status == 0
        assert -lp.fun <= value <= -lp.fun + 1e-12


def test_the_l1_radius_is_never_exceeded_and_never_above_the_wide_bound():
    p, lower, upper = _box(3, width=0.05)
    cond_l, cond_u = conditional_bounds(lower, upper)
    center = p / p.sum(axis=1, keepdims=True)
    radii = knapsack_l1_radii(center, cond_l, cond_u)
    inside = _inside(p, lower, upper, np.random.default_rng(3))
    cond = inside / inside.sum(axis=2, keepdims=True)
    seen = np.abs(cond - center).sum(axis=2).max(axis=0)
    assert np.all(seen <= radii)
    # the bound used beyond 16 symbols is above the exact one
    wide = 2 * np.minimum(np.maximum(cond_u - center, 0).sum(1), np.maximum(center - cond_l, 0).sum(1))
    assert np.all(radii <= wide * (1 + 1e-12))


@pytest.mark.parametrize(
    ("lower", "upper", "message"),
    [
        ([[0.1, 0.2]], [[0.5, 0.6]], "box.lower has shape (1, 2); expected 2×2"),
        ([[0.1, 0.2], [0.1, "x"]], [[0.5, 0.6], [0.5, 0.6]], "box.lower must be a 2×2 array of numbers"),
        ([[0.1, 0.2], [0.1, float("nan")]], [[0.5, 0.6], [0.5, 0.6]], "finite numbers in [0, 1]"),
        ([[0.1, 0.2], [0.1, -0.1]], [[0.5, 0.6], [0.5, 0.6]], "finite numbers in [0, 1]"),
        ([[0.1, 0.2], [0.1, 0.2]], [[0.5, 0.6], [0.5, 1.5]], "box.upper must hold finite numbers in [0, 1]"),
        ([[0.1, 0.2], [0.1, 0.7]], [[0.5, 0.6], [0.5, 0.6]], "box.lower must be ≤ box.upper in every cell"),
        ([[0.3, 0.3], [0.3, 0.3]], [[0.5, 0.6], [0.5, 0.6]], "Σ lower ≤ 1 ≤ Σ upper"),
        ([[0.0, 0.0], [0.0, 0.0]], [[0.2, 0.2], [0.2, 0.2]], "Σ lower ≤ 1 ≤ Σ upper"),
    ],
)
def test_a_bad_box_is_refused_naming_what_was_expected(lower, upper, message):
    with pytest.raises(ValidationError) as err:
        check_box(lower, upper, (2, 2))
    assert message in str(err.value)


@pytest.mark.parametrize("seed", range(4))
def test_the_set_with_a_box_is_inside_the_ball_and_holds_the_ball_and_box(seed):
    p, lower, upper = _box(seed)
    ball = UncertaintySet(p, 0.05)
    both = UncertaintySet(p, 0.05, box=(lower, upper))
    q = np.random.default_rng(seed).random((50, *SHAPE))
    hi_b, lo_b = ball.extremes(q)
    hi, lo = both.extremes(q)
    assert np.all(hi <= hi_b) and np.all(lo >= lo_b)
    assert np.any(hi < hi_b - 1e-6)  # the box narrows something
    # every conditional of a P in the ball and the box is inside the narrowed extremes
    inside = _inside(p, lower, upper, np.random.default_rng(seed))
    inside = inside[[renyi_divergence(p.ravel(), x.ravel(), 2.0) <= 0.05 for x in inside]]
    assert len(inside) > 50
    cond = inside / inside.sum(axis=2, keepdims=True)
    values = np.einsum("nsu,msu->nms", cond, q)
    assert np.all(values <= hi + 1e-15) and np.all(values >= lo - 1e-15)
    assert np.all(both.lower_bounds() >= ball.lower_bounds()) and np.all(both.upper_bounds() <= ball.upper_bounds())
    assert np.all(both.l1_radii() <= ball.l1_radii())
    s = np.array([0, 1, 1])
    hi_for, lo_for = both.extremes_for(q[np.arange(3), s, :], s)
    np.testing.assert_array_equal(hi_for, hi[np.arange(3), s])
    np.testing.assert_array_equal(lo_for, lo[np.arange(3), s])


def test_the_marginal_set_keeps_the_box_of_row_sums():
    p, lower, upper = _box(1)
    both = UncertaintySet(p, 0.05, box=(lower, upper))
    marginal = both.marginal_set()
    assert marginal.box is not None
    np.testing.assert_allclose(marginal.box[0], lower.sum(axis=1, keepdims=True).T)
    hi, lo = marginal.extremes(np.eye(2)[:, None, :])
    assert np.all(hi.ravel() <= upper.sum(axis=1) * (1 + 1e-12)) and np.all(
        lo.ravel() >= lower.sum(axis=1) * (1 - 1e-12)
    )


def test_a_set_with_a_box_describes_it_and_refuses_a_box_of_another_shape():
    p, lower, upper = _box(2)
    described = UncertaintySet(p, 0.05, box=(lower, upper)).describe()
    assert described["box"] == {"lower": lower.tolist(), "upper": upper.tolist()}
    with pytest.raises(ValidationError, match="box.lower has shape"):
        UncertaintySet(p, 0.05, box=(lower[:1], upper))
