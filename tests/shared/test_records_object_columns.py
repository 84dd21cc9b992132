"""Columns of Python objects (numpy dtype object, as pandas gives) encode through the dict lookup."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.shared.columns import python_values
from rldp.shared.errors import RecordError
from rldp.shared.records import Alphabet, Attribute

ALPHA = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("age", ("1", "2", "30"))])


def test_object_columns_encode_like_lists_and_string_arrays():
    rng = np.random.default_rng(0)
    x = rng.integers(0, ALPHA.size, 5_000)
    sex = np.array(["Female", "Male"])[x // 3]
    age = np.array(["1", "2", "30"])[x % 3]
    expected = ALPHA.encode({"sex": sex, "age": age})
    np.testing.assert_array_equal(expected, x)
    objects = {"sex": sex.astype(object), "age": age.astype(object)}
    np.testing.assert_array_equal(ALPHA.encode(objects), x)
    np.testing.assert_array_equal(ALPHA.encode({"sex": sex.tolist(), "age": age.tolist()}), x)
    # Values are matched by their string form, also inside object columns (ints from a parser).
    ints = np.array([1, 2, 30], dtype=object)
    np.testing.assert_array_equal(ALPHA.encode({"sex": np.array(["Male"] * 3, dtype=object), "age": ints}), [3, 4, 5])


def test_object_columns_name_the_unknown_value():
    with pytest.raises(RecordError, match="record 1: unknown value 'Other' for attribute 'sex'"):
        ALPHA.encode({"sex": np.array(["Male", "Other"], dtype=object), "age": np.array(["1", "2"], dtype=object)})


def test_python_values_converts_only_variable_width_string_columns():
    col = np.array(["a", "b"], dtype=object)
    assert python_values(col) is col  # iterated as it is by the dict lookup
    fixed = np.array(["a", "b"])
    assert python_values(fixed) is fixed
    assert python_values(["a"]) == ["a"]
    if hasattr(np.dtypes, "StringDType"):
        variable = np.array(["a", "bb"], dtype=np.dtypes.StringDType())
        assert python_values(variable) == ["a", "bb"]
        ages = np.array(["30", "1"], dtype=np.dtypes.StringDType())
        np.testing.assert_array_equal(ALPHA.encode({"sex": np.array(["Male"] * 2, dtype=object), "age": ages}), [5, 3])


def test_object_columns_of_other_types_and_shapes():
    attr = ALPHA.attributes[1]
    np.testing.assert_array_equal(attr.encode(np.array([b"30", "1"], dtype=object)), [2, 0])  # bytes: their text
    np.testing.assert_array_equal(attr.encode(np.array([[2], [30]], dtype=object)[:, 0]), [1, 2])  # a column view
    assert attr.encode(np.array([], dtype=object)).size == 0
    with pytest.raises(RecordError, match="record 2: unknown value 'None' for attribute 'age'"):
        attr.encode(np.array(["1", "2", None], dtype=object))


def test_compact_codes_are_scaled_without_wrapping():
    # Python strings of a small attribute come as uint8 codes; scaled by a stride > 255 they
    # must be summed in int64 (a uint8 product would wrap around silently).
    big = Attribute("v", tuple(f"v{i}" for i in range(300)))
    alpha = Alphabet(Attribute("s", ("a", "b", "c")), [big, Attribute("t", ("x", "y"))])
    x = np.random.default_rng(7).integers(0, alpha.size, 20_000)
    s, v, t = x // 600, (x // 2) % 300, x % 2
    cols = {"s": [("a", "b", "c")[i] for i in s], "v": [big.values[i] for i in v], "t": [("x", "y")[i] for i in t]}
    assert alpha.attributes[0].encode_compact(cols["s"]).dtype == np.uint8
    np.testing.assert_array_equal(alpha.encode(cols), x)
    np.testing.assert_array_equal(alpha.encode({k: np.array(c, dtype=object) for k, c in cols.items()}), x)
    np.testing.assert_array_equal(alpha.attributes[0].encode(cols["s"]), s)  # encode itself: int64
    assert alpha.attributes[0].encode(cols["s"]).dtype == np.int64
