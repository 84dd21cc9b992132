"""Opening the service's storage, and the SQLite writer process of a multi-process server.

With SQLite, ``rldp serve`` starts one writer process (:mod:`rldp.aggregator.writer`) that
commits every worker's report batches in shared group commits; each worker's storage
hands its batches to it through a :class:`~rldp.aggregator.writer.WriterClient`.
PostgreSQL handles concurrent writers itself and needs none.
"""

from __future__ import annotations

from rldp.aggregator.storage import SQLiteStorage, Storage, open_storage
from rldp.aggregator.writer import WriterClient, WriterProcess

__all__ = ["open_service_storage", "check_storage", "start_writer", "WriterProcess"]


def open_service_storage(url: str, writer_socket: str | None = None) -> Storage:
    """The storage at ``url`` (schema created); batches go to the writer at ``writer_socket`` if given."""
    return open_storage(url, sink=WriterClient(writer_socket) if writer_socket else None)


def check_storage(url: str) -> bool:
    """Open the storage once (creating its schema) and close it; whether it needs a writer process.

    Why before the workers start: a bad URL is then one clear error instead of failing workers.
    """
    store = open_storage(url)
    try:
        return isinstance(store, SQLiteStorage)
    finally:
        store.close()


def start_writer(url: str) -> WriterProcess:
    """Start the writer process for a SQLite URL (ValueError if it cannot start); stop it with ``.stop()``."""
    return WriterProcess(url).start()
