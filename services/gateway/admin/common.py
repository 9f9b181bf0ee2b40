"""What the admin modules share: the tenant a request names, the name rule of request bodies, and proto times
as the API writes them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import Field

TENANT = (
    "The tenant to act on; the caller's own when left out. Only a platform administrator may name another; "
    "a tenant the caller cannot reach answers 404."
)
TenantField = Annotated[str | None, Field(description=TENANT)]
"""``tenant_id`` of a request body."""
TenantQuery = Annotated[str | None, Query(description=TENANT)]
"""``tenant_id`` of the query string (``GET``, ``DELETE`` and ``POST /v1/admin/kinds``)."""


def name_field(description: str) -> Any:
    """A required name of 1–200 characters."""
    return Field(min_length=1, max_length=200, description=description)


def time_json(message: Any, name: str) -> str | None:
    """A Timestamp field as UTC with a Z, like every other time the API returns; None when unset."""
    if not message.HasField(name):
        return None
    return str(getattr(message, name).ToDatetime().isoformat()) + "Z"
