"""Verified mechanism documents kept on disk next to the offline queue.

An app that starts offline can then still privatise and queue its reports: the client
reads the document from this folder instead of the server. A document is stored only
after it passed verification (content id, policy, privacy audit) and is verified again,
in full, every time it is loaded — a file changed on disk no longer hashes to its id and
is refused (:class:`~rldp.client.MechanismRejected`), never used. Content ids make the
documents immutable, so a cached copy never goes stale; only the server knows whether a
mechanism was retired (uploads then answer mechanism-retired).

Layout: ``<queue file>.mechanisms/<id>.msgpack``, folder mode 0700, written atomically.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from rldp.shared.document import DocumentError, from_msgpack, to_msgpack

__all__ = ["DocumentCache", "cache_folder"]

_ID = re.compile(r"[0-9a-f]{64}")


def cache_folder(queue_path: str | os.PathLike[str]) -> Path:
    """The folder of verified documents that belongs to the queue file ``queue_path``."""
    path = Path(queue_path)
    return path.with_name(path.name + ".mechanisms")


class DocumentCache:
    """One msgpack file per verified document, named by its content id."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _path(self, mechanism_id: str) -> Path | None:
        return self.folder / f"{mechanism_id}.msgpack" if _ID.fullmatch(mechanism_id) else None

    def load(self, mechanism_id: str) -> dict[str, Any] | None:
        """The stored document (not yet verified: the caller verifies it), or None if there is none.

        Raises :class:`DocumentError` if the file is there but unreadable as a document."""
        path = self._path(mechanism_id)
        if path is None or not path.is_file():
            return None
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DocumentError(f"cannot read the cached document {path}: {exc.strerror or exc}") from None
        return from_msgpack(data)

    def store(self, document: dict[str, Any]) -> None:
        """Keep a verified document (atomically; a failure to write only loses the cache)."""
        path = self._path(str(document.get("id", "")))
        if path is None:
            return
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(to_msgpack(document))
            os.replace(tmp, path)
        except OSError:
            pass

    def discard(self, mechanism_id: str) -> None:
        """Remove a cached document (it failed verification)."""
        path = self._path(mechanism_id)
        if path is not None:
            path.unlink(missing_ok=True)
