"""Admin API: tunnels between (wing, room) areas, which recall follows from the area of its best hits."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from engram.v1 import admin_pb2
from services.gateway.admin.common import TenantField, TenantQuery, time_json
from services.gateway.auth import context, policy
from services.gateway.schemas import Body

router = APIRouter()


class TunnelBody(Body):
    tenant_id: TenantField = None
    from_wing: str = Field(min_length=1, max_length=200, description="One end's wing, as memories store it.")
    from_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")
    to_wing: str = Field(
        min_length=1, max_length=200, description="The other end's wing; the two ends must be different areas."
    )
    to_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")


class Tunnel(BaseModel):
    id: str = Field(description="The tunnel's id.")
    from_wing: str = Field(description="One end's wing.")
    from_room: str | None = Field(description="null: the whole wing.")
    to_wing: str = Field(description="The other end's wing.")
    to_room: str | None = Field(description="null: the whole wing.")
    created_by: str | None = Field(description="The principal that made it.")
    created_at: str | None = Field(description="When it was made.")


class Tunnels(BaseModel):
    items: list[Tunnel] = Field(description="The tenant's tunnels, oldest first.")


def _tunnel(t: admin_pb2.Tunnel) -> Tunnel:
    return Tunnel(
        id=t.id,
        from_wing=t.from_wing,
        from_room=t.from_room or None,
        to_wing=t.to_wing,
        to_room=t.to_room or None,
        created_by=t.created_by or None,
        created_at=time_json(t, "created_at"),
    )


@router.post(
    "/tunnels",
    status_code=201,
    response_model=Tunnel,
    responses={200: {"model": Tunnel, "description": "The same tunnel existed already."}},
    summary="Connect two (wing, room) areas for recall",
    **policy("admin"),
)
async def add_tunnel(body: TunnelBody, http: Request) -> JSONResponse:
    """Recall lifts candidates in an area a tunnel connects to the area of its best hits (both directions)."""
    ctx, ds = context(http)
    request = admin_pb2.AddTunnelRequest(tenant_id=body.tenant_id or "", **body.model_dump(exclude={"tenant_id"}))
    reply = await ds.call(ds.admin.AddTunnel, request, ctx)
    return JSONResponse(_tunnel(reply.tunnel).model_dump(), status_code=201 if reply.created else 200)


@router.get("/tunnels", summary="The tenant's tunnels", **policy("admin"))
async def list_tunnels(http: Request, tenant_id: TenantQuery = None) -> Tunnels:
    """Oldest first."""
    ctx, ds = context(http)
    reply = await ds.call(ds.admin.ListTunnels, admin_pb2.ListTunnelsRequest(tenant_id=tenant_id or ""), ctx)
    return Tunnels(items=[_tunnel(t) for t in reply.items])


@router.delete("/tunnels/{tunnel_id}", status_code=204, summary="Remove a tunnel", **policy("admin"))
async def remove_tunnel(tunnel_id: str, http: Request, tenant_id: TenantQuery = None) -> Response:
    """Recall stops following it at once; 404 for a tunnel not in the tenant."""
    ctx, ds = context(http)
    request = admin_pb2.RemoveTunnelRequest(tenant_id=tenant_id or "", id=tunnel_id)
    await ds.call(ds.admin.RemoveTunnel, request, ctx)
    return Response(status_code=204)
