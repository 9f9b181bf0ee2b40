"""The admin API (``/v1/admin``, admin scope): JSON → Admin gRPC (served by ingest) → JSON, one module per
resource. The rules (which tenant a caller manages, what each setting accepts) are the Admin service's, in
``services/ingest/admin.py`` and ``engram/domain/admin.py``; here the request bodies and the response shapes."""

from __future__ import annotations

from fastapi import FastAPI

from services.gateway.admin import config, identity, kinds, promotion, tunnels

MODULES = (identity, config, kinds, promotion, tunnels)


def include(app: FastAPI) -> None:
    """Add every module's routes to ``app`` under ``/v1/admin``, tagged ``admin``, ``caller`` coming with the app
    (one level of included-router matching per request, as ``services.gateway.routes.include``)."""
    for module in MODULES:
        app.include_router(module.router, prefix="/v1/admin", tags=["admin"])


__all__ = ["MODULES", "include"]
