"""gRPC edge of the ingest service: protobuf in, protobuf out (the caller and errors are handled by
`EdgeInterceptor` in engram/rpc/server.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from engram.domain.content import preview
from engram.domain.patching import PatchValues
from engram.domain.values import IdempotentRoute
from engram.rpc.context import caller
from engram.rpc.convert import (
    conflict_to_proto,
    edge_to_proto,
    from_struct,
    from_timestamp,
    item_to_proto,
    timestamp,
)
from engram.rpc.errors import wire_class
from engram.v1 import ingest_pb2, ingest_pb2_grpc
from services.ingest.conflicts import ConflictService
from services.ingest.edges import EdgeService
from services.ingest.feedback import FeedbackService
from services.ingest.idempotency import Once, Replayed
from services.ingest.observe import ObserveCommand, Observed, ObserveService
from services.ingest.patch import PatchService
from services.ingest.review import ReviewService
from services.ingest.service import BatchOutcome, IngestService, RememberCommand, RememberResult
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
        observe: ObserveService,
        patch: PatchService,
    ) -> None:
        self._service = service
        self._review = review
        self._feedback = feedback
        self._trash = trash
        self._conflicts = conflicts
        self._edges = edges
        self._observe = observe
        self._patch = patch

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
        once = _once(request, IdempotentRoute.REMEMBER, _encode_remember)
        result = await self._service.remember_once(ctx, _remember_command(request), once)
        if isinstance(result, Replayed):
            return _replayed(ingest_pb2.RememberResponse, result)
        return remember_response(result)

    async def RememberBatch(
        self, request: ingest_pb2.RememberBatchRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.RememberBatchResponse:
        ctx = caller()
        once = _once(request, IdempotentRoute.REMEMBER_BATCH, _encode_batch)
        commands = [(entry.index, _remember_command(entry.memory)) for entry in request.items]
        result = await self._service.remember_batch(ctx, commands, once)
        if isinstance(result, Replayed):
            return _replayed(ingest_pb2.RememberBatchResponse, result)
        return batch_response(result)

    async def Observe(
        self, request: ingest_pb2.ObserveRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ObserveResponse:
        ctx = caller()
        command = ObserveCommand(
            content=request.content,
            source_session=request.source_session,
            workspace_id=request.workspace_id,
            tags=list(request.tags),
            metadata=from_struct(request, "metadata"),
            source_uri=request.source_uri,
            expires_at=from_timestamp(request, "expires_at"),
        )
        result = await self._observe.observe(ctx, command, _once(request, IdempotentRoute.OBSERVE, _encode_observed))
        if isinstance(result, Replayed):
            return _replayed(ingest_pb2.ObserveResponse, result)
        return observe_response(result)

    async def Patch(
        self, request: ingest_pb2.PatchRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ItemResponse:
        ctx = caller()
        values = PatchValues(
            tags=list(request.tags),
            importance=request.importance,
            pinned=request.pinned,
            visibility=request.visibility,
            subject=request.subject or None,
            valid_to=from_timestamp(request, "valid_to"),
        )
        item = await self._patch.patch(ctx, request.id, list(request.fields), values)
        return ingest_pb2.ItemResponse(item=item_to_proto(item))


def _remember_command(request: ingest_pb2.RememberRequest) -> RememberCommand:
    return RememberCommand(
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


def remember_response(result: RememberResult) -> ingest_pb2.RememberResponse:
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


def batch_response(outcomes: list[BatchOutcome]) -> ingest_pb2.RememberBatchResponse:
    results = []
    for outcome in outcomes:
        if outcome.result is not None:
            results.append(ingest_pb2.BatchResult(index=outcome.index, answer=remember_response(outcome.result)))
        elif outcome.error is not None:
            error = outcome.error
            results.append(
                ingest_pb2.BatchResult(
                    index=outcome.index,
                    error=ingest_pb2.ItemError(
                        error_class=wire_class(type(error)).__name__,
                        code=error.code,
                        detail=error.detail,
                        field=error.field or "",
                    ),
                )
            )
    return ingest_pb2.RememberBatchResponse(results=results)


def observe_response(result: Observed) -> ingest_pb2.ObserveResponse:
    return ingest_pb2.ObserveResponse(
        id=str(result.item.id), status=result.status, expires_at=timestamp(result.item.expires_at)
    )


def _encode_remember(result: RememberResult) -> bytes:
    return bytes(remember_response(result).SerializeToString())


def _encode_batch(outcomes: list[BatchOutcome]) -> bytes:
    return bytes(batch_response(outcomes).SerializeToString())


def _encode_observed(result: Observed) -> bytes:
    return bytes(observe_response(result).SerializeToString())


R = TypeVar("R", ingest_pb2.RememberResponse, ingest_pb2.RememberBatchResponse, ingest_pb2.ObserveResponse)


def _replayed(message: type[R], replayed: Replayed) -> R:
    """The stored answer, marked as replayed."""
    reply = message()
    reply.ParseFromString(replayed.answer)
    reply.replayed = True
    return reply


T = TypeVar("T")


def _once(request: Any, route: str, encode: Callable[[T], bytes]) -> Once[T] | None:
    """The request's idempotency key, if it has one; a request without the gateway's fingerprint is hashed here
    (its deterministic encoding without the key)."""
    if not request.HasField("idempotency") or not request.idempotency.key:
        return None
    request_hash = request.idempotency.request_hash
    if not request_hash:
        bare = type(request)()
        bare.CopyFrom(request)
        bare.ClearField("idempotency")
        request_hash = hashlib.sha256(bare.SerializeToString(deterministic=True)).digest()
    return Once(route, request.idempotency.key, request_hash, encode)
