"""The WSGI environ keys through which the buffering front (:mod:`.front`) speaks to the app.

They live below both: the front builds the app (:func:`.front.create_front`), and the app and its
``/readyz`` read these keys, so neither imports the other's module for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["BODY_REFUSED_KEY", "DEFERRED_COMMIT_KEY", "DRAINING_KEY", "DeferredCommit"]

#: The environ key through which the app learns that the worker is draining (``/readyz``).
DRAINING_KEY = "rldp.draining"
#: Environ key set (to True) when the front refused a dashboard request's body as too large: the
#: app then answers its HTML 413 page (a person sent a form) instead of the API's JSON problem.
BODY_REFUSED_KEY = "rldp.body_refused"
#: Environ key of a :class:`DeferredCommit`: set by the front on a report upload it commits itself.
DEFERRED_COMMIT_KEY = "rldp.deferred_commit"


@dataclass(eq=False)
class DeferredCommit:
    """A report upload whose commit the front awaits on its event loop (:mod:`.fastpath`).

    The app checks the batch and leaves it in ``item`` (None: refused, already answered); the
    front commits it and puts the outcome in ``result`` or ``error`` before it reads the answer,
    which the app completes only then.
    """

    item: Any = None  # the BatchItem to commit
    result: Any = None  # its IngestResult
    error: BaseException | None = None
