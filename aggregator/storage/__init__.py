"""Durable storage for the aggregator: mechanisms, report batches, per-output counts, design jobs.

One interface (:class:`Storage`), two backends chosen by URL:

* ``sqlite:///PATH`` (a relative path after ``sqlite:///``, an absolute one after
  ``sqlite:////``, or a bare file path) — nothing to install. The default
  (:func:`default_url`) is ``rldp.sqlite3`` in the user's data folder.
  WAL journal, ``synchronous=FULL`` by default (``?synchronous=NORMAL`` to trade
  power-loss durability for speed, see "Durability" below).
* ``postgresql://user:pass@host/db`` (or ``postgres://``) — several processes or hosts
  share one store. Driver: psycopg 3 with a psycopg_pool connection pool.

Why not SQLAlchemy Core: the service issues about fifteen fixed statements whose only
dialect differences are the parameter marker and a blob type name; both databases speak
the same ``INSERT … ON CONFLICT`` upsert. A thin layer over the two DB-API drivers keeps
the hot path (one transaction per group of batches) visible and avoids a large
dependency whose pooling would have to be tuned for a pre-fork server's worker processes anyway.

Data model
----------
``rldp_batches`` holds each uploaded batch as **one row**: the SHA-256 of its reports
(packed into the smallest unsigned little-endian integer type that fits the mechanism's
outputs; it tells a retried batch from a different batch under the same id) and the
reports themselves in the smaller of two exact encodings — the packed reports, or their
per-output counts (uint32 each). A batch of 10,000 reports over 10 outputs thus takes 40
bytes, not 10 kB; the order of reports inside a batch is not kept (estimates depend only
on counts). ``rldp_counts`` holds the per-output totals, updated in the same transaction
as the batch insert, so an estimate reads |Y| small rows instead of 10⁷ reports. Counts are
split over a few ``shard`` rows per output (one shard per writer process, summed on read)
so that PostgreSQL writers in different processes do not queue on the same row locks.
:meth:`Storage.recount` recomputes the counts from the stored batches (for checks).

Collection windows: a batch of a mechanism that collects by window
(:mod:`rldp.shared.collection`) carries its window's label, stored with the batch and
keying its counts (``window_label``; ``''`` for a mechanism without windows);
:meth:`Storage.counts` reads one window or all, :meth:`Storage.windows` lists them. The
idempotency key stays (mechanism, batch id): a retry under another window is a conflict.
A store of an older schema version is migrated when opened (:mod:`.schema`).

Group commit
------------
Concurrent batch uploads are committed together: while one transaction (and its fsync)
runs, new batches queue up, and the next transaction commits all of them with a fixed
handful of multi-row statements (:meth:`Storage.ingest_group`). Each request waits until
*its* transaction has committed, so a 2xx still means "durable", but one fsync serves many
concurrent uploads. Who forms the groups:

* under ``rldp serve`` with SQLite, one writer process for every worker
  (:mod:`rldp.aggregator.writer`): the storage is opened with a :class:`GroupSink` (the
  writer's client) and only hands batches to it (it never imports the writer);
* otherwise each process, by leader hand-off (:mod:`.group_commit`). SQLite writers of
  different processes queue on a blocking ``flock`` of ``<database>-writer.lock``
  (:meth:`SQLiteStorage._transaction`); PostgreSQL writers run concurrently.

Durability
----------
A batch is acknowledged only after ``COMMIT`` returned. SQLite in WAL mode with
``synchronous=FULL`` (default) fsyncs the WAL at every commit: an acknowledged batch
survives ``kill -9`` of the server *and* a power loss or OS crash. With
``synchronous=NORMAL`` the WAL is written (to the OS) at commit but fsynced only at
checkpoints: still safe against ``kill -9`` / process crashes (the OS has the data), but
the last transactions before a power loss may be lost. PostgreSQL's defaults
(``fsync=on``, ``synchronous_commit=on``) give the power-loss guarantee.

Modules: :mod:`.records` (records, :class:`BatchItem`, :class:`StorageError`),
:mod:`.schema`, :mod:`.base` (:class:`Storage`, :class:`GroupSink`), :mod:`.group_commit`,
:mod:`.sqlite`, :mod:`.postgres`, :mod:`.factory` (:func:`open_storage`), :mod:`.collections`
(collections: a stable name whose mechanism can change).
"""

from __future__ import annotations

from .base import GroupSink, Storage
from .collections import CollectionChanged, CollectionEntry, CollectionPause, CollectionRecord, MechanismTaken
from .factory import default_url, open_storage, resolve_url, sqlite_file
from .group_commit import COMMIT_WAIT_SECONDS, MAX_GROUP, GroupCommitter
from .postgres import PostgresStorage
from .rows import BatchItem, IngestResult, JobRecord, MechanismRecord, StorageError, StoreFull
from .schema import SCHEMA_VERSION
from .sqlite import SQLiteStorage
from .upload_credentials import UploadCredential

__all__ = [
    "COMMIT_WAIT_SECONDS",
    "MAX_GROUP",
    "SCHEMA_VERSION",
    "BatchItem",
    "CollectionChanged",
    "MechanismTaken",
    "CollectionEntry",
    "CollectionPause",
    "CollectionRecord",
    "GroupCommitter",
    "GroupSink",
    "IngestResult",
    "JobRecord",
    "MechanismRecord",
    "PostgresStorage",
    "SQLiteStorage",
    "Storage",
    "StorageError",
    "StoreFull",
    "UploadCredential",
    "default_url",
    "resolve_url",
    "sqlite_file",
    "open_storage",
]
