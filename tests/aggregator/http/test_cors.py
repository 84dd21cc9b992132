"""Cross-origin requests (``rldp serve --cors-origin``): one configured origin only, off by default."""

from __future__ import annotations

import pytest
from rldp_live import in_process_app, make_document

from rldp.aggregator.services.errors import ConfigError
from rldp.shared.document import to_msgpack

ORIGIN = "http://app.example:8080"
ADMIN = {"Authorization": "Bearer test-admin-token-0123456789abcdef"}


def test_the_configured_origin_may_call_the_service_and_no_other(tmp_path):
    with in_process_app(tmp_path, CORS_ORIGIN=ORIGIN) as app:
        http = app.test_client()
        doc = make_document("cors")
        assert (
            http.post(
                "/v1/mechanisms", data=to_msgpack(doc), headers={**ADMIN, "Content-Type": "application/msgpack"}
            ).status_code
            == 201
        )
        pre = http.options(
            "/v1/reports",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert pre.status_code == 204 and pre.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert (
            "POST" in pre.headers["Access-Control-Allow-Methods"]
            and "Content-Type" in pre.headers["Access-Control-Allow-Headers"]
        )
        got = http.get(f"/v1/mechanisms/{doc['id']}", headers={"Origin": ORIGIN})
        assert got.status_code == 200 and got.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert "Retry-After" in got.headers["Access-Control-Expose-Headers"]
        body = {"mechanism": doc["id"], "batch": "cors-1", "reports": [0, 1]}
        import msgpack

        posted = http.post(
            "/v1/reports", data=msgpack.packb(body), headers={"Origin": ORIGIN, "Content-Type": "application/msgpack"}
        )
        assert posted.status_code == 201 and posted.headers["Access-Control-Allow-Origin"] == ORIGIN
        refused = http.post(
            "/v1/reports", data=b"\xc1", headers={"Origin": ORIGIN, "Content-Type": "application/msgpack"}
        )
        assert (
            refused.status_code == 400 and refused.headers["Access-Control-Allow-Origin"] == ORIGIN
        )  # errors readable too
        other = http.get(f"/v1/mechanisms/{doc['id']}", headers={"Origin": "http://evil.example"})
        assert "Access-Control-Allow-Origin" not in other.headers
        assert (
            http.options(
                "/v1/reports", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
            ).status_code
            != 204
        )


def test_off_by_default_and_a_bad_origin_is_refused(tmp_path):
    with in_process_app(tmp_path) as app:
        got = app.test_client().get("/healthz", headers={"Origin": ORIGIN})
        assert "Access-Control-Allow-Origin" not in got.headers
    for bad in ("app.example", "https://app.example/path", "*"):
        with pytest.raises(ConfigError, match="CORS_ORIGIN"):
            with in_process_app(tmp_path, CORS_ORIGIN=bad):
                pass
