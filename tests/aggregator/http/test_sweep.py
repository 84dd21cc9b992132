"""Sweep every route with hostile input (hypothesis, in process): encoding errors, odd bodies,
odd query strings and headers. Never a 5xx: each refusal is a typed 4xx problem."""

from __future__ import annotations

import json

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rldp_live import ADMIN_TOKEN, in_process_app, make_document

ID = "0" * 64
JOB = "0" * 32

#: Text with the characters that broke things before: lone surrogates, NUL, non-ASCII, controls.
ODD_TEXT = st.text(
    alphabet=st.sampled_from(["a", "\ud800", "\udfff", "\x00", "é", "💥", "\n", '"', "\\", "%", "&", "="])
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | ODD_TEXT,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            ODD_TEXT
            | st.sampled_from(
                _KEYS := [
                    "mechanism",
                    "batch",
                    "reports",
                    "window",
                    "csv",
                    "sensitive",
                    "released",
                    "epsilon",
                    "method",
                    "beta",
                    "radius",
                    "n",
                    "format",
                    "id",
                    "matrix",
                    "privacy",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=12,
)


def _json_bytes(value) -> bytes:
    return json.dumps(value, ensure_ascii=True, allow_nan=True).encode()  # escapes lone surrogates as \\ud800


def _msgpack_bytes(value) -> bytes:
    try:
        return msgpack.packb(value, use_bin_type=True, unicode_errors="surrogatepass")
    except (TypeError, ValueError, OverflowError):
        return b"\xc1"


BODIES = st.one_of(
    st.binary(max_size=64),
    JSON_VALUES.map(_json_bytes),
    JSON_VALUES.map(_msgpack_bytes),
    ODD_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
)
CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/msgpack",
        "text/csv",
        "",
        "application/json; charset=latin-1",
        "multipart/form-data",
        "application/json; charset=\xff",
        "application/x-www-form-urlencoded",
    ]
)
QUERIES = st.binary(max_size=40).map(lambda b: b.decode("latin-1"))
AUTH = st.sampled_from(
    [None, f"Bearer {ADMIN_TOKEN}", "Bearer", "Bearer \xe9\xff", "Basic abc", "Bearer " + "x" * 300, "bearer  "]
)
ACCEPT = st.sampled_from([None, "*/*", "application/msgpack", "text/html", "\xff/\xfe", "application/json;q=x"])
PATHS = [
    ("GET", "/"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/v1/mechanisms"),
    ("POST", "/v1/mechanisms"),
    ("GET", "/v1/mechanisms/{id}"),
    ("POST", "/v1/mechanisms/{id}/retire"),
    ("GET", "/v1/mechanisms/{id}/estimate"),
    ("GET", "/v1/mechanisms/{id}/windows"),
    ("POST", "/v1/reports"),
    ("GET", "/v1/designs"),
    ("POST", "/v1/designs"),
    ("GET", "/v1/designs/{job}"),
]
SEGMENTS = st.sampled_from([ID, JOB, "%ff", "%ed%a0%80", "\udcff", "..", "é", "a" * 300, "%00"])


@pytest.fixture(scope="module")
def sweep_app(tmp_path_factory):
    with in_process_app(tmp_path_factory.mktemp("sweep"), DESIGN_TIMEOUT=5.0) as app:
        doc = make_document("sweep")
        resp = app.test_client().post("/v1/mechanisms", json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert resp.status_code == 201
        app.config["SWEEP_ID"] = doc["id"]
        yield app


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    route=st.sampled_from(PATHS),
    method=st.sampled_from([None, "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    segment=SEGMENTS,
    real_id=st.booleans(),
    body=BODIES,
    content_type=CONTENT_TYPES,
    query=QUERIES,
    auth=AUTH,
    accept=ACCEPT,
)
def test_no_route_answers_a_server_error(
    sweep_app, route, method, segment, real_id, body, content_type, query, auth, accept
):
    verb, template = route
    mid = sweep_app.config["SWEEP_ID"] if real_id else segment
    path = template.format(id=mid, job=segment)
    headers = {k: v for k, v in (("Authorization", auth), ("Accept", accept)) if v is not None}
    raw_path = path.encode("utf-8", "surrogateescape").decode("latin-1")  # WSGI: the raw bytes as latin-1
    resp = sweep_app.test_client().open(
        "/",
        method=method or verb,
        data=body,
        headers=headers,
        content_type=content_type or None,
        environ_overrides={"QUERY_STRING": query, "PATH_INFO": raw_path},
    )
    assert resp.status_code < 500, (method or verb, path, query, content_type, body[:80], resp.data[:300])
    if resp.status_code >= 400 and (method or verb) != "HEAD":
        assert resp.mimetype == "application/problem+json", (resp.status_code, resp.mimetype, resp.data[:200])
