"""Opening the service's storage, and the SQLite writer process of a multi-process server.

With SQLite, ``rldp serve`` starts one writer process (:mod:`rldp.aggregator.writer`) that
commits every worker's report batches in shared group commits; each worker's storage
hands its batches to it through a :class:`~rldp.aggregator.writer.WriterClient`, and the
HTTP front awaits report uploads on its event loop through an
:class:`~rldp.aggregator.writer.AsyncWriterClient` (:func:`async_committer`).
PostgreSQL handles concurrent writers itself and needs none.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import tempfile

from rldp.aggregator.storage import SQLiteStorage, Storage, open_storage
from rldp.aggregator.storage.serverlock import ServerLock, StoreInUse, hold_for_server
from rldp.aggregator.writer import AsyncWriterClient, WriterClient, WriterProcess

from .ingest import AsyncCommit

__all__ = [
    "async_committer",
    "open_service_storage",
    "check_storage",
    "clean_stale_dirs",
    "hold_store",
    "start_writer",
    "ServerLock",
    "StoreInUse",
    "WriterProcess",
]


def open_service_storage(url: str, writer_socket: str | None = None) -> Storage:
    """The storage at ``url`` (schema created); batches go to the writer at ``writer_socket`` if given."""
    return open_storage(url, sink=WriterClient(writer_socket) if writer_socket else None)


def async_committer(writer_socket: str | None) -> AsyncCommit | None:
    """The commit an asyncio event loop awaits for the writer at ``writer_socket``: one pipelined
    connection, no thread per waiting upload. None without a writer (PostgreSQL): a commit is
    then run in a thread."""
    return AsyncWriterClient(writer_socket).submit if writer_socket else None


def check_storage(url: str) -> bool:
    """Open the storage once (creating its schema) and close it; whether it needs a writer process.

    Why before the workers start: a bad URL is then one clear error instead of failing workers.
    """
    store = open_storage(url)
    try:
        return isinstance(store, SQLiteStorage)
    finally:
        store.close()


def hold_store(url: str) -> ServerLock:
    """The running server's shared lock on the store at ``url``, held until the returned lock is closed
    or this process ends: ``rldp restore`` refuses while it is held (:mod:`rldp.aggregator.storage.serverlock`).
    :class:`StoreInUse` while a restore runs."""
    store = open_storage(url, init=False)
    try:
        return hold_for_server(store)
    finally:
        store.close()


def start_writer(url: str) -> WriterProcess:
    """Start the writer process for a SQLite URL (ValueError if it cannot start); stop it with ``.stop()``."""
    return WriterProcess(url).start()


#: Private temporary folders of ``rldp serve``: ``rldp-<kind>-<pid of the serve process>-<random>``.
_OWNED_DIR = re.compile(r"^rldp-(writer|metrics)-(\d+)-[A-Za-z0-9_]+$")
_LEGACY_WRITER_DIR = re.compile(r"^rldp-writer-[A-Za-z0-9_]+$")


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _legacy_writer_dead(path: str) -> bool:
    """A folder of an older version (no pid in its name): stale if its socket accepts no connection."""
    sock_path = os.path.join(path, "writer.sock")
    if not os.path.exists(sock_path):
        return not os.listdir(path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(sock_path)
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
    return False


def clean_stale_dirs(tmp: str | None = None) -> list[str]:
    """Remove this user's ``rldp-writer-*`` / ``rldp-metrics-*`` folders whose ``rldp serve`` died
    (a ``kill -9`` skips the clean-up at exit); folders of running servers are left alone.
    Returns the removed paths."""
    tmp = tmp or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    uid = os.getuid()
    for name in names:
        path = os.path.join(tmp, name)
        owned = _OWNED_DIR.match(name)
        if owned is None and _LEGACY_WRITER_DIR.match(name) is None:
            continue
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            stale = not _process_alive(int(owned.group(2))) if owned else _legacy_writer_dead(path)
        except OSError:
            continue
        if stale and int(owned.group(2) if owned else -1) != os.getpid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
