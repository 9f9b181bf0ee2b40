"""The v1 REST routes, one module per resource, each module's router included into the app under ``/v1``.

FastAPI tries routes in the order they were added and takes the first whose path matches. A literal path
that has the shape of a templated one must therefore come first: ``GET /v1/items/expiry-candidates`` before
``GET /v1/items/{item_id}``. ``items.py`` adds its literal paths before its templated ones, and no other
module adds a literal ``/items/<word>`` path. ``tests/unit/test_gateway_routes.py`` pins which endpoint
such requests reach.
"""

from __future__ import annotations

from fastapi import FastAPI

from services.gateway.routes import (
    catalog,
    classify,
    conflicts,
    edges,
    feedback,
    items,
    observe,
    recall,
    review,
    trash,
)

RESOURCES = (items, catalog, observe, trash, review, recall, feedback, classify, conflicts, edges)
"""The route modules, in the order their routes are tried."""

PREFIX = "/v1"


def include(app: FastAPI) -> None:
    """Add every module's routes to ``app`` under ``/v1``; ``caller`` comes with the app (its one dependency).
    Each module's router is included into the app itself, not into a ``/v1`` router of its own: a request then
    passes one level of FastAPI's included-router matching instead of two, with the same paths and OpenAPI."""
    for module in RESOURCES:
        app.include_router(module.router, prefix=PREFIX)


__all__ = ["PREFIX", "RESOURCES", "include"]
