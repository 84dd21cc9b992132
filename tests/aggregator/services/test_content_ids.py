"""Equal designs get equal ids: run-dependent facts (timings) live in the unhashed ``run`` field."""

from __future__ import annotations

import json
import time

import pytest
from rldp_live import ADMIN, in_process_app, make_document

from rldp.shared.document import alphabet, build_document, content_id, validate_document
from rldp.shared.errors import DocumentError

CSV = "sex,colour\n" + "\n".join(["Female,red"] * 30 + ["Male,red"] * 40 + ["Male,blue"] * 30) + "\n"
DESIGN = {"csv": CSV, "sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "srr", "beta": 0.05}


def _finished(http, job: dict) -> dict:
    deadline = time.monotonic() + 120
    while True:
        status = http.get(job["status_url"], headers=ADMIN).json
        if status["status"] in ("done", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.1)


@pytest.mark.slow
def test_the_same_design_twice_is_one_mechanism(tmp_path):
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        first = _finished(http, http.post("/v1/designs", json=DESIGN, headers=ADMIN).json)
        second = _finished(http, http.post("/v1/designs", json=DESIGN, headers=ADMIN).json)
        assert first["status"] == second["status"] == "done", (first, second)
        assert first["mechanism"] == second["mechanism"]
        listed = http.get("/v1/mechanisms", headers=ADMIN).json
        assert len(listed["mechanisms"]) == 1, listed
        doc = http.get(f"/v1/mechanisms/{first['mechanism']}").json
        assert doc["run"]["seconds"] >= 0 and "seconds" not in doc["design"]
        assert "seconds" not in json.dumps(doc["parameters"])


def test_run_is_not_hashed_and_older_documents_keep_their_ids():
    doc = make_document("ids")
    timed = {**doc, "run": {"seconds": 1.5}}
    assert content_id(timed) == doc["id"]
    assert validate_document(timed)["run"] == {"seconds": 1.5}
    # a document written before ``run`` existed, with its timing in a hashed field
    old = build_document(
        method=doc["method"],
        matrix=doc["matrix"],
        alphabet=alphabet(doc),
        public_distribution=doc["public_distribution"],
        privacy=doc["privacy"],
        extra={"design": {"seconds": 0.25, "software": "rldp 0.1"}},
    )
    assert validate_document(old)["id"] == old["id"] == content_id(old)
    assert content_id({**old, "design": {"seconds": 0.5, "software": "rldp 0.1"}}) != old["id"]


def test_run_must_be_an_object():
    doc = make_document("run-type")
    with pytest.raises(DocumentError, match="run must be an object"):
        validate_document({**doc, "run": 3})
