"""Sampling with thousands of outputs: exact alias tables, the vectorised threshold search,
compact output types and the keystream for small batches."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import columns_drawn_as_q, sparse_columns

from rldp.client import randomness, sampling
from rldp.client.alias import AliasTable, search_thresholds
from rldp.client.sampling import ColumnSampler, OSRandom


def alias_masses(table: AliasTable, a: int) -> np.ndarray:
    """Units of 2⁻⁵³ each output receives from the alias table (exact integers)."""
    entries = table.table.reshape(a, table.n_buckets)
    prob = (entries >> np.uint64(16)).astype(np.int64)
    alias = (entries & np.uint64(0xFFFF)).astype(np.int64)
    cap = 1 << (53 - table.bits)
    out = prob.copy()
    for x in range(a):
        np.add.at(out[x], alias[x], cap - prob[x])
    return out


@pytest.mark.parametrize("b, a", [(5, 3), (70, 40), (300, 7), (1000, 12)])
def test_alias_tables_give_every_output_exactly_its_mass(b, a):
    sampler = ColumnSampler(sparse_columns(b, a, seed=b + a))
    table = AliasTable(sampler.thresholds)
    masses = alias_masses(table, a)
    expected = np.diff(sampler.thresholds.astype(np.int64), axis=1, prepend=0)
    np.testing.assert_array_equal(masses[:, :b], expected)  # P(y|x) exactly as inversion gives
    assert not masses[:, b:].any()  # padding buckets never yield an output


class Recorded(OSRandom):
    """The OS path fed by a seeded generator, recording the 53-bit words it handed out."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls: list[tuple[int, np.ndarray]] = []

    def bits(self, n: int, width: int) -> np.ndarray:
        values = self.rng.integers(0, 1 << width, n, dtype=np.uint64)
        self.calls.append((width, values))
        return values


def test_many_outputs_use_the_alias_table_and_match_the_columns():
    b, a = 200, 3000  # a guide table would hold 2¹⁰ entries per column for 200 outputs
    q = sparse_columns(b, a, seed=7)
    sampler = ColumnSampler(q)
    assert sampler.alias is not None and sampler.table is None
    n_per, cols = 100_000, np.array([0, 1, 2999])
    x = np.repeat(cols, n_per)
    y = sampler.sample(x, np.random.default_rng(3))
    columns_drawn_as_q(y, x, q, cols, sigmas=5)


def test_alias_os_path_is_the_table_applied_to_the_bits_it_draws():
    b, a = 200, 3000
    sampler = ColumnSampler(sparse_columns(b, a, seed=8))
    x = np.random.default_rng(1).integers(0, a, 3 * ColumnSampler.CHUNK + 5)
    source = Recorded(2)
    y = sampler.sample(x, source)
    assert [w for w, _ in source.calls] == [53]  # one draw of 53 bits per record
    u = source.calls[0][1]
    np.testing.assert_array_equal(y, sampler.alias.sample(x, u))
    # ... which puts every u in one of the (at most) two outputs its bucket holds, and never
    # in an output of probability 0.
    q = sparse_columns(b, a, seed=8)
    assert np.all(q[y, x] > 0)


@pytest.mark.parametrize("span", [None, 3, 20])
def test_threshold_search_is_plain_inversion(span):
    b, a, n = 300, 9, 50_000
    thresholds = ColumnSampler(sparse_columns(b, a, seed=11)).thresholds
    rng = np.random.default_rng(4)
    x = rng.integers(0, a, n)
    u = rng.integers(0, 1 << 53, n, dtype=np.uint64)
    reference = np.count_nonzero(thresholds[x] <= u[:, None], axis=1)
    lo = None
    if span is not None:  # a window [lo, lo + span] that holds the answer, as a guide table gives
        lo = np.maximum(reference - rng.integers(0, span + 1, n), 0)
    got = search_thresholds(thresholds, x, u, lo, span, 1 << 12)
    np.testing.assert_array_equal(got, reference)


def test_compact_output_types():
    q = sparse_columns(40, 6, seed=5)
    sampler = ColumnSampler(q)
    x = np.random.default_rng(0).integers(0, 6, 10_000)
    wide = sampler.sample(x, np.random.default_rng(1))
    small = sampler.sample(x, np.random.default_rng(1), dtype=np.uint8)
    assert small.dtype == np.uint8 and wide.dtype == np.int64
    np.testing.assert_array_equal(small, wide)
    assert sampler.sample(x, dtype="uint16").dtype == np.uint16
    big = ColumnSampler(sparse_columns(300, 2, seed=6))
    with pytest.raises(ValueError, match=r"outputs 0\.\.299: one of uint16, uint32, int64"):
        big.sample([0, 1], dtype=np.uint8)
    with pytest.raises(ValueError, match="dtype must be"):
        sampler.sample([0], dtype=np.float32)
    with pytest.raises(ValueError, match="dtype must be"):
        sampler.sample([0], dtype="no-such-type")


@pytest.mark.skipif(not sampling.HAVE_AES, reason="the keystream needs the cryptography package")
def test_small_batches_use_the_keystream(monkeypatch):
    # 10⁴ records draw ~10-20 KiB: AES-CTR under a fresh OS key, not that many bytes of urandom.
    asked = []
    real = randomness.os.urandom
    monkeypatch.setattr(randomness.os, "urandom", lambda k: asked.append(k) or real(k))
    data = sampling.random_array(10_000)
    assert data.size == 10_000 and asked == [48]
    asked.clear()
    sampling.random_array(1_000)  # below the keystream threshold: the syscall itself
    assert asked == [1_000]


def test_mechanism_privatizes_into_a_compact_type():
    from documents import grr as grr_matrix

    from rldp.client import Mechanism
    from rldp.shared.document import build_document
    from rldp.shared.records import Alphabet, Attribute

    alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("colour", ("blue", "green", "red"))])
    doc = build_document(
        method="grr",
        matrix=grr_matrix(alpha.size, 1.0),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1 / alpha.size),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
    )
    mech = Mechanism.from_document(doc)
    records = {"sex": ["Male", "Female"] * 500, "colour": ["red", "blue"] * 500}
    y = mech.privatize(records, np.random.default_rng(0), dtype=np.uint8)
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, mech.privatize(records, np.random.default_rng(0)))
    assert mech.privatize_indices([0, 5], dtype=np.uint16).dtype == np.uint16


def test_alias_sample_is_the_alias_rule_written_plainly():
    b, a, n = 200, 3000, 3 * (1 << 15) + 7  # several chunks of the sampler
    sampler = ColumnSampler(sparse_columns(b, a, seed=12))
    table = sampler.alias
    rng = np.random.default_rng(13)
    x = rng.integers(0, a, n)
    u = rng.integers(0, 1 << 53, n, dtype=np.uint64)
    entries = table.table.reshape(a, table.n_buckets)
    bucket = (u >> np.uint64(53 - table.bits)).astype(np.int64)
    entry = entries[x, bucket]
    prob, alias = entry >> np.uint64(16), (entry & np.uint64(0xFFFF)).astype(np.int64)
    low = u & np.uint64((1 << (53 - table.bits)) - 1)
    expected = np.where(low < prob, bucket, alias)
    np.testing.assert_array_equal(table.sample(x, u), expected)


@pytest.mark.parametrize("rng", [None, OSRandom()])
def test_alias_tables_fed_by_the_os_keystream_match_the_columns(rng):
    b, a = 200, 3000
    q = sparse_columns(b, a, seed=7)
    sampler = ColumnSampler(q)
    assert sampler.alias is not None
    n_per, cols = 100_000, np.array([0, 5, 2999])
    x = np.repeat(cols, n_per)
    y = sampler.sample(x, rng)  # the plain OS source: chunks from one reused keystream buffer
    columns_drawn_as_q(y, x, q, cols, sigmas=6)  # unseeded, 600 checks: a false alarm once in ~10⁶ runs


def test_alias_sampler_build_is_the_plain_inversion_thresholds_and_exact_masses():
    # The build runs its sums row by row and keeps T output-major; the numbers must be the
    # plain formula T[x, y] = ⌈C[x, y]·2⁵³⌉ bit for bit, and the table exact for every column.
    b, a = 200, 3000
    q = sparse_columns(b, a, seed=21)
    sampler = ColumnSampler(q)
    assert sampler.alias is not None
    cum = np.cumsum(q.T, axis=1)
    expected = np.ceil(cum / cum[:, -1:] * float(1 << 53)).astype(np.uint64)
    np.testing.assert_array_equal(sampler.thresholds, expected)
    masses = alias_masses(sampler.alias, a)
    np.testing.assert_array_equal(masses[:, :b], np.diff(expected.astype(np.int64), axis=1, prepend=0))
    assert not masses[:, b:].any()
    # Any layout of T gives the same table (the sampler's is a transposed view).
    again = AliasTable(np.ascontiguousarray(sampler.thresholds))
    np.testing.assert_array_equal(again.table, sampler.alias.table)
