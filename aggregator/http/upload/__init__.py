"""``POST /v1/reports``: one report upload, one flow, one entry per server interface.

The flow, whichever interface serves the request::

    parse + check the body  →  AggregatorService.write_reports / submit_reports  →  the batching writer  →  answer
    (media type, decoding)      (checks the batch, Janus's write_report shape)     (group commit)           (receipt or problem)

* Under ``rldp serve`` (Granian's RSGI interface) the buffering front (:mod:`..front`) reads the body
  whole, then awaits :class:`ReportUpload` (:mod:`.rsgi`) on its event loop: the coroutine checks the
  batch, awaits the commit — the writer process's group commit over one pipelined connection with
  SQLite (:func:`~rldp.aggregator.services.async_committer`), the storage's in-process group commit
  (:mod:`rldp.aggregator.storage.group_commit`) in a pool of commit threads with PostgreSQL — and
  returns the answer. Nothing is carried across layers: no environ key, no paused generator.
* Under WSGI (``--dev``, ``--unbuffered``, Flask's test client) the Flask route (:mod:`.wsgi`) runs the
  same steps, blocking on :meth:`Storage.commit`.

Both answer with :mod:`.answers` (the receipt, or the problem of the refusal), so statuses, bodies,
problem types and metrics are the same whichever entry served the upload.
"""

from __future__ import annotations

from .answers import PATH, receipt_answer
from .rsgi import ReportUpload, UploadRequest
from .wsgi import blueprint

__all__ = ["PATH", "ReportUpload", "UploadRequest", "blueprint", "receipt_answer"]
