"""Collections: storage on both backends, the service's refusals, the HTTP API (create, list, get, rotate,
retire, estimate over every mechanism)."""

from __future__ import annotations

import threading
import time
import uuid

import numpy as np
import pytest
from rldp_live import ADMIN, READ, SMALL_ALPHABET, in_process_app, make_document

from rldp.aggregator.design import grr_matrix
from rldp.aggregator.storage import SCHEMA_VERSION, CollectionChanged, open_storage
from rldp.aggregator.storage.schema import schema_statements
from rldp.shared.collection import DEFAULT_WINDOW, Window
from rldp.shared.document import build_document
from rldp.shared.records import Alphabet, Attribute

POLICY = {"notion": "rldp", "epsilon": 1.0}
M1, M2, M3 = "a" * 64, "b" * 64, "c" * 64


@pytest.fixture
def store(backend, databases):
    s = open_storage(databases.url(backend))
    yield s
    s.close()


# -- storage


def test_storage_creates_rotates_and_retires_a_collection(store):
    created, rec = store.create_collection("app-usage", "daily use", POLICY, "P1D", M1)
    assert created and rec.current == M1 and rec.status == "active" and rec.window == "P1D"
    assert rec.policy == POLICY and rec.mechanisms[0].until is None
    again, same = store.create_collection("app-usage", "other", POLICY, None, M2)
    assert not again and same.description == "daily use" and same.current == M1
    rotated = store.rotate_collection("app-usage", M2, M1)
    assert rotated.current == M2 and [e.mechanism for e in rotated.mechanisms] == [M1, M2]
    assert rotated.mechanisms[0].until is not None and rotated.mechanisms[1].until is None
    with pytest.raises(CollectionChanged):  # checked against M1, but M2 is current now: nothing changes
        store.rotate_collection("app-usage", M3, M1)
    assert store.get_collection("app-usage").current == M2
    assert store.collections_of(M1) == ["app-usage"] and store.collections_of(M3) == []
    assert store.rotate_collection("nope", M3, M1) is None and store.get_collection("nope") is None
    retired = store.retire_collection("app-usage")
    assert retired.status == "retired" and retired.retired is not None
    assert store.retire_collection("app-usage").retired == retired.retired  # idempotent
    with pytest.raises(CollectionChanged):
        store.rotate_collection("app-usage", M3, M2)
    store.create_collection("b-second", "", POLICY, None, M3)
    assert [c.name for c in store.list_collections()] == ["app-usage", "b-second"]


def test_concurrent_rotations_append_one_mechanism_each_time(store):
    store.create_collection("race", "", POLICY, None, M1)
    outcomes: list[str] = []

    def rotate(mid: str) -> None:
        try:
            store.rotate_collection("race", mid, M1)
            outcomes.append("rotated")
        except CollectionChanged:
            outcomes.append("changed")

    threads = [threading.Thread(target=rotate, args=(m,)) for m in (M2, M3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["changed", "rotated"]
    rec = store.get_collection("race")
    assert len(rec.mechanisms) == 2 and sum(e.until is None for e in rec.mechanisms) == 1


def version_4_statements(blob_type: str) -> list[str]:
    """Today's tables without the mechanisms' ``label`` (schema version 5)."""
    return [s.replace(", label TEXT)", ")") for s in schema_statements(blob_type)]


def test_a_store_of_schema_3_gains_the_collections_when_opened(backend, databases):
    url = databases.url(backend)
    old = open_storage(url, init=False)
    with old.write_transaction() as conn:  # a version-3 store: every table but the collections' (and no labels)
        for stmt in version_4_statements(old.blob_type):
            if "collection" not in stmt:
                conn.execute(stmt)
        conn.execute(old._sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", "3"))
    old.close()
    store = open_storage(url)  # migrates 3 → 4 → 5
    try:
        assert SCHEMA_VERSION == "5"
        with store.write_transaction() as conn:
            assert conn.execute("SELECT value FROM rldp_meta WHERE key = 'schema'").fetchone()[0] == "5"
        assert store.create_collection("x", "", POLICY, None, M1)[0]
    finally:
        store.close()


# -- HTTP and the service


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def publish(http, **kwargs) -> str:
    """Publish a small GRR document; it collects by day like a default design (``window=None``: without)."""
    kwargs.setdefault("window", DEFAULT_WINDOW)
    doc = make_document(**kwargs)
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 201, resp.json
    return doc["id"]


def refused(resp, status: int, reason: str) -> str:
    assert resp.status_code == status, (resp.status_code, resp.json)
    assert resp.json["reason"] == reason
    return resp.json["detail"]


def create(http, name: str, mechanism: str, **extra):
    body = {"name": name, "description": "app usage", "policy": POLICY, "mechanism": mechanism, **extra}
    return http.post("/v1/collections", json=body, headers=ADMIN)


def test_create_get_list_rotate_retire_over_http(http):
    m1, m2 = publish(http), publish(http)
    resp = create(http, "app-usage", m1)
    assert resp.status_code == 201 and resp.headers["Location"] == "/v1/collections/app-usage"
    assert resp.json["current"] == m1 and resp.json["status"] == "active" and resp.json["window"] == "P1D"
    assert create(http, "app-usage", m1).status_code == 200  # the same collection again: unchanged
    refused(create(http, "app-usage", m2), 409, "collection-exists")
    got = http.get("/v1/collections/app-usage")  # public: apps follow it
    assert got.status_code == 200 and got.json["current"] == m1
    rotated = http.post("/v1/collections/app-usage/rotate", json={"mechanism": m2}, headers=ADMIN)
    assert rotated.status_code == 200, rotated.json
    body = http.get("/v1/collections/app-usage").json
    assert body["current"] == m2
    assert [(e["mechanism"], e["current"]) for e in body["mechanisms"]] == [(m1, False), (m2, True)]
    assert body["mechanisms"][0]["until"] is not None
    assert [c["name"] for c in http.get("/v1/collections").json["collections"]] == ["app-usage"]
    retired = http.post("/v1/collections/app-usage/retire", headers=ADMIN)
    assert retired.status_code == 200 and retired.json["status"] == "retired"
    refused(
        http.post("/v1/collections/app-usage/rotate", json={"mechanism": publish(http)}, headers=ADMIN),
        409,
        "collection-retired",
    )


def test_admin_calls_need_the_admin_token(http):
    m1 = publish(http)
    refused(http.post("/v1/collections", json={"name": "x", "policy": POLICY, "mechanism": m1}), 401, "unauthorized")
    create(http, "x", m1)
    refused(http.post("/v1/collections/x/rotate", json={"mechanism": m1}, headers=READ), 401, "unauthorized")
    refused(http.post("/v1/collections/x/retire"), 401, "unauthorized")
    refused(http.get("/v1/collections/x/estimate"), 401, "unauthorized")


def test_refusals_name_what_is_wrong(http):
    m1 = publish(http)
    refused(http.get("/v1/collections/nope"), 404, "unknown-collection")
    refused(http.get("/v1/collections/Bad%20Name"), 404, "unknown-collection")
    assert "name must be" in refused(create(http, "Bad Name", m1), 422, "invalid-parameter")
    refused(http.post("/v1/collections", json={"name": "x", "mechanism": m1}, headers=ADMIN), 422, "missing-field")
    for policy, words in [
        ({"notion": "nope", "epsilon": 1}, "policy.notion must be one of"),
        ({"notion": "rldp"}, "policy.epsilon is required"),
        ({"notion": "rldp", "epsilon": -1}, "policy.epsilon must be in (0, inf)"),
        ({"notion": "rldp", "epsilon": 1, "delta": 0.1}, "unknown field 'delta'"),
        ({"notion": "distp", "epsilon": 1}, "policy.delta is required"),
    ]:
        body = {"name": "x", "policy": policy, "mechanism": m1}
        assert words in refused(http.post("/v1/collections", json=body, headers=ADMIN), 422, "invalid-parameter")
    refused(create(http, "x", "f" * 64), 404, "unknown-mechanism")
    loud = publish(http, epsilon=2.0)  # claims ε = 2 under a policy of ε ≤ 1
    assert "claims epsilon = 2 > 1" in refused(create(http, "x", loud), 422, "claim-policy-violated")
    ldp_policy = {"name": "x", "policy": {"notion": "ldp", "epsilon": 5}, "mechanism": m1}
    assert "notion is 'rldp'" in refused(
        http.post("/v1/collections", json=ldp_policy, headers=ADMIN), 422, "claim-policy-violated"
    )
    # Windows by default: a collection collects by its mechanism's window, and one without is asked for.
    windowless = publish(http, window=None)
    said = refused(create(http, "x", windowless), 422, "rotation-refused")
    assert "collects without windows" in said and "--window P1D" in said and "'none'" in said
    assert "collects without windows" in refused(create(http, "x", windowless, window="P1D"), 422, "rotation-refused")
    assert "collects by P1D" in refused(create(http, "x", m1, window="none"), 422, "rotation-refused")
    assert "or 'none' for no windows" in refused(create(http, "x", m1, window="1 day"), 422, "invalid-parameter")
    assert create(http, "nw", windowless, window="none").json["window"] is None
    assert create(http, "w", publish(http)).json["window"] == "P1D"  # the window is the mechanism's by default
    assert create(http, "x", m1).status_code == 201
    assert "already belongs to collection 'x'" in refused(create(http, "y", m1), 422, "rotation-refused")
    rotate = lambda mid: http.post("/v1/collections/x/rotate", json={"mechanism": mid}, headers=ADMIN)  # noqa: E731
    assert "its current one" in refused(rotate(m1), 422, "rotation-refused")
    assert "claims epsilon" in refused(rotate(loud), 422, "claim-policy-violated")
    assert "collects without windows" in refused(rotate(publish(http, window=None)), 422, "rotation-refused")
    other = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("size", ("s", "m", "l", "xl"))])
    assert "over another X" in refused(rotate(publish(http, alphabet=other)), 422, "rotation-refused")
    old = publish(http)
    http.post(f"/v1/mechanisms/{old}/retire", headers=ADMIN)
    refused(rotate(old), 409, "mechanism-retired")
    refused(http.post("/v1/collections/x/rotate", json=["no"], headers=ADMIN), 422, "wrong-type")
    assert http.get("/v1/collections/x").json["current"] == m1  # nothing refused changed it


def _send(http, mid: str, ys: np.ndarray) -> None:
    label = Window.parse(DEFAULT_WINDOW).label_at(time.time())  # the mechanisms collect by day
    body = {"mechanism": mid, "batch": uuid.uuid4().hex, "reports": ys.tolist(), "window": label}
    assert http.post("/v1/reports", json=body).status_code == 201


def test_the_estimate_combines_every_mechanism_of_the_collection(http, app):
    m1, m2 = publish(http, epsilon=0.5), publish(http, epsilon=1.0)
    create(http, "est", m1)
    refused(http.get("/v1/collections/est/estimate", headers=READ), 409, "no-reports")
    rng = np.random.default_rng(7)
    truth = np.array([0.3, 0.1, 0.1, 0.2, 0.25, 0.05])
    catalog = app.extensions["rldp"].catalog
    for mid, n in ((m1, 4000), (m2, 6000)):
        q = catalog.parsed(mid)[0]
        x = rng.choice(6, size=n, p=truth)
        ys = (rng.random(n) > np.cumsum(q[:, x], axis=0)).sum(axis=0)  # y ~ Q(·|x) by inverse CDF
        _send(http, mid, ys)
        if mid == m1:
            http.post("/v1/collections/est/rotate", json={"mechanism": m2}, headers=ADMIN)
    est = http.get("/v1/collections/est/estimate", headers=READ)
    assert est.status_code == 200, est.json
    body = est.json
    assert body["collection"] == "est" and body["n"] == 10_000
    assert [(m["mechanism"], m["reports"], m["current"]) for m in body["mechanisms"]] == [
        (m1, 4000, False),
        (m2, 6000, True),
    ]
    joint = np.array(body["joint"]).reshape(-1)
    low, high = np.array(body["ci95"]["low"]).reshape(-1), np.array(body["ci95"]["high"]).reshape(-1)
    assert np.all(low <= joint) and np.all(joint <= high)
    # Combined intervals are narrower than either mechanism's alone (the information adds up).
    for mid in (m1, m2):
        alone = http.get(f"/v1/mechanisms/{mid}/estimate", headers=READ).json
        width = np.array(alone["ci95"]["high"]) - np.array(alone["ci95"]["low"])
        assert np.all(high - low <= width.reshape(-1) + 1e-12)
    sd = (high - low) / (2 * 1.96)
    assert np.all(np.abs(joint - truth) <= 4.5 * sd + 1e-9), (joint, truth)


def _ldp_document(tag: str, uncertainty: bool) -> dict:
    privacy = {"notion": "ldp", "epsilon": 1.0}
    if uncertainty:  # ε-LDP with respect to S over F: weaker than with respect to X for every distribution
        privacy["uncertainty"] = {"order": 2, "radius": 0.1}
    return build_document(
        method="grr",
        matrix=grr_matrix(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=np.full(SMALL_ALPHABET.shape, 1.0 / SMALL_ALPHABET.size),
        privacy=privacy,
        extra={"test": tag},
    )


def test_an_ldp_collection_on_x_does_not_rotate_to_ldp_on_s(http):
    docs = [_ldp_document(uuid.uuid4().hex, u) for u in (False, True, False)]
    for doc in docs:
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201, doc
    body = {"name": "ldp", "policy": {"notion": "ldp", "epsilon": 1}, "mechanism": docs[0]["id"], "window": "none"}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    rotate = lambda mid: http.post("/v1/collections/ldp/rotate", json={"mechanism": mid}, headers=ADMIN)  # noqa: E731
    assert "with respect to S over an uncertainty set" in refused(rotate(docs[1]["id"]), 422, "rotation-refused")
    assert rotate(docs[2]["id"]).status_code == 200
