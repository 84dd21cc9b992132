"""Upload credentials in the store: the hashes of a collection's upload tokens (see docs/design.md).

``rldp_upload_credentials`` holds, per collection that requires one, the SHA-256 of its current
upload token and of the previous one (accepted until the next rotation or a revoke, so that installs
can pick up the new token), with when each was made. The tokens themselves are never stored.
Created on open like every collection table (no version bump: older stores gain it, nothing moves).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .host import StorageHost

__all__ = ["UPLOAD_CREDENTIAL_STATEMENTS", "UploadCredential", "UploadCredentialStore"]

UPLOAD_CREDENTIAL_STATEMENTS = [
    "CREATE TABLE IF NOT EXISTS rldp_upload_credentials ("
    " collection TEXT PRIMARY KEY, current_sha256 TEXT NOT NULL, current_since DOUBLE PRECISION NOT NULL,"
    " previous_sha256 TEXT, previous_since DOUBLE PRECISION)",
]


@dataclass(frozen=True)
class UploadCredential:
    """The upload credential of a collection: the SHA-256 (hex) of its current token and of the previous
    one (None: none), and when each was made (Unix seconds)."""

    collection: str
    current_sha256: str
    current_since: float
    previous_sha256: str | None
    previous_since: float | None

    @property
    def accepted(self) -> tuple[str, ...]:
        """The hashes an upload's token may match."""
        return (self.current_sha256,) if self.previous_sha256 is None else (self.current_sha256, self.previous_sha256)


class UploadCredentialStore(StorageHost):
    """Mixin of :class:`~.base.Storage`: set, revoke and read the collections' upload credentials."""

    def rotate_upload_credential(self, collection: str, token_sha256: str) -> UploadCredential:
        """Make ``token_sha256`` the current upload token hash of ``collection``; the current one, if any,
        becomes the previous one (the one before it is dropped). The credential after."""
        now = time.time()
        with self.write_transaction() as conn:
            conn.execute(
                self._sql(
                    "INSERT INTO rldp_upload_credentials (collection, current_sha256, current_since,"
                    " previous_sha256, previous_since) VALUES (?, ?, ?, NULL, NULL) ON CONFLICT (collection) DO UPDATE"
                    " SET previous_sha256 = rldp_upload_credentials.current_sha256,"
                    " previous_since = rldp_upload_credentials.current_since,"
                    " current_sha256 = excluded.current_sha256, current_since = excluded.current_since"
                ),
                (collection, token_sha256, now),
            )
            found = self._upload_credential(conn, collection)
        assert found is not None
        return found

    def revoke_upload_credential(self, collection: str) -> bool:
        """Drop the upload credential of ``collection`` (its uploads need no token again); True if it had one."""
        with self.write_transaction() as conn:
            cur = conn.execute(self._sql("DELETE FROM rldp_upload_credentials WHERE collection = ?"), (collection,))
            return bool(cur.rowcount == 1)

    def _upload_credential(self, conn: Any, collection: str) -> UploadCredential | None:
        row = conn.execute(
            self._sql(
                "SELECT collection, current_sha256, current_since, previous_sha256, previous_since"
                " FROM rldp_upload_credentials WHERE collection = ?"
            ),
            (collection,),
        ).fetchone()
        return None if row is None else _credential(row)

    def upload_credentials(self) -> dict[str, UploadCredential]:
        """The credential each mechanism's uploads need: mechanism id → its collection's credential
        (only mechanisms of collections that require one, current or not)."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                "SELECT m.mechanism, c.collection, c.current_sha256, c.current_since, c.previous_sha256,"
                " c.previous_since FROM rldp_upload_credentials c"
                " JOIN rldp_collection_mechanisms m ON m.collection = c.collection"
            ).fetchall()
        return {str(r[0]): _credential(r[1:]) for r in rows}


def _credential(row: Any) -> UploadCredential:
    return UploadCredential(
        collection=str(row[0]),
        current_sha256=str(row[1]),
        current_since=float(row[2]),
        previous_sha256=None if row[3] is None else str(row[3]),
        previous_since=None if row[4] is None else float(row[4]),
    )
