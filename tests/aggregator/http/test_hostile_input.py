"""Issue 35, hostile input round 2, the service's surfaces: /metrics stays bounded (D14), the JSON access log
writes one line per request with no raw control, bidi or separator character (D15), a collection's description
and a mechanism's label refuse such characters with a 422 naming the code point on both backends (D17, D22),
so do a published document's and a design request's attribute names and values, and every CSV estimate
quotes its cells and neutralises formulas (D19)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from pathlib import Path

import pytest
from rldp_live import ADMIN, READ, in_process_app, login, make_document

from rldp.shared.document.canonical import UNHASHED, encode_canonical
from rldp.shared.records import Alphabet, Attribute


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path, ACCESS_LOG="json", MIN_REPORTS=1) as app:
        yield app


# -- D14: /metrics


def _latency_series(http) -> set[str]:
    text = http.get("/metrics").get_data(as_text=True)
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("rldp_request_duration_seconds")}


def test_made_up_methods_and_paths_add_no_metric_series(http):
    http.get("/healthz")
    http.get("/metrics")
    for method in ("GET", "XABC0"):  # the first unknown method and path make the `other` series
        http.open("/v1/unknown-0", method=method)
        http.open("/v1/mechanisms", method=method)
    before = _latency_series(http)
    size = len(http.get("/metrics").data)
    for i in range(1, 201):
        assert http.open(f"/v1/unknown-{i}", method=f"XABC{i}").status_code in (404, 405)
        assert http.open("/v1/mechanisms", method=f"XABC{i}").status_code == 405
        http.get(f"/v1/nowhere/{i}")
    after = _latency_series(http)
    assert after == before, sorted(after - before)[:5]
    assert len(http.get("/metrics").data) < size + 2000  # the same series, larger counts only
    assert any('method="other"' in s and 'endpoint="other"' in s for s in after)
    assert not any("XABC" in s or "unknown-" in s or "nowhere" in s for s in after)


# -- D15: the JSON access log


def test_the_access_log_escapes_separators_controls_and_bidi_characters(http, caplog):
    caplog.set_level(logging.INFO, logger="rldp.access")
    hostile = "\u2028\u2029\u0085\u009b\u202e\u2066\u200f\u061c\x7f\x1b[31m\ufeff"
    http.get("/v1/" + "".join(f"%{b:02X}" for b in ("x" + hostile).encode())).close()
    http.open("/v1/x", method="GET\u0085X").close()  # a method is request-derived too
    lines = [r.getMessage() for r in caplog.records if r.name == "rldp.access"]
    assert len(lines) == 2
    for line in lines:  # one line for every reader: str.splitlines splits on U+2028, U+0085, ...
        assert line.splitlines() == [line] and line.isprintable(), line
    assert json.loads(lines[0])["path"] == "/v1/x" + hostile  # the escapes mean the same text
    assert "\\u2028" in lines[0] and "\\u009b" in lines[0] and "\\u202e" in lines[0]
    assert json.loads(lines[1])["method"] == "GET\u0085X"
    http.get("/v1/caf%C3%A9-%F0%9F%92%A5").close()  # ordinary non-ASCII stays readable
    assert "café-💥" in [r.getMessage() for r in caplog.records if r.name == "rldp.access"][-1]


# -- D17, D22: descriptions and labels


@pytest.fixture(params=["sqlite", "postgresql"])
def any_backend_http(request, databases, tmp_path):
    with in_process_app(tmp_path, DATABASE_URL=databases.url(request.param)) as app:
        yield app.test_client()


BAD_DESCRIPTIONS = [
    ('"bad \\ud800 text"', "U+D800 (a lone surrogate) at position 4"),
    ('"nul \\u0000 here"', "U+0000 (a control character) at position 4"),
    ('"esc \\u001b[2J"', "U+001B (a control character) at position 4"),
    ('"abc\\u202etxt.exe"', "U+202E (RIGHT-TO-LEFT OVERRIDE) at position 3"),
    ('"next\\u0085line"', "U+0085 (a control character) at position 4"),
    ('"csi\\u009b31m"', "U+009B (a control character) at position 3"),
    ('"iso\\u2067late"', "U+2067 (RIGHT-TO-LEFT ISOLATE) at position 3"),
    ('"line\\u2028sep"', "U+2028 (LINE SEPARATOR) at position 4"),
    ('"cr\\rhere"', "U+000D (a control character) at position 2"),
]


@pytest.mark.parametrize(("raw", "needle"), BAD_DESCRIPTIONS)
def test_a_hostile_description_is_a_422_naming_the_code_point(any_backend_http, raw, needle):
    http = any_backend_http
    doc = make_document(window="P1D")
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    fields = f'"name": "c1", "policy": {{"notion": "rldp", "epsilon": 1}}, "mechanism": "{doc["id"]}"'
    body = ("{" + fields + ', "description": ' + raw + "}").encode()
    resp = http.post("/v1/collections", data=body, headers={**ADMIN, "Content-Type": "application/json"})
    assert resp.status_code == 422, (resp.status_code, resp.get_data(as_text=True))
    assert resp.json["reason"] == "invalid-parameter" and resp.json["parameter"] == "description"
    assert needle in resp.json["detail"] and "are not allowed" in resp.json["detail"], resp.json["detail"]
    assert http.get("/v1/collections/c1", headers=READ).status_code == 404
    ok = {"name": "c1", "policy": {"notion": "rldp", "epsilon": 1}, "mechanism": doc["id"]}
    resp = http.post("/v1/collections", json={**ok, "description": "Two lines:\n\tindented, ✓ ünïcode 👩\u200d💻"},
                     headers=ADMIN)  # fmt: skip
    assert resp.status_code == 201, resp.json


@pytest.mark.parametrize("char", ["\u200e", "\u200f", "\u061c", "\u2028", "\u2029", "\u202a", "\u2066", "\ufeff"])
def test_labels_refuse_bidi_marks_and_separators(any_backend_http, char):
    http = any_backend_http
    doc = make_document()
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN, query_string={"label": f"sales{char}2026"})
    assert resp.status_code == 422 and resp.json["parameter"] == "label"
    assert f"U+{ord(char):04X}" in resp.json["detail"] and "at position 5" in resp.json["detail"]
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    resp = http.patch(f"/v1/mechanisms/{doc['id']}", json={"label": f"x{char}"}, headers=ADMIN)
    assert resp.status_code == 422 and f"U+{ord(char):04X}" in resp.json["detail"]


# -- a document's attribute names and values; a design request's public data


@pytest.mark.parametrize("char", ["\r", "\n", "\x00", "\x1b", "\x85", "\u2028", "\u200f", "\u061c", "\u202e", "\u2067"])
@pytest.mark.parametrize("where", ["name", "value"])
def test_a_document_whose_alphabet_holds_a_hostile_character_is_a_422(any_backend_http, char, where):
    http = any_backend_http
    doc = make_document()
    attr = doc["released"][0]
    if where == "name":
        attr["name"] = f"col{char}our"
    else:
        attr["values"][0] = f"val{char}ue"
    doc["id"] = hashlib.sha256(encode_canonical({k: v for k, v in doc.items() if k not in UNHASHED})).hexdigest()
    resp = http.post("/v1/mechanisms", json=doc, headers=ADMIN)
    assert resp.status_code == 422, (resp.status_code, resp.get_data(as_text=True))
    detail = resp.json["detail"]
    assert f"U+{ord(char):04X}" in detail and "at position 3" in detail and char not in detail, detail
    assert ("attribute name 'col" if where == "name" else f"attribute {attr['name']!r}: value 'val") in detail
    assert http.get(f"/v1/mechanisms/{doc['id']}", headers=READ).status_code == 404


@pytest.mark.parametrize("char", ["\x1b", "\x85", "\u2028", "\u202e", "\u2066"])
def test_a_design_request_whose_public_data_holds_a_hostile_value_is_a_422_before_designing(http, char):
    csv_text = "sex,colour\n" + "F,red\nM,blue\n" * 5 + f"F,gr{char}een\n"
    body = {"csv": csv_text, "sensitive": "sex", "released": ["colour"], "method": "grr", "epsilon": 1.0}
    resp = http.post("/v1/designs", json=body, headers=ADMIN)
    assert resp.status_code == 422, (resp.status_code, resp.get_data(as_text=True))
    detail = resp.json["detail"]
    assert resp.json.get("parameter", resp.json.get("field")) == "csv", resp.json
    assert "attribute 'colour': value 'gr" in detail and f"U+{ord(char):04X}" in detail and char not in detail
    assert http.get("/v1/designs", headers=ADMIN).json["jobs"] == []  # refused before any job exists


def test_a_mechanism_an_older_rldp_stored_with_such_a_value_is_a_422_not_a_500(app, http, monkeypatch):
    import rldp.shared.attributes as attributes

    doc = make_document()
    doc["released"][0]["values"][0] = "val\u2028ue"
    doc["id"] = hashlib.sha256(encode_canonical({k: v for k, v in doc.items() if k not in UNHASHED})).hexdigest()
    with monkeypatch.context() as older:  # an rldp before this check published it
        older.setattr(attributes, "check_text", lambda value, *args, **kwargs: value)
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    batch = {"mechanism": doc["id"], "batch": "b", "reports": [0, 1, 2, 3, 4, 5]}
    http.post("/v1/reports", json=batch)
    for resp in (
        http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers=READ),
        http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers={**READ, "Accept": "text/csv"}),
    ):
        assert resp.status_code == 422 and resp.json["reason"] == "invalid-document", resp.get_data(as_text=True)
        assert "U+2028" in resp.json["detail"] and "retire it" in resp.json["detail"], resp.json["detail"]
    login(http, READ["Authorization"].split()[-1])
    for page in (f"/ui/mechanisms/{doc['id']}", "/ui/mechanisms", f"/ui/mechanisms/{doc['id']}/estimate.csv"):
        assert http.get(page).status_code < 500, page


# -- D19: CSV estimates

HOSTILE = Alphabet(Attribute("sex", ('a,"=1+1', "\uff1d1+1")), [Attribute("colour", ("=1+1", "+2", "ok"))])


def _rows(resp) -> list[list[str]]:
    assert resp.status_code == 200 and resp.mimetype == "text/csv", resp.get_data(as_text=True)
    text = resp.get_data(as_text=True)
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")  # CRLF rows
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert all(len(r) == len(rows[0]) for r in rows)  # no cell spilled into a new row
    return rows


def test_every_csv_estimate_quotes_line_breaks_and_neutralises_formulas(app, http):
    doc = make_document(alphabet=HOSTILE)
    assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
    assert (
        http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "b", "reports": [0, 1, 2, 3, 4, 5]}).status_code
        == 201
    )
    body = {"name": "hostile", "mechanism": doc["id"], "policy": {"notion": "rldp", "epsilon": 2}, "window": "none"}
    assert http.post("/v1/collections", json=body, headers=ADMIN).status_code == 201
    answers = {
        "api": http.get(f"/v1/mechanisms/{doc['id']}/estimate", headers={**READ, "Accept": "text/csv"}),
        "collection": http.get("/v1/collections/hostile/estimate", headers={**READ, "Accept": "text/csv"}),
    }
    login(http, READ["Authorization"].split()[-1])
    answers["dashboard"] = http.get(f"/ui/mechanisms/{doc['id']}/estimate.csv")
    for where, resp in answers.items():
        rows = _rows(resp)
        categories = [r[2] for r in rows[1:]]
        assert 'a,"=1+1' in categories and "'\uff1d1+1" in categories and "'=1+1" in categories, (where, categories)
        assert "'+2" in categories and "ok" in categories
        assert len(rows) == 1 + 2 + 3 + 6, where  # header, two marginals, the joint
        assert not any(c[:1] in "=+-@\t\r\uff1d\uff0b\uff0d\uff20" for r in rows for c in r[:3]), where


# -- D15 in text form: Granian's access log under `rldp serve --access-log text`


def test_the_text_access_log_formatter_escapes_every_client_sent_field():
    from granian.log import access_logger, log_request_builder

    from rldp.aggregator.http.access import TEXT_FORMAT, TextAccessFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TextAccessFormatter("%(message)s"))
    saved = access_logger.handlers[:], access_logger.level, access_logger.propagate
    access_logger.handlers, access_logger.propagate = [handler], False
    access_logger.setLevel(logging.INFO)
    try:
        agent = {"user-agent": 'ua\u2028"x\x1b[31m\\'}
        request = {"addr_remote": "10.0.0.1", "path": "/v1/a\u2028b\x85c\u202ed\x9b", "qs": "q=\x1b[2J\u2029&r=\u2066",
                   "method": "GET", "scheme": "http", "protocol": "HTTP/1.1", "headers": agent.get}  # fmt: skip
        log_request_builder(TEXT_FORMAT)(0.0, 0.0, request, 200)
    finally:
        access_logger.handlers, access_logger.level, access_logger.propagate = saved
    line = stream.getvalue()
    assert line.count("\n") == 1 and line.endswith("\n") and line[:-1].isprintable(), repr(line)
    assert '"GET /v1/a\\u2028b\\u0085c\\u202ed\\u009b?q=\\u001b[2J\\u2029&r=\\u2066 HTTP/1.1" 200' in line, line
    assert line.rstrip("\n").endswith('"ua\\u2028\\"x\\u001b[31m\\\\"'), line  # the quote cannot end the field


@pytest.mark.live
def test_rldp_serve_text_access_log_escapes_path_query_and_user_agent(tmp_path):
    import socket

    from rldp_live import LiveServer

    (tmp_path / "db").mkdir()
    server = LiveServer(
        f"sqlite:///{tmp_path / 'db' / 'rldp.sqlite3'}",
        tmp_path / "log",
        workers=1,
        extra_args=("--access-log", "text"),
    ).start()
    try:
        path = "/v1/x" + "".join(f"%{b:02X}" for b in "\u2028y\u202e\x1b[31m".encode())
        query = "".join(f"%{b:02X}" for b in "q\u2029\x85".encode())
        agent = b'probe "x" \\ end'  # Granian gives a header only if it is ASCII
        request = b"GET " + f"{path}?{query}".encode() + b" HTTP/1.1\r\nHost: x\r\nUser-Agent: " + agent
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(request + b"\r\nConnection: close\r\n\r\n")
            while sock.recv(65536):
                pass
    finally:
        server.stop()
    log = Path(server._log.name).read_bytes().decode("utf-8", "replace")  # type: ignore[union-attr]
    lines = [line for line in log.splitlines() if "/v1/x" in line]
    assert len(lines) == 1, log[-3000:]
    line = lines[0]
    assert line.isprintable() and '"GET /v1/x\\u2028y\\u202e\\u001b[31m?' in line, line  # the path, decoded
    assert not any(ch in log for ch in "\u2028\u202e\x1b"), log[-3000:]
    assert line.endswith('"probe \\"x\\" \\\\ end"'), line  # the User-Agent's quote cannot end its field
