"""Issue 27 D2: a tiny hostile document that claims a huge alphabet (the GRR form stands for a K × K
matrix in ~4 numbers) is refused before any matrix is built, by the shared validation the client and
the server both run; a GRR document within the bound is published, verified and sampled without
expanding its K × K matrix."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
from helpers import grr_form_document
from rldp_live import ADMIN, in_process_app

from rldp.client import Mechanism, MechanismRejected
from rldp.shared.audit import dense_audit_entries
from rldp.shared.document import MAX_SYMBOLS, DocumentError, to_json, validate_document

MiB = 1 << 20


def _peak(fn) -> tuple[object, int]:
    """fn()'s result and the peak bytes Python and numpy allocated while it ran."""
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_bound_is_the_designers_bound() -> None:
    from rldp.aggregator.frames import MAX_DESIGN_SYMBOLS

    assert MAX_SYMBOLS == MAX_DESIGN_SYMBOLS == 8192  # everything rldp designs can be published and used


@pytest.mark.parametrize(("a1", "a2"), [(2, 4097), (128, 128)])
def test_validation_refuses_an_alphabet_over_the_bound_before_any_matrix(a1, a2) -> None:
    doc = grr_form_document(a1, a2)
    with pytest.raises(DocumentError) as err:
        validate_document(doc)
    message = str(err.value)
    assert f"{a1 * a2:,}" in message and f"{MAX_SYMBOLS:,}" in message, message
    _, peak = _peak(lambda: pytest.raises(DocumentError, validate_document, doc))
    assert peak < 8 * MiB, peak  # a K² float64 matrix would be 2 GiB at K = 16,384


def test_the_client_refuses_it_with_the_bound() -> None:
    doc = grr_form_document(128, 128)
    _, peak = _peak(lambda: pytest.raises(MechanismRejected, Mechanism.from_document, doc))
    with pytest.raises(MechanismRejected) as err:
        Mechanism.from_document(doc)
    assert "16,384" in str(err.value) and "8,192" in str(err.value)
    assert peak < 8 * MiB, peak


def test_the_server_refuses_it_with_422(tmp_path) -> None:
    doc = grr_form_document(128, 128)
    with in_process_app(tmp_path) as app:
        resp = app.test_client().post(
            "/v1/mechanisms", data=to_json(doc), headers={**ADMIN, "Content-Type": "application/json"}
        )
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert "8,192" in resp.get_json()["detail"]


@pytest.mark.slow
def test_a_grr_document_at_the_bound_is_verified_and_sampled_without_its_matrix(tmp_path) -> None:
    doc = grr_form_document(64, 128, epsilon=1.0)  # K = 8,192: the matrix would be 512 MiB
    assert dense_audit_entries(doc) == 0  # the rldp audit reads GRR's two values

    def verify_and_sample():
        mech = Mechanism.from_document(json.loads(to_json(doc)))
        x = np.random.default_rng(1).integers(0, MAX_SYMBOLS, 20_000)
        return mech, mech.privatize_indices(x, rng=np.random.default_rng(2)), x

    (mech, y, x), peak = _peak(verify_and_sample)
    assert peak < 32 * MiB, peak
    assert mech.outputs == mech.memo_outputs == mech.size == MAX_SYMBOLS
    d = doc["matrix"]["diagonal"]  # Y = X with probability d: 5 standard deviations
    assert abs(np.count_nonzero(y == x) - x.size * d) <= 5 * np.sqrt(x.size * d * (1 - d)) + 1

    with in_process_app(tmp_path) as app:
        http = app.test_client()
        body = to_json(doc)
        resp, peak = _peak(
            lambda: http.post("/v1/mechanisms", data=body, headers={**ADMIN, "Content-Type": "application/json"})
        )
        listed = http.get("/v1/mechanisms").get_json()
    assert resp.status_code == 201, resp.get_data(as_text=True)
    assert [m["outputs"] for m in listed["mechanisms"]] == [MAX_SYMBOLS]
    assert peak < 64 * MiB, peak


def test_a_notion_audited_densely_is_refused_by_the_client_above_its_dense_limit() -> None:
    from rldp.client.mechanism import MAX_DENSE_AUDIT_ENTRIES

    doc = grr_form_document(64, 128, notion="lip")  # LIP's audit reads the dense matrix
    assert dense_audit_entries(doc) == MAX_SYMBOLS**2 > MAX_DENSE_AUDIT_ENTRIES
    (_, peak) = _peak(lambda: pytest.raises(MechanismRejected, Mechanism.from_document, doc))
    with pytest.raises(MechanismRejected) as err:
        Mechanism.from_document(doc)
    assert "8,192 × 8,192" in str(err.value) and "'lip'" in str(err.value), str(err.value)
    assert peak < 8 * MiB, peak
