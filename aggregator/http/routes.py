"""The API's blueprints, in the order the service registers them (and the OpenAPI document lists them)."""

from __future__ import annotations

from flask import Blueprint, Flask

from . import collections, designs, health, mechanisms
from .upload import wsgi as reports

__all__ = ["API_BLUEPRINTS", "api_app"]

#: Every blueprint of the API (the dashboard's pages and the Swagger UI are registered by :mod:`.dashboard`).
API_BLUEPRINTS: tuple[Blueprint, ...] = (
    health.blueprint,
    mechanisms.blueprint,
    reports.blueprint,
    designs.blueprint,
    collections.blueprint,
)


def api_app() -> Flask:
    """A Flask app with the API's routes only and no service: what the OpenAPI document is built from
    outside a running app (tests, the docs)."""
    app = Flask(__name__)
    for blueprint in API_BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app
