"""Python strings to codes: the C accelerator (shared/_string_index.c) against the dict lookup."""

from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

from rldp.shared import python_strings
from rldp.shared.attributes import Attribute
from rldp.shared.errors import RecordError
from rldp.shared.python_strings import HAVE_NATIVE_STRINGS, PythonStringCodes

needs_native = pytest.mark.skipif(not HAVE_NATIVE_STRINGS, reason="built without a C compiler")

# Lengths around the key's words (8, 16, 24 bytes), every str kind (1, 2 and 4 bytes per
# code point), shared prefixes and suffixes, the empty string.
VALUES = (
    "",
    "a",
    "ab",
    "abc",
    "abcd",
    "abcdefg",
    "abcdefgh",
    "abcdefghi",
    "abcdefghijklmnop",
    "abcdefghijklmnopq",
    "abcdefghijklmnopqrstuvwx",
    "abcdefghijklmnopqrstuvwxy",
    "abcdefghijklmnopqrstuvwxyz0123456789",
    "Amer-Indian-Eskimo",
    "Asian-Pac-Islander",
    "Ünïcode",
    "✓ check ✓",
    "😀 grin",
    "😀" * 9,
    "x" * 100,
)


def _both(values: tuple[str, ...]) -> tuple[PythonStringCodes, PythonStringCodes]:
    positions = {v: i for i, v in enumerate(values)}
    return PythonStringCodes(values, positions), PythonStringCodes(values, positions, native=False)


def _near_misses(values: tuple[str, ...]) -> list[str]:
    """Strings one code point away from a value (changed at every position, one added or removed)."""
    out = []
    for v in values:
        for i in range(len(v)):
            out.append(v[:i] + ("_" if v[i] != "_" else "-") + v[i + 1 :])
            out.append(v[:i] + chr(ord(v[i]) + 0x10000 if ord(v[i]) < 0x100 else 0x41) + v[i + 1 :])
        out.extend([v + "a", v[:-1], "a" + v])
    return [s for s in out if s not in values]


@needs_native
def test_native_and_dict_lookups_give_the_same_codes() -> None:
    rng = np.random.default_rng(3)
    native, plain = _both(VALUES)
    assert native.native and not plain.native
    # Fresh str objects (as from a file), not the values' own objects.
    items = ["".join(list(VALUES[i])) for i in rng.integers(0, len(VALUES), 5000)]
    got = native.encode(items)
    assert got is not None and got.dtype == np.uint8
    np.testing.assert_array_equal(got, plain.encode(items))
    np.testing.assert_array_equal(got, [VALUES.index(s) for s in items])
    for form in (tuple(items), np.array(items, dtype=object), np.array(items, dtype=object)[::-3]):
        expected = [VALUES.index(s) for s in form]
        np.testing.assert_array_equal(native.encode(form), expected)


@needs_native
def test_a_string_one_code_point_away_from_a_value_is_never_found() -> None:
    native, plain = _both(VALUES)
    misses = _near_misses(VALUES)
    assert len(misses) > 600
    for s in misses:
        assert native.encode([VALUES[0], s]) is None, repr(s)
        assert plain.encode([s]) is None


@needs_native
def test_the_branch_free_key_is_the_byte_loop_key() -> None:
    from rldp.shared._string_index import _keys

    rng = np.random.default_rng(5)
    alphabet = "aZ0-é✓😀"
    strings = list(VALUES) + _near_misses(VALUES[:6])
    strings += ["".join(rng.choice(list(alphabet), size=n)) for n in range(40) for _ in range(5)]
    for s in strings:
        fast, loop = _keys(s)
        assert fast == loop, repr(s)


@needs_native
def test_int64_codes_beyond_256_values_and_values_that_collide_in_their_key_words() -> None:
    # 300 values of 40 bytes that differ only in the middle (bytes 16..32): equal first and last
    # words, so they share hash buckets and the exact comparison of the middle decides.
    values = tuple(f"{'p' * 16}{i:016d}{'s' * 8}" for i in range(300))
    native, plain = _both(values)
    assert native.dtype == np.int64
    rng = np.random.default_rng(7)
    items = [values[i] for i in rng.integers(0, 300, 2000)]
    np.testing.assert_array_equal(native.encode(items), plain.encode(items))
    assert native.encode([f"{'p' * 16}{300:016d}{'s' * 8}"]) is None


@needs_native
def test_str_subclasses_and_unknown_values_go_to_the_dict_then_the_general_path() -> None:
    attr = Attribute("race", ("White", "Black", "Other"))
    assert attr.python_strings.native
    np.testing.assert_array_equal(attr.encode(["Black", np.str_("Other"), "White"]), [1, 2, 0])
    np.testing.assert_array_equal(attr.encode(np.array(["Other", "White"], dtype=object)), [2, 0])
    with pytest.raises(RecordError, match=r"record 1: unknown value 'Blue' for attribute 'race'"):
        attr.encode(["White", "Blue"])
    with pytest.raises(RecordError, match="unknown value"):
        attr.encode(["White", None])


@needs_native
def test_an_attribute_with_its_index_pickles_and_copies() -> None:
    attr = Attribute("sex", ("Female", "Male"))
    attr.encode(["Male"])  # builds the cached index
    for clone in (pickle.loads(pickle.dumps(attr)), copy.deepcopy(attr)):
        np.testing.assert_array_equal(clone.encode(["Male", "Female"]), [1, 0])


@needs_native
def test_the_accelerator_rejects_bad_arguments_with_clear_errors() -> None:
    from rldp.shared._string_index import StringIndex

    with pytest.raises(ValueError, match="'a' is listed twice"):
        StringIndex(("a", "a"))
    with pytest.raises(TypeError, match=r"values\[1\] must be a str, got int"):
        StringIndex(("a", 1))
    index = StringIndex(("a", "b"))
    with pytest.raises(TypeError, match="list, a tuple or a 1-D object array"):
        index.encode("ab", np.empty(2, np.uint8))
    with pytest.raises(TypeError, match="list, a tuple or a 1-D object array"):
        index.encode(np.zeros(2), np.empty(2, np.uint8))

    class NotAnArray:  # publishes an object array's interface at an arbitrary address
        __array_interface__ = {"typestr": "|O", "shape": (2,), "data": (16, False), "strides": None, "version": 3}

    with pytest.raises(TypeError, match="list, a tuple or a 1-D object array"):
        index.encode(NotAnArray(), np.empty(2, np.uint8))
    with pytest.raises(ValueError, match="contiguous buffer of 2 uint8 or int64 codes"):
        index.encode(["a", "b"], np.empty(3, np.uint8))
    with pytest.raises(ValueError, match="contiguous buffer of 2 uint8 or int64 codes"):
        index.encode(["a", "b"], np.empty(2, np.float32))


def test_without_the_accelerator_the_dict_lookup_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_strings, "StringIndex", None)
    attr = Attribute("sex", ("Female", "Male"))
    assert not attr.python_strings.native
    np.testing.assert_array_equal(attr.encode(["Male", "Female", "Male"]), [1, 0, 1])
    with pytest.raises(RecordError, match="unknown value 'X'"):
        attr.encode(["Male", "X"])


def test_ci_builds_the_accelerator() -> None:
    # CI sets RLDP_REQUIRE_NATIVE: there a C compiler is present, so a failed (optional) build
    # must fail a test instead of silently leaving the slower path.
    if os.environ.get("RLDP_REQUIRE_NATIVE"):
        assert HAVE_NATIVE_STRINGS, "rldp.shared._string_index was not built (see pip's build output)"
    else:
        pytest.skip("RLDP_REQUIRE_NATIVE not set")


@needs_native
def test_alphabet_columns_of_python_strings_are_combined_in_place_with_the_same_indices() -> None:
    from rldp.shared.records import Alphabet

    sex, race = ("Female", "Male"), ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")
    alpha = Alphabet(
        Attribute("sex", sex), [Attribute("race", race), Attribute("u", tuple(f"u{i}" for i in range(300)))]
    )
    rng = np.random.default_rng(9)
    x = rng.integers(0, alpha.size, 3000)
    names = [a.name for a in alpha.attributes]
    decoded = list(zip(*alpha.decode(x), strict=True))
    lists = {n: ["".join(list(v)) for v in col] for n, col in zip(names, decoded, strict=True)}
    for cols in (
        lists,
        {n: tuple(c) for n, c in lists.items()},
        {n: np.array(c, dtype=object) for n, c in lists.items()},
        {"sex": lists["sex"], "race": np.array(lists["race"]), "u": lists["u"]},  # one numpy column: general path
    ):
        np.testing.assert_array_equal(alpha.encode(cols), x)
    bad = dict(lists, u=[*lists["u"][:-1], "u300"])  # unknown in the last column: all recomputed, then named
    with pytest.raises(RecordError, match=r"record 2999: unknown value 'u300' for attribute 'u'"):
        alpha.encode(bad)
    with pytest.raises(RecordError, match="different lengths: sex=3000, race=2999"):
        alpha.encode(dict(lists, race=lists["race"][:-1]))


@pytest.mark.slow
@needs_native
def test_numpy_string_columns_of_thousands_of_values_are_read_by_the_accelerator() -> None:
    # 3,000 values of every kind (ASCII, 2-byte and 4-byte code points, an embedded NUL, lengths
    # around the key's words): the fixed-width encoder has no perfect hash and would search.
    rng = np.random.default_rng(11)
    pieces = ["a", "é", "✓", "😀", "\0"]
    values = tuple(dict.fromkeys(f"v{i}" + "".join(rng.choice(pieces, size=i % 30)) + "z" for i in range(3000)))
    attr = Attribute("v", values)
    idx = rng.integers(0, len(values), 20_000)
    col = np.array(values)[idx]
    np.testing.assert_array_equal(attr.python_strings.encode_units(col), idx)
    np.testing.assert_array_equal(attr.encode(col), idx)
    # "u0" … "u7999": no perfect hash of the fixed-width rows, so the accelerator answers.
    many = Attribute("u", tuple(f"u{i}" for i in range(8000)))
    many_idx = rng.integers(0, 8000, 20_000)
    many_col = np.array(many.values)[many_idx]
    fixed = many._fixed_width(many_col.dtype)
    assert fixed is not None and fixed.searches
    np.testing.assert_array_equal(many.encode(many_col), many_idx)
    np.testing.assert_array_equal(attr.encode(col[::-3]), idx[::-3])  # strided
    np.testing.assert_array_equal(attr.encode(col.astype(col.dtype.newbyteorder(">"))), idx)  # big-endian
    # A row one code point away from a value is never found, and the error names it.
    for row in (values[5][:-1] + "y", values[7] + "z", values[9][:-1], values[11].replace("v", "w", 1)):
        if row in values:
            continue
        bad = col.copy()
        bad[3] = row
        assert attr.python_strings.encode_units(bad) is None
        with pytest.raises(RecordError, match=r"record 3: unknown value"):
            attr.encode(bad)


@needs_native
def test_rows_wider_than_the_accelerator_takes_use_the_fixed_width_encoder() -> None:
    values = tuple(f"{'x' * 70}{i}" for i in range(3000))
    attr = Attribute("w", values)
    idx = np.random.default_rng(12).integers(0, 3000, 2000)
    col = np.array(values)[idx]
    assert attr.python_strings.encode_units(col) is None  # 74 code points > 64
    np.testing.assert_array_equal(attr.encode(col), idx)
