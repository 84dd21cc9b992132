"""/readyz reports a store that cannot take writes (a full disk), not only one that does not answer."""

from __future__ import annotations

import os

from rldp_live import ADMIN, in_process_app, make_document

from rldp.aggregator.storage import sqlite as sqlite_storage

_STATVFS = os.statvfs


def _full_disk(path: str) -> os.statvfs_result:
    real = _STATVFS(path)
    fields = list(real)
    fields[4] = 3  # f_bavail: three blocks left
    return os.statvfs_result(fields)


def test_readyz_reports_a_full_disk(tmp_path, monkeypatch):
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.get("/readyz").status_code == 200
        monkeypatch.setattr(sqlite_storage.os, "statvfs", _full_disk)
        resp = http.get("/readyz")
        assert resp.status_code == 503, resp.json
        assert resp.json["reason"] == "store-full" and "is full" in resp.json["detail"], resp.json
        assert resp.json["title"] == "Store full"
        monkeypatch.undo()
        assert http.get("/readyz").status_code == 200


def test_readyz_reports_uploads_that_fail_to_commit(tmp_path):
    """A database that refuses writes ("database or disk is full", here by SQLite's page limit)
    answers uploads 503 — and /readyz 503 too, until an upload succeeds again."""
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        doc = make_document()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        assert http.post("/v1/reports", json={**doc_batch(doc["id"]), "batch": "first"}).status_code == 201
        storage = app.extensions["rldp"].storage
        for conn in storage._all:  # every connection, the group committer's too: the "disk" is full
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count={pages}")
        for k in range(2000):  # the pages left fill up within a few dozen batches
            upload = http.post("/v1/reports", json={**doc_batch(doc["id"]), "batch": f"fill-{k}"})
            if upload.status_code != 201:
                break
        assert upload.status_code == 503 and upload.json["reason"] == "store-full", upload.json
        assert upload.json["title"] == "Store full" and "no space left" in upload.json["detail"]
        ready = http.get("/readyz")
        assert ready.status_code == 503 and "the last upload failed" in ready.json["detail"], ready.json
        for conn in storage._all:
            conn.execute("PRAGMA max_page_count=1073741823")
        assert http.post("/v1/reports", json={**doc_batch(doc["id"]), "batch": "after"}).status_code == 201
        assert http.get("/readyz").status_code == 200


def doc_batch(mechanism: str) -> dict:
    return {"mechanism": mechanism, "batch": "b", "reports": [1, 2, 3]}
