"""gRPC edge of the ingest service: protobuf in, protobuf out (the caller and errors are handled by
`EdgeInterceptor` in engram/rpc/server.py)."""

from __future__ import annotations

import grpc

from engram.domain.content import preview
from engram.rpc.context import caller
from engram.rpc.convert import conflict_to_proto, edge_to_proto, from_struct, from_timestamp, item_to_proto
from engram.v1 import ingest_pb2, ingest_pb2_grpc
from services.ingest.conflicts import ConflictService
from services.ingest.edges import EdgeService
from services.ingest.feedback import FeedbackService
from services.ingest.review import ReviewService
from services.ingest.service import IngestService, RememberCommand
from services.ingest.trash import BulkFilter, TrashService


class IngestServicer(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(
        self,
        service: IngestService,
        review: ReviewService,
        feedback: FeedbackService,
        trash: TrashService,
        conflicts: ConflictService,
        edges: EdgeService,
    ) -> None:
        self._service = service
        self._review = review
        self._feedback = feedback
        self._trash = trash
        self._conflicts = conflicts
        self._edges = edges

    async def Link(self, request: ingest_pb2.LinkRequest, context: grpc.aio.ServicerContext) -> ingest_pb2.LinkResponse:
        ctx = caller()
        edge, created = await self._edges.link(ctx, request.src_id, request.dst_id, request.type)
        return ingest_pb2.LinkResponse(edge=edge_to_proto(edge), created=created)

    async def Unlink(
        self, request: ingest_pb2.UnlinkRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.UnlinkResponse:
        ctx = caller()
        await self._edges.unlink(ctx, request.id)
        return ingest_pb2.UnlinkResponse(id=request.id)

    async def ResolveConflict(
        self, request: ingest_pb2.ResolveConflictRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ResolveConflictResponse:
        ctx = caller()
        decision = await self._conflicts.resolve(ctx, request.id, request.resolution, request.reason, request.content)
        return ingest_pb2.ResolveConflictResponse(
            conflict=conflict_to_proto(decision.conflict),
            existing=item_to_proto(decision.existing),
            new=item_to_proto(decision.new),
            merged=item_to_proto(decision.merged) if decision.merged else None,
        )

    async def Classify(
        self, request: ingest_pb2.ClassifyRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ClassifyResponse:
        ctx = caller()
        result, fallback = await self._service.classify(ctx, request.content)
        return ingest_pb2.ClassifyResponse(
            kind=result.kind,
            taxonomy_confidence=result.taxonomy_confidence,
            retention=result.retention,
            retention_confidence=result.retention_confidence,
            sensitivity=result.sensitivity,
            wing=result.wing or "",
            room=result.room or "",
            suggested_visibility=result.suggested_visibility or "",
            reasons=list(result.reasons),
            classifier=result.classifier,
            fallback_reason=fallback or "",
        )

    async def Delete(
        self, request: ingest_pb2.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DeleteResponse:
        ctx = caller()
        trash_id = await self._trash.delete(ctx, request.id, request.reason)
        return ingest_pb2.DeleteResponse(item_id=request.id, trash_id=trash_id)

    async def Restore(
        self, request: ingest_pb2.RestoreRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ItemResponse:
        ctx = caller()
        return ingest_pb2.ItemResponse(item=item_to_proto(await self._trash.restore(ctx, request.trash_id)))

    async def Bulk(self, request: ingest_pb2.BulkRequest, context: grpc.aio.ServicerContext) -> ingest_pb2.BulkResponse:
        ctx = caller()
        f = request.filter
        where = BulkFilter(
            kinds=list(f.kinds),
            tags=list(f.tags),
            workspace_id=f.workspace_id,
            wing=f.wing,
            room=f.room,
            review_statuses=list(f.review_statuses),
            author_id=f.author_id,
            created_before=from_timestamp(f, "created_before"),
            created_after=from_timestamp(f, "created_after"),
        )
        result = await self._trash.bulk(
            ctx, request.action, where, dry_run=request.dry_run, limit=request.limit, reason=request.reason
        )
        return ingest_pb2.BulkResponse(
            action=result.action,
            dry_run=result.dry_run,
            matched=result.matched,
            affected=result.affected,
            skipped=[ingest_pb2.BulkSkip(id=i, code=c, detail=d) for i, c, d in result.skipped],
            truncated=result.truncated,
        )

    async def Feedback(
        self, request: ingest_pb2.FeedbackRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.FeedbackResponse:
        ctx = caller()
        result = await self._feedback.record(ctx, request.item_id, request.verdict, request.recall_id)
        return ingest_pb2.FeedbackResponse(
            item_id=result.item_id, verdict=result.verdict, previous=result.previous or "", importance=result.importance
        )

    async def Review(
        self, request: ingest_pb2.ReviewRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ItemResponse:
        ctx = caller()
        item = await self._review.review(ctx, request.id, request.action, request.reason)
        return ingest_pb2.ItemResponse(item=item_to_proto(item))

    async def Invalidate(
        self, request: ingest_pb2.InvalidateRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ItemResponse:
        ctx = caller()
        item = await self._review.invalidate(ctx, request.id, request.reason)
        return ingest_pb2.ItemResponse(item=item_to_proto(item))

    async def Verify(
        self, request: ingest_pb2.VerifyRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ItemResponse:
        ctx = caller()
        item = await self._review.verify(ctx, request.id, request.reason)
        return ingest_pb2.ItemResponse(item=item_to_proto(item))

    async def Remember(
        self, request: ingest_pb2.RememberRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.RememberResponse:
        ctx = caller()
        command = RememberCommand(
            content=request.content,
            kind=request.kind,
            importance=request.importance if request.HasField("importance") else None,
            tags=list(request.tags),
            subject=request.subject,
            wing=request.wing,
            room=request.room,
            pinned=request.pinned,
            visibility=request.visibility,
            source_type=request.source_type,
            source_uri=request.source_uri,
            source_session=request.source_session,
            valid_from=from_timestamp(request, "valid_from"),
            valid_to=from_timestamp(request, "valid_to"),
            expires_at=from_timestamp(request, "expires_at"),
            external_id=request.external_id,
            metadata=from_struct(request, "metadata"),
            workspace_id=request.workspace_id,
            supersedes=list(request.supersedes),
        )
        result = await self._service.remember(ctx, command)
        return ingest_pb2.RememberResponse(
            id=str(result.item.id),
            status=result.status,
            review_status=result.item.review_status,
            authority=result.item.authority,
            item=item_to_proto(result.item),
            superseded=result.superseded,
            possible_supersedes=[
                ingest_pb2.PossibleSupersede(id=s.id, similarity=s.similarity, preview=preview(s.content))
                for s in result.possible_supersedes
            ],
        )
