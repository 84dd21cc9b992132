"""Issue 34, the client alone (no aggregator): a 401 upload-credential is UploadCredentialRefused, a permanent
ProblemError whose message says what to do; an empty upload token is refused when the client is made."""

from __future__ import annotations

import pytest

from rldp.client import Client, ProblemError, UploadCredentialRefused
from rldp.client.errors import problem_error


def test_a_401_upload_credential_is_a_typed_permanent_refusal():
    problem = {
        "type": "https://rldp.dev/problems/upload-credential",
        "reason": "upload-credential",
        "detail": "collection 'app' requires an upload token; none was sent. Nothing was stored",
    }
    err = problem_error(401, problem)
    assert isinstance(err, UploadCredentialRefused) and isinstance(err, ProblemError) and isinstance(err, ValueError)
    assert err.status == 401 and err.reason == "upload-credential" and err.detail == problem["detail"]
    assert "upload_token" in str(err)
    other = problem_error(401, {"reason": "unauthorized", "detail": "admin token"})  # the admin calls' 401
    assert type(other) is ProblemError


@pytest.mark.parametrize("bad", ["", "   ", 42])
def test_an_empty_or_non_string_upload_token_is_refused(bad):
    with pytest.raises(ValueError, match="upload_token"):
        Client("http://127.0.0.1:9", state_path=None, upload_token=bad)
