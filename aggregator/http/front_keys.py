"""The WSGI environ keys through which the buffering front (:mod:`.front`) speaks to the app.

They live below both: the front builds the app (:func:`.front.create_front`), and the app and its
``/readyz`` read these keys, so neither imports the other's module for them.
"""

from __future__ import annotations

__all__ = ["BODY_REFUSED_KEY", "DRAINING_KEY"]

#: The environ key through which the app learns that the worker is draining (``/readyz``).
DRAINING_KEY = "rldp.draining"
#: Environ key set (to True) when the front refused a dashboard request's body as too large: the
#: app then answers its HTML 413 page (a person sent a form) instead of the API's JSON problem.
BODY_REFUSED_KEY = "rldp.body_refused"
