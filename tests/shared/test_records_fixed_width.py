"""Fixed-width string columns ('U' and 'S' numpy arrays) encode by a keyed lookup and an exact
row comparison (shared/fixed_width.py): same codes as the dict lookup, every unknown value
caught (also when it shares the key or the hash of a value), both key kinds, bytes, widths."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.shared import fixed_width
from rldp.shared.errors import AlphabetError, RecordError
from rldp.shared.fixed_width import FixedWidthCodes
from rldp.shared.records import Attribute

RACE = ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")
ODD = ("", "é", "Ünïcödé", "日本語", "😀 grin", "a b", "ab")  # empty, non-ASCII, astral, spaces


def by_dict(attr: Attribute, values) -> np.ndarray:
    return np.array([attr.values.index(str(v)) for v in values], dtype=np.int64)


def sample(values, n, seed=0):
    x = np.random.default_rng(seed).integers(0, len(values), n)
    return x, [values[i] for i in x]


@pytest.mark.parametrize("values", [RACE, ODD, ("Female", "Male"), tuple(f"v{i:03d}" for i in range(300))])
@pytest.mark.parametrize("width", [None, 40])  # the values' own width, and a wider array
def test_codes_equal_the_dict_lookup(values, width):
    attr = Attribute("a", values)
    n = 3 * (fixed_width._CHUNK_BYTES // 16) + 11  # several chunks, a partial last one
    x, col = sample(values, n)
    arr = np.array(col) if width is None else np.array(col, dtype=f"<U{width}")
    assert attr._fixed_width(arr.dtype) is not None  # the fast path, not the fallback
    np.testing.assert_array_equal(attr.encode(arr), x)
    np.testing.assert_array_equal(attr.encode(arr[::-1]), x[::-1])  # a strided view
    np.testing.assert_array_equal(attr.encode(arr.astype(arr.dtype.newbyteorder(">"))), x)  # big-endian
    assert attr.encode(arr[:0]).size == 0


@pytest.mark.parametrize(
    "bad",
    ["Whit", "Whites", "Wxite", "Black ", "black", "Other\u0301", "x" * 30, "", "Amer-Indian-Eskimoo"],
)
def test_unknown_values_are_reported_never_encoded(bad):
    attr = Attribute("race", RACE)
    n = 2 * (fixed_width._CHUNK_BYTES // 72) + 5
    _, col = sample(RACE, n, seed=1)
    where = n - 3  # in the last chunk
    col[where] = bad
    arr = np.array(col)
    with pytest.raises(RecordError, match=rf"record {where}: unknown value {bad!r} for attribute 'race'"):
        attr.encode(arr)


def test_a_narrower_array_holds_only_the_values_that_fit():
    attr = Attribute("race", RACE)
    arr = np.array(["Black", "White", "Other", "White"])  # <U5: the long values cannot occur
    assert arr.dtype == np.dtype("<U5")
    np.testing.assert_array_equal(attr.encode(arr), [2, 4, 3, 4])
    with pytest.raises(RecordError, match="record 1: unknown value 'Asian'"):
        attr.encode(np.array(["Black", "Asian"]))  # a prefix of a value that does not fit
    short = Attribute("s", ("long value", "longer value"))
    with pytest.raises(RecordError, match="record 0: unknown value 'a'"):
        short.encode(np.array(["a", "b"]))  # no value fits at all


def test_values_without_a_separating_position_use_the_perfect_hash():
    values = ("ab", "ac", "bb", "bc")  # every position repeats a code point
    enc = FixedWidthCodes.build(values, np.dtype("<U2"))
    assert enc is not None and enc._key[0] == "hash"
    attr = Attribute("h", values)
    x, col = sample(values, 5000)
    np.testing.assert_array_equal(attr.encode(np.array(col)), x)
    with pytest.raises(RecordError, match="record 2: unknown value 'ba'"):
        attr.encode(np.array(["ab", "bc", "ba"]))


def test_a_tiny_hash_collides_and_every_collision_is_caught(monkeypatch):
    # No lookup table for single positions, and the smallest hash table (as many slots as
    # values, rounded up to a power of two): unknown values land on the values' slots.
    monkeypatch.setattr(fixed_width, "MAX_LUT", 0)
    monkeypatch.setattr(fixed_width, "HASH_EXTRA_BITS", (0,))
    monkeypatch.setattr(fixed_width, "HASH_LARGE_BITS", ())
    monkeypatch.setattr(fixed_width, "HASH_TRIES", 1000)
    values = ("alpha-one", "beta-two", "gamma-three", "delta-four")
    enc = FixedWidthCodes.build(values, np.dtype("<U11"))
    assert enc is not None and enc._key[0] == "hash" and enc._key[-1].size == 4  # 4 slots for 4 values
    attr = Attribute("t", values)
    x, col = sample(values, 20_000, seed=3)
    np.testing.assert_array_equal(attr.encode(np.array(col, dtype="<U11")), x)
    rng = np.random.default_rng(4)
    for _ in range(50):  # random unknown values: each hashes onto some value's slot
        bad = "".join(rng.choice(list("abcdefghij-"), rng.integers(1, 12)))
        codes, first = enc.encode(np.array(["beta-two", bad], dtype="<U11"))
        assert first == 1, bad


def test_no_perfect_hash_falls_back_to_the_binary_search(monkeypatch):
    monkeypatch.setattr(fixed_width, "MAX_LUT", 0)
    monkeypatch.setattr(fixed_width, "HASH_TRIES", 0)
    attr = Attribute("race", RACE)
    arr = np.array(["White", "Black", "Other"])
    assert attr._fixed_width(arr.dtype) is None
    np.testing.assert_array_equal(attr.encode(arr), [4, 2, 3])
    with pytest.raises(RecordError, match="record 0: unknown value 'Whale'"):
        attr.encode(np.array(["Whale"]))


def test_a_value_ending_in_nul_is_left_to_the_binary_search():
    assert FixedWidthCodes.build(("a\0", "b"), np.dtype("<U2")) is None
    with pytest.raises(AlphabetError, match="U\\+0000"):  # an attribute refuses such a value since issue 35
        Attribute("n", ("a\0", "b", "é"))
    attr = Attribute("n", ("a", "b", "é"))
    np.testing.assert_array_equal(attr.encode(np.array(["b", "é"])), [1, 2])
    np.testing.assert_array_equal(attr.encode(np.array([b"b", "é".encode()])), [1, 2])
    with pytest.raises(RecordError, match="record 1: unknown value"):
        attr.encode(np.array([b"b", b"\xff"]))  # not UTF-8: named, not a decoding error


def test_values_no_bytes_can_spell_never_match_bytes():
    with pytest.raises(AlphabetError, match="lone surrogate"):  # JSON can carry one; an attribute refuses it
        Attribute("s", ("ok", "\ud800"))
    attr = Attribute("s", ("ok", "é"))
    np.testing.assert_array_equal(attr.encode(np.array([b"ok"])), [0])
    with pytest.raises(RecordError, match="record 0: unknown value"):
        attr.encode(np.array([b"\xed\xa0\x80"]))


def test_bytes_are_utf8_text():
    values = ("Female", "Male", "é", "日本")
    attr = Attribute("s", values)
    x, col = sample(values, 4000)
    data = np.array([v.encode("utf-8") for v in col])
    assert data.dtype.kind == "S"
    np.testing.assert_array_equal(attr.encode(data), x)
    np.testing.assert_array_equal(attr.encode([v.encode("utf-8") for v in col[:50]]), x[:50])  # a list of bytes
    with pytest.raises(RecordError, match="record 1: unknown value 'Mal' for attribute 's'"):
        attr.encode(np.array([b"Male", b"Mal"]))
    with pytest.raises(RecordError, match=r"record 0: unknown value '\\\\xff'"):
        attr.encode(np.array([b"\xff"]))  # not UTF-8: named, no decoding error


def test_mixed_width_columns_of_one_alphabet():
    from rldp.shared.records import Alphabet

    alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("race", RACE)])
    x = np.random.default_rng(5).integers(0, alpha.size, 10_000)
    sex = np.array(["Female", "Male"], dtype="S6")[x // 5]  # bytes
    race = np.array(RACE, dtype="<U25")[x % 5]  # wider than needed
    np.testing.assert_array_equal(alpha.encode({"sex": sex, "race": race}), x)
    np.testing.assert_array_equal(alpha.encode(np.stack([sex.astype(str), race], axis=1)), x)  # a 2-D array


@pytest.mark.slow
@pytest.mark.parametrize("large", [True, False])  # a large hash table, or no table: the sorted hashes
def test_many_random_values_get_a_large_table_or_the_sorted_hashes(monkeypatch, large):
    if not large:
        monkeypatch.setattr(fixed_width, "HASH_LARGE_BITS", ())
    rng = np.random.default_rng(11)
    words = {"".join(rng.choice(list("abcdefghijklmnop -"), rng.integers(3, 20))) for _ in range(3000)}
    values = tuple(sorted(words))[:1500]
    attr = Attribute("w", values)
    x, col = sample(values, 30_000, seed=12)
    arr = np.array(col, dtype="<U19")
    enc = attr._fixed_width(arr.dtype)
    assert enc is not None and enc._key[0] == ("hash" if large else "sorted")
    np.testing.assert_array_equal(attr.encode(arr), x)
    bad = np.array([values[0], values[1] + "x", values[2][:-1]], dtype="<U19")
    assert bad[1] not in words and bad[2] not in words  # unknown by construction (fixed seed)
    codes, first = enc.encode(bad)
    assert first == 1
    assert enc.encode(bad[[0, 2]])[1] == 1
