"""Who is using a store: ``rldp serve`` holds a shared lock on it for its whole life, and
``rldp restore`` takes the same lock exclusively without waiting, so it refuses to overwrite a
store a live server is reading and writing (and a server does not start during a restore).

* SQLite: an advisory ``flock`` of ``<database>-server.lock`` beside the database. The kernel
  releases it when the last process holding the descriptor ends, ``kill -9`` included, so a dead
  server leaves no stale lock. The file holds the pid of the last server that took it, for the
  message only (the lock, never the pid, decides).
* PostgreSQL: a session-level advisory lock keyed by the store's schema (several rldp stores may
  share a database, one per schema), held by one dedicated connection of ``rldp serve`` whose
  ``application_name`` names the server's pid and host. PostgreSQL releases it when that session
  ends, also when the process is killed (the server sees the socket close). Only a server of this
  rldp takes it: a process of an older rldp writing to the store is not detected.

Shared on the server side: several servers may use one store (a PostgreSQL database behind a load
balancer), and a restore must wait for all of them to stop.
"""

from __future__ import annotations

import errno
import os
import socket
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no detection (said by the message of hold/exclusive)
    fcntl = None  # type: ignore[assignment]

from .base import Storage
from .rows import StorageError

__all__ = ["StoreInUse", "ServerLock", "hold_for_server", "exclusive_for_restore", "lock_path"]

#: The first key of rldp's PostgreSQL advisory locks of this kind ("rldp" in ASCII); the second is
#: the schema's CRC-32. (Schema creation uses the one-key lock 7263519: another lock space.)
_PG_CLASS = 0x726C6470


class StoreInUse(StorageError):
    """The store is in use: by a server (for a restore) or by a restore (for a server)."""


def lock_path(storage: Storage) -> str:
    """The lock file of a SQLite store: ``<database>-server.lock`` (beside ``-writer.lock``)."""
    return str(storage.path) + "-server.lock"  # type: ignore[attr-defined]


def _open_lock_file(path: str) -> int:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None


def _flock(fd: int, mode: int) -> bool:
    """Whether the non-blocking flock ``mode`` was taken (False: another process holds a conflicting one)."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
            return False
        raise
    return True


def _pid_in(fd: int) -> int | None:
    """The live pid written in the lock file, or None (absent, garbled, or that process is gone)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        pid = int(text)
        os.kill(pid, 0)
    except PermissionError:  # another user's process: alive
        return pid
    except (OSError, ValueError):
        return None
    return pid


class ServerLock:
    """The lock a server holds until :meth:`close` or its end (the OS or PostgreSQL releases it then)."""

    def __init__(self, fd: int | None = None, conn: Any = None) -> None:
        self._fd, self._conn = fd, conn

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _pg_connect(storage: Storage, role: str) -> Any:
    import psycopg  # the storage's driver: PostgresStorage refused already if it is missing

    name = f"rldp {role} pid {os.getpid()} on {socket.gethostname()}"[:63]  # NAMEDATALEN - 1
    try:
        return psycopg.connect(storage.url, autocommit=True, application_name=name, connect_timeout=10)
    except psycopg.Error as exc:
        raise StorageError(f"postgresql error: {exc}") from exc


def _pg_key(conn: Any) -> tuple[tuple[int, int], str]:
    """(the lock's two int4 keys, "schema S of database D" for messages)."""
    schema, database = conn.execute("SELECT current_schema(), current_database()").fetchone()
    schema = schema or "public"
    crc = zlib.crc32(schema.encode("utf-8"))
    return (_PG_CLASS, crc - (1 << 32) if crc >= 1 << 31 else crc), f"schema {schema} of database {database}"


def _pg_holders(conn: Any, key: tuple[int, int], what: str) -> str:
    """``what`` and who holds the lock: the ``application_name`` of their sessions (``rldp serve pid N on
    HOST``), when this role may see them (another role's need pg_read_all_stats)."""
    rows = conn.execute(
        "SELECT DISTINCT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s::oid AND l.objid = %s::oid"
        " AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        (key[0], key[1] & 0xFFFFFFFF),
    ).fetchall()
    names = sorted(str(r[0]) for r in rows if r[0])
    return f"{what} ({', '.join(names)})" if names else what


def hold_for_server(storage: Storage) -> ServerLock:
    """Take the server's shared lock on the store for this process's life; :class:`StoreInUse` while a
    restore holds it. Keep the returned lock referenced (closing it releases the lock)."""
    if storage.dialect == "postgresql":
        conn = _pg_connect(storage, "serve")
        key, where = _pg_key(conn)
        if not conn.execute("SELECT pg_try_advisory_lock_shared(%s::int4, %s::int4)", key).fetchone()[0]:
            who = _pg_holders(conn, key, "a restore")
            conn.close()
            raise StoreInUse(f"{who} is running on the store in {where}; start the server when it is done")
        return ServerLock(conn=conn)
    if fcntl is None:  # pragma: no cover - not POSIX
        return ServerLock()
    path = lock_path(storage)
    fd = _open_lock_file(path)
    if not _flock(fd, fcntl.LOCK_SH):
        os.close(fd)
        raise StoreInUse(f"a restore is running on {storage.path}; start the server when it is done")  # type: ignore[attr-defined]
    # The pid, for a restore's message: written under the shared lock (last server wins; it is a hint).
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return ServerLock(fd=fd)


@contextmanager
def exclusive_for_restore(storage: Storage) -> Iterator[None]:
    """Hold the store exclusively while the block runs; :class:`StoreInUse` at once if a server uses it."""
    if storage.dialect == "postgresql":
        conn = _pg_connect(storage, "restore")
        try:
            key, where = _pg_key(conn)
            if not conn.execute("SELECT pg_try_advisory_lock(%s::int4, %s::int4)", key).fetchone()[0]:
                raise StoreInUse(f"{_pg_holders(conn, key, 'a server')} is using the store in {where}; stop it first")
            yield  # the session's lock ends with the connection below
        finally:
            conn.close()
        return
    if fcntl is None:  # pragma: no cover - not POSIX: no detection
        yield
        return
    path = lock_path(storage)
    fd = _open_lock_file(path)
    try:
        if not _flock(fd, fcntl.LOCK_EX):
            pid = _pid_in(fd)
            # No live pid: the server that wrote it was killed and a worker it forked lives on.
            who = f"a server (pid {pid})" if pid is not None else "a server"
            hint = "" if pid is not None else f" (fuser -v {path} lists its processes)"
            raise StoreInUse(f"{who} is using {storage.path}; stop it first{hint}")  # type: ignore[attr-defined]
        yield
    finally:
        os.close(fd)
