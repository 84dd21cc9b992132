"""The alias tables built and read in C (client/_alias.c) against their numpy forms, byte for byte."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import sparse_columns

from rldp.client import alias as alias_module
from rldp.client.alias import HAVE_NATIVE_ALIAS, AliasTable
from rldp.client.sampling import ColumnSampler

needs_native = pytest.mark.skipif(not HAVE_NATIVE_ALIAS, reason="built without a C compiler")


def _table(b: int, a: int, seed: int, native: bool = True) -> AliasTable:
    """The alias table of a random Q (built directly: the sampler picks it only for some Q)."""
    return AliasTable(ColumnSampler(sparse_columns(b, a, seed)).thresholds, native=native)


@needs_native
@pytest.mark.parametrize(("b", "a"), [(2, 5), (64, 3), (65, 17), (200, 700), (1500, 40), (4096, 9)])
def test_the_c_build_is_the_numpy_table_byte_for_byte(b: int, a: int) -> None:
    thresholds = ColumnSampler(sparse_columns(b, a, seed=b * a)).thresholds
    built = AliasTable(thresholds, native=True)
    assert built.native
    np.testing.assert_array_equal(built.table, AliasTable(thresholds, native=False).table)
    # Any layout of the thresholds gives the same table.
    np.testing.assert_array_equal(built.table, AliasTable(np.ascontiguousarray(thresholds), native=True).table)


@needs_native
def test_the_c_build_refuses_thresholds_that_are_not_a_distribution() -> None:
    thresholds = np.ascontiguousarray(ColumnSampler(sparse_columns(100, 6, seed=1)).thresholds)
    for column, edit in ((2, lambda t: t.__setitem__((2, 50), t[2, 49] - 1)), (4, lambda t: t.__setitem__((4, 99), 7))):
        bad = thresholds.copy()
        edit(bad)
        with pytest.raises(ValueError, match=f"column {column}'s thresholds decrease or do not end at 2\\*\\*53"):
            AliasTable(bad, native=True)


@needs_native
@pytest.mark.parametrize(("b", "a"), [(64, 3), (200, 700), (1500, 40)])
def test_the_c_loop_and_numpy_give_the_same_outputs(b: int, a: int) -> None:
    table = _table(b, a, seed=b + a)
    assert table.native
    np.testing.assert_array_equal(table.table, _table(b, a, seed=b + a, native=False).table)
    rng = np.random.default_rng(1)
    n = 3 * table.CHUNK + 17  # several numpy chunks
    x = rng.integers(0, a, n)
    words = rng.integers(0, 2**64, n, dtype=np.uint64)  # raw keystream words: u = word >> 11
    native = np.empty(n, dtype=np.int64)
    table.sample_words(x, words.copy(), native, shift=11)
    table.native = False
    plain = np.empty(n, dtype=np.int64)
    table.sample_words(x, words.copy(), plain, shift=11)
    np.testing.assert_array_equal(native, plain)
    np.testing.assert_array_equal(plain, table.sample(x, words >> np.uint64(11)))
    assert native.min() >= 0 and native.max() < b


@needs_native
def test_the_c_loop_reads_nothing_outside_the_table() -> None:
    table = _table(100, 50, seed=2)
    for bad in (50, -1, 2**40):
        x = np.array([0, 1, bad, 2], dtype=np.int64)
        with pytest.raises(IndexError, match=f"record 2: input index {bad} outside the alias tables"):
            table.sample(x, np.zeros(4, dtype=np.uint64))


def test_arrays_the_c_loop_cannot_read_as_they_are_take_the_numpy_path() -> None:
    table = _table(100, 50, seed=3)
    rng = np.random.default_rng(4)
    x = rng.integers(0, 50, 2000)
    u = rng.integers(0, 2**53, 2000, dtype=np.uint64)
    expected = table.sample(x, u)
    np.testing.assert_array_equal(table.sample(x[::2], u[::2]), expected[::2])  # strided
    np.testing.assert_array_equal(table.sample(x.astype(">i8"), u.astype(">u8")), expected)  # big-endian


def test_without_the_accelerator_numpy_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alias_module, "_native", None)
    sampler = ColumnSampler(sparse_columns(200, 3000, seed=5))
    assert sampler.alias is not None and not sampler.alias.native
    x = np.arange(3000).repeat(10)
    y = sampler.sample(x)
    assert y.shape == (30000,) and y.min() >= 0 and y.max() < 200


def test_ci_builds_the_accelerator() -> None:
    # CI sets RLDP_REQUIRE_NATIVE: there a C compiler is present, so a failed (optional) build
    # must fail a test instead of silently leaving the slower path.
    if os.environ.get("RLDP_REQUIRE_NATIVE"):
        assert HAVE_NATIVE_ALIAS, "rldp.client._alias was not built (see pip's build output)"
    else:
        pytest.skip("RLDP_REQUIRE_NATIVE not set")
