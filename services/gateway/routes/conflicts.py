"""Conflicts between memories: list them, decide one."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from engram.v1 import ingest_pb2, recall_pb2
from services.gateway.answers import ConflictPage, ResolvedAnswer
from services.gateway.auth import context, policy
from services.gateway.mapping import conflict_page, resolved_answer
from services.gateway.schemas import INT32_MAX, INT32_MIN, ResolveBody

router = APIRouter()


@router.get("/conflicts", summary="Conflicts between memories you can read", **policy("read"))
async def list_conflicts(
    http: Request,
    status: str | None = Query(default="open", description="`open` or `resolved`; empty (`status=`) for both."),
    type: str | None = Query(
        default=None,
        description="Only conflicts of this type: `contradiction`, `duplicate`, `refinement` or `scope_overlap`.",
    ),
    item_id: str | None = Query(
        default=None, description="Only conflicts this memory (a UUID) is part of, either side."
    ),
    limit: int = Query(ge=INT32_MIN, le=INT32_MAX, default=50, description="The most conflicts on a page: 1–500."),
    cursor: str | None = Query(
        default=None, description="The previous page's `next_cursor`; a value the API did not return answers 422."
    ),
) -> ConflictPage:
    """Open ones by default (``status=resolved`` or ``status=`` for the others), newest first; only conflicts
    whose two memories you may read are listed."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.recall.ListConflicts,
        recall_pb2.ListConflictsRequest(
            status=status or "", type=type or "", item_id=item_id or "", limit=limit, cursor=cursor or ""
        ),
        ctx,
    )
    return conflict_page(reply)


@router.post("/conflicts/{conflict_id}/resolve", summary="Decide a conflict", **policy("review"))
async def resolve_conflict(conflict_id: str, body: ResolveBody, http: Request) -> ResolvedAnswer:
    """A reviewer (review scope, not an agent) keeps the existing memory, accepts the new one, keeps both, or
    merges them into a new memory (``content``) that replaces both."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.ingest.ResolveConflict,
        ingest_pb2.ResolveConflictRequest(
            id=conflict_id, resolution=body.resolution, reason=body.reason, content=body.content or ""
        ),
        ctx,
    )
    return resolved_answer(reply)
