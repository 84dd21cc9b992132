"""The conformance suite (conformance/cases/*.json): the Python client gives every expected result.

The same files hold the TypeScript SDK to the same results (js/test/conformance.test.mjs). Each case
is run through the client's own code path (conformance/python_client.py): documents as a download
is verified (parse, expected id, policy, audit), records through the alphabet, samplers with an
injected source, batches through the client's batch code and the server's parser. No service runs.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"
sys.path.insert(0, str(CONFORMANCE))

from python_client import (  # noqa: E402
    alias_outcome,
    batch_outcome,
    document_message,
    document_outcome,
    encode_outcome,
    public_data_outcome,
    randomiser_outcome,
    sampler_outcome,
)

from rldp.shared.document import from_json, matrix_spec, report_matrix  # noqa: E402

#: Audited values agree to this relative tolerance (the audit's own accuracy is ~1e-12).
RTOL = 1e-9


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((CONFORMANCE / "cases").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.extend((data["suite"], case) for case in data["cases"])
    return out


CASES = _cases()


def test_the_suite_is_large_and_covers_every_group():
    suites = {suite for suite, _ in CASES}
    assert len(CASES) >= 300 and suites == {
        "documents",
        "records",
        "sampling",
        "alias",
        "batches",
        "public-data",
        "randomiser",
    }
    names = {case["name"].split("/")[0] for _, case in CASES}
    for group in (
        "rldp",
        "ldp",
        "ldp-x",
        "lip",
        "alip",
        "distp",
        "srlip",
        "per-report",
        "window",
        "negative",
        "policy",
        "numeric",
        "pilot",
    ):
        assert group in names, group
    numeric = [case for _, case in CASES if "numeric/" in case["name"]]
    assert len(numeric) >= 60 and {"records/numeric/refused/nan", "numeric/hostile/unsorted-edges/json"} <= {
        case["name"] for case in numeric
    }
    forms = {case["name"].split("/")[-2] for suite, case in CASES if suite == "documents"}
    assert {"rows", "grr", "palette", "dense"} <= forms


def _close(actual: Any, expected: Any, where: str) -> None:
    if isinstance(expected, dict):
        assert set(actual) == set(expected), where
        for key in expected:
            _close(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, float) and isinstance(actual, float):
        assert math.isclose(actual, expected, rel_tol=RTOL, abs_tol=1e-15), f"{where}: {actual!r} != {expected!r}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


@pytest.mark.parametrize("suite, case", CASES, ids=[case["name"] for _, case in CASES])
def test_case(suite: str, case: dict[str, Any]) -> None:
    if suite == "documents":
        actual = document_outcome(case)
    elif suite == "records":
        actual = encode_outcome(case)
    elif suite == "sampling":
        q, spec = _sampler_matrix(case)
        actual = sampler_outcome(q, spec, case["xs"], case["us"])
        if case.get("exact_tables") is False:  # a composed R·Q: its last bits are the BLAS kernel's
            expected = {k: v for k, v in case["expect"].items() if not k.startswith("thresholds")}
            actual = {k: v for k, v in actual.items() if not k.startswith("thresholds")}
            _close(actual, expected, case["name"])
            return
    elif suite == "public-data":
        actual = public_data_outcome(case)
    elif suite == "randomiser":
        actual = randomiser_outcome(case)
    elif suite == "alias":
        actual = alias_outcome([[int(v) for v in row] for row in case["thresholds"]])
    else:
        actual = batch_outcome(case)
    _close(actual, case["expect"], case["name"])


DOCUMENT_MESSAGES = [case for suite, case in CASES if suite == "documents" and "message" in case]


def test_the_refusals_with_a_message_cover_the_pilot_box():
    names = {case["name"] for case in DOCUMENT_MESSAGES}
    assert len([n for n in names if n.startswith("pilot/refused/")]) >= 12


@pytest.mark.parametrize("case", DOCUMENT_MESSAGES, ids=[case["name"] for case in DOCUMENT_MESSAGES])
def test_a_refusal_gives_the_message_both_clients_give(case: dict[str, Any]) -> None:
    # Why: the case file fixes the message, so the TypeScript SDK's is compared with Python's word for word.
    assert document_message(case) == case["message"]


def _sampler_matrix(case: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any] | None]:
    if "document" in case:
        doc = from_json(case["document"])
        return report_matrix(doc), matrix_spec(doc) if "per_report" not in doc.get("collection", {}) else None
    if "grr" in case:
        g = case["grr"]
        q = np.full((g["size"], g["size"]), g["off_diagonal"])
        np.fill_diagonal(q, g["diagonal"])
        return q, {"form": "grr", **g}
    if "shifted_column" in case:
        base = np.array(case["shifted_column"])
        return np.stack([np.roll(base, j) for j in range(case["inputs"])], axis=1), None
    return np.array(case["matrix"], dtype=np.float64), None


def test_the_grr_cases_are_the_designers_matrices():
    # Why: the sampling cases rebuild GRR from its two values; they must be exactly the designer's.
    grr_matrix = pytest.importorskip("rldp.aggregator.design", reason="the designer (rldp[aggregator])").grr_matrix
    for _, case in CASES:
        if "grr" in case:
            q = grr_matrix(case["grr"]["size"], float(case["name"].rsplit("-eps", 1)[1]))
            assert (float(q[0, 0]), float(q[1, 0])) == (case["grr"]["diagonal"], case["grr"]["off_diagonal"])


def test_the_randomiser_cases_cover_reuse_and_every_kind_of_difference():
    names = {case["name"] for suite, case in CASES if suite == "randomiser"}
    same = {n for n in names if n.startswith("same/")}
    distinct = {n for n in names if n.startswith("distinct/")}
    assert {"same/rotation-labels", "same/collection-window", "same/encodings"} <= same
    assert {"distinct/one-column-moved", "distinct/alphabet-reordered", "distinct/per-report-matrix"} <= distinct
    for suite, case in CASES:
        if suite == "randomiser":
            assert case["expect"]["same"] == case["name"].startswith("same/"), case["name"]
