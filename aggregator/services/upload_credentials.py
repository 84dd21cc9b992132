"""Upload credentials: an optional bearer token per collection that its report uploads must carry.

Report uploads are anonymous by design: anyone who can reach the service can send a batch. An operator
who can hand a secret to its own app (the app's backend gives it to its installs) can require it per
collection: :meth:`UploadCredentials.rotate` makes a new token (returned once; only its SHA-256 is
stored) and keeps the previous one valid until the next rotation or a revoke, so installs can pick up
the new one; :meth:`UploadCredentials.revoke` drops the requirement. :meth:`UploadCredentials.check`
refuses, before anything is stored, a batch for a mechanism of such a collection whose
``Authorization: Bearer`` token matches neither (:class:`~.errors.UploadCredentialRequired`, 401).

Every install of the app holds the same token: it links a report to "an install of this app" and nothing
finer (see docs/design.md, "The drift watch under attack"). Every server process reads the credentials
from the store at most every :attr:`UploadCredentials.TTL` seconds (one small query).
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable

from rldp.aggregator.storage import Storage, UploadCredential
from rldp.shared.tokens import hash_token, new_token

from .errors import UploadCredentialRequired

__all__ = ["UploadCredentials"]


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value; None for none or another scheme."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class UploadCredentials:
    """The upload credentials in force, cached for :attr:`TTL` seconds (see the module docstring)."""

    TTL = 1.0

    def __init__(self, storage: Storage, clock: Callable[[], float] = time.monotonic) -> None:
        self._storage = storage
        self._clock = clock
        self._lock = threading.Lock()
        self._by_mechanism: dict[str, UploadCredential] = {}
        self._read_at = -float("inf")

    def _current(self) -> dict[str, UploadCredential]:
        now = self._clock()
        with self._lock:
            if now - self._read_at >= self.TTL:
                self._by_mechanism = self._storage.upload_credentials()
                self._read_at = now
            return self._by_mechanism

    def _forget(self) -> None:
        with self._lock:
            self._read_at = -float("inf")

    def check(self, mechanism_id: str, authorization: str | None) -> None:
        """Refuse (UploadCredentialRequired) a batch of ``mechanism_id`` whose collection requires an upload
        token unless ``authorization`` (the Authorization header's value) carries its current or previous one."""
        credential = self._current().get(mechanism_id)
        if credential is None:
            return
        token = bearer_token(authorization)
        if token is not None:
            digest = hash_token(token)
            matched = False
            for accepted in credential.accepted:  # constant time, and every hash compared
                matched |= hmac.compare_digest(digest, accepted)
            if matched:
                return
        given = (
            "none was sent"
            if authorization is None or not authorization.strip()
            else (
                "the one sent is not its current or previous token"
                if token is not None
                else "the Authorization header does not use the Bearer scheme"
            )
        )
        raise UploadCredentialRequired(
            f"collection {credential.collection!r} requires an upload token: send 'Authorization: Bearer <token>' "
            f"with the token its operator gave the app (rldp collection upload-token); {given}. Nothing was stored",
            mechanism=mechanism_id,
            collection=credential.collection,
        )

    def rotate(self, collection: str) -> tuple[str, bool]:
        """A new upload token for ``collection`` (only its hash is stored; shown to the caller once); and
        whether a previous token stays valid (until the next rotation or a revoke)."""
        token = new_token()
        credential = self._storage.rotate_upload_credential(collection, hash_token(token))
        self._forget()
        return token, credential.previous_sha256 is not None

    def revoke(self, collection: str) -> bool:
        """Drop the upload credential of ``collection``: its uploads need no token again; True if it had one."""
        revoked = self._storage.revoke_upload_credential(collection)
        self._forget()
        return revoked

    def required(self, mechanism_id: str) -> bool:
        """Whether uploads of ``mechanism_id`` need a token (as of at most :attr:`TTL` seconds ago)."""
        return mechanism_id in self._current()

    def collections(self) -> frozenset[str]:
        """The collections whose uploads need a token (as of at most :attr:`TTL` seconds ago): what the API and
        the dashboard show (whether a credential is needed, never the token)."""
        return frozenset(credential.collection for credential in self._current().values())
