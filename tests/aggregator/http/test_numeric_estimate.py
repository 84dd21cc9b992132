"""The estimate of a mechanism with a numeric released attribute (issue 38) carries the number's mean,
quantiles, CDF and means per value of S with 95 % intervals, and the note on what protects it; the
operator's ``rldp estimate`` prints them."""

from __future__ import annotations

import numpy as np
import pytest
from rldp_live import ADMIN, AGE_ALPHABET, AGE_P_HAT, AGE_SPEC, READ, grr_age_document, in_process_app

from rldp.admin.output import numeric_lines

SPEC, ALPHA, P_HAT = AGE_SPEC, AGE_ALPHABET, AGE_P_HAT


def test_the_estimate_has_the_numbers_and_the_note(tmp_path) -> None:
    doc = grr_age_document()
    rng = np.random.default_rng(0)
    q = np.asarray(doc["matrix"])
    x = rng.integers(0, 8, 2000)
    reports = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1).tolist()
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports})
        assert resp.status_code == 201, resp.json
        body = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json
    age = body["numeric"]["age"]
    assert age["edges"] == [17.0, 25.0, 35.0, 50.0, 90.0] and age["spread"] == "uniform within each bin"
    mean = age["mean"]
    assert mean["ci95_low"] < mean["estimate"] < mean["ci95_high"] and 17 < mean["estimate"] < 90
    assert set(age["quantiles"]) == {"0.5", "0.9", "0.99"}
    assert set(age["mean_by"]["sex"]) == {"Female", "Male"}
    assert "age itself is protected only as far as it reveals sex" in age["note"]
    # GRR on S × U: every report's probability varies at most e^ε' over all inputs, so age is ε'-LDP too (the
    # level computed from the matrix, whatever age reveals of sex)
    from rldp.shared.audit import ldp_epsilon

    assert f"; and age itself is {ldp_epsilon(q):.4g}-LDP (" in age["note"]
    lines = numeric_lines(body)
    assert lines[0].startswith("age (values uniform within each bin)")
    assert any(line.startswith("  median ") for line in lines)
    assert any("mean | sex=Female:" in line for line in lines)
    median_m = age["quantiles_by"]["sex"]["Male"]["0.5"]
    assert f"  median | sex=Male: {median_m['estimate']:.4g} [" in "\n".join(lines)
    assert sum(" | sex=" in line for line in lines) == 2 + 2 * 3
    assert lines[-1] == "note: " + age["note"]


def test_the_client_estimate_has_a_numeric_frame(tmp_path) -> None:
    from rldp.client.estimate import Estimate as ClientEstimate

    doc = grr_age_document()
    rng = np.random.default_rng(1)
    q = np.asarray(doc["matrix"])
    x = rng.integers(0, 8, 1000)
    reports = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1).tolist()
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        assert (
            http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports}).status_code == 201
        )
        est = ClientEstimate.from_dict(http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json)
    frame = est.numeric_frame("age")
    per_s = [f"{q} | sex={s}" for s in ("Female", "Male") for q in ("median", "p90", "p99")]
    assert frame["statistic"].tolist() == [
        "mean",
        "median",
        "p90",
        "p99",
        "mean | sex=Female",
        "mean | sex=Male",
        *per_s,
    ]
    for s in ("Female", "Male"):  # the frame's row is the answer's figure
        row = frame[frame["statistic"] == f"median | sex={s}"].iloc[0]
        assert row["estimate"] == est.numeric["age"]["quantiles_by"]["sex"][s]["0.5"]["estimate"]
    assert (frame["lower"] <= frame["estimate"]).all() and (frame["estimate"] <= frame["upper"]).all()
    assert "protected only as far as it reveals sex" in frame.attrs["note"]


def test_a_collection_estimate_has_the_numbers(tmp_path) -> None:
    doc = grr_age_document()
    rng = np.random.default_rng(2)
    q = np.asarray(doc["matrix"])
    x = rng.integers(0, 8, 1500)
    reports = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1).tolist()
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        body = {"name": "ages", "policy": {"notion": "rldp", "epsilon": 2}, "mechanism": doc["id"], "window": "none"}
        resp = http.post("/v1/collections", json=body, headers=ADMIN)
        assert resp.status_code == 201, resp.json
        resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports})
        assert resp.status_code == 201, resp.json
        one = http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json["numeric"]["age"]
        both = http.get("/v1/collections/ages/estimate", headers=READ).json["numeric"]["age"]
    # One mechanism: the collection's likelihood is the mechanism's, so are its numbers.
    assert both["mean"]["estimate"] == pytest.approx(one["mean"]["estimate"], abs=1e-6)
    assert set(both["quantiles_by"]["sex"]) == {"Female", "Male"} and "reveals sex" in both["note"]


def test_the_numbers_ldp_level_is_computed_once_per_mechanism(tmp_path, monkeypatch) -> None:
    """The note's LDP level is a pass over the whole report matrix: the catalog computes it once per mechanism,
    not on every estimate request."""
    from rldp.aggregator.services import mechanisms

    calls = []
    real = mechanisms.ldp_epsilon
    monkeypatch.setattr(mechanisms, "ldp_epsilon", lambda q: calls.append(1) or real(q))
    doc = grr_age_document()
    reports = np.random.default_rng(3).integers(0, 8, 500).tolist()
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        assert (
            http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports}).status_code == 201
        )
        notes = [
            http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ).json["numeric"]["age"]["note"]
            for _ in range(3)
        ]
    assert len(calls) == 1 and len(set(notes)) == 1 and "-LDP (" in notes[0]
