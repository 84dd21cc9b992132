"""One writer process per SQLite store: every worker's report batches in one group commit.

SQLite lets one connection write at a time. When each server process commits its own groups,
the write lock passes back and forth between processes whose threads also compete for that
process's GIL: the lock holder waits for the GIL again after every statement while the other
process waits for the lock, and a process that releases the lock can take it back before the
woken waiter runs. Under load the lock was held about 1.5 ms per commit (0.3 ms when
uncontended), and batched ingestion stalled at a third of what the same workers reached
without storage (``bench/bench_ingest.py``).

``rldp serve`` therefore starts one writer process for a SQLite store. The workers validate,
count and hash each batch as before, send it to the writer over a Unix socket and wait; the writer commits everything that has arrived in one transaction (one
fsync) with the same :meth:`Storage.ingest_group` as direct writes, and answers each batch
only after COMMIT returned — so an acknowledged batch is as durable, and a retried one as
deduplicated, as without the writer. Batches that arrive while a commit runs form the next
group: the classic group commit, now across all workers. A worker opens its store with
``open_storage(url, sink=WriterClient(socket_path))``: :class:`WriterClient` is the
storage's :class:`~rldp.aggregator.storage.GroupSink`.

A worker thread waits with :class:`WriterClient` (one request in flight per connection); the
HTTP front's event loop awaits uploads with :class:`AsyncWriterClient` (one pipelined
connection per worker). The messages are :mod:`.wire`'s; the process is :mod:`.process`.
"""

from .client import AsyncWriterClient, WriterClient
from .process import WriterError, WriterProcess, serve_writer

__all__ = ["AsyncWriterClient", "WriterClient", "WriterError", "WriterProcess", "serve_writer"]
