"""Numeric attributes (rldp.shared.numeric): the bin of a number, the rules for odd input, the edges from
public data, and the numeric attribute in the mechanism document (strict, covered by the id)."""

from __future__ import annotations

import copy

import msgpack
import numpy as np
import pytest

from rldp.shared.attributes import Attribute
from rldp.shared.document import DocumentError, build_document, content_id, from_json, to_json, validate_document
from rldp.shared.errors import AlphabetError, RecordError
from rldp.shared.numeric import (
    DETECT_MIN_DISTINCT,
    MAX_BINS,
    NumericSpec,
    default_bins,
    looks_numeric,
    quantile_edges,
)
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

AGE = Attribute.binned("age", NumericSpec((17, 25, 40, 90)))
SEX = Attribute("sex", ("Female", "Male"))


def test_labels_and_edges_closed_left() -> None:
    assert AGE.values == ("[17, 25)", "[25, 40)", "[40, 90]")
    # ties at an inner edge go to the bin it closes; lo and hi are in the first and last bin
    assert AGE.encode([17, 24.999, 25, 39.5, 40, 90]).tolist() == [0, 0, 1, 1, 2, 2]


def test_closed_right() -> None:
    spec = NumericSpec((0, 1, 2), "right")
    assert spec.labels() == ("[0, 1]", "(1, 2]")
    attr = Attribute.binned("x", spec)
    assert attr.encode([0, 1, 1.0000001, 2]).tolist() == [0, 0, 1, 1]


def test_out_of_range_is_clamped() -> None:
    assert AGE.encode([-1e300, 0, 16.99, 90.01, 1e300]).tolist() == [0, 0, 0, 2, 2]


def test_integers_floats_and_negative_zero_agree() -> None:
    spec = Attribute.binned("z", NumericSpec((-1, 0, 1)))
    ints = spec.encode(np.array([-1, 0, 1], dtype=np.int64))
    floats = spec.encode(np.array([-1.0, -0.0, 1.0]))
    objects = spec.encode(np.array([-1, 0.0, 2**70], dtype=object))
    assert ints.tolist() == floats.tolist() == [0, 1, 1]
    assert objects.tolist() == [0, 1, 1]


def test_decimal_strings_are_numbers() -> None:
    assert AGE.encode(["17", "25", "2.5e1", "+30", "-3", ".5", "40.", "1E2"]).tolist() == [0, 1, 1, 1, 0, 0, 2, 2]
    # a label is its own bin; strings and numbers mix in one list
    assert AGE.encode(["[25, 40)", 41, "18"]).tolist() == [1, 2, 0]


@pytest.mark.parametrize(
    "bad",
    [
        [float("nan")],
        [np.inf],
        [-np.inf],
        ["nan"],
        ["inf"],
        ["-Infinity"],
        [""],
        [" 42"],
        ["42 "],
        ["1_000"],
        ["0x10"],
        ["4 2"],
        ["١٢"],
        ["forty"],
        [True],
        [18, None],
    ],
)
def test_refused_values(bad: list) -> None:
    with pytest.raises(RecordError, match="numeric"):
        AGE.encode(bad)


@pytest.mark.parametrize(
    "bad, where",
    [
        ([30, True], 1),  # numpy reads [30, True] as the ints [30, 1]
        ((30.5, False), 1),
        (["4\x00"], 0),  # numpy drops a string's trailing NULs: it read "4"
        (["30", "4\x00"], 1),
        (np.array([30, "4\x00"], dtype=object), 1),
        ([10**400], 0),  # float() overflows: a RecordError, as "1e400", not an OverflowError
        ([5, 2**1024 - 2**970], 1),  # rounds to infinity
    ],
)
def test_refused_python_values_numpy_would_change(bad: list, where: int) -> None:
    # Why: the TypeScript SDK refuses these (conformance/cases/numeric-records.json); Python binned True
    # beside numbers as 1, "4\x00" as 4, and raised OverflowError for an int beyond the largest double.
    with pytest.raises(RecordError, match=f"record {where}: .*numeric"):
        AGE.encode(bad)


def test_refusal_names_the_record() -> None:
    with pytest.raises(RecordError, match=r"record 2: .*'x'"):
        AGE.encode(["18", "19", "x", "20"])
    with pytest.raises(RecordError, match="record 1"):
        AGE.encode([18.0, float("nan")])


def test_alphabet_encodes_records_with_numbers() -> None:
    alpha = Alphabet(SEX, [AGE])
    x = alpha.encode({"sex": ["Male", "Female"], "age": [30, "90"]})
    assert x.tolist() == [1 * 3 + 1, 0 * 3 + 2]
    assert alpha.encode_one({"sex": "Male", "age": 17.5}) == 3
    assert alpha.encode([("Female", 41)]).tolist() == [2]


@pytest.mark.parametrize(
    "edges, closed, what",
    [
        ((1,), "left", "at least 2 edges"),
        ((1, 1), "left", "strictly increasing"),
        ((2, 1), "left", "strictly increasing"),
        ((0, float("nan")), "left", "finite"),
        ((0, float("inf")), "left", "finite"),
        ((0, True), "left", "must be a number"),
        ((0, "1"), "left", "must be a number"),
        ((0, 1), "both", "'left' or 'right'"),
        (tuple(range(MAX_BINS + 2)), "left", f"at most {MAX_BINS} bins"),
    ],
)
def test_spec_is_strict(edges: tuple, closed: str, what: str) -> None:
    with pytest.raises(AlphabetError, match=what):
        NumericSpec(edges, closed)


def test_values_must_match_bins() -> None:
    with pytest.raises(AlphabetError, match="one value"):
        Attribute("age", ("a", "b"), NumericSpec((0, 1, 2, 3)))


def _doc() -> dict:
    alpha = Alphabet(SEX, [AGE])
    return build_document(
        method="grr",
        matrix=np.full((2, 6), 0.5),
        alphabet=alpha,
        public_distribution=np.full((2, 3), 1 / 6),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": 0.01}},
    )


def test_document_round_trips_with_the_edges_covered_by_the_id() -> None:
    doc = _doc()
    assert doc["released"][0]["numeric"] == {"edges": [17.0, 25.0, 40.0, 90.0], "closed": "left"}
    assert validate_document(from_json(to_json(doc)))["id"] == doc["id"]
    assert validate_document(msgpack.unpackb(msgpack.packb(doc)))["id"] == doc["id"]
    moved = copy.deepcopy(doc)
    moved["released"][0]["numeric"]["edges"][1] = 26.0
    assert content_id(moved) != doc["id"]
    with pytest.raises(DocumentError, match="id mismatch"):
        validate_document(moved)
    flipped = copy.deepcopy(doc)
    flipped["released"][0]["numeric"]["closed"] = "right"
    assert content_id(flipped) != doc["id"]


@pytest.mark.parametrize(
    "numeric, what",
    [
        ({"edges": [17, 25, 40]}, "missing 'closed'"),
        ({"edges": [17, 40, 25, 90], "closed": "left"}, "strictly increasing"),
        ({"edges": [17, 25, 40, 90], "closed": "left", "log": True}, "unknown numeric field"),
        ({"edges": "17,25,40,90", "closed": "left"}, "list of numbers"),
        ({"edges": [17, 25, 40, 90, 100], "closed": "left"}, "one value"),
        ([17, 25, 40, 90], "must be an object"),
    ],
)
def test_document_refuses_bad_numeric(numeric: object, what: str) -> None:
    doc = _doc()
    doc["released"][0]["numeric"] = numeric
    doc["id"] = ""
    with pytest.raises(DocumentError, match=what):
        validate_document(doc)


def test_tiny_document_cannot_claim_a_huge_alphabet() -> None:
    doc = _doc()
    doc["released"][0]["numeric"] = {"edges": list(range(100_000)), "closed": "left"}
    doc["id"] = ""
    with pytest.raises(DocumentError, match=f"at most {MAX_BINS} bins"):
        validate_document(doc)


def test_documents_without_numeric_are_unchanged() -> None:
    plain = Alphabet(SEX, [Attribute("race", ("A", "B"))])
    assert "numeric" not in plain.to_dict()["released"][0]
    assert Alphabet.from_dict(plain.to_dict()) == plain


def test_quantile_edges_and_default_bins() -> None:
    x = np.random.default_rng(1).integers(17, 91, 32561)
    edges = quantile_edges(x)
    assert len(edges) - 1 == default_bins(32561, 74) == 16
    assert edges[0] == 17 and edges[-1] == 90 and np.all(np.diff(edges) > 0)
    counts = np.bincount(NumericSpec(edges).bin_of(x.astype(float)), minlength=16)
    assert counts.min() > 0.5 * x.size / 16  # about equal public counts per bin
    # a spike that fills several quantiles opens one bin of its own
    hours = np.r_[np.full(600, 40.0), np.arange(1.0, 100.0)]
    spiked = quantile_edges(hours, bins=8)
    assert 40.0 in spiked and 41.0 in spiked
    # a given range clamps the data and sets lo, hi
    ranged = quantile_edges(x, bins=4, lo=20, hi=60)
    assert (ranged[0], ranged[-1]) == (20.0, 60.0)
    assert default_bins(30, 100) == 4 and default_bins(10**6, 5) == 5
    with pytest.raises(AlphabetError, match="empty"):
        quantile_edges(x, lo=50, hi=50)


def test_detection_rule() -> None:
    many = np.array([str(v) for v in range(DETECT_MIN_DISTINCT + 1)] + [""])
    assert looks_numeric(many)
    assert not looks_numeric(many[: DETECT_MIN_DISTINCT - 1])
    assert not looks_numeric(np.array([*many[:-1], "n/a"]))


def test_from_table_bins_a_numeric_column() -> None:
    table = Table.from_columns({"sex": ["Male", "Female", "Male"], "age": ["20", "33", "80"]})
    alpha = Alphabet.from_table(table, "sex", ["age"], numeric={"age": NumericSpec((17, 25, 40, 90))})
    assert alpha.released[0] == AGE
    assert alpha.counts(table).tolist() == [[0, 1, 0], [1, 0, 1]]
    with pytest.raises(AlphabetError, match="neither"):
        Alphabet.from_table(table, "sex", ["age"], numeric={"height": NumericSpec((0, 1))})
