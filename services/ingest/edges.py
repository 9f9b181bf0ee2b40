"""Links between memories: a caller who may write where the source memory lives links it to another memory
it can read; the link and an audit row on the source commit together."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.db import audit, edges, items
from engram.db.pool import tenant_tx
from engram.domain import lifecycle, validation
from engram.domain.models import CallerContext, Edge
from engram.domain.values import WRITING_ROLES, EdgeType, LinkType, listed
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed


class EdgeService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings

    async def link(self, ctx: CallerContext, src_id: str, dst_id: str, edge_type: str) -> tuple[Edge, bool]:
        for value, name in ((src_id, "src_id"), (dst_id, "dst_id")):
            validation.require_uuid(value, name)
        if edge_type not in tuple(LinkType):
            hint = (
                "; supersession links come from POST /v1/items/{id}/supersede"
                if edge_type == EdgeType.SUPERSEDES
                else ""
            )
            raise ValidationFailed(f"type must be one of {listed(LinkType)}{hint}", field="type")
        if src_id == dst_id:
            raise ValidationFailed("a memory cannot link to itself", field="dst_id")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            src = await items.get(conn, src_id, ctx.principal_id, for_update=True)
            if src is None:
                raise NotFound(f"no item {src_id}", field="src_id")
            dst = await items.get(conn, dst_id, ctx.principal_id)
            if dst is None or str(dst.tenant_id) != ctx.tenant_id:
                raise NotFound(f"no item {dst_id}", field="dst_id")
            role = await items.workspace_role(conn, str(src.workspace_id), ctx.principal_id)
            if role not in WRITING_ROLES:
                raise PermissionDenied(
                    "linking from this memory needs a writing role in its workspace",
                    field="src_id",
                    code="workspace_read_only",
                )
            edge, created = await edges.link(conn, ctx.tenant_id, src_id, dst_id, edge_type, ctx.principal_id)
            if created:
                await audit.record(
                    conn,
                    tenant_id=ctx.tenant_id,
                    item_id=src.id,
                    actor_id=ctx.principal_id,
                    action="linked",
                    new_value={"type": edge_type, "dst_id": dst_id, "edge_id": edge.id},
                    request_id=ctx.request_id,
                )
        return edge, created

    async def unlink(self, ctx: CallerContext, edge_id: str) -> None:
        """Its creator, the source memory's author, or a reviewer."""
        if not validation.is_uuid(edge_id):
            raise NotFound(f"no edge {edge_id}")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            edge = await edges.get(conn, edge_id, ctx.principal_id)
            if edge is None:
                raise NotFound(f"no edge {edge_id}")
            if edge.type == EdgeType.SUPERSEDES:
                raise Conflict("a supersession link is history; it is not removed", code="supersession_link")
            src = await items.get(conn, edge.src_id)
            author = str(src.principal_id) if src else ""
            if ctx.principal_id not in (edge.created_by, author) and not lifecycle.is_reviewer(ctx):
                raise PermissionDenied(
                    "removing another's link needs the review scope and a non-agent principal",
                    code="review_not_allowed",
                )
            await edges.unlink(conn, edge_id)
            await audit.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=edge.src_id,
                actor_id=ctx.principal_id,
                action="unlinked",
                old_value={"type": edge.type, "dst_id": edge.dst_id, "edge_id": edge_id},
                request_id=ctx.request_id,
            )
