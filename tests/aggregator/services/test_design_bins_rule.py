"""A service design job with ``task: distribution|mean`` and a numeric U without bins chooses U's bins by the
same rule as ``rldp design`` (issue 38), in the job's process: the same bins and the same ``binning`` record
as the CLI on the same CSV and flags; ``planned_reports`` read from the body and validated; given bins kept.
The job's child function runs in this process (a pipe end that keeps what it is sent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rldp_live import ADMIN, design_child_result, in_process_app, run_design_job

from rldp.aggregator.services.designs import design_request
from rldp.aggregator.services.errors import InvalidParameter
from rldp.cli import main
from rldp.shared.document import from_msgpack, read_document

_RNG = np.random.default_rng(38)
_SEX = np.where(_RNG.random(2000) < 0.5, "Female", "Male")
_AGES = np.round(np.where(_SEX == "Male", 44, 36) + _RNG.normal(0, 12, 2000)).clip(17, 90).astype(int)
CSV = "sex,age\n" + "".join(f"{s},{a}\n" for s, a in zip(_SEX, _AGES, strict=True))
BODY = {"sensitive": "sex", "released": ["age"], "numeric": ["age"], "epsilon": 0.5, "method": "rr-released"}
FLAGS = ["--sensitive", "sex", "--released", "age", "--numeric", "age", "--epsilon", "0.5", "--method", "rr-released"]


def _job(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the designed document, the job's summary)."""
    payload, summary = design_request({**BODY, "csv": CSV, **body})
    status, data = design_child_result(payload)
    assert status == "ok", data
    return from_msgpack(data), summary


def _cli(tmp_path: Path, *flags: str) -> dict[str, Any]:
    (tmp_path / "p.csv").write_text(CSV)
    out = tmp_path / "m.json"
    assert main(["design", str(tmp_path / "p.csv"), *FLAGS, "--out", str(out), *flags]) == 0
    return read_document(out)


@pytest.mark.parametrize(("task", "planned"), [("distribution", None), ("mean", 3000)])
def test_the_job_chooses_the_bins_as_rldp_design_does(tmp_path: Path, task: str, planned: int | None) -> None:
    extra = {} if planned is None else {"planned_reports": planned}
    doc, summary = _job({"task": task, **extra})
    flags = ["--task", task] + ([] if planned is None else ["--planned-reports", str(planned)])
    cli = _cli(tmp_path, *flags)
    assert doc["binning"] == cli["binning"] and doc["binning"]["planned_reports"] == (planned or 10_000)
    assert doc["released"] == cli["released"] and doc["sensitive"] == cli["sensitive"]
    assert len(doc["released"][0]["values"]) == doc["binning"]["bins"]
    assert np.allclose(doc["public_distribution"], cli["public_distribution"])
    # the provenance's counts are over the chosen bins (only the public data's name differs)
    assert {**doc["provenance"], "name": "p.csv"} == cli["provenance"]
    assert (
        summary["bins"].startswith("age: chosen in the design job by the rule")
        and f"{planned or 10_000:,} planned" in summary["bins"]
    )


def test_fewer_planned_reports_no_more_bins() -> None:
    few, _ = _job({"task": "distribution", "planned_reports": 30})
    many, _ = _job({"task": "distribution", "planned_reports": 1_000_000})
    assert few["binning"]["bins"] < many["binning"]["bins"]


@pytest.mark.parametrize(
    "body",
    [
        {"task": "distribution", "numeric": {"age": {"bins": 8}}},
        {"task": "mean", "numeric": {"age": {"edges": [17, 40, 90]}}},
        {"task": "joint"},
    ],
)
def test_no_rule_when_the_bins_are_given_or_the_task_is_joint(body: dict[str, Any]) -> None:
    payload, summary = design_request({**BODY, "csv": CSV, **body})
    assert "rule_table" not in payload and "bins" not in summary
    doc, _ = _job(body)
    assert "binning" not in doc
    if "bins" in body.get("numeric", {}).get("age", {}):
        assert len(doc["released"][0]["values"]) == 8


@pytest.fixture
def app(tmp_path: Path) -> Any:
    with in_process_app(tmp_path) as app:
        yield app


def test_through_http_the_jobs_params_say_the_rule_and_the_mechanism_records_it(http: Any) -> None:
    status = run_design_job(http, {**BODY, "csv": CSV, "task": "distribution", "planned_reports": 2000})
    assert status["status"] == "done", status
    assert (
        "chosen in the design job by the rule" in status["params"]["bins"]
        and "2,000 planned reports" in status["params"]["bins"]
    )
    doc = http.get(f"/v1/mechanisms/{status['mechanism']}", headers=ADMIN).json
    assert doc["binning"]["planned_reports"] == 2000
    assert len(doc["released"][0]["values"]) == doc["binning"]["bins"]


@pytest.mark.parametrize("bad", [0, -1, 2.5, "x", True])
def test_a_bad_planned_reports_is_a_422_naming_it(http: Any, bad: object) -> None:
    with pytest.raises(InvalidParameter, match="planned_reports must be an integer") as info:
        design_request({**BODY, "csv": CSV, "task": "distribution", "planned_reports": bad})
    assert info.value.fields["parameter"] == "planned_reports"
    body = {**BODY, "csv": CSV, "task": "distribution", "planned_reports": bad}
    resp = http.post("/v1/designs", json=body, headers=ADMIN)
    assert resp.status_code == 422 and resp.json["parameter"] == "planned_reports", resp.json
    assert "planned_reports must be an integer" in resp.json["detail"]
