"""The web dashboard (``/ui/``) and the Swagger UI of the API (``/docs``), served by ``rldp serve``.

Server-rendered pages (Flask, Jinja2) behind the admin or a read token (:mod:`.session`):
the mechanisms and their report counts, one mechanism (parameters, a heatmap of Q, its audit,
P̂; its label, set or removed by the admin), estimates with their 95 % intervals (and CSV/JSON
downloads), collections (list; create, rotate, retire: admin) and design jobs (admin).
Charts are inline SVG drawn on the server (:mod:`.charts`); the pages need no JavaScript and
load nothing from elsewhere (a strict Content-Security-Policy says so to the browser). The
Swagger UI bundle comes from the ``swagger-ui-py`` package and is served from this server.
"""

from __future__ import annotations

import json

from flask import Flask

from ..openapi import build_openapi
from .pages import blueprint

__all__ = ["blueprint", "init_dashboard", "DOCS_PREFIX"]

#: Where the Swagger UI is served.
DOCS_PREFIX = "/docs"


def init_dashboard(app: Flask) -> None:
    """Register the dashboard pages and the Swagger UI (``/docs``) on ``app``."""
    from . import collection_estimate, collections, designs, estimates  # noqa: F401 - their routes join the blueprint

    app.register_blueprint(blueprint)
    try:
        from swagger_ui import api_doc
    except ImportError:  # the aggregator extra installs it; without it /docs is simply absent
        return
    # The spec is given inline (no fetch from the server itself); host_inject off: OpenAPI 3 has no "host".
    api_doc(
        app,
        config_spec=json.dumps(build_openapi(app)),
        url_prefix=DOCS_PREFIX,
        title="rldp aggregator API",
        host_inject=False,
    )
