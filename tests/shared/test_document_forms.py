"""Compact exact documents (format 3): forms, one id in JSON and msgpack, strict validation, structured audits."""

from __future__ import annotations

import base64
import copy
import math

import msgpack
import numpy as np
import pytest

from rldp.shared.audit import audit_document, audit_rldp, rldp_epsilon
from rldp.shared.audit.structured import grr_extremes, split_constant_blocks
from rldp.shared.document import (
    FORMAT,
    FORMAT_3,
    DocumentError,
    build_document,
    canonical_bytes,
    content_id,
    from_json,
    from_msgpack,
    matrix_form,
    mechanism_matrix,
    to_json,
    to_msgpack,
    validate_document,
)
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.uncertainty import UncertaintySet

A1, A2 = 3, 4
ALPHA = Alphabet(Attribute("s", ("a", "b", "c")), [Attribute("u", ("w", "x", "y", "z"))])
LATENT = Alphabet(Attribute("s", ("a", "b", "c")), [Attribute("u", ("w", "x", "y", "z"))], latent=True)
P_HAT = np.random.default_rng(0).dirichlet(np.ones(A1 * A2)).reshape(A1, A2)
PRIVACY = {"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2.0, "radius": 0.05}}


def grr(k: int, eps: float) -> np.ndarray:
    off = math.exp(-eps) / (1 + (k - 1) * math.exp(-eps))
    q = np.full((k, k), off)
    np.fill_diagonal(q, 1 / (1 + (k - 1) * math.exp(-eps)))
    return q


def doc_of(q: np.ndarray, *, alphabet: Alphabet = ALPHA, compact: bool | None = True) -> dict:
    return build_document(
        method="test", matrix=q, alphabet=alphabet, public_distribution=P_HAT, privacy=PRIVACY, compact=compact
    )


def palette_matrix() -> np.ndarray:
    q = np.kron(grr(A1, 0.7), grr(A2, 1.3))  # IR: four distinct values
    return q


def dense_matrix() -> np.ndarray:
    return np.random.default_rng(1).dirichlet(np.ones(A1 * A2), size=A1 * A2).T


@pytest.mark.parametrize(
    ("q", "form"), [(grr(A1 * A2, 0.9), "grr"), (palette_matrix(), "palette"), (dense_matrix(), "dense")]
)
def test_forms_are_exact_and_hash_alike_in_json_and_msgpack(q, form):
    doc = doc_of(q)
    assert doc["format"] == FORMAT_3 and matrix_form(doc) == form
    assert np.array_equal(mechanism_matrix(doc), q)  # exact: every bit
    via_json, via_msgpack = from_json(to_json(doc)), from_msgpack(to_msgpack(doc))
    assert via_json["id"] == via_msgpack["id"] == doc["id"] == content_id(via_msgpack)
    assert canonical_bytes(via_json) == canonical_bytes(via_msgpack)
    assert np.array_equal(mechanism_matrix(via_msgpack), q) and np.array_equal(mechanism_matrix(via_json), q)
    if form != "grr":  # msgpack carries the arrays as bin, JSON as base64 text
        raw = msgpack.unpackb(to_msgpack(doc), raw=False)["matrix"]
        assert all(isinstance(raw[f], bytes) for f in raw if f not in ("form", "shape", "index_type"))
        assert isinstance(from_json(to_json(doc))["matrix"][next(f for f in raw if isinstance(raw[f], bytes))], str)


def test_small_documents_keep_rows_format_and_id():
    q = dense_matrix()
    rows = doc_of(q, compact=None)  # below COMPACT_MIN_ENTRIES: the list of rows older readers know
    assert rows["format"] == FORMAT and isinstance(rows["matrix"], list)
    assert rows["id"] == doc_of(q, compact=False)["id"] == validate_document(rows)["id"]
    compact = doc_of(q)
    assert compact["id"] != rows["id"]  # format is part of the content
    assert audit_document(compact).epsilon == audit_document(rows).epsilon  # the same numbers, the same audit


def test_large_matrices_are_compact_by_default():
    alpha = Alphabet(Attribute("s", ("a", "b")), [Attribute("u", tuple(f"u{i}" for i in range(300)))])
    p = np.full((2, 300), 1 / 600)
    doc = build_document(method="grr", matrix=grr(600, 1.0), alphabet=alpha, public_distribution=p, privacy=PRIVACY)
    assert doc["format"] == FORMAT_3 and doc["matrix"]["form"] == "grr" and len(to_json(doc)) < 20_000


def _with_matrix(doc: dict, **fields) -> dict:
    d = copy.deepcopy(doc)
    d["matrix"] = {**d["matrix"], **fields}
    return d


def test_validation_errors_are_clear():
    dense = doc_of(dense_matrix())
    data = base64.b64decode(dense["matrix"]["data"])
    floats = np.frombuffer(data, dtype="<f8").copy()
    cases = [
        (_with_matrix(dense, data="not base64!"), "matrix.data is not valid base64"),
        (_with_matrix(dense, data=base64.b64encode(data[:-8]).decode()), r"matrix.data holds 1144 bytes; expected 144"),
        (_with_matrix(dense, shape=[12, 11]), r"matrix.data holds 1152 bytes; expected 132"),
        (_with_matrix(dense, shape=[12]), r"matrix.shape must be \[rows, columns\]"),
        (_with_matrix(dense, extra=1), "matrix \\(form 'dense'\\) has unknown field 'extra'"),
        (_with_matrix(dense, form="sparse"), "matrix.form must be one of"),
    ]
    for index, value, message in [
        (5, np.nan, r"matrix.data\[5\] is nan; entries must be finite"),
        (7, -0.25, r"matrix.data\[7\] is -0.25; entries must be ≥ 0"),
        (0, -0.0, r"matrix.data\[0\] is -0.0; entries must be ≥ 0 \(and not −0.0\)"),
        (0, floats[0] + 0.5, "matrix column 0 sums to"),
    ]:
        bad = floats.copy()
        bad[index] = value
        cases.append((_with_matrix(dense, data=base64.b64encode(bad.astype("<f8").tobytes()).decode()), message))
    text = dense["matrix"]["data"]
    if text.endswith("="):  # a non-zero padding bit gives the same bytes under another text
        last = text.rstrip("=")[-1]
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        twin = text.rstrip("=")[:-1] + alphabet[alphabet.index(last) + 1] + "=" * (len(text) - len(text.rstrip("=")))
        cases.append((_with_matrix(dense, data=twin), "not canonical base64"))
    g = doc_of(grr(A1 * A2, 1.0))
    cases += [
        (_with_matrix(g, diagonal=0.5), r"matrix columns sum to .*diagonal \+ \(size − 1\) · off_diagonal"),
        (_with_matrix(g, off_diagonal=-0.01), r"matrix.off_diagonal is -0.01; it must be a finite number ≥ 0"),
        (_with_matrix(g, diagonal=True), "matrix.diagonal must be a number"),
        (_with_matrix(g, size=1, diagonal=1.0), "matrix.size must be at least 2 for form 'grr'"),
        (_with_matrix(g, size="12"), "matrix.size must be a positive integer"),
        ({k: v for k, v in _with_matrix(g).items()} | {"format": FORMAT}, "needs format 'rldp.mechanism/3'"),
    ]
    pal = doc_of(palette_matrix())
    values = np.frombuffer(base64.b64decode(pal["matrix"]["values"]), dtype="<f8")
    index = np.frombuffer(base64.b64decode(pal["matrix"]["index"]), dtype="u1")
    cases += [
        (_with_matrix(pal, values=base64.b64encode(values[::-1].tobytes()).decode()), "strictly increasing"),
        (_with_matrix(pal, index=base64.b64encode((index + 9).astype("u1").tobytes()).decode()), "has entry"),
        (_with_matrix(pal, index_type="uint16"), "matrix.index holds 144 bytes; expected 144 × 2"),
        (_with_matrix(pal, index_type="int8"), "matrix.index_type must be one of uint8, uint16"),
    ]
    for bad, message in cases:
        with pytest.raises(DocumentError, match=message):
            validate_document(bad)
    with pytest.raises(DocumentError, match="matrix has 12 columns; expected a = a2 = 4"):
        build_document(method="t", matrix=g["matrix"], alphabet=LATENT, public_distribution=P_HAT, privacy=PRIVACY)
    with pytest.raises(DocumentError, match="matrix.data is not valid base64"):
        from_json(to_json(cases[0][0]))
    packed = msgpack.unpackb(to_msgpack(dense), raw=False)
    packed["matrix"]["data"] = packed["matrix"]["data"][:-1]
    with pytest.raises(DocumentError, match="matrix.data holds 1151 bytes"):
        from_msgpack(msgpack.packb(packed, use_bin_type=True))
    packed["provenance"] = b"\x00"  # binary is allowed in the matrix's arrays only
    with pytest.raises(DocumentError, match="provenance: value of type bytes cannot be stored"):
        from_msgpack(msgpack.packb(packed, use_bin_type=True))


@pytest.mark.parametrize("latent", [False, True])
@pytest.mark.parametrize("radius", [0.0, 0.05, 2.0, math.inf])
def test_grr_structured_audit_matches_the_dense_search(latent, radius):
    uset = UncertaintySet(P_HAT, radius, 2.0)
    k = A2 if latent else A1 * A2
    for eps in (0.3, 1.0, 3.0):
        q = grr(k, eps)
        joint = np.tile(q, (1, A1)) if latent else q
        hi, lo = uset.extremes(joint.reshape(-1, A1, A2))  # the generic Lagrange search
        shi, slo = grr_extremes(q[0, 0], q[1, 0], k, uset)
        # The closed form agrees with the search and is rounded outward (towards leakage).
        assert np.allclose(shi, hi, rtol=1e-12, atol=0) and np.allclose(slo, lo, rtol=1e-12, atol=0)
        eps_structured, worst = rldp_epsilon(q, uset)
        ratios = np.log(hi[:, :, None]) - np.log(lo[:, None, :])
        ratios[:, np.arange(A1), np.arange(A1)] = -np.inf
        assert eps_structured == pytest.approx(max(float(ratios.max()), 0.0), abs=1e-11)
        assert eps_structured >= float(ratios.max()) - 1e-15
        assert (not latent and radius == math.inf) or worst["s1"] != worst["s2"]
        alpha = LATENT if latent else ALPHA
        doc = doc_of(q, alphabet=alpha)
        privacy = {
            **PRIVACY,
            "epsilon": eps,
            "uncertainty": {"order": 2.0, "radius": None if math.isinf(radius) else radius},
        }
        doc = build_document(
            method="grr", matrix=q, alphabet=alpha, public_distribution=P_HAT, privacy=privacy, compact=True
        )
        rows = build_document(
            method="grr", matrix=q, alphabet=alpha, public_distribution=P_HAT, privacy=privacy, compact=False
        )
        assert audit_document(doc).epsilon == pytest.approx(audit_document(rows).epsilon, abs=1e-12)
        assert audit_document(doc).passed


def test_dense_audit_searches_only_varying_blocks():
    uset = UncertaintySet(P_HAT, 0.1, 2.0)
    q = dense_matrix()
    blocks = q.reshape(-1, A1, A2).copy()
    blocks[::2, 1, :] = 0.05  # some constant blocks
    hi, lo = split_constant_blocks(blocks, uset)
    want_hi, want_lo = uset.extremes(blocks)
    varies = blocks.max(axis=2) != blocks.min(axis=2)
    assert np.array_equal(hi[varies], want_hi[varies]) and np.array_equal(lo[varies], want_lo[varies])
    assert np.allclose(hi, want_hi, rtol=1e-12) and np.allclose(lo, want_lo, rtol=1e-12)
    assert audit_rldp(q, uset, 5.0).passed


@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
def test_grr_ldp_audit_from_two_values(eps):
    q = grr(A1 * A2, eps)
    privacy = {"notion": "ldp", "epsilon": eps}
    doc = build_document(
        method="grr", matrix=q, alphabet=ALPHA, public_distribution=P_HAT, privacy=privacy, compact=True
    )
    rows = build_document(method="grr", matrix=q, alphabet=ALPHA, public_distribution=P_HAT, privacy=privacy)
    assert audit_document(doc).epsilon == pytest.approx(audit_document(rows).epsilon, abs=1e-12)
    assert audit_document(doc).epsilon == pytest.approx(eps, abs=1e-12) and audit_document(doc).passed
    leaky = {**privacy, "epsilon": eps / 2}
    doc = build_document(method="grr", matrix=q, alphabet=ALPHA, public_distribution=P_HAT, privacy=leaky, compact=True)
    assert not audit_document(doc).passed


def _searched_epsilon(q: np.ndarray, uset: UncertaintySet) -> float:
    """The audit with the Lagrange search on every block (no closed forms)."""
    hi, lo = uset.extremes(q.reshape(-1, A1, A2))
    ratios = np.log(hi[:, :, None]) - np.log(np.maximum(lo, 0.0)[:, None, :])
    ratios[:, np.arange(A1), np.arange(A1)] = -np.inf
    return max(float(ratios.max()), 0.0)


@pytest.mark.parametrize("radius", [0.0, 0.05, 2.0])
def test_one_entry_blocks_have_the_closed_form_of_the_search(radius):
    from rldp.aggregator.design.primitives.families import cr_matrix, ir_matrix, srr_matrix

    uset = UncertaintySet(P_HAT, radius, 2.0)
    conditionals = P_HAT / P_HAT.sum(axis=1, keepdims=True)
    perturbed = dense_matrix()
    for q in (
        srr_matrix(A1, A2, 1.0),
        ir_matrix(A1, A2, 0.8, 1.5),
        cr_matrix(conditionals, 0.9, np.array([0.5, 1.0, 2.0])),
        1.0 - grr(A1 * A2, 1.0) * 0.5,  # spikes below the base, unnormalised: the extremes only
        perturbed,  # no closed form: searched
    ):
        blocks = q.reshape(-1, A1, A2)
        hi, lo = split_constant_blocks(blocks, uset)
        want_hi, want_lo = uset.extremes(blocks)
        assert np.allclose(hi, want_hi, rtol=1e-11, atol=0) and np.allclose(lo, want_lo, rtol=1e-11, atol=0)
        if np.allclose(q.sum(axis=0), 1.0):
            assert rldp_epsilon(q, uset)[0] == pytest.approx(_searched_epsilon(q, uset), abs=1e-10)
