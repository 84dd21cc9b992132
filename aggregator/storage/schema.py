"""The SQL schema of the store (one text for both dialects) and its version.

Tables: ``rldp_meta`` (the schema version), ``rldp_mechanisms`` (metadata and the msgpack
document), ``rldp_batches`` (one row per uploaded batch: digest and exact payload),
``rldp_counts`` (per-output totals, split over shards), ``rldp_jobs`` (design jobs). See
the package docstring for the data model.
"""

from __future__ import annotations

__all__ = ["SCHEMA_VERSION", "BATCH_COLUMNS", "MECHANISM_COLUMNS", "JOB_COLUMNS", "schema_statements", "values"]

SCHEMA_VERSION = "1"

#: The columns of an rldp_batches row, in the order of :meth:`BatchItem.row`.
BATCH_COLUMNS = "(mechanism, batch, n, digest, encoding, payload, received)"
#: The columns a :class:`MechanismRecord` is read from, in its field order.
MECHANISM_COLUMNS = (
    "id, method, notion, epsilon, epsilon_audited, sensitive, released, outputs, size, status, published, retired"
)
#: The columns a :class:`JobRecord` is read from, in its field order.
JOB_COLUMNS = "id, status, params, mechanism, error, created, started, finished, heartbeat"


def schema_statements(blob_type: str) -> list[str]:
    """The ``CREATE TABLE IF NOT EXISTS`` statements, with the dialect's binary type."""
    blob = blob_type
    return [
        "CREATE TABLE IF NOT EXISTS rldp_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS rldp_mechanisms ("
        " id TEXT PRIMARY KEY, method TEXT NOT NULL, notion TEXT NOT NULL,"
        " epsilon DOUBLE PRECISION NOT NULL, epsilon_audited DOUBLE PRECISION,"
        " sensitive TEXT NOT NULL, released TEXT NOT NULL, outputs INTEGER NOT NULL, size INTEGER NOT NULL,"
        " status TEXT NOT NULL, published DOUBLE PRECISION NOT NULL, retired DOUBLE PRECISION,"
        f" document {blob} NOT NULL)",
        "CREATE TABLE IF NOT EXISTS rldp_batches ("
        " mechanism TEXT NOT NULL, batch TEXT NOT NULL, n INTEGER NOT NULL, digest"
        f" {blob} NOT NULL, encoding TEXT NOT NULL, payload {blob} NOT NULL, received DOUBLE PRECISION NOT NULL,"
        " PRIMARY KEY (mechanism, batch))",
        "CREATE TABLE IF NOT EXISTS rldp_counts ("
        " mechanism TEXT NOT NULL, shard INTEGER NOT NULL, y INTEGER NOT NULL, n BIGINT NOT NULL,"
        " PRIMARY KEY (mechanism, shard, y))",
        "CREATE TABLE IF NOT EXISTS rldp_jobs ("
        " id TEXT PRIMARY KEY, status TEXT NOT NULL, params TEXT NOT NULL, mechanism TEXT, error TEXT,"
        " created DOUBLE PRECISION NOT NULL, started DOUBLE PRECISION, finished DOUBLE PRECISION,"
        " heartbeat DOUBLE PRECISION NOT NULL)",
    ]


def values(rows: int, width: int) -> str:
    """The VALUES list of a multi-row statement: ``(?, ?), (?, ?)`` for 2 rows of width 2."""
    return ", ".join(["(" + ", ".join("?" * width) + ")"] * rows)
