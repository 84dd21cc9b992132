"""Tests for rldp.shared.records: CSV tables, attributes, alphabets, record encoding."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from helpers import ADULT_CATEGORY_SIZES, ADULT_COLUMNS, adult_path

from rldp.shared.errors import AlphabetError, RecordError, TableError
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import Table, read_csv

RACES = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
# DESIGN.md's example document: P̂ over sex × race from adult.data, 4 decimals.
DESIGN_P = [[0.0037, 0.0106, 0.0478, 0.0033, 0.2654], [0.0059, 0.0213, 0.0482, 0.0050, 0.5889]]


@pytest.fixture(scope="module")
def adult() -> Table:
    return read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)


@pytest.fixture(scope="module")
def adult_test() -> Table:
    return read_csv(adult_path("adult.test.csv.gz"))


@pytest.fixture(scope="module")
def sex_race(adult: Table) -> Alphabet:
    return Alphabet.from_table(adult, "sex", ["race"])


def small_alphabet() -> Alphabet:
    return Alphabet(
        Attribute("s", ("a", "b")),
        [Attribute("u1", ("x", "y", "z")), Attribute("u2", ("p", "q"))],
    )


# ----------------------------------------------------------------------------- reading the Adult files


def test_read_adult_data_without_header(adult: Table) -> None:
    assert adult.columns == tuple(ADULT_COLUMNS)
    assert adult.n_rows == len(adult) == 32561
    first = next(adult.rows())
    assert first[:4] == ("39", "State-gov", "77516", "Bachelors")
    assert first[-1] == "<=50K"
    # ", " separators: no value may keep the space.
    for name in ADULT_COLUMNS:
        col = adult.column(name)
        assert not np.any(np.char.startswith(col, " ")), name
        assert not np.any(np.char.endswith(col, " ")), name
    # "?" is an ordinary category.
    assert "?" in set(adult.column("workclass").tolist())


def test_read_adult_test_with_header(adult_test: Table) -> None:
    assert adult_test.columns == tuple(ADULT_COLUMNS)
    assert adult_test.n_rows == 16281
    assert set(adult_test.column("class").tolist()) == {"<=50K", ">50K"}
    assert next(adult_test.rows())[:3] == ("25", "Private", "226802")


def test_adult_categorical_sizes(adult: Table) -> None:
    expected = ADULT_CATEGORY_SIZES
    alpha = Alphabet.from_table(adult, "sex", [c for c in expected if c != "sex"])
    assert {a.name: a.size for a in alpha.attributes} == expected


def test_sex_race_alphabet(sex_race: Alphabet) -> None:
    assert sex_race.sensitive == Attribute("sex", ("Female", "Male"))
    assert sex_race.released == (Attribute("race", tuple(RACES)),)
    assert (sex_race.n_sensitive, sex_race.n_released, sex_race.size) == (2, 5, 10)
    assert sex_race.shape == (2, 5)
    assert sex_race.labels()[4] == "Female|White"
    assert sex_race.labels()[5] == "Male|Amer-Indian-Eskimo"


def test_empirical_distribution_matches_design(adult: Table, sex_race: Alphabet) -> None:
    p = sex_race.empirical_distribution(adult)
    assert p.shape == (2, 5)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert round(float(p[0, 4]), 4) == 0.2654  # P(Female, White)
    np.testing.assert_allclose(p, DESIGN_P, atol=5e-5)
    c = sex_race.counts(adult)
    assert c.dtype.kind == "i" and c.sum() == 32561
    np.testing.assert_array_equal(c / c.sum(), p)


def test_encode_decode_round_trip_on_adult(adult: Table, sex_race: Alphabet) -> None:
    x = sex_race.encode(adult)
    assert x.dtype == np.int64 and x.shape == (32561,)
    assert x.min() >= 0 and x.max() < 10
    decoded = sex_race.decode(x)
    expected = list(zip(adult.column("sex").tolist(), adult.column("race").tolist()))
    assert decoded == expected
    # The other input forms agree with the table path.
    np.testing.assert_array_equal(sex_race.encode({"sex": adult.column("sex"), "race": adult.column("race")}), x)
    np.testing.assert_array_equal(sex_race.encode(expected[:500]), x[:500])


# ----------------------------------------------------------------------------- encoding forms and order


def test_mixed_radix_order_last_attribute_fastest() -> None:
    alpha = small_alphabet()
    assert (alpha.n_sensitive, alpha.n_released, alpha.size) == (2, 6, 12)
    assert alpha.labels() == [
        "a|x|p",
        "a|x|q",
        "a|y|p",
        "a|y|q",
        "a|z|p",
        "a|z|q",
        "b|x|p",
        "b|x|q",
        "b|y|p",
        "b|y|q",
        "b|z|p",
        "b|z|q",
    ]
    assert alpha.encode_one(("b", "y", "q")) == 1 * 6 + 1 * 2 + 1
    assert alpha.decode_one(9) == ("b", "y", "q")
    s, u = alpha.split([0, 9, 11])
    assert s.tolist() == [0, 1, 1] and u.tolist() == [0, 3, 5]


def test_all_input_forms_agree() -> None:
    alpha = small_alphabet()
    tuples = [alpha.decode_one(x) for x in range(alpha.size)] * 3
    expected = np.tile(np.arange(alpha.size), 3)
    dicts = [{"u2": t[2], "s": t[0], "u1": t[1], "extra": "ignored"} for t in tuples]
    columns = {"s": [t[0] for t in tuples], "u1": [t[1] for t in tuples], "u2": [t[2] for t in tuples], "junk": [1]}
    table = Table.from_rows(["u2", "s", "u1"], [(t[2], t[0], t[1]) for t in tuples])
    for form in (tuples, [list(t) for t in tuples], iter(tuples), dicts, columns, table, np.array(tuples)):
        np.testing.assert_array_equal(alpha.encode(form), expected)
    assert alpha.encode_one({"s": "a", "u1": "z", "u2": "q", "other": 5}) == 5
    assert alpha.encode([]).tolist() == []


def test_decode_round_trip_every_index() -> None:
    alpha = small_alphabet()
    x = np.arange(alpha.size)
    np.testing.assert_array_equal(alpha.encode(alpha.decode(x)), x)


def test_attribute_order_need_not_be_sorted() -> None:
    # Documents may list values in any order; the index is the position in that list.
    alpha = Alphabet(Attribute("s", ("zeta", "alpha")), [Attribute("u", ("m", "c", "x"))])
    np.testing.assert_array_equal(alpha.encode({"s": ["alpha", "zeta"], "u": ["x", "m"]}), [5, 0])


def test_no_released_attributes() -> None:
    alpha = Alphabet(Attribute("s", ("a", "b", "c")))
    assert (alpha.n_released, alpha.size) == (1, 3)
    assert alpha.encode([("c",), ("a",)]).tolist() == [2, 0]
    assert alpha.labels() == ["a", "b", "c"]
    np.testing.assert_array_equal(alpha.counts([("a",), ("a",), ("c",)]), [[2], [0], [1]])


def test_values_matched_by_string_form() -> None:
    alpha = Alphabet(Attribute("s", ("0", "1")), [Attribute("age", ("17", "39"))])
    assert alpha.encode({"s": [1, 0], "age": np.array([39, 17])}).tolist() == [3, 0]


def test_dict_round_trip_and_extra_keys() -> None:
    alpha = small_alphabet()
    d = alpha.to_dict()
    assert d == {
        "sensitive": {"name": "s", "values": ["a", "b"]},
        "released": [{"name": "u1", "values": ["x", "y", "z"]}, {"name": "u2", "values": ["p", "q"]}],
    }
    assert Alphabet.from_dict(d) == alpha
    d["sensitive"]["comment"] = "y"
    d["comment"] = "x"
    assert Alphabet.from_dict(d) == alpha
    assert hash(Alphabet.from_dict(d)) == hash(alpha)
    d["sensitive"]["released"] = False  # the privacy funnel: S is not an input
    latent = Alphabet.from_dict(d)
    assert latent.latent and latent != alpha and latent.size == 6 and latent.shape == (2, 6)
    assert latent.to_dict()["sensitive"] == {"name": "s", "values": ["a", "b"], "released": False}


# ----------------------------------------------------------------------------- record errors


def test_unknown_value_message(sex_race: Alphabet) -> None:
    with pytest.raises(RecordError) as exc:
        sex_race.encode([("Male", "White"), ("Female", "Alien")])
    assert (
        "unknown value 'Alien' for attribute 'race'; allowed: Amer-Indian-Eskimo, Asian-Pac-Islander, Black, Other, White"
        in str(exc.value)
    )
    assert "record 1" in str(exc.value)
    with pytest.raises(RecordError, match="unknown value 'male' for attribute 'sex'; allowed: Female, Male"):
        sex_race.encode_one({"sex": "male", "race": "White"})
    with pytest.raises(RecordError, match="unknown value ' White'"):  # no silent stripping of records
        sex_race.encode({"sex": ["Male"], "race": [" White"]})


def test_missing_attribute_message() -> None:
    alpha = small_alphabet()
    with pytest.raises(RecordError, match="record 1 is missing the released attribute 'u2'"):
        alpha.encode([{"s": "a", "u1": "x", "u2": "p"}, {"s": "a", "u1": "x"}])
    with pytest.raises(RecordError, match="missing the sensitive attribute 's'"):
        alpha.encode_one({"u1": "x", "u2": "p"})
    with pytest.raises(RecordError, match="missing column for attribute 'u1'"):
        alpha.encode({"s": ["a"], "u2": ["p"]})
    table = Table.from_rows(["s", "u1"], [("a", "x")])
    with pytest.raises(RecordError, match="table has no column 'u2'.*available: s, u1"):
        alpha.encode(table)


def test_wrong_tuple_length_message() -> None:
    alpha = small_alphabet()
    with pytest.raises(RecordError, match=r"record 2 has 2 fields; expected 3 fields \(s, u1, u2\)"):
        alpha.encode([("a", "x", "p"), ("b", "y", "q"), ("a", "x")])
    with pytest.raises(RecordError, match=r"expected 3 fields"):
        alpha.encode_one(("a", "x", "p", "extra"))


def test_other_record_errors() -> None:
    alpha = small_alphabet()
    with pytest.raises(RecordError, match="use encode_one"):
        alpha.encode({"s": "a", "u1": "x", "u2": "p"})
    with pytest.raises(RecordError, match="different lengths"):
        alpha.encode({"s": ["a", "b"], "u1": ["x"], "u2": ["p", "q"]})
    with pytest.raises(RecordError, match="outside the alphabet 0..11"):
        alpha.decode([0, 12])
    with pytest.raises(RecordError, match="integers"):
        alpha.decode([0.5])
    with pytest.raises(RecordError, match="no records"):
        alpha.empirical_distribution([])
    with pytest.raises(RecordError):
        alpha.encode("abc")


# ----------------------------------------------------------------------------- alphabet errors


def test_from_table_missing_column(adult: Table) -> None:
    with pytest.raises(TableError) as exc:
        Alphabet.from_table(adult, "sex", ["race", "colour"])
    assert "no column 'colour'" in str(exc.value)
    assert "available: age, workclass, fnlwgt" in str(exc.value)


def test_from_table_one_valued_sensitive() -> None:
    table = Table.from_rows(["x", "u"], [("a", "1"), ("a", "2")])
    with pytest.raises(AlphabetError, match=r"sensitive attribute 'x' has only one value \('a'\); need at least 2"):
        Alphabet.from_table(table, "x", ["u"])


def test_from_table_bad_column_lists() -> None:
    table = Table.from_rows(["s", "u", "v"], [("a", "1", "p"), ("b", "2", "q")])
    with pytest.raises(AlphabetError, match="'s' is the sensitive attribute and cannot also be released"):
        Alphabet.from_table(table, "s", ["u", "s"])
    with pytest.raises(AlphabetError, match="released column 'u' is listed twice"):
        Alphabet.from_table(table, "s", ["u", "v", "u"])
    alpha = Alphabet.from_table(table, "s", "u")  # a lone name is one column, not its letters
    assert [a.name for a in alpha.released] == ["u"]


def test_attribute_validation() -> None:
    with pytest.raises(AlphabetError, match="non-empty"):
        Attribute("", ("a",))
    with pytest.raises(AlphabetError, match="no values"):
        Attribute("x", ())
    with pytest.raises(AlphabetError, match="'a' appears more than once"):
        Attribute("x", ("a", "b", "a"))
    with pytest.raises(AlphabetError, match="not a string"):
        Attribute("x", ("a", 1))  # type: ignore[arg-type]
    assert Attribute("x", ["a", "b"]).values == ("a", "b")  # type: ignore[arg-type]
    assert Attribute("x", ("a", "b")).index("b") == 1
    with pytest.raises(AlphabetError, match="listed twice"):
        Alphabet(Attribute("x", ("a", "b")), [Attribute("x", ("c",))])


# ----------------------------------------------------------------------------- CSV files


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_csv_header_strip_blank_lines_and_question_mark(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "a, b ,c\n\n 1 , ?, x\n   \n2,y ,  z  \n\n")
    table = read_csv(path)
    assert table.columns == ("a", "b", "c")
    assert list(table.rows()) == [("1", "?", "x"), ("2", "y", "z")]
    assert table.column("b").tolist() == ["?", "y"]


def test_csv_names_means_no_header(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "1, x\n2, y\n")
    table = read_csv(path, names=["n", "v"])
    assert table.n_rows == 2 and table.column("v").tolist() == ["x", "y"]


def test_gzip_detected_by_magic_bytes(tmp_path: Path) -> None:
    gz_without_ext = write(tmp_path / "data.csv", "a,b\n1,2\n", gz=True)
    assert list(read_csv(gz_without_ext).rows()) == [("1", "2")]
    plain_with_gz_ext = write(tmp_path / "plain.csv.gz", "a,b\n3,4\n")
    assert list(read_csv(plain_with_gz_ext).rows()) == [("3", "4")]


def test_csv_ragged_row_names_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.csv", "a,b,c\n1,2,3\n\n4,5\n")
    with pytest.raises(TableError, match=r"bad\.csv line 4: expected 3 fields, found 2"):
        read_csv(path)


def test_csv_empty_and_headless_files(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"empty\.csv: file is empty"):
        read_csv(write(tmp_path / "empty.csv", ""))
    with pytest.raises(TableError, match="file is empty"):
        read_csv(write(tmp_path / "blank.csv", "\n  \n"), names=["a"])
    with pytest.raises(TableError, match="file is empty"):
        read_csv(write(tmp_path / "empty.csv.gz", "", gz=True))
    with pytest.raises(TableError, match=r"header\.csv: no data rows"):
        read_csv(write(tmp_path / "header.csv", "a,b\n"))


def test_csv_file_errors(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"missing\.csv: no such file"):
        read_csv(tmp_path / "missing.csv")
    with pytest.raises(TableError, match="duplicate column name 'a'"):
        read_csv(write(tmp_path / "dup.csv", "a,b,a\n1,2,3\n"))
    with pytest.raises(TableError, match="duplicate column name 'x'"):
        read_csv(write(tmp_path / "ok.csv", "1,2\n"), names=["x", "x"])
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(gzip.compress(b"a,b\n1,2\n" * 100)[:30])
    with pytest.raises(TableError, match=r"corrupt\.gz: corrupt or truncated gzip data"):
        read_csv(corrupt)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("a\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(TableError, match="not UTF-8"):
        read_csv(latin)


def test_table_column_errors_and_immutability() -> None:
    table = Table.from_columns({"a": ["1", "2"], "b": ["x", "y"]})
    with pytest.raises(TableError, match="no column 'c'; available: a, b"):
        table.column("c")
    with pytest.raises(ValueError):
        table.column("a")[0] = "9"
    with pytest.raises(TableError, match="has 1 values"):
        Table.from_columns({"a": ["1", "2"], "b": ["x"]})


def test_every_record_form_encodes_like_encode_one(sex_race: Alphabet) -> None:
    # The fast paths (homogeneous lists of dicts / tuples, lists of strings) and the checked
    # loop (mixed forms, generators, non-string values) must agree record by record.
    rng = np.random.default_rng(3)
    sexes, races = sex_race.sensitive.values, sex_race.released[0].values
    rows = [(sexes[i], races[j]) for i, j in zip(rng.integers(0, 2, 200), rng.integers(0, 5, 200))]
    dicts = [{"sex": s, "race": r, "extra": 1} for s, r in rows]
    expected = np.array([sex_race.encode_one(r) for r in rows])
    mixed = [d if k % 2 else t for k, (d, t) in enumerate(zip(dicts, rows))]
    for form in (
        rows,
        [list(r) for r in rows],
        dicts,
        mixed,
        iter(dicts),
        tuple(rows),
        {"sex": [s for s, _ in rows], "race": [r for _, r in rows]},
    ):
        assert np.array_equal(sex_race.encode(form), expected)
    with pytest.raises(RecordError, match="record 1 must be a dict or a tuple"):
        sex_race.encode([rows[0], "MaleWhite"])
