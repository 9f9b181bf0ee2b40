"""gRPC edge of the recall service."""

from __future__ import annotations

from datetime import timedelta

import grpc

from engram.db.search import Filters
from engram.domain.budget import Budgets
from engram.domain.content import preview
from engram.rpc.context import from_metadata
from engram.rpc.convert import (
    conflict_to_proto,
    edge_to_proto,
    event_to_proto,
    from_timestamp,
    item_to_proto,
    ranked_to_proto,
    stage_to_proto,
    struct,
    timestamp,
)
from engram.rpc.errors import translate_errors
from engram.v1 import memory_pb2, recall_pb2, recall_pb2_grpc
from services.recall.service import RecallQuery, RecallService

DEFAULT_SEARCH_LIMIT = 10
DEFAULT_PAGE = 50
DEFAULT_WITHIN_DAYS = 7


def _filters(message: memory_pb2.RecallFilters) -> Filters:
    return Filters(kinds=list(message.kinds), tags=list(message.tags), workspace_id=message.workspace_id or None,
                   wing=message.wing or None, room=message.room or None, as_of=from_timestamp(message, "as_of"))


def _optional(message: object, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None  # type: ignore[attr-defined]


def _or(message: object, name: str, default: int) -> int:
    value = _optional(message, name)
    return default if value is None else value


class RecallServicer(recall_pb2_grpc.RecallServiceServicer):
    def __init__(self, service: RecallService) -> None:
        self._service = service

    @translate_errors
    async def Recall(self, request: recall_pb2.RecallRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> recall_pb2.RecallResponse:
        ctx = from_metadata(context.invocation_metadata())
        query = RecallQuery(
            mode=request.mode, query=request.query, filters=_filters(request.filters),
            include_superseded=request.include_superseded, explain=request.explain,
            budgets=Budgets.from_request(_optional(request, "item_budget"), _optional(request, "byte_budget"),
                                         _optional(request, "token_budget")),
        )
        result = await self._service.recall(ctx, query)
        return recall_pb2.RecallResponse(
            items=[ranked_to_proto(r) for r in result.items], scoring_version=result.scoring_version,
            recall_id=result.recall_id, omitted=result.omitted, mode=result.mode,
            cut=[recall_pb2.CutItem(item=ranked_to_proto(r), reason=why) for r, why in result.cut],
        )

    @translate_errors
    async def Search(self, request: recall_pb2.SearchRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> recall_pb2.SearchResponse:
        ctx = from_metadata(context.invocation_metadata())
        limit = _optional(request, "limit")
        limit = DEFAULT_SEARCH_LIMIT if limit is None else limit
        ranked = await self._service.search(ctx, request.mode, request.query, _filters(request.filters), limit)
        return recall_pb2.SearchResponse(items=[ranked_to_proto(r) for r in ranked], mode=request.mode or "hybrid")

    @translate_errors
    async def GetItem(self, request: recall_pb2.GetItemRequest,  # noqa: N802
                      context: grpc.aio.ServicerContext) -> recall_pb2.GetItemResponse:
        ctx = from_metadata(context.invocation_metadata())
        return recall_pb2.GetItemResponse(item=item_to_proto(await self._service.get_item(ctx, request.id)))

    @translate_errors
    async def GetEvents(self, request: recall_pb2.GetEventsRequest,  # noqa: N802
                        context: grpc.aio.ServicerContext) -> recall_pb2.GetEventsResponse:
        ctx = from_metadata(context.invocation_metadata())
        rows = await self._service.get_events(ctx, request.id)
        return recall_pb2.GetEventsResponse(id=request.id, events=[event_to_proto(r) for r in rows])

    @translate_errors
    async def GetStatus(self, request: recall_pb2.GetStatusRequest,  # noqa: N802
                        context: grpc.aio.ServicerContext) -> recall_pb2.GetStatusResponse:
        ctx = from_metadata(context.invocation_metadata())
        item, stages = await self._service.get_status(ctx, request.id)
        return recall_pb2.GetStatusResponse(id=str(item.id), review_status=item.review_status,
                                            stages=[stage_to_proto(s) for s in stages])

    @translate_errors
    async def ListTrash(self, request: recall_pb2.ListTrashRequest,  # noqa: N802
                        context: grpc.aio.ServicerContext) -> recall_pb2.ListTrashResponse:
        ctx = from_metadata(context.invocation_metadata())
        entries, next_cursor = await self._service.list_trash(ctx, _or(request, "limit", DEFAULT_PAGE),
                                                              request.cursor)
        retention = timedelta(days=await self._service.trash_retention_days(ctx))
        return recall_pb2.ListTrashResponse(next_cursor=next_cursor, entries=[
            recall_pb2.TrashEntry(
                id=e.id, item_id=e.item_id, kind=e.kind, workspace_id=e.workspace_id, author_id=e.principal_id,
                visibility=e.visibility, review_status=e.review_status, invalidated=e.invalidated, reason=e.reason,
                deleted_by=e.deleted_by or "", deleted_at=timestamp(e.deleted_at),
                purge_after=timestamp(e.deleted_at + retention), preview=preview(e.content))
            for e in entries])

    @translate_errors
    async def ExpiryCandidates(self, request: recall_pb2.ExpiryCandidatesRequest,  # noqa: N802
                               context: grpc.aio.ServicerContext) -> recall_pb2.ExpiryCandidatesResponse:
        ctx = from_metadata(context.invocation_metadata())
        found = await self._service.expiry_candidates(ctx, _or(request, "within_days", DEFAULT_WITHIN_DAYS),
                                                      _or(request, "limit", DEFAULT_PAGE), request.workspace_id)
        return recall_pb2.ExpiryCandidatesResponse(items=[item_to_proto(i) for i in found])

    @translate_errors
    async def ListConflicts(self, request: recall_pb2.ListConflictsRequest,  # noqa: N802
                            context: grpc.aio.ServicerContext) -> recall_pb2.ListConflictsResponse:
        ctx = from_metadata(context.invocation_metadata())
        rows, next_cursor = await self._service.list_conflicts(ctx, request.status, request.type, request.item_id,
                                                               _or(request, "limit", DEFAULT_PAGE), request.cursor)
        return recall_pb2.ListConflictsResponse(conflicts=[conflict_to_proto(r) for r in rows], next_cursor=next_cursor)

    @translate_errors
    async def PromotionReadiness(self, request: recall_pb2.GetItemRequest,  # noqa: N802
                                 context: grpc.aio.ServicerContext) -> recall_pb2.PromotionReadinessResponse:
        ctx = from_metadata(context.invocation_metadata())
        item, blockers, gates = await self._service.promotion_readiness(ctx, request.id)
        return recall_pb2.PromotionReadinessResponse(
            id=str(item.id), review_status=item.review_status, ready=not blockers, gates=struct(gates),
            blockers=[recall_pb2.PromotionBlocker(code=code, detail=detail) for code, detail in blockers])

    @translate_errors
    async def ListEdges(self, request: recall_pb2.GetItemRequest,  # noqa: N802
                        context: grpc.aio.ServicerContext) -> recall_pb2.ListEdgesResponse:
        ctx = from_metadata(context.invocation_metadata())
        found = await self._service.list_edges(ctx, request.id)
        return recall_pb2.ListEdgesResponse(id=request.id, edges=[edge_to_proto(e) for e in found])
