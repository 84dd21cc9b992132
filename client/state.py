"""The client's state file: one SQLite file per device for reporting over time.

It holds the memo (the Y first drawn for each owner, randomiser and record value), the
ledger of windows already reported, and the outbox of windowed batches not yet
acknowledged (:mod:`.memo`, :mod:`.ledger`, :mod:`.budget` read and write it). Why one file:
the draw, the ledger entry and the batch that carries them are committed in one
transaction, before the report leaves, so a crash can neither lose a draw that was sent
(and re-randomise the record) nor send a window twice.

Safety of the file itself:

* created with mode 0600 (SQLite gives its WAL and shared-memory files the same mode), in a
  temporary file that is hard-linked into place only once its schema is complete, so the
  path never holds a half-made state file; a file others may read is refused;
* every write is a ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL`` (durable on
  commit), serialised across threads (a lock) and processes (SQLite's write lock);
* a file that is not SQLite, is corrupt (``PRAGMA quick_check``), belongs to something else
  or to a newer rldp raises :class:`~rldp.client.errors.StateFileError`. It is never
  replaced by a new file: that would start a new memo and re-randomise every record.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Iterable, Iterator

from rldp import __version__

from .errors import StateFileError

__all__ = ["StateFile", "STATE_FORMAT", "fill_keys", "mechanism_key"]

#: The ``format`` stored in the file's ``meta`` table; a reader refuses any other but the older ones it
#: migrates (:data:`_OLDER`).
STATE_FORMAT = "rldp.client-state/3"
_FORMAT_PREFIX = "rldp.client-state/"
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # Each key (64 hex) once: a randomiser key (the memo's, format 3) or a document id (the ledger's, and the
    # memo's before format 3); the memo and the ledger refer to it by this small integer, so a row per owner
    # stays narrow (format 2: format 1 repeated the 64-character id in every row).
    "CREATE TABLE mechanisms (id INTEGER PRIMARY KEY, mechanism TEXT NOT NULL UNIQUE)",
    # The memo: owner's record value x under a randomiser (shared.document.randomiser_key: every document
    # with the same Q, per-report layer and alphabet, so a collection's rotations) → the Y drawn for it,
    # and the ε it spent. Keyed by
    # owner first: one B-tree serves the memo (owner, mechanism, x) and the budget's spending per owner
    # (format 1 needed a second index by owner, a second B-tree entry per draw).
    "CREATE TABLE memo (owner TEXT NOT NULL, mech INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL,"
    " epsilon REAL NOT NULL, created REAL NOT NULL, PRIMARY KEY (owner, mech, x)) WITHOUT ROWID",
    # The ledger: one row per (mechanism, window, owner) reported, with the batch that carries it (no index
    # by batch: a refused batch is released within its mechanism and window, ledger.release_batch).
    "CREATE TABLE reported (mech INTEGER NOT NULL, window_label TEXT NOT NULL, owner TEXT NOT NULL,"
    " batch TEXT NOT NULL, PRIMARY KEY (mech, window_label, owner)) WITHOUT ROWID",
    # Windowed batches committed with their ledger rows and not yet acknowledged by the server.
    "CREATE TABLE outbox (batch TEXT PRIMARY KEY, mechanism TEXT NOT NULL, window_label TEXT NOT NULL,"
    " n INTEGER NOT NULL, body BLOB NOT NULL, created REAL NOT NULL)",
    # Memo rows still keyed by a document id (drawn before format 3), by that id's key in ``mechanisms``:
    # moved to the document's randomiser key when the client next verifies that document (:func:`adopt`).
    # Until then they are never reused, and their ε still counts against the owner's budget.
    "CREATE TABLE legacy_memo (mech INTEGER PRIMARY KEY)",
)
#: Format 2 → 3: the memo was keyed by document id; every such key is listed as legacy (the rows stay).
_TO_3 = (_SCHEMA[5], "INSERT INTO legacy_memo (mech) SELECT DISTINCT mech FROM memo")
#: Each older format → this one, in one write transaction (a crash leaves the older file whole). Format 1 → 2:
#: the mechanism ids into their table, the memo and the ledger copied with the integer ids, the old tables
#: (and their indexes) dropped; then 2 → 3 (:data:`_TO_3`).
_OLDER = {
    "rldp.client-state/1": (
        _SCHEMA[1],
        "INSERT INTO mechanisms (mechanism) SELECT mechanism FROM memo UNION SELECT mechanism FROM reported",
        _SCHEMA[2].replace("TABLE memo", "TABLE memo_v2"),
        "INSERT INTO memo_v2 (owner, mech, x, y, epsilon, created) SELECT m.owner, k.id, m.x, m.y, m.epsilon,"
        " m.created FROM memo AS m JOIN mechanisms AS k ON k.mechanism = m.mechanism",
        "DROP TABLE memo",
        "ALTER TABLE memo_v2 RENAME TO memo",
        _SCHEMA[3].replace("TABLE reported", "TABLE reported_v2"),
        "INSERT INTO reported_v2 (mech, window_label, owner, batch) SELECT k.id, r.window_label, r.owner, r.batch"
        " FROM reported AS r JOIN mechanisms AS k ON k.mechanism = r.mechanism",
        "DROP TABLE reported",
        "ALTER TABLE reported_v2 RENAME TO reported",
        *_TO_3,
    ),
    "rldp.client-state/2": _TO_3,
}
_TABLES = frozenset({"meta", "mechanisms", "memo", "reported", "outbox", "legacy_memo"})


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _create(path: str) -> None:
    """Make a complete state file at ``path`` (mode 0600) unless one appears there meanwhile."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, mode=0o700, exist_ok=True)
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if os.name == "posix":
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # persistent: stored in the file's header
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("BEGIN")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [("format", STATE_FORMAT), ("created", repr(time.time())), ("rldp", __version__)],
            )
            conn.execute("COMMIT")
        finally:
            conn.close()
        try:
            os.link(tmp, path)  # atomic, and never replaces a file that another process made first
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.exists(path):
                os.rename(tmp, path)
        _fsync_dir(parent)
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


class StateFile:
    """An open state file (thread-safe; a forked child reopens its own connection)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if not os.path.lexists(self.path):
            _create(self.path)
        self._check_file()
        self._lock = threading.RLock()
        self._conn = self._connect()
        self._pid = os.getpid()
        self._commits = 0  # write transactions committed through this object (see :meth:`version`)

    def _check_file(self) -> None:
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise StateFileError(self.path, f"cannot be opened ({exc.strerror})") from None
        if not stat.S_ISREG(st.st_mode):
            raise StateFileError(self.path, "is not a regular file")
        if os.name == "posix" and st.st_mode & 0o077:
            raise StateFileError(
                self.path,
                f"others may read or write it (mode {stat.S_IMODE(st.st_mode):04o}); it holds your records' "
                "memoised reports: make it private (chmod 600) or give a new path",
            )

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StateFileError(self.path, f"cannot be opened ({exc})") from None
        try:
            self._check_format(conn)
            conn.execute("PRAGMA synchronous=FULL")  # a committed draw survives a power cut
            conn.execute("PRAGMA temp_store=MEMORY")  # the keys of a lookup (fill_keys) never touch the disk
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_format(self, conn: sqlite3.Connection) -> None:
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise StateFileError(
                self.path, f"is not an rldp client state file (not a readable SQLite database: {exc})"
            ) from None
        fmt = None
        if "meta" in tables:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            except sqlite3.DatabaseError as exc:
                raise StateFileError(self.path, f"is corrupt ({exc})") from None
            fmt = row[0] if row else None
        if not isinstance(fmt, str) or not fmt.startswith(_FORMAT_PREFIX):
            found = ", ".join(sorted(tables)) or "none"
            raise StateFileError(
                self.path,
                f"is not an rldp client state file (tables: {found}); give the path of a state file or a new path",
            )
        if fmt in _OLDER:
            self._migrate(conn, fmt)
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        elif fmt != STATE_FORMAT:
            row = conn.execute("SELECT value FROM meta WHERE key = 'rldp'").fetchone()
            writer = f"rldp {row[0]}" if row and isinstance(row[0], str) else "a newer rldp"
            raise StateFileError(
                self.path,
                f"has format {fmt!r}, written by {writer}; this rldp ({__version__}) reads {STATE_FORMAT!r} and "
                f"migrates {', '.join(repr(f) for f in _OLDER)}: use a newer rldp (an older one cannot read it)",
            )
        missing = _TABLES - tables
        if missing:
            raise StateFileError(self.path, f"is damaged: table(s) {', '.join(sorted(missing))} missing")
        try:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        except sqlite3.DatabaseError as exc:
            raise StateFileError(self.path, f"is corrupt ({exc})") from None
        if problems != ["ok"]:
            raise StateFileError(self.path, f"is corrupt (quick_check: {'; '.join(problems[:3])})")

    def _migrate(self, conn: sqlite3.Connection, fmt: str) -> None:
        """Rewrite a file of an older format in this one, in one write transaction (another process may be
        doing it too: the format is read again under the write lock)."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
                if row is not None and row[0] == fmt:
                    for statement in _OLDER[fmt]:
                        conn.execute(statement)
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'format'", (STATE_FORMAT,))
                    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rldp', ?)", (__version__,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StateFileError(self.path, f"cannot be migrated from {fmt!r} to {STATE_FORMAT!r} ({exc})") from None

    def _connection(self) -> sqlite3.Connection:
        if os.getpid() != self._pid:  # a forked child must not share its parent's SQLite handle
            self._conn = self._connect()
            self._pid = os.getpid()
        return self._conn

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                conn.execute(begin)
                yield conn
                conn.execute("COMMIT")
                if begin != "BEGIN":
                    self._commits += 1
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StateFileError(self.path, f"cannot be used ({type(exc).__name__}: {exc})") from None
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed on exit, rolled back on any error."""
        return self._transaction("BEGIN IMMEDIATE")

    def read(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A read transaction: one consistent snapshot (other processes may write meanwhile)."""
        return self._transaction("BEGIN")

    def version(self, conn: sqlite3.Connection) -> tuple[int, int, int]:
        """A token that changes whenever the file may have changed: any commit by another connection
        (``PRAGMA data_version``), by this object, or a reconnection (a fork). Taken inside two
        transactions of this object, equal tokens mean the second sees what the first saw, so what the first read
        need not be read again."""
        return (os.getpid(), self._commits, int(conn.execute("PRAGMA data_version").fetchone()[0]))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def mechanism_key(conn: sqlite3.Connection, mechanism: str, *, create: bool = False) -> int | None:
    """The small integer the memo and the ledger use for a mechanism id; with ``create`` (inside a write
    transaction) a new one for a mechanism not seen yet, else None for it."""
    row = conn.execute("SELECT id FROM mechanisms WHERE mechanism = ?", (mechanism,)).fetchone()
    if row is not None:
        return int(row[0])
    if not create:
        return None
    return int(conn.execute("INSERT INTO mechanisms (mechanism) VALUES (?)", (mechanism,)).lastrowid or 0)


def fill_keys(conn: sqlite3.Connection, keys: Iterable[tuple[str, int]]) -> None:
    """Load (owner, x) pairs into the connection's temporary table ``keys`` (rowid = 1, 2, … in order).

    Joining a table is how many keys are looked up in one statement (SQLite has no array
    parameter); the temporary database is private to the connection.
    """
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS keys (owner TEXT NOT NULL, x INTEGER NOT NULL)")
    conn.execute("DELETE FROM temp.keys")
    conn.executemany("INSERT INTO temp.keys (owner, x) VALUES (?, ?)", keys)
