"""Backups of a store and their restore (``rldp backup`` / ``rldp restore``).

* SQLite: SQLite's online backup API (:meth:`sqlite3.Connection.backup`), copying every page in
  one step under one read transaction. In WAL mode readers do not block writers, so a server
  keeps ingesting meanwhile, and the copy is one committed state of the store: every batch
  acknowledged before the backup began is in it, and no half-written group (a batch without
  its counts) can be. The copy is written next to ``OUT`` and renamed into place, so a file
  named ``OUT`` is always a whole backup.
* PostgreSQL: ``pg_dump --format=custom`` of the ``rldp_*`` tables and ``pg_restore``
  (client programs of the server's major version or newer, on PATH). The dump runs on a
  snapshot exported by the transaction that also takes the :class:`~.retention.Inventory`
  it reports, so the summary is exactly what the dump holds. The password is passed in
  PGPASSWORD, never on a command line.

A restore refuses a target that holds anything (mechanisms, batches, collections, jobs)
unless ``force``, and a backup whose schema version this rldp does not know; an older version
is migrated when the restored store is opened (:func:`.schema.upgrade_schema`), and a backup whose
batch payloads do not decode (:mod:`.backup_check`: checked before anything is written). It also refuses,
at once, a store a live ``rldp serve`` is using (:mod:`.serverlock`: the server's lock, taken for
its lifetime, which the restore tries to take exclusively).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from .backup_check import BATCH_CHECK_COLUMNS, copy_rows, verify_batches
from .factory import open_storage
from .retention import Inventory, inventory, inventory_of
from .rows import StorageError
from .schema import SCHEMA_VERSION, migrations
from .serverlock import exclusive_for_restore

__all__ = ["backup", "restore", "backup_kind", "pg_tools_missing"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
_PGDUMP_MAGIC = b"PGDMP"
#: Query parameters of a store URL that are rldp's, not libpq's.
_RLDP_PARAMS = {"pool_size"}


def backup_kind(path: str) -> str:
    """The backup kind, "sqlite" or "postgresql", by the file's first bytes; StorageError for anything else."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(_PGDUMP_MAGIC):
        return "postgresql"
    raise StorageError(f"{path} is not an rldp backup (neither a SQLite file nor a pg_dump custom-format archive)")


def _check_version(version: str | None, where: str) -> None:
    if version is None:
        raise StorageError(f"{where} holds no rldp schema version: it is not an rldp store")
    if version != SCHEMA_VERSION and version not in migrations():
        raise StorageError(
            f"{where} has schema version {version}, unknown to this rldp (it uses {SCHEMA_VERSION}): "
            "restore it with the rldp that made it, or upgrade rldp"
        )


def _fresh_path(out: str, force: bool) -> str:
    if os.path.exists(out) and not force:
        raise StorageError(f"{out} exists; choose another file or pass --force to replace it")
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".rldp-backup-", dir=parent)
    os.close(fd)
    return tmp


def backup(url: str, out: str, *, force: bool = False) -> Inventory:
    """Back up the store at ``url`` to the file ``out``; what the backup holds."""
    storage = open_storage(url, init=False)
    try:
        tmp = _fresh_path(out, force)
        try:
            if storage.dialect == "sqlite":
                summary = _sqlite_backup(storage.path, tmp)  # type: ignore[attr-defined]
            else:
                summary = _pg_backup(url, tmp)
            os.replace(tmp, out)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    finally:
        storage.close()
    return summary


def _sqlite_backup(path: str, tmp: str) -> Inventory:
    if not os.path.isfile(path):
        raise StorageError(f"no store at {path} (give the store's URL with --db or RLDP_DATABASE_URL)")
    try:
        src = sqlite3.connect(path, timeout=30.0)
        dst = sqlite3.connect(tmp)
        try:
            src.backup(dst)  # pages=-1: all in one step, under one read transaction
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            summary = inventory_of(dst)
        finally:
            dst.close()
            src.close()
    except sqlite3.Error as exc:
        raise StorageError(f"SQLite backup of {path} failed: {exc}") from exc
    _check_version(summary.schema, path)
    return summary


def restore(url: str, source: str, *, force: bool = False) -> Inventory:
    """Restore the backup file ``source`` into the store at ``url``; what the store then holds.

    Refuses (StorageError) a target that is not empty unless ``force``, a backup of the other
    backend, a schema version this rldp does not know, and (:class:`.serverlock.StoreInUse`) a store
    an ``rldp serve`` is using: stop the server first.
    """
    kind = backup_kind(source)
    target = open_storage(url, init=False)
    try:
        if target.dialect != kind:
            raise StorageError(f"{source} is a {kind} backup; the store {url.split('://')[0]}:// is {target.dialect}")
        with exclusive_for_restore(target):  # StoreInUse while a server uses the store; none starts meanwhile
            existing = _existing(target)
            if existing is not None and not existing.empty and not force:
                raise StorageError(
                    f"the target store is not empty ({existing.lines()[0]}); restore into an empty store, "
                    "or pass --force to replace what it holds"
                )
            if kind == "sqlite":
                _sqlite_restore(source, target.path)  # type: ignore[attr-defined]
            else:
                _pg_restore(url, source)
            restored = open_storage(url)  # runs the migrations of an older backup
            try:
                return inventory(restored)
            finally:
                restored.close()
    finally:
        target.close()


def _existing(target: Any) -> Inventory | None:
    """What the target holds; None when it has no rldp tables yet."""
    try:
        return inventory(target)
    except StorageError:
        return None


def _sqlite_restore(source: str, path: str) -> None:
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            try:
                row = src.execute("SELECT value FROM rldp_meta WHERE key = 'schema'").fetchone()
            except sqlite3.Error:  # another application's SQLite file
                row = None
            _check_version(None if row is None else str(row[0]), source)
            outputs = {str(m): int(k) for m, k in src.execute("SELECT id, outputs FROM rldp_mechanisms")}
            rows = src.execute(f"SELECT {', '.join(BATCH_CHECK_COLUMNS)} FROM rldp_batches ORDER BY received, rowid")
            verify_batches(rows, outputs, source)  # before anything is written to the target
            dst = sqlite3.connect(path, timeout=30.0)
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise StorageError(f"restore from {source} failed: {exc}") from exc


# -- PostgreSQL: pg_dump / pg_restore


def pg_tools_missing() -> str | None:
    """Why PostgreSQL backups cannot run here (a client program missing from PATH), or None."""
    missing = [tool for tool in ("pg_dump", "pg_restore") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found on PATH (install the PostgreSQL client programs)" if missing else None


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """(the URL without password and rldp's own parameters, the environment carrying the password)."""
    parts = urlsplit(url)
    env = dict(os.environ)
    netloc = parts.netloc
    if parts.password is not None:
        env["PGPASSWORD"] = unquote(parts.password)
        netloc = netloc.replace(f":{parts.password}@", "@", 1)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _RLDP_PARAMS])
    scheme = "postgresql" if parts.scheme == "postgres" else parts.scheme
    return parts._replace(scheme=scheme, netloc=netloc, query=query).geturl(), env


def _run(args: list[str], env: Mapping[str, str]) -> str:
    why = pg_tools_missing()
    if why is not None:
        raise StorageError(why)
    done = subprocess.run(args, env=dict(env), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise StorageError(f"{args[0]} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")
    return done.stdout


def _pg_backup(url: str, tmp: str) -> Inventory:
    import psycopg  # the storage's driver (PostgresStorage refused already if it is missing)

    dsn, env = _libpq(url)
    try:
        password: dict[str, Any] = {"password": env["PGPASSWORD"]} if env.get("PGPASSWORD") else {}
        with psycopg.connect(dsn, autocommit=True, **password) as conn:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()[0]  # type: ignore[index]
                summary = inventory_of(conn)
                _check_version(summary.schema, "the store")
                # The schema holding the store (public, or the search_path of the URL): pg_dump resets search_path.
                schema = conn.execute(
                    "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                    " WHERE c.oid = to_regclass('rldp_meta')"
                ).fetchone()[0]  # type: ignore[index]
                _run(
                    ["pg_dump", "--format=custom", "--no-owner", "--no-privileges", f'--table="{schema}".rldp_*',
                     f"--snapshot={snapshot}", f"--file={tmp}", f"--dbname={dsn}"],
                    env,
                )  # fmt: skip
    except psycopg.Error as exc:
        raise StorageError(f"postgresql error: {exc}") from exc
    return summary


def _pg_restore(url: str, source: str) -> None:
    dsn, env = _libpq(url)
    listing = _run(["pg_restore", "--data-only", "--table=rldp_meta", "--file=-", source], env)
    version = None
    for line in listing.splitlines():
        key, _, value = line.partition("\t")
        if key == "schema":
            version = value.strip()
    _check_version(version, source)
    _pg_verify(source, env)  # every batch payload decodes, before anything is written
    _run(
        ["pg_restore", "--clean", "--if-exists", "--no-owner", "--no-privileges", "--single-transaction",
         "--exit-on-error", f"--dbname={dsn}", source],
        env,
    )  # fmt: skip


def _pg_verify(source: str, env: Mapping[str, str]) -> None:
    """:func:`.backup_check.verify_batches` on the archive's rows, read from pg_restore's plain output."""
    mechanisms = _run(["pg_restore", "--data-only", "--table=rldp_mechanisms", "--file=-", source], env)
    outputs = {r["id"]: int(r["outputs"]) for r in copy_rows(mechanisms.splitlines(), "rldp_mechanisms")}
    with subprocess.Popen(
        ["pg_restore", "--data-only", "--table=rldp_batches", "--file=-", source],
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        encoding="utf-8",
        errors="replace",
    ) as proc:
        assert proc.stdout is not None
        try:
            rows = copy_rows(proc.stdout, "rldp_batches")
            verify_batches((tuple(r[c] for c in BATCH_CHECK_COLUMNS) for r in rows), outputs, source)
        finally:
            proc.kill()
