"""The helpers of error messages (rldp.shared.errors)."""

from __future__ import annotations

from rldp.shared.errors import LISTED_IN_ERRORS, cut_list


def test_a_long_list_of_values_is_cut_and_says_how_many_more():
    values = [str(v) for v in range(100_000, 106_875)]
    text = cut_list(values)
    assert text.startswith(", ".join(values[:LISTED_IN_ERRORS]) + ", … and ")
    assert text.endswith(f"and {len(values) - LISTED_IN_ERRORS:,} more") and len(text) < 200
    assert cut_list(values[:LISTED_IN_ERRORS]) == ", ".join(values[:LISTED_IN_ERRORS])  # short lists whole
    assert cut_list(["a", "b", "c"], most=2) == "a, b, … and 1 more"
