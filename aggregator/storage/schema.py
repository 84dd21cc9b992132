"""The SQL schema of the store (one text for both dialects), its version and its migrations.

Tables: ``rldp_meta`` (the schema version), ``rldp_mechanisms`` (metadata and the msgpack
document), ``rldp_batches`` (one row per uploaded batch: digest, exact payload and collection
window), ``rldp_counts`` (per-output totals per window, split over shards), ``rldp_jobs``
(design jobs). See the package docstring for the data model.

Versions: "1" had no windows; "2" adds ``window_label`` to batches and counts (``''`` for a
batch of a mechanism without collection windows, so every version-1 row keeps its meaning);
"3" adds the index ``rldp_batches_received`` on ``rldp_batches (received)``, so the
dashboard's recent-activity count reads only the recent batches instead of every row; "4"
adds the collections (``rldp_collections``, ``rldp_collection_mechanisms``: :mod:`.collections`);
"5" adds ``label`` to ``rldp_mechanisms``: an operator's name for a mechanism, outside its document
(NULL: none; :mod:`.labels`).
:func:`migrations` lists the statements that bring a store from one version to the next;
:meth:`Storage.init_schema` runs them when it opens an older store. (The column is not
called ``window``: WINDOW is a reserved word of PostgreSQL.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .collections import COLLECTION_STATEMENTS, ONE_COLLECTION_PER_MECHANISM, check_one_collection_per_mechanism
from .rows import StorageError
from .upload_credentials import UPLOAD_CREDENTIAL_STATEMENTS

__all__ = [
    "SCHEMA_VERSION",
    "BATCH_COLUMNS",
    "BATCH_WIDTH",
    "MECHANISM_COLUMNS",
    "JOB_COLUMNS",
    "schema_statements",
    "migrations",
    "upgrade_schema",
    "values",
]

SCHEMA_VERSION = "5"

#: The columns of an rldp_batches row, in the order of :meth:`BatchItem.row`.
BATCH_COLUMNS = "(mechanism, batch, n, digest, encoding, payload, received, window_label)"
#: Their number (the width of one row of a multi-row INSERT).
BATCH_WIDTH = 8
#: The columns a :class:`MechanismRecord` is read from, in its field order.
MECHANISM_COLUMNS = (
    "id, method, notion, epsilon, epsilon_audited, sensitive, released, outputs, size, status, published, retired,"
    " label"
)
#: The columns a :class:`JobRecord` is read from, in its field order.
JOB_COLUMNS = "id, status, params, mechanism, error, created, started, finished, heartbeat"

_COUNTS_COLUMNS = (
    " mechanism TEXT NOT NULL, window_label TEXT NOT NULL DEFAULT '', shard INTEGER NOT NULL, y INTEGER NOT NULL,"
    " n BIGINT NOT NULL, PRIMARY KEY (mechanism, window_label, shard, y))"
)

#: Version 3: the recent-activity query (``received >= ?``) reads only the recent batches.
_RECEIVED_INDEX = "CREATE INDEX IF NOT EXISTS rldp_batches_received ON rldp_batches (received)"


def schema_statements(blob_type: str) -> list[str]:
    """The ``CREATE TABLE IF NOT EXISTS`` statements of the current version, with the dialect's binary type."""
    blob = blob_type
    return [
        "CREATE TABLE IF NOT EXISTS rldp_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS rldp_mechanisms ("
        " id TEXT PRIMARY KEY, method TEXT NOT NULL, notion TEXT NOT NULL,"
        " epsilon DOUBLE PRECISION NOT NULL, epsilon_audited DOUBLE PRECISION,"
        " sensitive TEXT NOT NULL, released TEXT NOT NULL, outputs INTEGER NOT NULL, size INTEGER NOT NULL,"
        " status TEXT NOT NULL, published DOUBLE PRECISION NOT NULL, retired DOUBLE PRECISION,"
        f" document {blob} NOT NULL, label TEXT)",
        "CREATE TABLE IF NOT EXISTS rldp_batches ("
        " mechanism TEXT NOT NULL, batch TEXT NOT NULL, n INTEGER NOT NULL, digest"
        f" {blob} NOT NULL, encoding TEXT NOT NULL, payload {blob} NOT NULL, received DOUBLE PRECISION NOT NULL,"
        " window_label TEXT NOT NULL DEFAULT '', PRIMARY KEY (mechanism, batch))",
        "CREATE TABLE IF NOT EXISTS rldp_counts (" + _COUNTS_COLUMNS,
        "CREATE TABLE IF NOT EXISTS rldp_jobs ("
        " id TEXT PRIMARY KEY, status TEXT NOT NULL, params TEXT NOT NULL, mechanism TEXT, error TEXT,"
        " created DOUBLE PRECISION NOT NULL, started DOUBLE PRECISION, finished DOUBLE PRECISION,"
        " heartbeat DOUBLE PRECISION NOT NULL)",
        _RECEIVED_INDEX,
        *COLLECTION_STATEMENTS,
        *UPLOAD_CREDENTIAL_STATEMENTS,
    ]


def migrations() -> dict[str, tuple[str, list[str]]]:
    """Old version → (the next version, the statements that bring a store there).

    1 → 2: batches gain ``window_label`` (``''``); the counts table is rebuilt with the window
    in its primary key (SQLite cannot change a primary key in place), every old total kept
    under ``''``. 2 → 3: the index on ``rldp_batches (received)``. 3 → 4: the collections' tables. 4 → 5:
    mechanisms gain ``label`` (NULL: none). Both dialects run DDL inside
    the open transaction: all or nothing.
    """
    return {
        "1": (
            "2",
            [
                "ALTER TABLE rldp_batches ADD COLUMN window_label TEXT NOT NULL DEFAULT ''",
                "CREATE TABLE rldp_counts_v2 (" + _COUNTS_COLUMNS,
                "INSERT INTO rldp_counts_v2 (mechanism, window_label, shard, y, n)"
                " SELECT mechanism, '', shard, y, n FROM rldp_counts",
                "DROP TABLE rldp_counts",
                "ALTER TABLE rldp_counts_v2 RENAME TO rldp_counts",
            ],
        ),
        "2": ("3", [_RECEIVED_INDEX]),
        "3": ("4", list(COLLECTION_STATEMENTS)),
        "4": ("5", ["ALTER TABLE rldp_mechanisms ADD COLUMN label TEXT"]),
    }


def upgrade_schema(conn: Any, sql: Callable[[str], str], blob_type: str) -> None:
    """Bring the store behind ``conn`` (in a write transaction) to :data:`SCHEMA_VERSION`: create
    what is missing, run the migrations from its version; StorageError for a version this rldp
    does not know (a newer rldp's store: nothing is changed)."""
    conn.execute(schema_statements(blob_type)[0])  # rldp_meta
    row = conn.execute(sql("SELECT value FROM rldp_meta WHERE key = ?"), ("schema",)).fetchone()
    version = None if row is None else row[0]
    steps = migrations()
    if version is not None and version != SCHEMA_VERSION and version not in steps:
        raise StorageError(
            f"database schema version {version} is unknown to this rldp (it uses {SCHEMA_VERSION}): "
            "a newer rldp wrote this store; upgrade rldp"
        )
    while version in steps:
        version, statements = steps[version]
        for stmt in statements:
            conn.execute(stmt)
    for stmt in schema_statements(blob_type):
        conn.execute(stmt)
    check_one_collection_per_mechanism(conn)  # a clear refusal, not the index's bare integrity error
    conn.execute(ONE_COLLECTION_PER_MECHANISM)
    if row is None:
        conn.execute(sql("INSERT INTO rldp_meta (key, value) VALUES (?, ?)"), ("schema", SCHEMA_VERSION))
    elif row[0] != SCHEMA_VERSION:
        conn.execute(sql("UPDATE rldp_meta SET value = ? WHERE key = ?"), (SCHEMA_VERSION, "schema"))


def values(rows: int, width: int) -> str:
    """The VALUES list of a multi-row statement: ``(?, ?), (?, ?)`` for 2 rows of width 2."""
    return ", ".join(["(" + ", ".join("?" * width) + ")"] * rows)
