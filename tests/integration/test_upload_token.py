"""Issue 34: an upload credential per collection, end to end on ``rldp serve``. The operator makes (and rotates,
and revokes) the token with ``rldp collection upload-token``; ``Client(url, upload_token=...)`` sends it on report
uploads only; a client without it gets a clear UploadCredentialRefused and nothing is stored."""

from __future__ import annotations

import time
import uuid

import pytest
import requests
from cli_helpers import run_cli
from rldp_live import ADMIN_TOKEN, make_document

from rldp.admin import AdminClient
from rldp.aggregator.services import UploadCredentials
from rldp.aggregator.storage import open_storage
from rldp.client import Client, ProblemError, RldpError, UploadCredentialRefused

POLICY = {"notion": "rldp", "epsilon": 1.0}
RECORDS = [("Female", "red"), ("Male", "blue")]


def _stored(server, mid: str) -> int:
    store = open_storage(server.db_url)
    try:
        return int(store.batch_totals(mid)[1])
    finally:
        store.close()


def _collection(server) -> tuple[str, str]:
    name = f"usage-{uuid.uuid4().hex[:10]}"
    doc = make_document(name)
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        admin.publish(doc)
        assert admin.create_collection(name, doc["id"], POLICY, window="none")["created"]
    return name, doc["id"]


def _cli(server, *args: object):
    """``rldp collection upload-token *args``; then past the credentials' cache time, so that every server
    process (each reads them at most every TTL seconds) sees the change."""
    env = {"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN, "RLDP_READ_TOKEN": ""}
    proc = run_cli("collection", "upload-token", *args, env=env, timeout=120)
    time.sleep(UploadCredentials.TTL + 0.2)
    return proc


class _Recorder(requests.Session):
    """A session that records the Authorization header of every request it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str, str | None]] = []

    def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
        self.seen.append((request.method, request.path_url, request.headers.get("Authorization")))
        return super().send(request, **kwargs)


def test_the_operator_s_token_lets_the_app_upload_and_nobody_else(server):
    name, mid = _collection(server)
    made = _cli(server, name)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()  # stdout holds the token alone
    assert len(token) >= 40 and "\n" not in token
    assert "shown once" in made.stderr and "never one per install" in made.stderr
    with Client(server.url, state_path=None) as outsider:
        with pytest.raises(UploadCredentialRefused) as refused:
            outsider.collection(name).submit(RECORDS)
    err = refused.value
    assert isinstance(err, ProblemError) and isinstance(err, RldpError) and err.status == 401
    assert err.reason == "upload-credential" and "upload_token" in str(err) and token not in str(err)
    assert _stored(server, mid) == 0
    with Client(server.url, state_path=None, upload_token="forged-token") as forger:
        with pytest.raises(UploadCredentialRefused):
            forger.collection(name).submit(RECORDS)
    session = _Recorder()
    with Client(server.url, state_path=None, upload_token=token, session=session) as app:
        app.collection(name).submit(RECORDS)
    assert _stored(server, mid) == 2
    # The token goes with the report upload only: never with the lookups of the collection or its mechanism.
    for method, path, authorization in session.seen:
        if path == "/v1/reports":
            assert method == "POST" and authorization == f"Bearer {token}"
        else:
            assert authorization is None, (method, path)
    assert any(path == "/v1/reports" for _, path, _ in session.seen)
    # A rotation keeps the previous token valid until the next one; a revoke lifts the requirement.
    rotated = _cli(server, name, "--json")
    assert rotated.returncode == 0, rotated.stderr
    assert '"previous_valid": true' in rotated.stdout
    with Client(server.url, state_path=None, upload_token=token) as app:
        app.collection(name).submit(RECORDS)
    assert _stored(server, mid) == 4
    assert _cli(server, name).returncode == 0
    with Client(server.url, state_path=None, upload_token=token) as app:
        with pytest.raises(UploadCredentialRefused):
            app.collection(name).submit(RECORDS)
    revoked = _cli(server, name, "--revoke")
    assert revoked.returncode == 0 and "upload token revoked" in revoked.stdout, revoked.stderr
    with Client(server.url, state_path=None) as outsider:
        outsider.collection(name).submit(RECORDS)
    assert _stored(server, mid) == 6


def test_the_cli_needs_the_admin_token_and_an_existing_collection(server):
    name, _ = _collection(server)
    env = {"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": "", "RLDP_READ_TOKEN": ""}
    proc = run_cli("collection", "upload-token", name, env=env, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    missing = _cli(server, "no-such-collection")
    assert missing.returncode != 0 and "unknown-collection" in missing.stderr and "Traceback" not in missing.stderr
    with pytest.raises(ValueError, match="upload_token"):
        Client(server.url, state_path=None, upload_token="  ")


def _operator(*args: object, server, **env: str):
    return run_cli(*args, env={"RLDP_SERVER": server.url, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN, **env}, timeout=120)


def test_show_and_list_say_whether_uploads_need_the_token_and_privatize_sends_it(server, tmp_path):
    """``rldp collection show`` and ``rldp collections`` say whether uploads need a token (never the token);
    ``rldp privatize`` sends it from ``--upload-token`` or RLDP_UPLOAD_TOKEN, and without it is refused in
    one line naming both, nothing stored."""
    name, mid = _collection(server)
    shown = _operator("collection", "show", name, server=server)
    assert shown.returncode == 0 and "uploads: need no token" in shown.stdout, shown.stderr
    listed = _operator("collections", server=server)
    header, *rows = listed.stdout.splitlines()
    assert "UPLOAD TOKEN" in header
    [row] = [r for r in rows if r.startswith(name)]
    assert row[header.index("UPLOAD TOKEN") :].split()[0] == "none", listed.stdout
    token = _cli(server, name).stdout.strip()
    shown = _operator("collection", "show", name, server=server)
    assert "uploads: need the collection's upload token" in shown.stdout and token not in shown.stdout
    listed = _operator("collections", "--json", server=server)
    assert '"upload_token_required": true' in listed.stdout and token not in listed.stdout
    header, *rows = _operator("collections", server=server).stdout.splitlines()
    [row] = [r for r in rows if r.startswith(name)]
    assert row[header.index("UPLOAD TOKEN") :].split()[0] == "required" and token not in row

    users = tmp_path / "users.csv"
    users.write_text("sex,colour\nFemale,red\nMale,blue\n")
    privatize = ("privatize", "--collection", name, users, "--json", "--retries", "0")
    refused = _operator(*privatize, server=server, RLDP_UPLOAD_TOKEN="")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert (
        "requires an upload token" in refused.stderr and "--upload-token TOKEN or $RLDP_UPLOAD_TOKEN" in refused.stderr
    )
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert _stored(server, mid) == 0
    wrong = _operator(*privatize, "--upload-token", "forged", server=server, RLDP_UPLOAD_TOKEN=token)
    assert wrong.returncode != 0 and "not its current or previous token" in wrong.stderr, wrong.stderr  # flag wins
    assert _stored(server, mid) == 0
    flagged = _operator(*privatize, "--upload-token", token, server=server, RLDP_UPLOAD_TOKEN="")
    assert flagged.returncode == 0 and '"accepted": 2' in flagged.stdout, flagged.stderr
    from_env = _operator(*privatize, server=server, RLDP_UPLOAD_TOKEN=token)
    assert from_env.returncode == 0 and '"accepted": 2' in from_env.stdout, from_env.stderr
    assert _stored(server, mid) == 4
    blank = _operator(*privatize, "--upload-token", " ", server=server, RLDP_UPLOAD_TOKEN="")
    assert blank.returncode != 0 and "upload_token must be a non-empty string" in blank.stderr, blank.stderr
    assert "Traceback" not in blank.stderr
