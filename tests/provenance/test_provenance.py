"""Provenance of P̂ (rldp.shared.provenance): the canonical counts hash, the document field, and the
checks that catch an aggregator misstating its public data (inflated n, shifted P̂)."""

from __future__ import annotations

import gzip
import hashlib
import json

import numpy as np
import pytest
from provenance.attacks import EPSILON, adult_counts, adult_table, designed, inflated, shifted

from rldp.aggregator.design import DesignError, design, grr_matrix
from rldp.shared.audit import audit_document, audit_rldp
from rldp.shared.document import build_document, content_id, validate_document
from rldp.shared.errors import DocumentError, IdMismatch
from rldp.shared.provenance import (
    POLICY,
    PublicCounts,
    PublicDataError,
    canonical_counts,
    check_document_provenance,
    check_public_data,
    counts_sha256,
    provenance_of,
)
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import Table, read_csv
from rldp.shared.uncertainty import UncertaintySet

BETA = 0.05


# -- the canonical counts


def _write(path, text: str, *, gz: bool = False):
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_the_counts_hash_ignores_formatting_row_order_and_whitespace(tmp_path):
    rows = [("Female", "red"), ("Male", "blue"), ("Male", "red"), ("Male", "red"), ("Female", "?")]
    plain = "sex,colour\n" + "".join(f"{s},{c}\n" for s, c in rows)
    spaced = "sex , colour\r\n\r\n" + "".join(f'"{s}",  {c}  \r\n' for s, c in reversed(rows))
    alphabet = Alphabet.from_table(read_csv(_write(tmp_path / "a.csv", plain)), "sex", ["colour"])
    digests = {
        PublicCounts.from_table(read_csv(path), alphabet, name="x").sha256
        for path in (
            _write(tmp_path / "a.csv", plain),
            _write(tmp_path / "b.csv", spaced),
            _write(tmp_path / "c.csv.gz", spaced, gz=True),
        )
    }
    assert len(digests) == 1
    # '?' is an ordinary value (the recorded policy); one record more changes the hash.
    assert "?" in alphabet.released[0].values and POLICY == {"filter": "none", "missing": "as-value"}
    more = read_csv(_write(tmp_path / "d.csv", plain + "Male,blue\n"))
    assert PublicCounts.from_table(more, alphabet, name="x").sha256 not in digests


def test_the_canonical_form_is_the_documented_json():
    alphabet = Alphabet(Attribute("sex", ("F", "M")), [Attribute("colour", ("blue", "red"))])
    counts = np.array([[1, 2], [0, 7]])
    expected = (
        b'{"attributes":[{"name":"sex","values":["F","M"]},{"name":"colour","values":["blue","red"]}],'
        b'"counts":[1,2,0,7],"format":"rldp.counts/1"}'
    )
    assert canonical_counts(alphabet, counts) == expected
    assert counts_sha256(alphabet, counts) == hashlib.sha256(expected).hexdigest()
    # The labels are hashed too: the same numbers over other values are other data.
    other = Alphabet(Attribute("sex", ("F", "M")), [Attribute("colour", ("blue", "green"))])
    assert counts_sha256(other, counts) != counts_sha256(alphabet, counts)


def test_a_latent_s_hashes_the_joint_counts():
    table = Table.from_rows(("sex", "colour"), [("F", "red"), ("M", "red"), ("M", "blue"), ("M", "blue")])
    released = Alphabet.from_table(table, "sex", ["colour"])
    latent = Alphabet.from_table(table, "sex", ["colour"], latent=True)
    a, b = PublicCounts.from_table(table, released, name="t"), PublicCounts.from_table(table, latent, name="t")
    assert b.counts.tolist() == [[0, 1], [2, 1]] and a.sha256 == b.sha256
    doc = design(
        "grr", alphabet=latent, public_distribution=b.distribution, epsilon=1.0, n=b.n, provenance=b.provenance()
    )
    assert doc["provenance"]["columns"] == ["sex", "colour"] and check_document_provenance(doc).passed


# -- the document field


@pytest.fixture(scope="module")
def adult():
    return adult_table()


@pytest.fixture(scope="module")
def public(adult):
    return adult_counts(adult, name="adult.data")


@pytest.fixture(scope="module")
def honest(public):
    return designed(public)


@pytest.fixture(scope="module")
def inflated_doc(public):
    return designed(inflated(public))


@pytest.fixture(scope="module")
def shifted_doc(public):
    return designed(shifted(public))


@pytest.mark.slow
def test_designs_record_their_provenance(honest, public):
    prov = provenance_of(honest)
    assert prov == {
        "name": "adult.data",
        "n": 32561,
        "columns": ["sex", "race"],
        "counts_sha256": public.sha256,
        "policy": POLICY,
    }
    assert honest["privacy"]["uncertainty"]["n"] == 32561
    assert check_document_provenance(honest).passed and check_document_provenance(honest).counts_sha256 == public.sha256


@pytest.mark.slow
def test_provenance_is_covered_by_the_id(honest):
    renamed = json.loads(json.dumps(honest))
    renamed["provenance"]["name"] = "something else"
    with pytest.raises(IdMismatch):
        validate_document(renamed)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"n": 0}, "provenance.n"),
        ({"n": True}, "provenance.n"),
        ({"name": " "}, "provenance.name"),
        ({"columns": ["sex", "sex"]}, "provenance.columns"),
        ({"counts_sha256": "ABC"}, "provenance.counts_sha256"),
        ({"policy": "none"}, "provenance.policy"),
        ({"counts_sha256": None}, "counts_sha256"),
    ],
)
def test_a_malformed_provenance_is_an_invalid_document(honest, change, needle):
    prov = {**honest["provenance"], **change}
    if change.get("counts_sha256", "") is None:
        del prov["counts_sha256"]
    body = {k: v for k, v in honest.items() if k not in ("id", "provenance")}
    body["provenance"] = prov
    with pytest.raises(DocumentError, match=needle):
        validate_document({**body, "id": "0" * 64})


def test_older_documents_without_provenance_stay_valid(public, adult):
    doc = build_document(
        method="grr",
        matrix=grr_matrix(10, 1.0),
        alphabet=public.alphabet,
        public_distribution=public.distribution,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
    )
    assert audit_document(doc).passed and provenance_of(doc) is None
    own = check_document_provenance(doc)
    assert own.passed and "no provenance" in own.notes[0]
    check = check_public_data(doc, adult)
    assert check.passed and "no provenance" in check.notes[0] and "the document states no n" in check.notes


def test_the_designer_refuses_a_provenance_that_does_not_describe_its_data(public):
    with pytest.raises(DesignError, match="n: privacy.uncertainty.n is 325610 but provenance.n is 32561"):
        design(
            "srr",
            alphabet=public.alphabet,
            public_distribution=public.distribution,
            n=public.n * 10,
            epsilon=EPSILON,
            provenance=public.provenance(),
        )
    moved = public.counts.copy()
    moved[0, 0] += 1  # one record moved: the same n, other counts
    moved[0, 1] -= 1
    more = public.counts.copy()
    more[0, 0] += 1  # one record more: P̂ × n is no longer whole counts
    for counts, needle in ((moved, "counts_sha256"), (more, "not a whole count")):
        with pytest.raises(DesignError, match=needle):
            design(
                "srr",
                alphabet=public.alphabet,
                public_distribution=counts / counts.sum(),
                epsilon=EPSILON,
                provenance=public.provenance(),
            )


# -- the attacks


@pytest.mark.slow
def test_both_attacks_pass_the_plain_audit_and_leak_for_the_real_population(honest, inflated_doc, shifted_doc, public):
    honest_set = UncertaintySet.from_confidence(public.distribution, public.n, BETA)
    for doc in (honest, inflated_doc, shifted_doc):
        assert audit_document(doc).passed  # each is consistent with its own claims
        assert check_document_provenance(doc).passed  # ... and with its own provenance
    assert audit_rldp(honest["matrix"], honest_set, EPSILON).passed
    # Over the honest 95 % confidence set, the misstated designs leak well beyond their claim.
    assert audit_rldp(inflated_doc["matrix"], honest_set).epsilon > EPSILON + 0.2
    assert audit_rldp(shifted_doc["matrix"], honest_set).epsilon > EPSILON + 0.2


def test_the_public_data_passes_the_honest_design(honest, adult, public):
    check = check_public_data(honest, adult)
    assert check.passed and check.mismatches == () and check.notes == ()
    assert check.n == 32561 and check.counts_sha256 == public.sha256


@pytest.mark.slow
def test_the_public_data_catches_an_inflated_n(inflated_doc, adult):
    check = check_public_data(inflated_doc, adult)
    assert not check.passed
    fields = {m.field: m for m in check.mismatches}
    assert set(fields) == {"n", "radius", "counts_sha256"}
    assert fields["n"].document == 325610 and fields["n"].data == 32561
    assert fields["radius"].document < fields["radius"].data / 9  # the attack: a ~10x smaller radius
    assert "n: the document says 325610" in check.summary() and "\n" not in check.summary()


@pytest.mark.slow
def test_the_public_data_catches_a_shifted_p_hat(shifted_doc, adult):
    check = check_public_data(shifted_doc, adult)
    fields = {m.field: m for m in check.mismatches}
    assert set(fields) == {"public_distribution", "counts_sha256"}
    assert "public_distribution[Female|White]" in fields["public_distribution"].message
    assert fields["public_distribution"].data == 8642 / 32561  # the real share, as the designer computes it


@pytest.mark.slow
def test_without_provenance_the_attack_is_still_caught_by_p_hat_n_and_radius(inflated_doc, adult):
    body = {k: v for k, v in inflated_doc.items() if k not in ("id", "provenance")}
    bare = validate_document({**body, "id": content_id(body)})
    assert audit_document(bare).passed
    check = check_public_data(bare, adult)
    assert {m.field for m in check.mismatches} == {"n", "radius"} and "no provenance" in check.notes[0]


@pytest.mark.slow
def test_a_radius_without_beta_is_held_to_the_default_confidence_level(public, adult):
    doc = designed(public, radius=1e-7)
    assert "beta" not in doc["privacy"]["uncertainty"] and audit_document(doc).passed
    check = check_public_data(doc, adult)
    assert [m.field for m in check.mismatches] == ["radius"] and "beta = 0.05" in check.notes[-1]
    looser = check_public_data(doc, adult, beta=0.5).mismatches[0]  # --beta: another confidence level
    assert looser.field == "radius" and looser.data < check.mismatches[0].data


def test_a_forged_hash_alone_is_a_mismatch(honest, adult):
    body = {k: v for k, v in honest.items() if k != "id"}
    body["provenance"] = {**honest["provenance"], "counts_sha256": "0" * 64}
    forged = {**body, "id": content_id(body)}
    assert [m.field for m in check_document_provenance(forged).mismatches] == ["counts_sha256"]
    assert [m.field for m in check_public_data(forged, adult).mismatches] == ["counts_sha256"]


# -- bad public data


def test_public_data_without_the_documents_columns_names_them(honest, adult):
    table = Table.from_columns({"age": adult.column("age"), "race": adult.column("race")})
    with pytest.raises(PublicDataError, match="no column 'sex'"):
        check_public_data(honest, table)


def test_values_outside_the_alphabet_are_named(honest, adult):
    race = adult.column("race").copy()
    race[:3] = ["Martian", "Venusian", "Martian"]
    table = Table.from_columns({"sex": adult.column("sex"), "race": race})
    with pytest.raises(PublicDataError, match="race: 'Martian', 'Venusian'"):
        check_public_data(honest, table)


def test_a_policy_this_version_does_not_apply_is_refused(honest, adult):
    body = {k: v for k, v in honest.items() if k != "id"}
    body["provenance"] = {**honest["provenance"], "policy": {"filter": "age > 30", "missing": "as-value"}}
    doc = {**body, "id": content_id(body)}
    with pytest.raises(PublicDataError, match="policy"):
        check_public_data(doc, adult)
