"""`rldp privatize`: privatise a CSV locally and submit; one-line errors."""

from __future__ import annotations

import json
import subprocess

import msgpack
import numpy as np
import pytest
from cli_helpers import run_cli
from documents import ADMIN_TOKEN, make_document

from rldp.admin import AdminClient
from rldp.client import Client, OfflineQueue, TooFewReports


def run(*args: object, env: dict[str, str] | None = None):
    # RLDP_SERVER cleared unless given: the tests say where the server is.
    return run_cli(*args, timeout=120, env={"RLDP_SERVER": "", **(env or {})})


@pytest.fixture(scope="module")
def mechanism_id(server):
    doc = make_document("client-cli")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
    return doc["id"]


@pytest.fixture
def users_csv(tmp_path):
    path = tmp_path / "users.csv"
    rows = [("Female", "red", 31), ("Male", "blue", 40), ("Male", "green", 22)] * 84
    path.write_text("sex,colour,age\n" + "".join(f"{s},{c},{a}\n" for s, c, a in rows))
    return path


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("rldp privatize: error:"), proc.stderr
    for needle in needles:
        assert needle in last, proc.stderr


def test_privatize_and_submit(server, mechanism_id, users_csv):
    with Client(server.url, token=ADMIN_TOKEN, state_path=None) as before:
        try:
            n0 = before.estimate(mechanism_id).n
        except TooFewReports as exc:  # none, or fewer than the server's minimum: the refusal says how many
            n0 = exc.reports or 0
    proc = run(
        "privatize", "--server", server.url, "--mechanism", mechanism_id, users_csv, "--json", "--batch-size", 100
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert (record["records"], record["accepted"], record["batches"], record["queued"]) == (252, 252, 3, 0)
    with Client(server.url, token=ADMIN_TOKEN, state_path=None) as client:
        assert client.estimate(mechanism_id).n == n0 + 252
    human = run("privatize", "--mechanism", mechanism_id, users_csv, env={"RLDP_SERVER": server.url})
    assert human.returncode == 0 and "accepted 252 reports in 1 batches" in human.stdout  # the server from RLDP_SERVER


def test_errors_are_one_line(server, mechanism_id, users_csv, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("sex,colour\nFemale,red\nMale,purple\n")
    one_line_error(
        run("privatize", "--server", server.url, "--mechanism", mechanism_id, bad), "'purple'", "blue, green, red"
    )
    one_line_error(run("privatize", "--server", server.url, "--mechanism", "0" * 64, users_csv), "unknown-mechanism")
    one_line_error(
        run("privatize", "--server", server.url, "--mechanism", mechanism_id, tmp_path / "none.csv"), "none.csv"
    )
    one_line_error(
        run("privatize", "--server", server.url, users_csv), "--mechanism ID or --collection NAME is required"
    )
    one_line_error(run("privatize", "--mechanism", mechanism_id, users_csv), "give --server URL or set RLDP_SERVER")
    one_line_error(run("privatize", "--server", server.url, "--flush"), "--flush needs --queue")


def test_flush_sends_queued_batches(server, mechanism_id, tmp_path):
    queue_path = tmp_path / "queue.sqlite3"
    queue = OfflineQueue(queue_path)
    ys = np.arange(60) % 6
    queue.put(
        mechanism_id,
        "cli-flush-1",
        60,
        msgpack.packb({"mechanism": mechanism_id, "batch": "cli-flush-1", "reports": ys.tolist()}),
    )
    queue.close()
    proc = run("privatize", "--server", server.url, "--flush", "--queue", queue_path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"flushed": 60, "batches": 1, "queued": 0, "rejected": 0}


def _counts(server, mid: str) -> np.ndarray:
    from rldp.aggregator.storage import open_storage

    store = open_storage(server.db_url)
    try:
        return store.counts(mid, 6)
    finally:
        store.close()


def test_state_memoises_outputs_across_runs(server, tmp_path):
    doc = make_document("client-cli-state")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
    users = tmp_path / "users.csv"
    rows = [(f"user-{i}", ("Female", "Male")[i % 2], ("red", "blue", "green")[i % 3]) for i in range(300)]
    users.write_text("user,sex,colour\n" + "".join(f"{u},{s},{c}\n" for u, s, c in rows))
    state = tmp_path / "state.sqlite3"
    args = ("privatize", "--server", server.url, "--mechanism", doc["id"], users, "--json", "--state", state)
    deltas = []
    for _ in range(2):
        before = _counts(server, doc["id"])
        proc = run(*args, "--owner-column", "user", "--pin", doc["id"])
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["accepted"] == 300
        deltas.append(_counts(server, doc["id"]) - before)
    np.testing.assert_array_equal(deltas[0], deltas[1])  # the same 300 memoised outputs again
    assert (state.stat().st_mode & 0o777) == 0o600
    one_line_error(run(*args, "--pin", "ab" * 32), "is not pinned")


def test_the_csv_hints_name_flags_privatize_has(server, mechanism_id, tmp_path):
    # Issue 27 rough edge: the hints said "see --delimiter" / "--encoding", flags privatize did not have.
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text("sex;colour\n" + "Female;red\nMale;blue\n" * 5)
    base = ("privatize", "--server", server.url, "--mechanism", mechanism_id)
    one_line_error(run(*base, semicolons), "--delimiter")
    proc = run(*base, semicolons, "--delimiter", ";", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["accepted"] == 10, proc.stderr
    latin = tmp_path / "latin.csv"
    latin.write_bytes("sex,colour,city\nFemale,red,Bogotá\nMale,blue,Zürich\n".encode("latin-1"))
    one_line_error(run(*base, latin), "--encoding latin-1")
    proc = run(*base, latin, "--encoding", "latin-1", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["accepted"] == 2, proc.stderr


def test_privatize_takes_an_id_prefix_like_the_other_commands(server, mechanism_id, users_csv):
    # Issue 27 rough edge: `privatize --mechanism PREFIX` and Client.submit(PREFIX) answered 404.
    proc = run("privatize", "--server", server.url, "--mechanism", mechanism_id[:10], users_csv, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mechanism"] == mechanism_id
    with Client(server.url) as client:
        assert client.submit(mechanism_id[:12], [("Male", "red")]).accepted == 1
        assert client.mechanism(mechanism_id[:8]).id == mechanism_id
    one_line_error(run("privatize", "--server", server.url, "--mechanism", "ffffffffff", users_csv), "no mechanism")


def test_privatize_takes_the_mechanisms_document_file_like_the_operator_commands(server, users_csv, tmp_path):
    """`--mechanism mech.json` stands for the file's id (as `rldp estimate mech.json` does): the document is then
    downloaded from the server and verified as for an id; a file that is not a document is one line."""
    doc = make_document("client-cli-file")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
    path = tmp_path / "mech.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    proc = run("privatize", "--server", server.url, "--mechanism", path, users_csv, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mechanism"] == doc["id"]
    one_line_error(
        run("privatize", "--server", server.url, "--mechanism", tmp_path / "nope.json", users_csv),
        "neither a mechanism id",
    )


def test_a_windowed_collection_needs_one_flag_and_every_refusal_advice_works(server, tmp_path):
    """Issue 37: on a windowed mechanism (every design's default) `rldp privatize --collection NAME FILE`
    was refused for want of --state, --state for want of --owner-column, and that refusal advised
    dropping --state: a circle. Each refusal's advice is followed here, literally."""
    doc = make_document("client-cli-window", window="P1D")
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
        admin.create_collection("cli-windowed", doc["id"], {"notion": "rldp", "epsilon": 1.0})
    records = tmp_path / "records.csv"
    records.write_text("sex,colour\nFemale,red\nMale,blue\nMale,green\n")
    base = ("privatize", "--server", server.url, "--collection", "cli-windowed")
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}  # the default state file goes there
    refusal = run(*base, records, env=env)
    one_line_error(refusal, "--owner-column NAME", "add one if the file has none")
    assert "drop --state" not in refusal.stderr
    # With --state alone: still an owner column, and no advice to drop --state.
    state_only = run(*base, "--state", tmp_path / "st.sqlite3", records, env=env)
    one_line_error(state_only, "--owner-column NAME")
    assert "drop --state" not in state_only.stderr
    # The advice: add an owner column and name it. One flag.
    owned = tmp_path / "owned.csv"
    owned.write_text("user,sex,colour\nann,Female,red\nbob,Male,blue\ncat,Male,green\n")
    proc = run(*base, owned, "--owner-column", "user", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["accepted"] == 3
    assert (tmp_path / "data" / "rldp" / "client-state.sqlite3").is_file()  # the default state file
    again = run(*base, owned, "--owner-column", "user", "--json", env=env)  # the same day: already reported
    assert again.returncode == 0 and json.loads(again.stdout)["skipped"] == 3, again.stderr


def test_without_a_window_dropping_state_works_as_advised(server, mechanism_id, tmp_path):
    records = tmp_path / "records.csv"
    records.write_text("sex,colour\nFemale,red\nMale,blue\n")
    base = ("privatize", "--server", server.url, "--mechanism", mechanism_id)
    one_line_error(run(*base, "--state", tmp_path / "st.sqlite3", records), "--owner-column NAME", "drop --state")
    proc = run(*base, records, "--json")  # --state dropped, as advised: fresh draws
    assert proc.returncode == 0 and json.loads(proc.stdout)["accepted"] == 2, proc.stderr
