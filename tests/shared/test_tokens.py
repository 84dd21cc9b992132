"""Tokens rldp makes can be passed as ``--flag TOKEN`` (a URL-safe base64 token starts with "-" one time in 64)."""

from __future__ import annotations

import argparse
import hashlib
import re

from rldp.shared.tokens import TOKEN_PREFIX, hash_token, new_token


def test_a_new_token_is_the_prefix_and_32_random_bytes_and_never_reads_as_a_flag():
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--upload-token")
    tokens = {new_token() for _ in range(2_000)}  # 2,000 draws: P(no leading "-" without the prefix) ≈ 2e-14
    assert len(tokens) == 2_000
    for token in tokens:
        assert re.fullmatch(TOKEN_PREFIX + r"[A-Za-z0-9_-]{43}", token), token
        assert parser.parse_args(["--upload-token", token]).upload_token == token


def test_the_stored_hash_is_sha256_of_the_whole_token():
    assert hash_token("rldp_x") == hashlib.sha256(b"rldp_x").hexdigest()
