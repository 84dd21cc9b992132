"""Issue 35 D18: a mechanism belongs to one collection at most, even when two requests take it at once.

The check runs inside the write transaction and a unique index backs it, on both backends: of two
concurrent rotations (or creations) that put one mechanism in two collections, exactly one wins and the
other gets MechanismTaken (the service's 422 rotation-refused), with nothing changed. Threads meet at a
barrier before each call; nothing depends on timing.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from rldp_live import ADMIN, in_process_app, make_document

from rldp.aggregator.storage import MechanismTaken, StorageError, open_storage

POLICY = {"notion": "rldp", "epsilon": 1.0}
ROUNDS = 10


@pytest.fixture
def store(backend, databases):
    s = open_storage(databases.url(backend))
    yield s
    s.close()


def _race(calls) -> list[str]:
    """Run each call in its own thread, all released together; "won" or "taken" per call, in order."""
    barrier = threading.Barrier(len(calls))
    outcomes = [""] * len(calls)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            calls[i]()
            outcomes[i] = "won"
        except MechanismTaken:
            outcomes[i] = "taken"
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return outcomes


def test_concurrent_rotations_to_one_mechanism_leave_it_in_one_collection(store):
    for r in range(ROUNDS):
        shared = f"{r:02d}" + "e" * 62
        names = [f"rot-{r}-a", f"rot-{r}-b"]
        firsts = [f"{r:02d}" + c * 62 for c in "ab"]
        for name, first in zip(names, firsts, strict=True):
            store.create_collection(name, "", POLICY, None, first)
        outcomes = _race([lambda n=n, f=f, m=shared: store.rotate_collection(n, m, f) for n, f in zip(names, firsts)])
        assert sorted(outcomes) == ["taken", "won"], (r, outcomes)
        owners = store.collections_of(shared)
        assert owners == [names[outcomes.index("won")]], (r, owners)
        loser = store.get_collection(names[outcomes.index("taken")])
        assert [e.mechanism for e in loser.mechanisms] == [firsts[outcomes.index("taken")]]  # nothing changed


def test_concurrent_creations_with_one_mechanism_leave_it_in_one_collection(store):
    for r in range(ROUNDS):
        shared = f"{r:02d}" + "f" * 62
        names = [f"new-{r}-a", f"new-{r}-b"]
        outcomes = _race([lambda n=n, m=shared: store.create_collection(n, "", POLICY, None, m) for n in names])
        assert sorted(outcomes) == ["taken", "won"], (r, outcomes)
        assert store.collections_of(shared) == [names[outcomes.index("won")]]
        assert store.get_collection(names[outcomes.index("taken")]) is None  # nothing stored


def test_the_same_creation_again_is_still_idempotent(store):
    created, first = store.create_collection("same", "", POLICY, None, "1" * 64)
    again, second = store.create_collection("same", "", POLICY, None, "1" * 64)
    assert created and not again and first == second
    with pytest.raises(MechanismTaken, match="collection 'same'"):
        store.create_collection("other", "", POLICY, None, "1" * 64)
    store.create_collection("third", "", POLICY, None, "2" * 64)
    with pytest.raises(MechanismTaken, match="collection 'same'"):
        store.rotate_collection("third", "1" * 64, "2" * 64)
    assert store.get_collection("third").current == "2" * 64


def test_a_store_left_with_a_mechanism_in_two_collections_is_refused_clearly(backend, databases):
    url = databases.url(backend)
    store = open_storage(url)
    try:
        store.create_collection("a", "", POLICY, None, "3" * 64)
        store.create_collection("b", "", POLICY, None, "4" * 64)
        with store.write_transaction() as conn:  # what an older rldp's race could leave
            conn.execute("DROP INDEX rldp_collection_mechanism_once")
            conn.execute("UPDATE rldp_collection_mechanisms SET mechanism = '" + "3" * 64 + "' WHERE collection = 'b'")
    finally:
        store.close()
    with pytest.raises(StorageError, match=f"mechanism {'3' * 64} is in 2 collection entries"):
        open_storage(url).close()


def test_the_service_refuses_the_loser_of_the_race_as_a_problem(tmp_path, monkeypatch):
    """The service's own check ran before the write (and saw nothing): the write's check refuses, 422."""
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        mids = []
        for _ in range(3):
            doc = make_document(uuid.uuid4().hex, window="P1D")
            assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
            mids.append(doc["id"])
        body = {"policy": POLICY, "description": ""}
        assert (
            http.post("/v1/collections", json={**body, "name": "x", "mechanism": mids[0]}, headers=ADMIN).status_code
            == 201
        )
        assert (
            http.post("/v1/collections", json={**body, "name": "y", "mechanism": mids[1]}, headers=ADMIN).status_code
            == 201
        )
        monkeypatch.setattr(app.extensions["rldp"].storage, "collections_of", lambda mechanism: [])  # a stale read
        for resp in (
            http.post("/v1/collections", json={**body, "name": "z", "mechanism": mids[0]}, headers=ADMIN),
            http.post("/v1/collections/y/rotate", json={"mechanism": mids[0]}, headers=ADMIN),
        ):
            assert resp.status_code == 422 and resp.json["reason"] == "rotation-refused", resp.json
            assert f"mechanism {mids[0]} already belongs to collection 'x'" in resp.json["detail"]
        monkeypatch.undo()
        assert app.extensions["rldp"].storage.collections_of(mids[0]) == ["x"]
        assert http.get("/v1/collections/z", headers=ADMIN).status_code == 404
