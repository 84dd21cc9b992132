"""Tests for rldp.shared.document: build, canonical form and id, validation, serialisation."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from helpers import ADULT_COLUMNS, adult_path

from rldp.shared import document as D
from rldp.shared.document import (
    FORMAT,
    DocumentError,
    build_document,
    canonical_bytes,
    content_id,
    from_json,
    from_msgpack,
    read_document,
    to_json,
    to_msgpack,
    validate_document,
    write_document,
)
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import read_csv

RACES = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
PRIVACY = {"notion": "rldp", "epsilon": 1, "uncertainty": {"order": 2, "radius": 0.000519, "n": 32561, "beta": 0.05}}


def alphabet() -> Alphabet:
    return Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("race", tuple(RACES))])


def random_matrix(b: int, a: int, seed: int = 0) -> np.ndarray:
    q = np.random.default_rng(seed).random((b, a))
    return q / q.sum(axis=0)


P_HAT = np.array([[0.0037, 0.0106, 0.0478, 0.0033, 0.2654], [0.0059, 0.0213, 0.0482, 0.0050, 0.5888]])


@pytest.fixture
def doc() -> dict[str, Any]:
    return build_document(
        method="test",
        matrix=random_matrix(4, 10),
        alphabet=alphabet(),
        public_distribution=P_HAT,
        privacy=PRIVACY,
        extra={"parameters": {"eps1": 0.5, "eps2": 0.5}},
    )


def rehash(d: dict[str, Any]) -> dict[str, Any]:
    """Give a hand-edited document a matching id, so only the edit itself is under test."""
    d["id"] = content_id(d)
    return d


# ----------------------------------------------------------------------------- build


def test_build_document_fields(doc: dict[str, Any]) -> None:
    assert doc["format"] == FORMAT == "rldp.mechanism/1"
    assert doc["method"] == "test"
    assert len(doc["id"]) == 64 and doc["id"] == content_id(doc)
    assert doc["sensitive"] == {"name": "sex", "values": ["Female", "Male"]}
    assert doc["released"] == [{"name": "race", "values": RACES}]
    assert doc["privacy"] == {
        "notion": "rldp",
        "epsilon": 1.0,
        "uncertainty": {"divergence": "renyi", "order": 2.0, "radius": 0.000519, "n": 32561, "beta": 0.05},
    }
    assert doc["parameters"] == {"eps1": 0.5, "eps2": 0.5}
    assert len(doc["matrix"]) == 4 and all(len(r) == 10 for r in doc["matrix"])
    assert all(type(v) is float for r in doc["matrix"] for v in r)
    assert all(type(v) is float for r in doc["public_distribution"] for v in r)
    assert validate_document(doc) == doc
    json.dumps(doc, allow_nan=False)  # plain JSON types only


def test_build_accepts_flat_distribution_and_infinite_radius() -> None:
    privacy = {"notion": "rldp", "epsilon": np.float64(2.0), "uncertainty": {"order": 2, "radius": math.inf}}
    d = build_document(
        method="m", matrix=np.eye(10), alphabet=alphabet(), public_distribution=P_HAT.ravel(), privacy=privacy
    )
    assert d["privacy"]["uncertainty"]["radius"] is None
    assert D.uncertainty_parameters(d)["radius"] == math.inf
    assert D.public_distribution(d).shape == (2, 5)


def test_build_rejects_bad_input() -> None:
    with pytest.raises(DocumentError, match="would replace a required field"):
        build_document(
            method="m",
            matrix=np.eye(10),
            alphabet=alphabet(),
            public_distribution=P_HAT,
            privacy=PRIVACY,
            extra={"matrix": [[1.0]]},
        )
    with pytest.raises(DocumentError, match="matrix column 0 sums to 2"):
        build_document(
            method="m", matrix=2 * np.eye(10), alphabet=alphabet(), public_distribution=P_HAT, privacy=PRIVACY
        )
    with pytest.raises(DocumentError, match="epsilon must be a finite number > 0"):
        build_document(
            method="m",
            matrix=np.eye(10),
            alphabet=alphabet(),
            public_distribution=P_HAT,
            privacy={**PRIVACY, "epsilon": 0},
        )


@pytest.mark.slow
def test_adult_document_matches_design_example() -> None:
    table = read_csv(adult_path("adult.data.gz"), names=ADULT_COLUMNS)
    alpha = Alphabet.from_table(table, "sex", ["race"])
    d = build_document(
        method="direct",
        matrix=np.eye(alpha.size),
        alphabet=alpha,
        public_distribution=alpha.empirical_distribution(table),
        privacy=PRIVACY,
    )
    assert round(d["public_distribution"][0][4], 4) == 0.2654
    assert D.alphabet(d) == alpha
    assert from_json(to_json(d)) == d


# ----------------------------------------------------------------------------- canonical form and id


def test_round_trips_keep_id(doc: dict[str, Any]) -> None:
    via_json = from_json(to_json(doc))
    via_msgpack = from_msgpack(to_msgpack(doc))
    chain = from_json(to_json(from_msgpack(to_msgpack(from_json(to_json(doc))))))
    assert via_json == via_msgpack == chain == doc
    assert canonical_bytes(via_json) == canonical_bytes(via_msgpack) == canonical_bytes(doc)
    assert chain["id"] == doc["id"]


def test_canonical_form_is_compact_sorted_json(doc: dict[str, Any]) -> None:
    raw = canonical_bytes(doc)
    text = raw.decode()
    assert '"id"' not in text
    assert " " not in text.replace("Amer-Indian-Eskimo", "")  # separators without spaces
    parsed = json.loads(text)
    assert list(parsed) == sorted(parsed)
    assert content_id(doc) == __import__("hashlib").sha256(raw).hexdigest()


def test_one_ulp_change_in_any_matrix_entry_changes_id(doc: dict[str, Any]) -> None:
    ids = {doc["id"]}
    for y in range(len(doc["matrix"])):
        for x in range(len(doc["matrix"][0])):
            d = copy.deepcopy(doc)
            d["matrix"][y][x] = float(np.nextafter(d["matrix"][y][x], 2.0))
            ids.add(content_id(d))
            with pytest.raises(DocumentError, match="id mismatch: document says"):
                validate_document(d)
    assert len(ids) == 1 + 4 * 10


def test_tampering_any_field_is_detected(doc: dict[str, Any]) -> None:
    edits = [
        ("method", "other"),
        ("privacy", {**doc["privacy"], "epsilon": 0.5}),
        ("parameters", {"eps1": 0.5, "eps2": 0.6}),
        ("sensitive", {"name": "sex", "values": ["Male", "Female"]}),
    ]
    for field, value in edits:
        d = copy.deepcopy(doc)
        d[field] = value
        with pytest.raises(DocumentError) as exc:
            validate_document(d)
        assert str(exc.value) == f"id mismatch: document says {doc['id']}, content hashes to {content_id(d)}"
    d = copy.deepcopy(doc)
    d["added"] = 1  # unknown fields are covered by the id too
    with pytest.raises(DocumentError, match="id mismatch"):
        validate_document(d)


def test_equivalent_spellings_hash_alike(doc: dict[str, Any]) -> None:
    d = copy.deepcopy(doc)
    d["matrix"] = [tuple(r) for r in np.array(d["matrix"])]  # tuples of numpy floats
    d["public_distribution"] = np.array(d["public_distribution"])
    assert content_id(d) == doc["id"]
    e = build_document(
        method="m", matrix=np.eye(10, dtype=int), alphabet=alphabet(), public_distribution=P_HAT, privacy=PRIVACY
    )
    f = copy.deepcopy(e)
    f["matrix"] = [[int(v) for v in r] for r in f["matrix"]]  # 0/1 instead of 0.0/1.0
    assert content_id(f) == e["id"]
    assert validate_document(f) == e


def test_unknown_fields_preserved_through_files(doc: dict[str, Any], tmp_path: Path) -> None:
    d = copy.deepcopy(doc)
    d["audit"] = {"passed": True, "epsilon": 0.99, "notes": ["naïve", None]}
    rehash(d)
    for name in ("m.json", "m.msgpack", "m.mpk"):
        write_document(d, tmp_path / name)
        assert read_document(tmp_path / name) == d
    assert D.epsilon(read_document(tmp_path / "m.json")) == 1.0


# ----------------------------------------------------------------------------- validation errors


def test_missing_fields(doc: dict[str, Any]) -> None:
    for field in D.REQUIRED_FIELDS:
        d = copy.deepcopy(doc)
        del d[field]
        with pytest.raises(DocumentError, match=f"missing required field: {field}$"):
            validate_document(d)
    with pytest.raises(DocumentError, match="missing required fields: method, matrix"):
        validate_document({k: v for k, v in doc.items() if k not in ("method", "matrix")})


def test_wrong_format(doc: dict[str, Any]) -> None:
    d = rehash({**copy.deepcopy(doc), "format": "rldp.mechanism/4"})
    with pytest.raises(
        DocumentError,
        match=r"unsupported format 'rldp.mechanism/4'; this reader understands rldp.mechanism/1, rldp.mechanism/2, "
        r"rldp.mechanism/3",
    ):
        validate_document(d)


def test_non_stochastic_column(doc: dict[str, Any]) -> None:
    d = copy.deepcopy(doc)
    y = int(np.argmax(np.array(d["matrix"])[:, 3]))  # an entry big enough to lower by 0.02
    d["matrix"][y][3] -= 0.02
    with pytest.raises(DocumentError) as exc:
        validate_document(rehash(d))
    assert str(exc.value).startswith("matrix column 3 sums to 0.98; every column must sum to 1 (±1e-9)")
    d["matrix"][y][3] += 0.02 - 2e-9  # just outside the tolerance
    with pytest.raises(DocumentError, match="matrix column 3 sums to"):
        validate_document(rehash(d))
    d["matrix"][y][3] += 1.5e-9  # inside the tolerance
    validate_document(rehash(d))


def test_negative_nan_and_non_numeric_entries(doc: dict[str, Any]) -> None:
    cases = [
        ((1, 2), -0.25, r"matrix\[1\]\[2\] is -0.25; entries must be ≥ 0"),
        ((0, 7), math.nan, r"matrix\[0\]\[7\] is nan; entries must be finite"),
        ((3, 0), math.inf, r"matrix\[3\]\[0\] is inf; entries must be finite"),
        ((2, 2), "0.5", r"matrix\[2\]\[2\] must be a number, got '0.5'"),
        ((2, 2), True, r"matrix\[2\]\[2\] must be a number, got True"),
        ((2, 2), None, r"matrix\[2\]\[2\] must be a number, got None"),
    ]
    for (y, x), value, message in cases:
        d = copy.deepcopy(doc)
        d["matrix"][y][x] = value
        with pytest.raises(DocumentError, match=message):
            validate_document(d)


def test_matrix_shape_errors(doc: dict[str, Any]) -> None:
    d = copy.deepcopy(doc)
    d["matrix"][2] = d["matrix"][2][:9]
    with pytest.raises(DocumentError, match=r"matrix row 2 has 9 entries; expected a = a1·a2 = 10 \(2 × 5\)"):
        validate_document(d)
    d["matrix"] = []
    with pytest.raises(DocumentError, match="matrix has no rows"):
        validate_document(d)
    d["matrix"] = [0.1] * 10
    with pytest.raises(DocumentError, match="matrix row 0 must be a list"):
        validate_document(d)
    d["matrix"] = {"0": [1.0]}
    with pytest.raises(DocumentError, match="matrix must be a list of lists"):
        validate_document(d)


def test_public_distribution_errors(doc: dict[str, Any]) -> None:
    d = copy.deepcopy(doc)
    d["public_distribution"] = P_HAT.T.tolist()
    with pytest.raises(DocumentError, match=r"public_distribution has shape 5×2; expected 2×5"):
        validate_document(d)
    d["public_distribution"] = (P_HAT / 2).tolist()
    with pytest.raises(DocumentError, match=r"public_distribution sums to 0.5; it must sum to 1"):
        validate_document(d)
    d["public_distribution"] = P_HAT.tolist()
    d["public_distribution"][0][0] = -0.0037
    d["public_distribution"][0][1] += 2 * 0.0037
    with pytest.raises(DocumentError, match=r"public_distribution\[0\]\[0\] is -0.0037; entries must be ≥ 0"):
        validate_document(d)


def test_privacy_errors(doc: dict[str, Any]) -> None:
    cases = [
        ({"notion": "rldp"}, "privacy is missing required field 'epsilon'"),
        ({**PRIVACY, "epsilon": -1.0}, "privacy.epsilon must be a finite number > 0"),
        ({**PRIVACY, "epsilon": "1"}, "privacy.epsilon must be a number"),
        ({**PRIVACY, "notion": ""}, "privacy.notion must be a non-empty string"),
        ({"notion": "rldp", "epsilon": 1.0}, "privacy.uncertainty .* is required for notion 'rldp'"),
        ({**PRIVACY, "uncertainty": {"divergence": "kl", "order": 2, "radius": 0.1}}, "divergence must be 'renyi'"),
        (
            {**PRIVACY, "uncertainty": {"divergence": "renyi", "order": 0, "radius": 0.1}},
            "order must be a finite number > 0",
        ),
        ({**PRIVACY, "uncertainty": {"divergence": "renyi", "order": 2}}, "missing required field 'radius'"),
        (
            {**PRIVACY, "uncertainty": {"divergence": "renyi", "order": 2, "radius": -0.1}},
            "radius must be a finite number ≥ 0 or null",
        ),
        (
            {**PRIVACY, "uncertainty": {"divergence": "renyi", "order": 2, "radius": 0.1, "n": 0}},
            "n must be a positive integer",
        ),
        (
            {**PRIVACY, "uncertainty": {"divergence": "renyi", "order": 2, "radius": 0.1, "beta": 1.5}},
            r"beta must be in \(0, 1\)",
        ),
    ]
    for privacy, message in cases:
        d = {**copy.deepcopy(doc), "privacy": privacy}
        with pytest.raises(DocumentError, match=message):
            validate_document(d)


def test_other_notions_and_unbounded_radius(doc: dict[str, Any]) -> None:
    ldp = rehash({**copy.deepcopy(doc), "privacy": {"notion": "ldp", "epsilon": 3.0}})
    assert validate_document(ldp) == ldp
    assert D.notion(ldp) == "ldp" and D.epsilon(ldp) == 3.0
    with pytest.raises(DocumentError, match="no privacy.uncertainty"):
        D.uncertainty_parameters(ldp)
    unbounded = copy.deepcopy(doc)
    unbounded["privacy"]["uncertainty"]["radius"] = None
    rehash(unbounded)
    assert D.uncertainty_parameters(from_json(to_json(unbounded)))["radius"] == math.inf


def test_bad_alphabet_and_id(doc: dict[str, Any]) -> None:
    d = {**copy.deepcopy(doc), "sensitive": {"name": "sex", "values": ["Female"]}}
    with pytest.raises(DocumentError, match="sensitive/released: .*only one value"):
        validate_document(d)
    d = {**copy.deepcopy(doc), "released": [{"name": "race", "values": ["A", "A"]}]}
    with pytest.raises(DocumentError, match="'A' appears more than once"):
        validate_document(d)
    d = {**copy.deepcopy(doc), "id": doc["id"].upper()}
    with pytest.raises(DocumentError, match="id must be 64 lowercase hex"):
        validate_document(d)
    with pytest.raises(DocumentError, match="must be an object"):
        validate_document([doc])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- reading bad input


def test_garbage_msgpack(doc: dict[str, Any]) -> None:
    packed = to_msgpack(doc)
    bad_inputs = [
        b"",
        b"\xc1",
        b"\xff\xfe\xfd",
        b"not msgpack at all",
        packed[:-1],
        packed + b"\x00",
        msgpack.packb([1, 2, 3]),
        msgpack.packb(42),
        msgpack.packb("doc"),
        msgpack.packb({1: "int key"}),
        msgpack.packb({**doc, "blob": b"\x00\x01"}, use_bin_type=True),
        msgpack.packb({**doc, "ext": msgpack.ExtType(5, b"x")}),
    ]
    rng = np.random.default_rng(1)
    bad_inputs += [rng.bytes(int(n)) for n in rng.integers(1, 200, size=300)]
    bad_inputs += [packed[:n] for n in range(0, len(packed), 7)]
    for i in range(0, len(packed), 3):  # every third byte flipped
        mutated = bytearray(packed)
        mutated[i] ^= 0x55
        bad_inputs.append(bytes(mutated))
    for data in bad_inputs:
        with pytest.raises(DocumentError) as exc:
            from_msgpack(data)
        assert "\n" not in str(exc.value)


def test_garbage_json(doc: dict[str, Any]) -> None:
    text = to_json(doc)
    cases = [
        ("", "empty document"),
        ("   \n", "empty document"),
        ("{", "not valid JSON"),
        ("[1, 2]", "must be an object"),
        ("null", "must be an object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (text.replace('"method": "test"', '"method": "test", "method": "other"'), "key 'method' appears twice"),
        (text.replace(str(doc["matrix"][0][0]), "NaN", 1), "NaN is not allowed"),
        (text.replace(str(doc["matrix"][0][0]), "1e400", 1), r"matrix\[0\]\[0\] is inf"),
    ]
    for data, message in cases:
        with pytest.raises(DocumentError, match=message):
            from_json(data)


def test_files(doc: dict[str, Any], tmp_path: Path) -> None:
    write_document(doc, tmp_path / "doc.json")
    write_document(doc, tmp_path / "doc.msgpack")
    assert (tmp_path / "doc.json").read_text().startswith("{\n")
    assert (tmp_path / "doc.msgpack").read_bytes() == to_msgpack(doc)
    assert read_document(tmp_path / "doc.json") == read_document(tmp_path / "doc.msgpack") == doc
    # An unknown extension is sniffed on read, refused on write.
    (tmp_path / "doc.bin").write_bytes(to_msgpack(doc))
    (tmp_path / "doc.txt").write_text(to_json(doc))
    assert read_document(tmp_path / "doc.bin") == read_document(tmp_path / "doc.txt") == doc
    with pytest.raises(DocumentError, match="unknown extension"):
        write_document(doc, tmp_path / "doc.yaml")
    bad = copy.deepcopy(doc)
    bad["method"] = "changed"
    with pytest.raises(DocumentError, match="id mismatch"):
        write_document(bad, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def test_bad_files(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "empty.msgpack").write_bytes(b"")
    (tmp_path / "garbage.json").write_text("this is not json")
    (tmp_path / "garbage.mpk").write_bytes(b"\xc1\xc1\xc1")
    (tmp_path / "list.json").write_text("[]")
    cases = [
        ("empty.json", "empty document"),
        ("empty.msgpack", "empty document"),
        ("garbage.json", "not valid JSON"),
        ("garbage.mpk", "not a valid msgpack document"),
        ("list.json", "must be an object"),
        ("missing.json", "no such file"),
    ]
    for name, message in cases:
        with pytest.raises(DocumentError) as exc:
            read_document(tmp_path / name)
        assert str(exc.value).startswith(str(tmp_path / name) + ": ")
        assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_file_that_is_no_document_is_named_for_what_it_looks_like(tmp_path: Path) -> None:
    """`rldp publish adult.csv` said "not a valid msgpack document (ExtraData…)": a CSV (or any file that
    is neither JSON nor a msgpack map) is named for what it looks like."""
    import gzip

    (tmp_path / "adult.csv").write_text("age,sex,race\n39,Male,White\n50,Female,Black\n")
    (tmp_path / "semi").write_text("age;sex\n39;Male\n")
    (tmp_path / "notes").write_text("hello\n")
    (tmp_path / "data.gz").write_bytes(gzip.compress(b"a,b\n1,2\n"))
    (tmp_path / "blob").write_bytes(bytes(range(1, 40)))
    cases = [
        ("adult.csv", "a CSV file"),
        ("semi", "a CSV file"),
        ("notes", "a text file"),
        ("data.gz", "a gzip file"),
        ("blob", "a binary file"),
    ]
    for name, what in cases:
        with pytest.raises(DocumentError) as exc:
            read_document(tmp_path / name)
        assert str(exc.value) == f"{tmp_path / name} looks like {what}, not a mechanism document (JSON or msgpack)"


# ----------------------------------------------------------------------------- accessors


def test_accessors(doc: dict[str, Any]) -> None:
    q = D.mechanism_matrix(doc)
    assert q.shape == (4, 10) and q.dtype == np.float64
    np.testing.assert_array_equal(q, random_matrix(4, 10))
    np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_array_equal(D.public_distribution(doc), P_HAT)
    assert D.alphabet(doc) == alphabet()
    assert D.epsilon(doc) == 1.0 and D.notion(doc) == "rldp"
    assert D.uncertainty_parameters(doc) == {
        "divergence": "renyi",
        "order": 2.0,
        "radius": 0.000519,
        "n": 32561,
        "beta": 0.05,
        "box": None,
    }
    q[0, 0] = 99.0  # accessors return copies; the document is unchanged
    assert doc["matrix"][0][0] != 99.0
