"""Recall and search: budgeted memories for a task or a session start, and ranked search."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.rpc.convert import timestamp
from engram.v1 import memory_pb2, recall_pb2
from services.gateway.answers import RecallAnswer, SearchAnswer
from services.gateway.auth import context, policy
from services.gateway.limits import limited
from services.gateway.mapping import recall_answer, search_answer
from services.gateway.schemas import FilterFields, RecallBody, SearchBody

router = APIRouter()


def _filters(body: FilterFields) -> memory_pb2.RecallFilters:
    return memory_pb2.RecallFilters(
        kinds=body.kinds,
        tags=body.tags,
        workspace_id=body.workspace_id or "",
        wing=body.wing or "",
        room=body.room or "",
        as_of=timestamp(body.as_of),
        time_start=timestamp(body.time_start),
        time_end=timestamp(body.time_end),
    )


@router.post("/recall", summary="Recall memories for a task or a session start", **policy("read"))
@limited("recall")
async def recall(body: RecallBody, http: Request) -> RecallAnswer:
    """The best memories within the budgets, each with its score and the reasons for it; with ``explain``,
    also the best candidates the budgets cut (``cut``)."""
    ctx, ds = context(http)
    request = recall_pb2.RecallRequest(
        mode=body.mode,
        query=body.query or "",
        filters=_filters(body),
        include_superseded=body.include_superseded,
        explain=body.explain,
    )
    for name in ("item_budget", "byte_budget", "token_budget"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    reply = await ds.call(ds.recall.Recall, request, ctx)
    return recall_answer(reply, explain=body.explain)


@router.post("/search", summary="Search memories by keyword, meaning, or both", **policy("read"))
@limited("recall")
async def search(body: SearchBody, http: Request) -> SearchAnswer:
    """Ranked as recall's query modes rank, the top ``limit`` items, with no budgets."""
    ctx, ds = context(http)
    request = recall_pb2.SearchRequest(query=body.query, mode=body.mode, filters=_filters(body))
    if body.limit is not None:
        request.limit = body.limit
    reply = await ds.call(ds.recall.Search, request, ctx)
    return search_answer(reply)
