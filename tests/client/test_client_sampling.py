"""The CSPRNG source and the vectorised per-column sampler."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import sparse_columns

from rldp.client import randomness
from rldp.client.sampling import ColumnSampler, OSRandom, random_bytes, uniform_from_bytes


class Fixed:
    """A 'random' source returning given values (to probe the inversion's edges)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def random(self, n):
        assert n == self.values.size
        return self.values


def test_uniform_from_bytes_is_exact_53_bit():
    data = bytes(8) + b"\xff" * 8 + (1 << 11).to_bytes(8, "little")
    u = uniform_from_bytes(data)
    assert u[0] == 0.0
    assert u[1] == 1.0 - 2.0**-53  # the largest value: never 1.0
    assert u[2] == 2.0**-53


def test_os_random_is_uniform_and_fresh():
    rng = OSRandom()
    n = 200_000
    u = rng.random(n)
    assert u.shape == (n,) and u.dtype == np.float64 and u.min() >= 0.0 and u.max() < 1.0
    sd = (1 / 12 / n) ** 0.5
    assert abs(u.mean() - 0.5) < 5 * sd
    counts = np.bincount((u * 10).astype(int), minlength=10)
    expected = n / 10
    assert ((counts - expected) ** 2 / expected).sum() < 40  # χ²₉: P(> 40) ≈ 7e-6
    assert not np.array_equal(rng.random(16), rng.random(16))
    assert rng.random(0).size == 0


@pytest.mark.parametrize("fast", [True, False])
def test_random_bytes_are_uniform_fresh_and_never_repeat_a_key(monkeypatch, fast):
    if not fast:  # the plain os.urandom path, as on a platform without `cryptography`
        monkeypatch.setattr(randomness, "HAVE_AES", False)
    n = 3 * randomness._KEYSTREAM_BYTES_PER_KEY + 12_345  # several keys, a partial last block
    data = random_bytes(n)
    assert len(data) == n
    counts = np.bincount(np.frombuffer(data, np.uint8), minlength=256)
    expected = n / 256
    assert ((counts - expected) ** 2 / expected).sum() < 400  # χ²₂₅₅: P(> 400) ≈ 1e-8
    per_key = randomness._KEYSTREAM_BYTES_PER_KEY
    blocks = [data[i : i + 64] for i in range(0, n, per_key)]
    assert len(set(blocks)) == len(blocks)  # each MiB starts a fresh keystream
    assert random_bytes(1 << 16) != random_bytes(1 << 16)  # no state reused across calls
    assert len(random_bytes(0)) == 0 and len(random_bytes(5)) == 5


def random_matrix(b: int, a: int, seed: int) -> np.ndarray:
    return sparse_columns(b, a, seed, density=0.6)


@pytest.mark.parametrize("b, a", [(5, 4), (40, 12), (300, 3)])
def test_sampler_matches_the_columns(b, a):
    q = random_matrix(b, a, seed=b)
    sampler = ColumnSampler(q)
    n_per = 60_000
    x = np.repeat(np.arange(a), n_per)
    np.random.default_rng(5).shuffle(x)
    y = sampler.sample(x, np.random.default_rng(6))
    assert y.dtype == np.int64 and y.shape == x.shape
    for col in range(a):
        emp = np.bincount(y[x == col], minlength=b) / n_per
        tol = 5 * np.sqrt(q[:, col] * (1 - q[:, col]) / n_per) + 1e-12
        assert np.all(np.abs(emp - q[:, col]) <= tol), col
        assert np.all(emp[q[:, col] == 0] == 0)  # impossible outputs never appear


def test_zero_probability_outputs_are_never_drawn_at_the_edges():
    q = np.array([[0.0, 0.5], [0.5, 0.0], [0.0, 0.5], [0.5, 0.0], [0.0, 0.0]])
    sampler = ColumnSampler(q)
    edges = [0.0, 0.5 - 2**-53, 0.5, 1 - 2**-53]
    x = np.array([0] * 4 + [1] * 4)
    y = sampler.sample(x, Fixed(edges + edges))
    np.testing.assert_array_equal(y, [1, 1, 3, 3, 0, 0, 2, 2])


def test_seeded_generators_are_reproducible_and_the_default_is_not():
    q = random_matrix(8, 6, seed=1)
    sampler = ColumnSampler(q)
    x = np.arange(6).repeat(100)
    a = sampler.sample(x, np.random.default_rng(42))
    b = sampler.sample(x, np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)
    c, d = sampler.sample(x), sampler.sample(x)
    assert not np.array_equal(c, d)


def test_never_touches_global_generators(monkeypatch):
    q = random_matrix(6, 5, seed=2)
    many = random_matrix(300, 2000, seed=4)  # alias tables, fed by the keystream

    def forbidden(*args, **kwargs):
        raise AssertionError("a global (seedable) generator was used")

    for name in ("random", "rand", "randint", "choice", "uniform", "random_sample", "default_rng", "seed"):
        monkeypatch.setattr(np.random, name, forbidden)
    for name in ("random", "randint", "choice", "choices"):
        monkeypatch.setattr(random, name, forbidden)
    y = ColumnSampler(q).sample(np.arange(5).repeat(1000))
    assert y.size == 5000
    from rldp.client.grr import GrrSampler

    big = ColumnSampler(many)
    assert big.alias is not None and big.sample(np.arange(2000)).size == 2000
    assert GrrSampler(300, 0.5, 0.5 / 299).sample(np.arange(300).repeat(300)).size == 90_000


def test_bad_inputs():
    sampler = ColumnSampler(random_matrix(4, 3, seed=3))
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        sampler.sample([0, 3])
    with pytest.raises(ValueError, match="integers"):
        sampler.sample([0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        sampler.sample([0, 1], Fixed([0.2, 1.0]))
    with pytest.raises(ValueError, match="returned 1 numbers"):
        sampler.sample([0, 1], type("Short", (), {"random": lambda self, n: [0.1]})())
    with pytest.raises(ValueError, match="no mass"):
        ColumnSampler(np.zeros((2, 2)))
    assert sampler.sample([]).size == 0


def test_huge_alphabets_use_the_exact_path_without_a_table():
    a = 70_000  # a guide table would be too large: every record takes the exact path
    q = np.tile(np.array([[0.2], [0.0], [0.8]]), (1, a))
    sampler = ColumnSampler(q)
    assert sampler.table is None
    x = np.random.default_rng(0).integers(0, a, 50_000)
    y = sampler.sample(x, np.random.default_rng(1))
    assert set(np.unique(y)) == {0, 2}
    assert abs((y == 2).mean() - 0.8) < 5 * np.sqrt(0.16 / 50_000)
    assert set(np.unique(sampler.sample(x[:1000]))) <= {0, 2}  # the OS source on the same path


@pytest.mark.parametrize("b, a", [(10, 10), (5, 4), (40, 12)])
def test_guide_tables_give_exactly_plain_inversion_across_chunks(b, a):
    # The tables (first level, second level, and the ambiguous records resolved after the
    # chunk loop) must be the same function of u as plain inversion y = #{T[x, ·] ≤ u}.
    q = random_matrix(b, a, seed=b + a)
    sampler = ColumnSampler(q)
    n = 3 * ColumnSampler.CHUNK + 123  # several chunks, a partial last one
    x = np.random.default_rng(1).integers(0, a, n)
    y = sampler.sample(x, np.random.default_rng(9))
    u53 = np.floor(np.random.default_rng(9).random(n) * float(1 << 53)).astype(np.uint64)
    reference = np.count_nonzero(sampler.thresholds[x] <= u53[:, None], axis=1)
    assert sampler.table is not None
    np.testing.assert_array_equal(y, reference)


class RecordedBits(OSRandom):
    """The OS-randomness code path, fed by a seeded generator and logging what it handed out."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.calls = []

    def bits(self, n, width):
        values = self.rng.integers(0, 1 << width, n, dtype=np.uint64)
        self.calls.append((width, values))
        return values.astype(np.uint8) if width == 8 else values


@pytest.mark.parametrize("b, a, width", [(10, 10, 16), (16, 5, 16), (10, 40, 8), (16, 20, 8), (40, 12, 16)])
def test_os_path_is_plain_inversion_of_the_bits_it_draws(b, a, width):
    # The OS path draws w bits per record (w = 16 when the guide table stays small, else 8);
    # with w = 8, 8 more (spare bytes of the same draw) for records whose first-level interval
    # holds a threshold; then the last bits for those still undecided. Every output must be
    # plain inversion of every u consistent with the bits drawn.
    q = random_matrix(b, a, seed=3 * b + a)
    sampler = ColumnSampler(q)
    assert sampler.width == width and (sampler.table2 is not None) == (width == 8)
    n = 2 * ColumnSampler.CHUNK + 77
    x = np.random.default_rng(2).integers(0, a, n)
    source = RecordedBits(4)
    y = sampler.sample(x, source)
    assert source.calls[0][0] == width
    drawn = source.calls[0][1]
    first = drawn[:n]
    lo = first << np.uint64(53 - width)
    hi = lo | np.uint64((1 << (53 - width)) - 1)
    entry = sampler.table[(first >> np.uint64(width - sampler.table_bits)).astype(np.int64) * a + x]
    amb = np.flatnonzero(entry < 0)
    assert amb.size > 0
    rest = 53 - width
    if width == 8:  # the second byte of the ambiguous ones: from the spare bytes of the same draw
        assert drawn.size > n and amb.size <= drawn.size - n
        second = drawn[n : n + amb.size]
        lo[amb] |= second << np.uint64(37)
        hi[amb] = lo[amb] | np.uint64((1 << 37) - 1)
        left = amb[sampler.table2[(-2 - entry[amb].astype(np.int64)) * 256 + second.astype(np.int64)] < 0]
        rest = 37
    else:
        left = amb
    # The undecided ones, and only they, draw their last bits (in one more call).
    assert len(source.calls) == (2 if left.size else 1)
    if left.size:
        bits, low = source.calls[1]
        assert bits == rest and left.size == low.size
        lo[left] |= low
        hi[left] = lo[left]
    for u in (lo, hi):
        np.testing.assert_array_equal(y, np.count_nonzero(sampler.thresholds[x] <= u[:, None], axis=1))
