"""Admin API: tunnels between (wing, room) areas, which recall follows from the area of its best hits."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from engram.v1 import admin_pb2
from services.gateway.admin.common import time_json
from services.gateway.auth import Caller, policy
from services.gateway.clients import Services
from services.gateway.schemas import Body

router = APIRouter()


class TunnelBody(Body):
    tenant_id: str | None = None
    from_wing: str = Field(min_length=1, max_length=200)
    from_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")
    to_wing: str = Field(min_length=1, max_length=200)
    to_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")


class Tunnel(BaseModel):
    id: str
    from_wing: str
    from_room: str | None = Field(description="null: the whole wing.")
    to_wing: str
    to_room: str | None = Field(description="null: the whole wing.")
    created_by: str | None
    created_at: str | None


class Tunnels(BaseModel):
    items: list[Tunnel]


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
async def add_tunnel(body: TunnelBody, ctx: Caller, ds: Services) -> JSONResponse:
    """Recall lifts candidates in an area a tunnel connects to the area of its best hits (both directions)."""
    request = admin_pb2.AddTunnelRequest(tenant_id=body.tenant_id or "", **body.model_dump(exclude={"tenant_id"}))
    reply = await ds.call(ds.admin.AddTunnel, request, ctx)
    return JSONResponse(_tunnel(reply.tunnel).model_dump(), status_code=201 if reply.created else 200)


@router.get("/tunnels", summary="The tenant's tunnels", **policy("admin"))
async def list_tunnels(ctx: Caller, ds: Services, tenant_id: str | None = None) -> Tunnels:
    reply = await ds.call(ds.admin.ListTunnels, admin_pb2.ListTunnelsRequest(tenant_id=tenant_id or ""), ctx)
    return Tunnels(items=[_tunnel(t) for t in reply.items])


@router.delete("/tunnels/{tunnel_id}", status_code=204, summary="Remove a tunnel", **policy("admin"))
async def remove_tunnel(tunnel_id: str, ctx: Caller, ds: Services, tenant_id: str | None = None) -> Response:
    request = admin_pb2.RemoveTunnelRequest(tenant_id=tenant_id or "", id=tunnel_id)
    await ds.call(ds.admin.RemoveTunnel, request, ctx)
    return Response(status_code=204)
