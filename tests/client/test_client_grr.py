"""GRR sampled from its two parameters (client/grr.py): exact masses, the map from u to y at
every interval's edges, rejection, the distribution, and which sampler a mechanism gets."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from documents import grr as grr_matrix

from rldp.client import randomness
from rldp.client.grr import GRR_MIN_SIZE, GrrSampler, grr_parameters, sampler_for
from rldp.client.sampling import ColumnSampler, OSRandom, random_into

TWO53 = 1 << 53


def grr(k: int, eps: float) -> GrrSampler:
    q = grr_matrix(k, eps)
    return GrrSampler(k, float(q[0, 0]), float(q[1, 0]))


class Scripted:
    """An injected source handing out given 53-bit integers u (as u·2⁻⁵³), call after call."""

    def __init__(self, *batches):
        self.batches = [np.asarray(b, dtype=np.uint64) for b in batches]
        self.sizes: list[int] = []

    def random(self, n):
        values = self.batches.pop(0)
        assert values.size == n
        self.sizes.append(n)
        return values.astype(np.float64) / TWO53  # exact: u < 2⁵³


class Recorded(OSRandom):
    """The OS path fed by a seeded generator, recording the words it handed out; the words at
    positions ``force_high`` of the whole stream are set to 2⁵³ − 1 (always rejected)."""

    def __init__(self, seed: int, force_high=()) -> None:
        self.rng = np.random.default_rng(seed)
        self.force_high = np.asarray(force_high, dtype=np.int64)
        self.calls: list[np.ndarray] = []
        self.drawn = 0

    def bits(self, n: int, width: int) -> np.ndarray:
        assert width == 53
        values = self.rng.integers(0, 1 << width, n, dtype=np.uint64)
        here = self.force_high[(self.force_high >= self.drawn) & (self.force_high < self.drawn + n)]
        values[here - self.drawn] = TWO53 - 1
        self.drawn += n
        self.calls.append(values)
        return values


def reference(g: GrrSampler, x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The map of the module docstring, written plainly (u < M)."""
    m_d, m_o, _ = g.masses
    u = u.astype(object)
    i = np.array([0 if v < m_d else (v - m_d) // m_o + 1 for v in u], dtype=np.int64)
    return (x + i) % g.n_inputs


@pytest.mark.parametrize(
    "k, d, o",
    [
        (5, 0.6, 0.1),
        (64, 0.5, 0.5 / 63),
        (4000, *grr_matrix(4000, 1.0)[:2, 0]),
        (300, *grr_matrix(300, 5.0)[:2, 0]),
        (7, 0.01, 0.99 / 6),  # diagonal below the others
        (3, 1.0, 0.0),  # the identity
        (10, 0.1, 0.1),  # uniform: no information
    ],
)
def test_masses_are_exact_and_never_less_private(k, d, o):
    g = GrrSampler(k, d, o)
    m_d, m_o, total = g.masses
    assert m_d + (k - 1) * m_o == total
    assert TWO53 - (1 << (g.scale_bits + 1)) <= total < TWO53
    p_d, p_o = g.probabilities()
    assert p_d + (k - 1) * p_o == 1  # a distribution, exactly
    col = Fraction(d) + (k - 1) * Fraction(o)
    d_hat, o_hat = Fraction(d) / col, Fraction(o) / col
    for p, q in ((p_d, d_hat), (p_o, o_hat)):
        assert abs(p - q) <= (1 + k * q) / total
    # The ratio lies between 1 and d/o: the draw is never less private than the document.
    if o > 0:
        lo, hi = sorted((Fraction(1), Fraction(d) / Fraction(o)))
        assert lo <= Fraction(m_d, m_o) <= hi
    else:
        assert m_o == 0 and m_d == total


@pytest.mark.parametrize("k, d, o", [(5, 0.6, 0.1), (7, 0.01, 0.99 / 6), (70, *grr_matrix(70, 2.0)[:2, 0])])
def test_every_interval_edge_maps_to_its_output(k, d, o):
    g = GrrSampler(k, d, o)
    m_d, m_o, total = g.masses
    edges = [0, m_d - 1, m_d] + [m_d + i * m_o + e for i in range(1, k - 1) for e in (-1, 0)] + [total - 1]
    edges = np.array(sorted(set(edges)), dtype=np.uint64)
    for x0 in (0, 1, k - 1):
        x = np.full(edges.size, x0, dtype=np.int64)
        y = g.sample(x, Scripted(edges))
        np.testing.assert_array_equal(y, reference(g, x, edges))
        np.testing.assert_array_equal(y == x0, edges < m_d)  # x itself exactly on [0, m_d)


def test_rejected_draws_are_drawn_again():
    g = GrrSampler(5, 0.6, 0.1)
    m_d, m_o, total = g.masses
    first = np.array([0, TWO53 - 1, m_d, total, 5], dtype=np.uint64)  # two rejected: 2⁵³ − 1 and M
    again = np.array([TWO53 - 2, m_d + m_o], dtype=np.uint64)  # one rejected once more
    last = np.array([1], dtype=np.uint64)
    source = Scripted(first, again, last)
    x = np.array([0, 1, 2, 3, 4])
    y = g.sample(x, source)
    assert source.sizes == [5, 2, 1]
    # record 2: u = m_d → i = 1; record 3: u = m_d + m_o → i = 2, (3 + 2) mod 5; record 1: u = 1 → x
    np.testing.assert_array_equal(y, [0, 1, 3, 0, 4])


def test_os_path_is_the_map_of_the_bits_it_draws_across_chunks_and_dtypes():
    k = 4000
    g = grr(k, 1.0)
    n = 3 * GrrSampler.CHUNK + 17
    x = np.random.default_rng(5).integers(0, k, n)
    forced = [3, GrrSampler.CHUNK + 1, n - 1]
    for dtype in (None, np.uint16, np.int32):
        source = Recorded(9, force_high=forced)
        y = g.sample(x, source, dtype=dtype)
        assert y.dtype == (np.int64 if dtype is None else dtype)
        stream = np.concatenate(source.calls)
        assert stream.size == n + len(forced)  # one word per record, one more per rejected word
        u = stream[:n].copy()
        assert np.all(u[forced] == TWO53 - 1)
        u[forced] = stream[n:]  # the redraws (accepted: far below M)
        np.testing.assert_array_equal(y, reference(g, x, u))


@pytest.mark.parametrize("source", ["os", "seeded"])
def test_distribution_matches_the_column(source):
    k, eps, n = 100, 1.0, 400_000
    g = grr(k, eps)
    q = grr_matrix(k, eps)
    x0 = 17
    rng = None if source == "os" else np.random.default_rng(2024)
    y = g.sample(np.full(n, x0), rng)
    counts = np.bincount(y, minlength=k)
    expected = n * q[:, x0]
    # The diagonal within 5 binomial standard deviations (fails with probability ≈ 6e-7).
    assert abs(counts[x0] - expected[x0]) <= 5 * math.sqrt(n * q[x0, x0] * (1 - q[x0, x0]))
    # The others uniform: χ² over the 99 off-diagonal outputs (df = 98), mean 98, sd 14;
    # 98 + 7·14 is exceeded with probability < 1e-6.
    others = np.delete(counts, x0)
    total = others.sum()
    chi2 = float(((others - total / (k - 1)) ** 2 / (total / (k - 1))).sum())
    assert chi2 < 98 + 7 * 14


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="size must be an integer ≥ 2"):
        GrrSampler(1, 1.0, 0.0)
    with pytest.raises(ValueError, match="diagonal must be a finite number ≥ 0"):
        GrrSampler(3, float("nan"), 0.5)
    with pytest.raises(ValueError, match="off_diagonal must be a finite number ≥ 0"):
        GrrSampler(3, 0.5, -0.25)
    with pytest.raises(ValueError, match="no mass"):
        GrrSampler(3, 0.0, 0.0)
    g = GrrSampler(300, 0.5, 0.5 / 299)
    with pytest.raises(ValueError, match=r"record indices must be in \[0, 300\)"):
        g.sample([0, 300])
    with pytest.raises(ValueError, match="holds outputs 0..299"):
        g.sample([0], dtype=np.uint8)
    assert g.sample([]).size == 0


def test_grr_parameters_detect_exactly_grr():
    q = grr_matrix(6, 1.0)
    assert grr_parameters(q) == (6, q[0, 0], q[1, 0])
    bent = q.copy()
    bent[2, 3] += 1e-12
    assert grr_parameters(bent) is None
    assert grr_parameters(q[:, :5]) is None
    assert grr_parameters(np.eye(1)) is None


def test_sampler_for_uses_the_structure_from_a_size_on():
    big = grr_matrix(GRR_MIN_SIZE, 1.0)
    assert isinstance(sampler_for(big), GrrSampler)
    assert isinstance(sampler_for(grr_matrix(GRR_MIN_SIZE - 1, 1.0)), ColumnSampler)
    spec = {"form": "grr", "size": 4000, "diagonal": 0.5, "off_diagonal": 0.5 / 3999}
    assert isinstance(sampler_for(np.zeros((1, 1)), spec), GrrSampler)  # the spec, not the matrix
    other = big.copy()
    other[:, 0] = np.roll(other[:, 0], 1)  # column 0 keeps its values but moves its mass
    assert isinstance(sampler_for(other), ColumnSampler)


def test_random_into_fills_a_reused_buffer(monkeypatch):
    n = 3 * randomness._KEYSTREAM_BYTES_PER_KEY + 1001
    buf = np.zeros(n + 15, dtype=np.uint8)
    random_into(buf, n)
    counts = np.bincount(buf[:n], minlength=256)
    assert ((counts - n / 256) ** 2 / (n / 256)).sum() < 400  # χ²₂₅₅: P(> 400) ≈ 1e-8
    first = buf[:64].copy()
    random_into(buf, n)
    assert not np.array_equal(first, buf[:64])  # a fresh key every call
    monkeypatch.setattr(randomness, "HAVE_AES", False)
    small = np.zeros(100, dtype=np.uint8)
    random_into(small, 80)
    assert small[:80].any() and not small[80:].any()
    with pytest.raises(ValueError, match="at least n \\+ 15"):
        random_into(np.zeros(10, dtype=np.uint8), 10)


@pytest.mark.parametrize("k", [256, 1024])  # a list of rows (the structure detected), the compact GRR form
def test_a_grr_document_is_sampled_from_its_parameters(k):
    design = pytest.importorskip(
        "rldp.aggregator.design", reason="the designer's GRR document (rldp[aggregator])"
    ).design
    from rldp.client import Mechanism
    from rldp.shared.records import Alphabet, Attribute

    alpha = Alphabet(Attribute("s", ["a", "b", "c", "d"]), [Attribute("u", [f"u{i}" for i in range(k // 4)])])
    p_hat = np.random.default_rng(k).dirichlet(np.ones(k)).reshape(4, k // 4)
    doc = design("grr", alphabet=alpha, public_distribution=p_hat, epsilon=1.0, n=32_561)
    mech = Mechanism.from_document(doc)
    n = 200_000
    y = mech.privatize_indices(np.full(n, 3), dtype=np.uint16)
    assert isinstance(mech._sampler, GrrSampler) and y.dtype == np.uint16
    d = float(mech.matrix[3, 3])
    assert abs(np.count_nonzero(y == 3) - n * d) <= 5 * math.sqrt(n * d * (1 - d))
