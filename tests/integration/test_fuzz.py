"""Fuzz the live API from its own OpenAPI document (schemathesis): never a 5xx, and every
answer documented (status code, media type, body schema). Bounded examples keep it short."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from rldp_live import ADMIN, make_document
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from rldp.aggregator.http.openapi import build_openapi


@schemathesis.serializer("application/msgpack")
def _msgpack_body(ctx: Any, value: Any) -> dict[str, Any]:
    try:
        return {"data": msgpack.packb(value, use_bin_type=True)}
    except (TypeError, ValueError, OverflowError):
        return {"data": repr(value).encode()}


@schemathesis.deserializer("application/msgpack")
def _msgpack_response(ctx: Any, response: Any) -> Any:
    return msgpack.unpackb(response.content, raw=False)


schema = schemathesis.openapi.from_dict(build_openapi())
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def fuzz_target(live_server):
    doc = make_document("fuzz-target")  # so that some generated ids can exist
    assert live_server.publish(doc).status_code in (200, 201)
    return live_server


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails_and_matches_its_document(case, fuzz_target):
    # With the admin token the fuzzer reaches the validation of every admin endpoint too.
    case.call_and_validate(base_url=fuzz_target.url, headers=ADMIN, checks=CHECKS, timeout=30)
