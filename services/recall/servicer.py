"""gRPC edge of the recall service."""

from __future__ import annotations

from datetime import timedelta

import grpc

from engram.db.listing import ItemCriteria, Stats
from engram.db.search import Filters
from engram.domain.budget import Budgets
from engram.domain.content import preview
from engram.domain.values import ReviewStatus
from engram.rpc.context import caller
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
from engram.v1 import memory_pb2, recall_pb2, recall_pb2_grpc
from services.recall.ranking import RecallQuery
from services.recall.service import RecallService

DEFAULT_SEARCH_LIMIT = 10
DEFAULT_PAGE = 50
DEFAULT_WITHIN_DAYS = 7


def _filters(message: memory_pb2.RecallFilters) -> Filters:
    return Filters(
        kinds=list(message.kinds),
        tags=list(message.tags),
        workspace_id=message.workspace_id or None,
        wing=message.wing or None,
        room=message.room or None,
        as_of=from_timestamp(message, "as_of"),
        time_start=from_timestamp(message, "time_start"),
        time_end=from_timestamp(message, "time_end"),
    )


def _criteria(request: recall_pb2.ListItemsRequest) -> ItemCriteria:
    return ItemCriteria(
        kinds=list(request.kinds),
        review_statuses=list(request.review_statuses),
        workspace_id=request.workspace_id or None,
        author_id=request.author_id or None,
        tag=request.tag or None,
        subject=request.subject or None,
        created_after=from_timestamp(request, "created_after"),
        created_before=from_timestamp(request, "created_before"),
        valid_start=from_timestamp(request, "valid_start"),
        valid_end=from_timestamp(request, "valid_end"),
        include_superseded=request.include_superseded,
    )


def _stats_to_proto(stats: Stats) -> recall_pb2.GetStatsResponse:
    return recall_pb2.GetStatsResponse(
        total=stats.total,
        by_review_status=stats.by_review_status,
        by_kind=stats.by_kind,
        proposed=stats.by_review_status.get(ReviewStatus.PROPOSED, 0),
        disputed=stats.by_review_status.get(ReviewStatus.DISPUTED, 0),
        oldest_proposed_at=timestamp(stats.oldest_proposed_at),
        open_conflicts=stats.open_conflicts,
        pending_stages=stats.pending_stages,
        failed_stages=stats.failed_stages,
        expiring_within_7d=stats.expiring_within_7d,
        trash=stats.trash,
        superseded=stats.superseded,
        invalidated=stats.invalidated,
    )


def _optional(message: object, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None  # type: ignore[attr-defined]


def _or(message: object, name: str, default: int) -> int:
    value = _optional(message, name)
    return default if value is None else value


class RecallServicer(recall_pb2_grpc.RecallServiceServicer):
    def __init__(self, service: RecallService) -> None:
        self._ranking = service.ranking
        self._reads = service.reads
        self._listings = service.listings
        self._catalog = service.catalog

    async def Recall(
        self, request: recall_pb2.RecallRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.RecallResponse:
        ctx = caller()
        query = RecallQuery(
            mode=request.mode,
            query=request.query,
            filters=_filters(request.filters),
            include_superseded=request.include_superseded,
            explain=request.explain,
            budgets=Budgets.from_request(
                _optional(request, "item_budget"), _optional(request, "byte_budget"), _optional(request, "token_budget")
            ),
        )
        result = await self._ranking.recall(ctx, query)
        return recall_pb2.RecallResponse(
            items=[ranked_to_proto(r) for r in result.items],
            scoring_version=result.scoring_version,
            recall_id=result.recall_id,
            omitted=result.omitted,
            mode=result.mode,
            cut=[recall_pb2.CutItem(item=ranked_to_proto(r), reason=why) for r, why in result.cut],
        )

    async def Search(
        self, request: recall_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.SearchResponse:
        ctx = caller()
        limit = _optional(request, "limit")
        limit = DEFAULT_SEARCH_LIMIT if limit is None else limit
        ranked = await self._ranking.search(ctx, request.mode, request.query, _filters(request.filters), limit)
        return recall_pb2.SearchResponse(items=[ranked_to_proto(r) for r in ranked], mode=request.mode or "hybrid")

    async def GetItem(
        self, request: recall_pb2.GetItemRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetItemResponse:
        ctx = caller()
        return recall_pb2.GetItemResponse(item=item_to_proto(await self._reads.get_item(ctx, request.id)))

    async def GetEvents(
        self, request: recall_pb2.GetEventsRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetEventsResponse:
        ctx = caller()
        events = await self._reads.get_events(ctx, request.id)
        return recall_pb2.GetEventsResponse(id=request.id, events=[event_to_proto(e) for e in events])

    async def GetStatus(
        self, request: recall_pb2.GetStatusRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetStatusResponse:
        ctx = caller()
        item, stages = await self._reads.get_status(ctx, request.id)
        return recall_pb2.GetStatusResponse(
            id=str(item.id), review_status=item.review_status, stages=[stage_to_proto(s) for s in stages]
        )

    async def ListTrash(
        self, request: recall_pb2.ListTrashRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.ListTrashResponse:
        ctx = caller()
        entries, next_cursor = await self._listings.list_trash(ctx, _or(request, "limit", DEFAULT_PAGE), request.cursor)
        retention = timedelta(days=await self._listings.trash_retention_days(ctx))
        return recall_pb2.ListTrashResponse(
            next_cursor=next_cursor,
            entries=[
                recall_pb2.TrashEntry(
                    id=e.id,
                    item_id=e.item_id,
                    kind=e.kind,
                    workspace_id=e.workspace_id,
                    author_id=e.principal_id,
                    visibility=e.visibility,
                    review_status=e.review_status,
                    invalidated=e.invalidated,
                    reason=e.reason,
                    deleted_by=e.deleted_by or "",
                    deleted_at=timestamp(e.deleted_at),
                    purge_after=timestamp(e.deleted_at + retention),
                    preview=preview(e.content),
                )
                for e in entries
            ],
        )

    async def ExpiryCandidates(
        self, request: recall_pb2.ExpiryCandidatesRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.ExpiryCandidatesResponse:
        ctx = caller()
        found = await self._listings.expiry_candidates(
            ctx,
            _or(request, "within_days", DEFAULT_WITHIN_DAYS),
            _or(request, "limit", DEFAULT_PAGE),
            request.workspace_id,
        )
        return recall_pb2.ExpiryCandidatesResponse(items=[item_to_proto(i) for i in found])

    async def ListConflicts(
        self, request: recall_pb2.ListConflictsRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.ListConflictsResponse:
        ctx = caller()
        rows, next_cursor = await self._listings.list_conflicts(
            ctx, request.status, request.type, request.item_id, _or(request, "limit", DEFAULT_PAGE), request.cursor
        )
        return recall_pb2.ListConflictsResponse(conflicts=[conflict_to_proto(r) for r in rows], next_cursor=next_cursor)

    async def PromotionReadiness(
        self, request: recall_pb2.GetItemRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.PromotionReadinessResponse:
        ctx = caller()
        item, blockers, gates = await self._reads.promotion_readiness(ctx, request.id)
        return recall_pb2.PromotionReadinessResponse(
            id=str(item.id),
            review_status=item.review_status,
            ready=not blockers,
            gates=struct(gates),
            blockers=[recall_pb2.PromotionBlocker(code=code, detail=detail) for code, detail in blockers],
        )

    async def ListEdges(
        self, request: recall_pb2.GetItemRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.ListEdgesResponse:
        ctx = caller()
        found = await self._reads.list_edges(ctx, request.id)
        return recall_pb2.ListEdgesResponse(id=request.id, edges=[edge_to_proto(e) for e in found])

    async def ListItems(
        self, request: recall_pb2.ListItemsRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.ListItemsResponse:
        ctx = caller()
        found, next_cursor = await self._catalog.list_items(
            ctx, _criteria(request), request.sort, _or(request, "limit", DEFAULT_PAGE), request.cursor
        )
        return recall_pb2.ListItemsResponse(items=[item_to_proto(i) for i in found], next_cursor=next_cursor)

    async def GetStats(
        self, request: recall_pb2.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetStatsResponse:
        return _stats_to_proto(await self._catalog.stats(caller()))
