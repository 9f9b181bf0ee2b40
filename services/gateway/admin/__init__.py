"""The admin API (``/v1/admin``, admin scope): JSON → Admin gRPC (served by ingest) → JSON, one module per
resource. The rules (which tenant a caller manages, what each setting accepts) are the Admin service's, in
``services/ingest/admin.py`` and ``engram/domain/admin.py``; here the request bodies and the response shapes."""

from __future__ import annotations

from fastapi import APIRouter

from services.gateway.admin import config, identity, kinds, promotion, tunnels
from services.gateway.auth import AUTHENTICATED

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=AUTHENTICATED)
for _module in (identity, config, kinds, promotion, tunnels):
    router.include_router(_module.router)

__all__ = ["router"]
