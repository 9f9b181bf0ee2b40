"""The v1 REST routes, one module per resource, assembled into one router under ``/v1``.

FastAPI tries routes in the order they were added and takes the first whose path matches. A literal path
that has the shape of a templated one must therefore come first: ``GET /v1/items/expiry-candidates`` before
``GET /v1/items/{item_id}``. ``items.py`` adds its literal paths before its templated ones, and no other
module adds a literal ``/items/<word>`` path. ``tests/unit/test_gateway_routes.py`` pins which endpoint
such requests reach.
"""

from __future__ import annotations

from fastapi import APIRouter

from services.gateway.auth import AUTHENTICATED
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

router = APIRouter(prefix="/v1", dependencies=AUTHENTICATED)
for _module in RESOURCES:
    router.include_router(_module.router)

__all__ = ["RESOURCES", "router"]
