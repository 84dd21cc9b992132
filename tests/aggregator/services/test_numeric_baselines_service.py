"""The LDP baselines for numbers through the service (issue 38): a design job for ``square-wave`` or
``piecewise`` over a numeric U gives an audited document; over a categorical U its error says what is
expected. The job's child function runs in this process (a pipe end that keeps what it is sent)."""

from __future__ import annotations

from typing import Any

import pytest
from rldp_live import design_child_result

from rldp.aggregator.services.designs import design_request
from rldp.shared.audit import audit_document
from rldp.shared.document import from_msgpack

CSV = "sex,age,race\n" + "".join(
    f"{'Female' if i % 3 else 'Male'},{17 + (i * 7) % 70},{'ab'[i % 2]}\n" for i in range(300)
)


def _job(body: dict[str, Any]) -> tuple[str, Any]:
    payload, _ = design_request({"sensitive": "sex", "epsilon": 1.0, "csv": CSV, **body})
    return design_child_result(payload)


@pytest.mark.parametrize("method", ["square-wave", "piecewise"])
def test_a_design_job_publishes_an_audited_baseline(method: str) -> None:
    status, data = _job({"released": ["age"], "numeric": {"age": {"bins": 5}}, "method": method})
    assert status == "ok", data
    doc = from_msgpack(data)
    assert doc["method"] == method and audit_document(doc).passed
    assert doc["parameters"]["buckets"] == 5 and doc["parameters"]["epsilon_on_u"] <= 1.0 + 1e-12


def test_a_categorical_u_is_refused_naming_it() -> None:
    status, message = _job({"released": ["race"], "method": "square-wave"})  # race: text values, categorical
    assert status == "error"
    assert "'square-wave' needs a numeric released attribute" in message and "'race' is categorical" in message
    assert "for categories use rr-released or grr" in message  # advice that works: both design a categorical U
