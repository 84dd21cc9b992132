"""The service's public-data check (PUBLIC_DATA): a published document's P̂, n, radius and counts hash
must match the public data the service was given, and its provenance must agree with itself."""

from __future__ import annotations

import pytest
from provenance.attacks import adult_counts, designed, inflated, shifted
from rldp_live import (
    ADMIN,
    ADMIN_TOKEN,
    LiveServer,
    assert_problem,
    make_document,
    run_design_job,
)

from rldp.aggregator.http import create_app
from rldp.aggregator.services import ConfigError, load_config
from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import build_document
from rldp.shared.tables import Table, read_csv


@pytest.fixture(scope="module")
def adult(adult_csv):
    return read_csv(adult_csv)


@pytest.fixture(scope="module")
def documents(adult):
    counts = adult_counts(adult)
    return {"honest": designed(counts), "inflated": designed(inflated(counts)), "shifted": designed(shifted(counts))}


def _app(tmp_path, **config):
    return create_app({"DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3", "ADMIN_TOKEN": ADMIN_TOKEN, **config})


@pytest.fixture
def checked(tmp_path, adult_csv):
    """An app that checks every published document against adult.csv (given as RLDP_PUBLIC_DATA would)."""
    app = _app(tmp_path, PUBLIC_DATA=str(adult_csv))
    yield app
    app.extensions["rldp"].storage.close()


def _problem(resp, reason: str) -> dict:
    assert resp.status_code == 422, (resp.status_code, resp.data[:500])
    assert resp.mimetype == "application/problem+json"
    body = resp.json
    assert body["type"] == f"https://rldp.dev/problems/{reason}" and body["detail"]
    return body


@pytest.mark.slow
def test_the_honest_design_is_published(checked, documents):
    resp = checked.test_client().post("/v1/mechanisms", json=documents["honest"], headers=ADMIN)
    assert resp.status_code == 201, resp.json


@pytest.mark.slow
@pytest.mark.parametrize(
    "attack, needles",
    [
        ("inflated", ["adult.csv: n: the document says 325610", "the data has 32561", "radius: the document's"]),
        ("shifted", ["public_distribution[Female|White]: the document says", "the data gives 0.26541"]),
    ],
)
def test_a_misstated_p_hat_is_refused(checked, documents, attack, needles):
    resp = checked.test_client().post("/v1/mechanisms", json=documents[attack], headers=ADMIN)
    body = _problem(resp, "public-data-mismatch")
    for needle in needles + ["counts_sha256", "PUBLIC_DATA"]:
        assert needle in body["detail"], body["detail"]
    assert body["public_data"] == ["adult.csv"] and "\n" not in body["detail"]
    assert checked.extensions["rldp"].storage.get_mechanism(documents[attack]["id"]) is None
    metrics = checked.test_client().get("/metrics").get_data(as_text=True)
    assert 'rldp_rejections_total{reason="public-data-mismatch"} 1.0' in metrics


@pytest.mark.slow
def test_without_public_data_the_service_cannot_tell(tmp_path, documents):
    app = _app(tmp_path)
    try:
        for doc in documents.values():  # each passes its own audit and agrees with its own provenance
            assert app.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    finally:
        app.extensions["rldp"].storage.close()


@pytest.mark.slow
def test_a_provenance_that_contradicts_its_document_is_refused_anyway(tmp_path, documents):
    honest = documents["honest"]
    forged = build_document(
        method=honest["method"],
        matrix=honest["matrix"],
        alphabet=doc_alphabet(honest),
        public_distribution=honest["public_distribution"],
        privacy=honest["privacy"],
        extra={"provenance": {**honest["provenance"], "counts_sha256": "0" * 64}},
    )
    app = _app(tmp_path)
    try:
        body = _problem(app.test_client().post("/v1/mechanisms", json=forged, headers=ADMIN), "public-data-mismatch")
        assert "contradicts its own" in body["detail"] and "counts_sha256" in body["detail"]
    finally:
        app.extensions["rldp"].storage.close()


@pytest.mark.slow
def test_a_document_over_other_columns_is_refused_naming_them(checked):
    doc = make_document()  # sex × colour: adult.csv has no 'colour'
    body = _problem(checked.test_client().post("/v1/mechanisms", json=doc, headers=ADMIN), "public-data-mismatch")
    assert "no column 'colour'" in body["detail"]


@pytest.mark.slow
def test_several_public_tables_by_name(tmp_path, adult, documents):
    colours = Table.from_rows(("sex", "colour"), [("Female", "red"), ("Male", "blue")])
    app = _app(tmp_path, PUBLIC_DATA={"adult.csv": adult, "colours": colours})
    try:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=documents["honest"], headers=ADMIN).status_code == 201
        body = _problem(http.post("/v1/mechanisms", json=documents["inflated"], headers=ADMIN), "public-data-mismatch")
        assert body["public_data"] == ["adult.csv"]  # the table its provenance names, only
        # A document without provenance is compared with every table; it must match one of them.
        body = _problem(http.post("/v1/mechanisms", json=make_document(), headers=ADMIN), "public-data-mismatch")
        assert body["public_data"] == ["adult.csv", "colours"] and "colours: public_distribution" in body["detail"]
    finally:
        app.extensions["rldp"].storage.close()


@pytest.mark.slow
def test_public_data_configuration(tmp_path, adult_csv):
    config = load_config({}, environ={"RLDP_PUBLIC_DATA": f"adult={adult_csv}, {adult_csv}"})
    assert sorted(config["PUBLIC_DATA"]) == ["adult", "adult.csv"]
    assert config["PUBLIC_DATA"]["adult"].n_rows == 32561
    assert load_config({}, environ={})["PUBLIC_DATA"] == {}
    for value, message in [
        (str(tmp_path / "missing.csv"), "RLDP_PUBLIC_DATA.*missing.csv: no such file"),
        (f"{adult_csv},{adult_csv}", "names 'adult.csv' twice"),
        ("adult=", "NAME=PATH"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_config({}, environ={"RLDP_PUBLIC_DATA": value})


@pytest.mark.slow
def test_openapi_documents_the_check(checked):
    spec = checked.test_client().get("/openapi.json").json
    publish = spec["paths"]["/v1/mechanisms"]["post"]
    assert "public-data-mismatch" in publish["responses"]["422"]["description"]
    assert "RLDP_PUBLIC_DATA" in publish["description"]
    assert "provenance" in spec["components"]["schemas"]["MechanismDocument"]["properties"]


# -- design jobs


@pytest.mark.slow
def test_design_jobs_record_provenance_and_are_checked(tmp_path):
    rows = ["Female,red"] * 30 + ["Male,red"] * 40 + ["Male,blue"] * 30
    csv = "sex,colour\n" + "\n".join(rows) + "\n"
    path = tmp_path / "colours.csv"
    path.write_text(csv)
    app = _app(tmp_path, PUBLIC_DATA=f"colours={path}")
    try:
        http = app.test_client()
        request = {"csv": csv, "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "srr"}
        status = run_design_job(http, {**request, "public_name": "colours"})
        assert status["status"] == "done", status
        doc = http.get(f"/v1/mechanisms/{status['mechanism']}").json
        assert doc["provenance"]["name"] == "colours" and doc["provenance"]["n"] == 100
        assert status["params"]["counts_sha256"] == doc["provenance"]["counts_sha256"]
        # A design from other data than the service's public data is refused when it is published.
        other = run_design_job(http, {**request, "csv": csv.replace("Male,blue", "Male,red", 5)})
        assert other["status"] == "failed" and "refused" in other["error"], other
        assert "public_distribution" in other["error"] and "colours" in other["error"]
    finally:
        app.extensions["rldp"].storage.close()


@pytest.mark.slow
def test_bad_public_name_is_an_invalid_parameter(checked):
    body = {"csv": "sex,colour\nFemale,red\nMale,blue\n", "sensitive": "sex", "released": ["colour"]}
    resp = checked.test_client().post(
        "/v1/designs", json={**body, "epsilon": 1.0, "method": "srr", "public_name": 3}, headers=ADMIN
    )
    assert _problem(resp, "invalid-parameter")["parameter"] == "public_name"


# -- the real server


@pytest.mark.live
def test_the_live_server_reads_public_data_from_the_environment(databases, tmp_path, adult_csv, documents):
    server = LiveServer(databases.url("sqlite"), tmp_path / "logs", env={"RLDP_PUBLIC_DATA": str(adult_csv)})
    server.start()
    try:
        assert server.publish(documents["honest"]).status_code == 201
        body = assert_problem(server.publish(documents["inflated"]), 422, "public-data-mismatch")
        assert "n: the document says 325610" in body["detail"]
    finally:
        server.stop()
