"""Opening a store by URL: :func:`open_storage`."""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

from rldp.shared.errors import ValidationError
from rldp.shared.paths import user_data_dir

from .base import GroupSink, Storage
from .postgres import PostgresStorage
from .sqlite import SQLiteStorage

__all__ = ["default_url", "open_storage", "resolve_url", "sqlite_file"]

#: The default store's file name in the user's data folder.
STORE_FILE = "rldp.sqlite3"


def default_url() -> str:
    """The default store: ``rldp.sqlite3`` in this user's local data folder
    (:func:`rldp.shared.paths.user_data_dir`, e.g. ``~/.local/share/rldp``), read now, so that
    it follows XDG_DATA_HOME / %LOCALAPPDATA% — not the working directory."""
    return "sqlite:///" + str(user_data_dir(local=True) / STORE_FILE)


def _scheme(url: str) -> str:
    return url.split(":", 1)[0].lower() if "://" in url else ""


def sqlite_file(url: str) -> str | None:
    """The file an SQLite URL names, as an absolute path (None for any other scheme).

    The rule (SQLAlchemy's): what follows ``sqlite://`` is an empty host and then ``/PATH``, so
    ``sqlite:///var/lib/rldp/x.sqlite3`` (three slashes) is the *relative* path ``var/lib/rldp/x.sqlite3``
    from the current folder, and ``sqlite:////var/lib/rldp/x.sqlite3`` (four) the absolute one; a bare
    path is taken as it is. Relative paths resolve against the current folder, now."""
    url = url.strip()
    if _scheme(url) not in ("sqlite", ""):
        return None
    if not _scheme(url):
        return os.path.abspath(url)
    parts = urlsplit(url)
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    return os.path.abspath(path) if path and path != ":memory:" else None


def resolve_url(url: str, *, create_dirs: bool = False) -> str:
    """``url`` with an SQLite path made absolute (``sqlite:////abs/path?options``; other URLs unchanged),
    after checking its folder exists: ValidationError naming the resolved path unless ``create_dirs``,
    which creates it. Why: ``sqlite:///var/lib/rldp/rldp.sqlite3`` silently made ``./var/lib/rldp/``
    where the server was started, and a typo created folders anywhere."""
    path = sqlite_file(url)
    if path is None:
        return url
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        if not create_dirs:
            relative = (
                ""
                if _scheme(url) != "sqlite" or urlsplit(url).path.startswith("//")
                else (" (sqlite:/// and a path is relative to the current folder; sqlite://// is absolute)")
            )
            raise ValidationError(
                f"the folder of the SQLite store {path} does not exist{relative}: create {folder} or pass --create-dirs"
            )
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise ValidationError(f"cannot create {folder} for the SQLite store: {exc.strerror or exc}") from None
    query = urlsplit(url.strip()).query if _scheme(url) else ""
    return "sqlite:///" + path + (f"?{query}" if query else "")


def open_storage(url: str | None = None, *, init: bool = True, sink: GroupSink | None = None) -> Storage:
    """Open the storage named by ``url`` (default :func:`default_url`) and create its schema.

    ``sink``: where report batches go instead of being committed here (SQLite only; e.g.
    ``rldp.aggregator.writer.WriterClient(socket)``, the client of the store's writer
    process). The storage takes it over: closing the storage closes the sink.

    ``sqlite:///relative.db``, ``sqlite:////absolute.db``, a bare path, or
    ``postgresql://…`` / ``postgres://…``. SQLite options as query parameters:
    ``?synchronous=FULL|NORMAL`` (default FULL), ``?timeout=seconds`` (busy wait, 30).
    PostgreSQL URLs are passed to libpq unchanged except ``pool_size`` (default 8).
    """
    url = url or default_url()
    if not isinstance(url, str) or not url.strip():
        raise ValidationError("database URL must be a non-empty string such as sqlite:////var/lib/rldp/rldp.sqlite3")
    url = url.strip()
    scheme = _scheme(url)
    storage: Storage
    if scheme in ("postgresql", "postgres"):
        if sink is not None:
            raise ValidationError(
                "a writer process serves SQLite stores only; PostgreSQL handles concurrent writers itself"
            )
        storage = _open_postgres(url)
    elif scheme in ("sqlite", ""):
        storage = _open_sqlite(url, scheme, sink)
    else:
        raise ValidationError(f"unsupported database URL scheme {scheme!r}; use sqlite:///PATH or postgresql://…")
    if init:
        try:
            storage.init_schema()
        except BaseException:
            storage.close()  # e.g. stop a connection pool's background reconnection attempts
            raise
    return storage


def _open_postgres(url: str) -> Storage:
    """A PostgreSQL store: libpq's URL, less rldp's own ``pool_size`` (default 8); ``connect_timeout`` also bounds the
    wait for a pooled connection."""
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    pool_size = 8
    connect_timeout = 5.0
    if "connect_timeout" in query:  # libpq's own option; also bounds the wait for a pooled connection
        try:
            connect_timeout = max(1.0, float(query["connect_timeout"][-1]))
        except ValueError:
            raise ValidationError("connect_timeout in the database URL must be a number of seconds") from None
    if "pool_size" in query:
        try:
            pool_size = int(query.pop("pool_size")[-1])
        except ValueError:
            raise ValidationError("pool_size in the database URL must be an integer") from None
        rest = "&".join(f"{k}={v}" for k, vs in query.items() for v in vs)
        url = parts._replace(query=rest).geturl()
    return PostgresStorage(url, pool_size=pool_size, connect_timeout=connect_timeout)


def _open_sqlite(url: str, scheme: str, sink: GroupSink | None) -> Storage:
    """A SQLite store: a file path (never :memory:: several threads and processes share it) and its two options."""
    if scheme:
        parts = urlsplit(url)
        if parts.netloc:
            raise ValidationError(f"SQLite URL {url!r} has a host; use sqlite:///relative/path or sqlite:////abs/path")
        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    else:
        path, options = url, {}
    if not path or path == ":memory:":
        raise ValidationError("SQLite storage needs a file path (several threads and processes share it)")
    unknown = set(options) - {"synchronous", "timeout"}
    if unknown:
        raise ValidationError(
            f"unknown SQLite URL option(s): {', '.join(sorted(unknown))}; known: synchronous, timeout"
        )
    try:
        timeout = float(options.get("timeout", 30.0))
    except ValueError:
        raise ValidationError("timeout in the SQLite URL must be a number of seconds") from None
    return SQLiteStorage(url, path, synchronous=options.get("synchronous", "FULL"), busy_timeout=timeout, sink=sink)
