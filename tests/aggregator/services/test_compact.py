"""A K = 4,000 GRR mechanism through the service: published, downloaded (JSON and msgpack), verified, used.

Its document is format 3 (GRR by its two values, :mod:`rldp.shared.document.forms`): ~100 kB where
the rows would be ~384 MB, far under the service's default body limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from rldp_live import ADMIN, SMALL_ALPHABET, in_process_app

from rldp.aggregator.design import grr_matrix
from rldp.aggregator.services import load_config
from rldp.cli import main
from rldp.client.mechanism import Mechanism
from rldp.shared.document import (
    FORMAT_3,
    build_document,
    from_json,
    from_msgpack,
    mechanism_matrix,
    read_document,
    to_msgpack,
)

A1, A2 = 4, 1_000  # K = |S|·|U| = 4,000


@pytest.fixture(scope="module")
def large_grr(tmp_path_factory) -> tuple[dict, bytes]:
    """(document, the bytes ``rldp design --method grr`` wrote) on a K = 4,000 alphabet."""
    tmp = tmp_path_factory.mktemp("k4000")
    rng = np.random.default_rng(17)
    n = 8_000  # every u at least once, so the alphabet is 4 × 1,000
    u = np.concatenate([np.arange(A2), rng.integers(0, A2, n - A2)])
    s = rng.integers(0, A1, n)
    csv = tmp / "public.csv"
    csv.write_text("s,u\n" + "".join(f"s{a},u{b}\n" for a, b in zip(s, u)))
    out = tmp / "grr.json"
    code = main(
        [
            "design",
            str(csv),
            "--sensitive",
            "s",
            "--released",
            "u",
            "--method",
            "grr",
            "--epsilon",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    data = out.read_bytes()
    return read_document(out), data


@pytest.mark.slow
def test_large_grr_publishes_downloads_verifies_and_privatises(tmp_path, large_grr):
    doc, body = large_grr
    assert doc["format"] == FORMAT_3 and doc["matrix"]["form"] == "grr" and doc["matrix"]["size"] == A1 * A2
    default_limit = load_config({})["MAX_BODY_BYTES"]
    assert len(body) < default_limit and len(to_msgpack(doc)) < default_limit
    with in_process_app(tmp_path) as app:  # the default body limit
        http = app.test_client()
        resp = http.post("/v1/mechanisms", data=body, headers={**ADMIN, "Content-Type": "application/json"})
        assert resp.status_code == 201, resp.get_json()
        url = f"/v1/mechanisms/{doc['id']}"
        as_json = http.get(url, headers={"Accept": "application/json"})
        as_msgpack = http.get(url, headers={"Accept": "application/msgpack"})
        assert as_json.status_code == as_msgpack.status_code == 200
        assert as_msgpack.headers["Content-Type"] == "application/msgpack"
    mechanisms = [
        Mechanism.from_document(from_json(as_json.data), expected_id=doc["id"]),
        Mechanism.from_document(from_msgpack(as_msgpack.data), expected_id=doc["id"]),
    ]
    q = mechanism_matrix(doc)
    n = 20_000
    x = np.random.default_rng(3).integers(0, A1 * A2, size=n)
    for mech in mechanisms:
        assert mech.id == doc["id"] and mech.audit.passed and mech.epsilon_audited <= 1.0 + 1e-9
        assert np.array_equal(mech.matrix, q)
        y = mech.privatize_indices(x, rng=np.random.default_rng(5))
        assert y.shape == (n,) and y.min() >= 0 and y.max() < A1 * A2
        # Y = X with probability d: the count is Binomial(n, d); 5 standard deviations.
        d = doc["matrix"]["diagonal"]
        assert abs(np.count_nonzero(y == x) - n * d) <= 5 * np.sqrt(n * d * (1 - d)) + 1


@pytest.mark.parametrize("form", ["palette", "dense"])
def test_binary_forms_travel_as_msgpack_and_come_back_as_json_under_one_id(tmp_path, form):
    alpha = SMALL_ALPHABET  # 2 × 3: small, forced compact
    k = alpha.size
    rng = np.random.default_rng(4)  # every entry distinct: no palette is smaller than dense
    q = np.kron(grr_matrix(2, 0.5), grr_matrix(3, 0.7)) if form == "palette" else rng.dirichlet(np.ones(k), k).T
    doc = build_document(
        method="ir",
        matrix=q,
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1.0 / k),
        privacy={"notion": "rldp", "epsilon": 5.0, "uncertainty": {"order": 2, "radius": None}},
        compact=True,
    )
    assert doc["matrix"]["form"] == form
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        resp = http.post(
            "/v1/mechanisms", data=to_msgpack(doc), headers={**ADMIN, "Content-Type": "application/msgpack"}
        )
        assert resp.status_code == 201, resp.get_json()
        as_json = http.get(f"/v1/mechanisms/{doc['id']}", headers={"Accept": "application/json"})
    back = from_json(as_json.data)
    assert back["id"] == doc["id"] and isinstance(back["matrix"][FORM_ARRAY[form]], str)  # base64 in JSON
    assert np.array_equal(Mechanism.from_document(back).matrix, q)


FORM_ARRAY = {"palette": "index", "dense": "data"}
