"""The operator's commands over the HTTP API (`rldp publish | mechanisms | estimate | retire | jobs | job`),
`rldp --version` and `rldp token --plain`, against a live aggregator on loopback."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shlex
import subprocess
import time

import numpy as np
import pytest
import requests
from cli_helpers import RLDP, run_cli
from rldp_live import ADMIN_TOKEN, READ_TOKEN, free_port, make_document

import rldp
from rldp.admin import AdminClient
from rldp.client import Client
from rldp.shared.document import mechanism_matrix, write_document

CSV_PUBLIC = "sex,colour\n" + "Female,red\n" * 20 + "Male,red\n" * 30 + "Male,blue\n" * 50 + "Female,blue\n" * 10


@pytest.fixture
def op(server):
    """``rldp *args`` against the live server, with the admin token (``env`` adds or blanks variables)."""

    def run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        base = {"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN, "RLDP_READ_TOKEN": ""}
        return run_cli(*args, env={**base, **(env or {})}, timeout=120)

    return run


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, no traceback, nothing on stdout, and exactly one line on stderr naming every needle."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr
    return lines[0]


def table(text: str) -> list[list[str]]:
    """The rows of a printed table, split on runs of two or more spaces (cells hold single spaces)."""
    return [re.split(r" {2,}", line.strip()) for line in text.strip().splitlines()]


def published(op, tmp_path, tag: str, **kwargs) -> dict:
    doc = make_document(tag, **kwargs)
    path = tmp_path / f"{tag}.json"
    write_document(doc, path)
    out = ok(op("publish", path))
    assert out.splitlines()[0] == f"published {doc['id']}"
    return doc


# --------------------------------------------------------------------------- publish, mechanisms


def test_publish_then_list_the_mechanisms_as_a_table_and_as_json(op, server, tmp_path):
    doc = published(op, tmp_path, "operator-publish")
    again = ok(op("publish", tmp_path / "operator-publish.json"))
    assert again.splitlines()[0] == f"already published (unchanged) {doc['id']}"
    answer = json.loads(ok(op("publish", tmp_path / "operator-publish.json", "--json")))
    assert answer["id"] == doc["id"] and answer["created"] is False and answer["status"] == "active"
    assert answer["epsilon_audited"] == pytest.approx(1.0, abs=1e-9)

    listed = json.loads(ok(op("mechanisms", "--json")))
    assert listed == requests.get(server.url + "/v1/mechanisms", timeout=10).json()  # the API's answer, unchanged
    rows = table(ok(op("mechanisms")))
    assert rows[0][:8] == ["ID", "LABEL", "METHOD", "NOTION", "CLAIM", "AUDITED", "OUTPUTS", "STATUS"]
    assert len(rows) == 1 + len(listed["mechanisms"])
    mine = next(r for r in rows[1:] if r[0] == doc["id"][:12])
    assert mine[1:10] == ["-", "grr", "rldp", "eps = 1", "1", "6", "active", "sex", "colour"]


def test_publish_reads_json_on_stdin_and_refuses_a_tampered_document(op, server, tmp_path):
    doc = make_document("operator-stdin")
    proc = run_cli(
        "publish", "-", env={"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN}, stdin=json.dumps(doc)
    )
    assert ok(proc).startswith(f"published {doc['id']}")
    forged = dict(doc, matrix=[row[::-1] for row in doc["matrix"]])  # same id, other content
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    one_line_error(op("publish", path), "rldp publish: error:", "forged.json")
    one_line_error(op("publish", tmp_path / "missing.json"), "no such file")


# --------------------------------------------------------------------------- estimate


def _reports(doc: dict, p_true: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n reports drawn from Q·P (what n users with records from ``p_true`` would send)."""
    q = mechanism_matrix(doc)
    return np.random.default_rng(seed).choice(q.shape[0], size=n, p=q @ p_true.reshape(-1))


def test_estimate_as_a_table_a_csv_and_json(op, server, tmp_path):
    doc = published(op, tmp_path, "operator-estimate")
    p_true = np.array([[0.10, 0.15, 0.05], [0.30, 0.25, 0.15]])
    with Client(server.url, state_path=None) as client:
        assert client.submit_reports(doc["id"], _reports(doc, p_true, 20_000, seed=11)).accepted == 20_000

    answer = json.loads(ok(op("estimate", doc["id"][:10], "--json")))
    direct = requests.get(
        f"{server.url}/v1/mechanisms/{doc['id']}/estimate",
        headers={"Authorization": f"Bearer {READ_TOKEN}"},
        timeout=60,
    ).json()
    assert answer == direct and answer["n"] == 20_000
    joint, low, high = (
        np.array(a, dtype=float) for a in (answer["joint"], answer["ci95"]["low"], answer["ci95"]["high"])
    )
    assert np.all(low <= joint) and np.all(joint <= high)
    # 20,000 reports through GRR at ε = 1 on 6 symbols: each cell's standard error is ≈ 0.012; allow five.
    assert np.max(np.abs(joint - p_true)) < 0.06

    rows = list(csv.reader(io.StringIO(ok(op("estimate", doc["id"], "--csv")))))
    assert rows[0] == ["cell", "estimate", "low", "high"]
    cells = [f"{s}|{u}" for s in ("Female", "Male") for u in ("blue", "green", "red")]
    assert [r[0] for r in rows[1:]] == cells
    as_read = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    assert np.array_equal(as_read, np.stack([joint.ravel(), low.ravel(), high.ravel()], axis=1))  # exact round trip

    text = ok(op("estimate", doc["id"]))
    assert f"mechanism {doc['id']} (active)" in text and "20,000 reports" in text
    text, drift = text.rstrip("\n").rsplit("\n", 1)
    assert drift.startswith("drift: ") and "every distribution" in drift  # radius null: no F to drift from
    printed = table(text.split("\n", 2)[2])
    assert printed[0] == ["sex", "colour", "P_X", "95% LOW", "95% HIGH"]
    expected = [[s, u, *(f"{v:.4f}" for v in r)] for (s, u), r in zip((c.split("|") for c in cells), as_read)]
    assert printed[1:] == expected

    # A read token is enough for an estimate (and only there).
    read_only = {"RLDP_ADMIN_TOKEN": "", "RLDP_READ_TOKEN": READ_TOKEN}
    assert json.loads(ok(op("estimate", doc["id"], "--json", env=read_only))) == direct
    one_line_error(op("estimate", doc["id"], "--csv", "--json"), "--csv or --json")


def test_estimate_one_collection_window(op, server, tmp_path):
    doc = published(op, tmp_path, "operator-window", window="P1D")
    records = [{"sex": s, "colour": c} for s in ("Female", "Male") for c in ("blue", "green", "red")] * 50
    owners = [f"user-{i}" for i in range(len(records))]
    with Client(server.url, state_path=tmp_path / "state.sqlite3") as client:
        receipt = client.submit(doc["id"], records, owners=owners)
    assert receipt.accepted == 300 and receipt.window
    answer = json.loads(ok(op("estimate", doc["id"], "--window", receipt.window, "--json")))
    assert answer["window"] == receipt.window and answer["n"] == 300
    assert f"300 reports in {receipt.window}" in ok(op("estimate", doc["id"], "--window", receipt.window))
    assert "300 reports in every window" in ok(op("estimate", doc["id"]))
    one_line_error(op("estimate", doc["id"], "--window", "yesterday"), "422 invalid-parameter", "yesterday")


# --------------------------------------------------------------------------- retire


def test_retire_refuses_further_reports(op, server, tmp_path):
    doc = published(op, tmp_path, "operator-retire")
    out = ok(op("retire", doc["id"][:16]))
    assert out.splitlines()[0].startswith(f"retired {doc['id']} at ")
    assert (
        requests.post(
            server.url + "/v1/reports", json={"mechanism": doc["id"], "batch": "r1", "reports": [0]}, timeout=10
        ).status_code
        == 409
    )
    again = json.loads(ok(op("retire", doc["id"], "--json")))  # idempotent
    assert again["id"] == doc["id"] and again["status"] == "retired"
    listed = {m["id"]: m for m in json.loads(ok(op("mechanisms", "--json")))["mechanisms"]}
    assert listed[doc["id"]]["status"] == "retired"


# --------------------------------------------------------------------------- design jobs


def test_jobs_and_job_follow_a_design(op, server):
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        job = admin.design(CSV_PUBLIC, sensitive="sex", released="colour", epsilon=1.0, method="srr", wait=False)
    job_id = job["job"]
    listed = json.loads(ok(op("jobs", "--json")))["jobs"]
    assert job_id in [j["job"] for j in listed]
    created = [j["created"] for j in listed]
    assert created == sorted(created, reverse=True)  # newest first
    assert len(json.loads(ok(op("jobs", "--limit", "1", "--json")))["jobs"]) == 1
    rows = table(ok(op("jobs")))
    assert rows[0][:3] == ["JOB", "STATUS", "CREATED (UTC)"]
    mine = next(r for r in rows[1:] if r[0] == job_id[:12])
    assert mine[1] in ("queued", "running", "done") and mine[4:8] == ["srr", "1", "sex", "colour"]

    deadline = time.monotonic() + 120
    while (status := json.loads(ok(op("job", job_id[:8], "--json"))))["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    assert status["status"] == "done", status
    text = dict(line.split(None, 1) for line in ok(op("job", job_id)).splitlines())
    assert text["job"] == job_id and text["status"] == "done" and text["mechanism"] == status["mechanism"]
    assert text["design"] == "srr at epsilon 1, S sex, U colour, from 110 public records"
    done = next(r for r in table(ok(op("jobs"))) if r[0] == job_id[:12])
    assert done[1] == "done" and done[-1] == status["mechanism"][:12]


# --------------------------------------------------------------------------- errors


def test_errors_are_one_line_with_exit_status_2(op, server):
    one_line_error(op("mechanisms", env={"RLDP_SERVER": ""}), "give --server URL or set RLDP_SERVER")
    one_line_error(op("retire", "0" * 64, env={"RLDP_ADMIN_TOKEN": ""}), "set RLDP_ADMIN_TOKEN")
    one_line_error(op("jobs", env={"RLDP_ADMIN_TOKEN": ""}), "set RLDP_ADMIN_TOKEN")
    one_line_error(op("estimate", "0" * 64, env={"RLDP_ADMIN_TOKEN": ""}), "set RLDP_ADMIN_TOKEN", "RLDP_READ_TOKEN")
    one_line_error(op("jobs", env={"RLDP_ADMIN_TOKEN": "not-the-token"}), "401 unauthorized")
    one_line_error(op("estimate", "0" * 64), "404 unknown-mechanism")
    one_line_error(op("retire", "0" * 64), "404 unknown-mechanism")
    one_line_error(op("job", "0" * 32), "404 unknown-job")
    one_line_error(op("estimate", "00000000"), "no mechanism id starts with '00000000'")
    one_line_error(op("job", "not-hex"), "32 hexadecimal characters")
    one_line_error(op("mechanisms", "--server", "ftp://example"), "http:// or https://")
    down = f"http://127.0.0.1:{free_port()}"
    line = one_line_error(op("mechanisms", "--server", down, "--retries", "0"), "cannot reach the server")
    assert down in line
    # --server wins over RLDP_SERVER.
    assert json.loads(ok(op("mechanisms", "--json", "--server", server.url, env={"RLDP_SERVER": down})))


# --------------------------------------------------------------------------- version, token


def test_version():
    proc = run_cli("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"rldp {rldp.__version__}\n", "")


def test_token_plain_prints_only_the_token():
    proc = run_cli("token", "--plain")
    assert proc.returncode == 0 and proc.stderr == ""
    token = proc.stdout.removesuffix("\n")
    assert re.fullmatch(r"rldp_[A-Za-z0-9_-]{43}", token), proc.stdout  # prefix + 32 random bytes, URL-safe base64
    assert run_cli("token", "--plain").stdout != proc.stdout
    hashed = run_cli("token", "--hash", stdin=token + "\n")
    assert hashed.stdout.strip() == hashlib.sha256(token.encode()).hexdigest()
    # The documented form: the variable holds exactly the token.
    shell = shlex.join(RLDP)
    exported = subprocess.run(
        ["bash", "-c", f'export RLDP_ADMIN_TOKEN=$({shell} token --plain) && printf "%s" "$RLDP_ADMIN_TOKEN"'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert exported.returncode == 0 and re.fullmatch(r"rldp_[A-Za-z0-9_-]{43}", exported.stdout), exported
    assert run_cli("token", "--plain", "--hash").returncode == 2


# Issue 27 D10: category values a spreadsheet would run as formulas.
FORMULAS = ("=1+1", "@SUM(1)", "+2", "-3+4")


def test_estimate_csv_escapes_formula_cells(op, server, tmp_path):
    from rldp.shared.records import Alphabet, Attribute

    hostile = Alphabet(Attribute("sex", FORMULAS[:2]), [Attribute("colour", FORMULAS[2:])])
    doc = published(op, tmp_path, "operator-formulas", alphabet=hostile)
    with Client(server.url) as client:
        client.submit_reports(doc["id"], np.arange(200) % 4)
    rows = list(csv.reader(io.StringIO(ok(op("estimate", doc["id"], "--csv")))))
    cells = [r[0] for r in rows[1:]]
    assert cells == [f"'{s}|{u}" for s in FORMULAS[:2] for u in FORMULAS[2:]]
    assert all(float(v) == float(v) for r in rows[1:] for v in r[1:])  # the numbers stay numbers


def _distp_document(tag: str) -> dict:
    """A GRR at ε = 3 claiming (1, δ)-distp: its ε at δ = 0 is above the claimed ε (issue 27 D13)."""
    from rldp_live import SMALL_ALPHABET

    from rldp.aggregator.design import grr_matrix
    from rldp.shared.audit import audit_document
    from rldp.shared.document import build_document

    def doc(delta: float) -> dict:
        return build_document(
            method="grr",
            matrix=grr_matrix(SMALL_ALPHABET.size, 3.0),
            alphabet=SMALL_ALPHABET,
            public_distribution=np.full(SMALL_ALPHABET.shape, 1 / SMALL_ALPHABET.size),
            privacy={"notion": "distp", "epsilon": 1.0, "delta": delta, "uncertainty": {"order": 2, "radius": 0.01}},
            extra={"test": tag},
        )

    return doc(float(f"{audit_document(doc(0.5)).extra['delta'] * 1.01:.3g}"))


def test_publish_mechanisms_and_audit_state_distp_as_epsilon_and_delta(op, server, tmp_path):
    doc = _distp_document("operator-distp")
    delta = doc["privacy"]["delta"]
    path = tmp_path / "distp.json"
    write_document(doc, path)
    out = ok(op("publish", path)).splitlines()
    assert f"(eps, delta) = (1, {delta:.4g})" in out[1] and "at delta = 0" in out[1], out
    rows = table(ok(op("mechanisms")))
    assert rows[0][4:6] == ["CLAIM", "AUDITED"]
    mine = next(r for r in rows[1:] if r[0] == doc["id"][:12])
    assert mine[3:5] == ["distp", f"(eps, delta) = (1, {delta:.4g})"] and mine[5].endswith("at delta = 0"), mine
    audit = run_cli("audit", path)
    first = audit.stdout.splitlines()[0]
    assert audit.returncode == 0 and "audited delta = " in first and f"<= claimed delta = {delta:.4g}" in first, first
    assert "audited eps" not in first


@pytest.fixture
def not_rldp():
    """A web server that is not an aggregator: HTML for every path (404, or 200 at /v1/mechanisms)."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = b"<!DOCTYPE HTML><html><body><h1>Not Found</h1></body></html>"
            self.send_response(200 if self.path == "/v1/mechanisms" else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_server_that_is_not_rldp_is_named_not_printed(not_rldp, tmp_path):
    # Issue 27 rough edge: "404 about:blank: <!DOCTYPE HTML>…".
    env = {"RLDP_SERVER": not_rldp, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN}
    for args in (("mechanisms",), ("estimate", "ab" * 32), ("retire", "ab" * 32)):
        line = one_line_error(run_cli(*args, env=env, timeout=60), not_rldp, "not an rldp aggregator")
        assert "<!DOCTYPE" not in line and "about:blank" not in line, line


def test_estimate_warns_when_the_reporting_population_drifted(op, server, tmp_path):
    """The skewed population (60 % Female|Amer-Indian-Eskimo) through the sex/race PolyOpt
    document at ε = 1.5: `rldp estimate` ends with a warning line, and --json carries the drift object."""
    from helpers import adult_sex_race_polyopt, skewed_population, window_label

    from rldp.shared.document import public_distribution

    doc = adult_sex_race_polyopt(1.5)
    path = tmp_path / "sex-race.json"
    write_document(doc, path)
    ok(op("publish", path))
    q = mechanism_matrix(doc)
    rng = np.random.default_rng(24)
    reports = rng.choice(q.shape[0], size=1000, p=q @ skewed_population(public_distribution(doc)).ravel())
    with Client(server.url) as client:
        client.submit_reports(doc["id"], reports, window=window_label(doc))  # designs collect by day
    last = ok(op("estimate", doc["id"])).rstrip("\n").splitlines()[-1]
    assert last.startswith("WARNING drift: the reporting population no longer looks like P̂")
    assert "the claim ε = 1.5 may not hold for it" in last and "realised ε* ≈ " in last and "(95 % interval [" in last
    drift = json.loads(ok(op("estimate", doc["id"], "--json")))["drift"]
    assert drift["rejected"] is True and drift["realised_epsilon"] > 3.0
    assert drift["realised_epsilon_lower"] <= drift["realised_epsilon"] <= drift["realised_epsilon_upper"]
    keys = {"realised_epsilon", "realised_epsilon_lower", "realised_epsilon_upper", "p_value", "rejected", "alpha"}
    assert set(drift) >= keys | {"statement"}
    # /metrics of the live (multi-process) server carries the gauges
    metrics = requests.get(f"{server.url}/metrics", timeout=60).text
    gauge = next(x for x in metrics.splitlines() if x.startswith(f'rldp_drift_p_value{{mechanism="{doc["id"]}"}}'))
    assert float(gauge.split()[-1]) == drift["p_value"]
    assert f'rldp_realised_epsilon{{mechanism="{doc["id"]}"}}' in metrics


# --------------------------------------------------------------------------- labels, estimate options, the minimum


def test_labels_at_publish_and_later_never_change_the_document(op, server, tmp_path):
    doc = make_document("operator-label")
    path = tmp_path / "labelled.json"
    write_document(doc, path)
    assert ok(op("publish", path, "--label", "Sign-ups by region")).splitlines()[0] == (
        f"published {doc['id']} (Sign-ups by region)"
    )
    mine = next(r for r in table(ok(op("mechanisms")))[1:] if r[0] == doc["id"][:12])
    assert mine[1] == "Sign-ups by region"
    out = ok(op("mechanisms", "label", doc["id"][:12], "Daily usage, app v2"))
    assert out.strip() == f"{doc['id']}: label 'Daily usage, app v2'"
    listed = json.loads(ok(op("mechanisms", "--json")))["mechanisms"]
    assert next(m for m in listed if m["id"] == doc["id"])["label"] == "Daily usage, app v2"
    with Client(server.url, state_path=None) as client:  # the client still verifies the document by its id
        assert client.mechanism(doc["id"]).id == doc["id"]
    one_line_error(op("mechanisms", "label", doc["id"], "a\tb"), "422 invalid-parameter", "U+0009")
    one_line_error(op("mechanisms", "label", doc["id"]), "TEXT, or --clear")
    assert ok(op("mechanisms", "label", doc["id"], "--clear")).strip() == f"{doc['id']}: label removed"
    one_line_error(op("mechanisms", "label", doc["id"], "x", env={"RLDP_ADMIN_TOKEN": ""}), "RLDP_ADMIN_TOKEN")


def test_estimate_method_and_interval_and_the_minimum(op, server, tmp_path):
    doc = published(op, tmp_path, "operator-estimate-options")
    with Client(server.url, state_path=None) as client:
        client.submit_reports(doc["id"], np.arange(40) % 6)
    few = one_line_error(op("estimate", doc["id"]), "409 too-few-reports", "has 40 reports", "60 more needed")
    assert "rldp estimate: error:" in few
    with Client(server.url, state_path=None) as client:
        client.submit_reports(doc["id"], np.arange(400) % 6)
    answer = json.loads(ok(op("estimate", doc["id"], "--method", "inverse", "--interval", "bootstrap", "--json")))
    assert answer["method"] == "inverse" and answer["ci95"]["method"] == "bootstrap" and answer["n"] == 440
    text = ok(op("estimate", doc["id"], "--method", "em"))
    assert "estimator em" in text and "(delta)" in text
    bad = run_cli("estimate", doc["id"], "--method", "median", env={"RLDP_SERVER": server.url})
    assert bad.returncode == 2 and "invalid choice: 'median'" in bad.stderr
    assert "'auto', 'em', 'inverse'" in bad.stderr
    bad = run_cli("estimate", doc["id"], "--interval", "wilson", env={"RLDP_SERVER": server.url})
    assert bad.returncode == 2 and "'delta', 'bootstrap'" in bad.stderr
