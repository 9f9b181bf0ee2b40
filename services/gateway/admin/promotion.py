"""Admin API: a promotion run on demand (the same decisions as the promotion consumer)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from engram.v1 import admin_pb2
from services.gateway.admin.common import TenantField
from services.gateway.auth import context, policy
from services.gateway.schemas import Body

router = APIRouter()


class PromoteBody(Body):
    tenant_id: TenantField = None
    dry_run: bool = Field(default=True, description="Report the decisions and write nothing (the default).")
    limit: int = Field(default=100, ge=1, le=10_000, description="The most proposals decided, oldest first.")


class Promotion(BaseModel):
    tenant_id: str = Field(description="The tenant.")
    dry_run: bool = Field(description="Whether nothing was written.")
    decided: int = Field(description="Proposals decided: the sum of `counts`.")
    counts: dict[str, int] = Field(
        description="Decisions per outcome: `promoted` (or would be), or `skipped_<code>` of the first blocker "
        "(`skipped_gone` for a memory deleted meanwhile)."
    )


@router.post(
    "/promote", summary="Promote the proposals every gate lets through (or report, with dry_run)", **policy("admin")
)
async def promote(body: PromoteBody, http: Request) -> Promotion:
    """The same decisions as the promotion consumer and ``engram promote-proposed``: oldest proposals first,
    counts per outcome (``promoted``, ``skipped_<blocker>``)."""
    ctx, ds = context(http)
    request = admin_pb2.PromoteRequest(tenant_id=body.tenant_id or "", dry_run=body.dry_run, limit=body.limit)
    reply = await ds.call(ds.admin.Promote, request, ctx)
    return Promotion(tenant_id=reply.tenant_id, dry_run=reply.dry_run, decided=reply.decided, counts=dict(reply.counts))
