"""Protobuf answers → the answer models the REST API returns (``services/gateway/answers.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from google.protobuf.json_format import MessageToDict

from engram.domain.values import PipelineStage, RememberStatus
from engram.rpc.errors import rebuild
from engram.v1 import ingest_pb2, memory_pb2, recall_pb2
from services.gateway.answers import (
    BatchAnswer,
    BatchResult,
    Blocker,
    BulkAnswer,
    BulkSkip,
    ClassifyAnswer,
    ConflictAnswer,
    ConflictPage,
    CutAnswer,
    DeletedAnswer,
    EdgeAnswer,
    EdgesAnswer,
    EventAnswer,
    EventsAnswer,
    FeedbackAnswer,
    HygieneAnswer,
    ItemAnswer,
    ItemCounts,
    ItemPage,
    ItemsAnswer,
    ObserveAnswer,
    PossibleSupersede,
    ReadinessAnswer,
    RecallAnswer,
    RecalledAnswer,
    RememberAnswer,
    ResolvedAnswer,
    ReviewQueueAnswer,
    SearchAnswer,
    StageAnswer,
    StatsAnswer,
    StatusAnswer,
    TrashEntryAnswer,
    TrashPage,
)
from services.gateway.problems import error_body

_EPOCH = datetime(1970, 1, 1)
_SECONDS = range(-62_135_596_800, 253_402_300_800)  # 0001-01-01 … 9999-12-31, the range protobuf allows


def _time(message: Any, name: str) -> str | None:
    """A Timestamp field as ISO 8601 UTC (``…Z``), exactly as ``ToDatetime().isoformat()`` writes it, without
    protobuf's Python checks and rounding helpers for a valid one (an invalid one goes through them and raises)."""
    if not message.HasField(name):
        return None
    stamp = getattr(message, name)
    seconds, nanos = stamp.seconds, stamp.nanos
    if seconds in _SECONDS and 0 <= nanos < 1_000_000_000:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    else:
        moment = stamp.ToDatetime()
    return moment.isoformat() + "Z"


def _text(value: str) -> str | None:
    """proto3 strings have no null: an empty one is absent."""
    return value or None


def _optional_round(message: Any, name: str, places: int = 4) -> float | None:
    return round(getattr(message, name), places) if message.HasField(name) else None


def item_answer(item: memory_pb2.MemoryItem) -> ItemAnswer:
    return ItemAnswer(
        id=item.id,
        tenant_id=item.tenant_id,
        workspace_id=item.workspace_id,
        principal_id=item.principal_id,
        content=item.content,
        content_hash=item.content_hash,
        kind=item.kind,
        tags=list(item.tags),
        importance=round(item.importance, 4),
        pinned=item.pinned,
        visibility=item.visibility,
        review_status=item.review_status,
        authority=item.authority,
        source_type=item.source_type,
        source_trust=round(item.source_trust, 4),
        memory_confidence=round(item.memory_confidence, 4),
        human_verified=item.human_verified,
        recall_count=item.recall_count if item.HasField("recall_count") else None,
        kind_explicit=item.kind_explicit,
        taxonomy_confidence=_optional_round(item, "taxonomy_confidence"),
        retention_confidence=_optional_round(item, "retention_confidence"),
        metadata=MessageToDict(item.metadata) if item.HasField("metadata") and item.metadata.fields else {},
        subject=_text(item.subject),
        wing=_text(item.wing),
        room=_text(item.room),
        source_uri=_text(item.source_uri),
        source_session=_text(item.source_session),
        superseded_by=_text(item.superseded_by),
        external_id=_text(item.external_id),
        retention=_text(item.retention),
        sensitivity=_text(item.sensitivity),
        valid_from=_time(item, "valid_from"),
        valid_to=_time(item, "valid_to"),
        created_at=_time(item, "created_at"),
        expires_at=_time(item, "expires_at"),
        invalidated_at=_time(item, "invalidated_at"),
        classified_at=_time(item, "classified_at"),
    )


def remember_answer(reply: ingest_pb2.RememberResponse) -> RememberAnswer:
    return RememberAnswer(
        id=reply.id,
        status=reply.status,
        review_status=reply.review_status,
        authority=reply.authority,
        possible_supersedes=[
            PossibleSupersede(id=p.id, similarity=p.similarity, preview=p.preview) for p in reply.possible_supersedes
        ],
        superseded=list(reply.superseded),
        item=item_answer(reply.item),
    )


def batch_answer(reply: ingest_pb2.RememberBatchResponse, refused: dict[int, dict[str, Any]]) -> BatchAnswer:
    """Ingest's results merged with the memories the schema refused here (``refused``: index → problem)."""
    results = [BatchResult(index=i, status=422, answer=None, error=problem) for i, problem in refused.items()]
    for r in reply.results:
        if r.HasField("answer"):
            status = 200 if r.answer.status == RememberStatus.DEDUPLICATED else 201
            results.append(BatchResult(index=r.index, status=status, answer=remember_answer(r.answer), error=None))
        else:
            body = error_body(rebuild(r.error.error_class, r.error.code, r.error.detail, r.error.field))
            results.append(BatchResult(index=r.index, status=body["status"], answer=None, error=body))
    return BatchAnswer(results=sorted(results, key=lambda r: r.index))


def observe_answer(reply: ingest_pb2.ObserveResponse) -> ObserveAnswer:
    return ObserveAnswer(id=reply.id, status=reply.status, expires_at=_time(reply, "expires_at"))


def _recalled_fields(recalled: memory_pb2.RecalledItem) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "item": item_answer(recalled.item),
        "score": round(recalled.score, 6),
        "reasons": list(recalled.reasons),
        "origin": recalled.origin,
    }
    if recalled.matched_via:
        fields["matched_via"] = recalled.matched_via
    return fields


def recalled_answer(recalled: memory_pb2.RecalledItem) -> RecalledAnswer:
    return RecalledAnswer(**_recalled_fields(recalled))


def recall_answer(reply: recall_pb2.RecallResponse, explain: bool) -> RecallAnswer:
    """``cut`` is in the answer only when the request asked to ``explain``."""
    cut = [CutAnswer(**_recalled_fields(c.item), cut_because=c.reason) for c in reply.cut] if explain else None
    return RecallAnswer(
        items=[recalled_answer(r) for r in reply.items],
        mode=reply.mode,
        scoring_version=reply.scoring_version,
        recall_id=reply.recall_id,
        omitted=reply.omitted,
        cut=cut,
    )


def search_answer(reply: recall_pb2.SearchResponse) -> SearchAnswer:
    return SearchAnswer(items=[recalled_answer(r) for r in reply.items], mode=reply.mode)


def status_answer(status: recall_pb2.GetStatusResponse) -> StatusAnswer:
    stages = [
        StageAnswer(name=s.name, status=s.status, detail=_text(s.detail), updated_at=_time(s, "updated_at"))
        for s in status.stages
    ]
    by_name = {s.name: s.status for s in stages}
    return StatusAnswer(
        id=status.id,
        review_status=status.review_status,
        embedding=by_name.get("embedding", "pending"),
        stages=stages,
    )


def _plain(value: Any) -> Any:
    """protobuf Struct numbers are doubles: give whole numbers back as ints (authority 50, not 50.0)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def events_answer(reply: recall_pb2.GetEventsResponse) -> EventsAnswer:
    return EventsAnswer(
        id=reply.id,
        events=[
            EventAnswer(
                id=e.id,
                action=e.action,
                actor_id=_text(e.actor_id),
                old=_plain(MessageToDict(e.old_value)) if e.HasField("old_value") else None,
                new=_plain(MessageToDict(e.new_value)) if e.HasField("new_value") else None,
                reason=_text(e.reason),
                request_id=_text(e.request_id),
                time=_time(e, "created_at"),
            )
            for e in reply.events
        ],
    )


def deleted_answer(reply: ingest_pb2.DeleteResponse) -> DeletedAnswer:
    return DeletedAnswer(item_id=reply.item_id, trash_id=reply.trash_id)


def trash_entry_answer(entry: recall_pb2.TrashEntry) -> TrashEntryAnswer:
    return TrashEntryAnswer(
        id=entry.id,
        item_id=entry.item_id,
        kind=entry.kind,
        workspace_id=entry.workspace_id,
        author_id=entry.author_id,
        visibility=entry.visibility,
        review_status=entry.review_status,
        invalidated=entry.invalidated,
        reason=entry.reason,
        deleted_by=_text(entry.deleted_by),
        deleted_at=_time(entry, "deleted_at"),
        purge_after=_time(entry, "purge_after"),
        preview=entry.preview,
    )


def trash_page(reply: recall_pb2.ListTrashResponse) -> TrashPage:
    return TrashPage(items=[trash_entry_answer(e) for e in reply.entries], next_cursor=_text(reply.next_cursor))


def bulk_answer(reply: ingest_pb2.BulkResponse) -> BulkAnswer:
    return BulkAnswer(
        action=reply.action,
        dry_run=reply.dry_run,
        matched=reply.matched,
        affected=list(reply.affected),
        truncated=reply.truncated,
        skipped=[BulkSkip(id=s.id, code=s.code, detail=s.detail) for s in reply.skipped],
    )


def expiry_answer(reply: recall_pb2.ExpiryCandidatesResponse) -> ItemsAnswer:
    return ItemsAnswer(items=[item_answer(i) for i in reply.items])


def item_page(reply: recall_pb2.ListItemsResponse) -> ItemPage:
    return ItemPage(items=[item_answer(i) for i in reply.items], next_cursor=_text(reply.next_cursor))


def _stages(counts: Any) -> dict[str, int]:
    """Every pipeline stage, in pipeline order, with its count (0 when none)."""
    return {stage.value: int(counts.get(stage.value, 0)) for stage in PipelineStage}


def stats_answer(reply: recall_pb2.GetStatsResponse) -> StatsAnswer:
    return StatsAnswer(
        items=ItemCounts(
            total=reply.total,
            by_review_status={k: int(v) for k, v in sorted(reply.by_review_status.items())},
            by_kind={k: int(v) for k, v in sorted(reply.by_kind.items())},
        ),
        review_queue=ReviewQueueAnswer(
            proposed=reply.proposed,
            disputed=reply.disputed,
            oldest_proposed_at=_time(reply, "oldest_proposed_at"),
        ),
        hygiene=HygieneAnswer(
            open_conflicts=reply.open_conflicts,
            pending_stages=_stages(reply.pending_stages),
            failed_stages=_stages(reply.failed_stages),
            expiring_within_7d=reply.expiring_within_7d,
            trash=reply.trash,
            superseded=reply.superseded,
            invalidated=reply.invalidated,
        ),
    )


def conflict_answer(c: memory_pb2.Conflict) -> ConflictAnswer:
    return ConflictAnswer(
        id=c.id,
        existing_item_id=c.existing_item_id,
        new_item_id=c.new_item_id,
        type=c.type,
        detector=c.detector,
        score=_optional_round(c, "score"),
        rule=_text(c.rule),
        explanation=_text(c.explanation),
        status=c.status,
        resolution=_text(c.resolution),
        resolver_id=_text(c.resolver_id),
        reason=_text(c.reason),
        created_at=_time(c, "created_at"),
        resolved_at=_time(c, "resolved_at"),
    )


def conflict_page(reply: recall_pb2.ListConflictsResponse) -> ConflictPage:
    return ConflictPage(items=[conflict_answer(c) for c in reply.conflicts], next_cursor=_text(reply.next_cursor))


def resolved_answer(reply: ingest_pb2.ResolveConflictResponse) -> ResolvedAnswer:
    return ResolvedAnswer(
        conflict=conflict_answer(reply.conflict),
        existing=item_answer(reply.existing),
        new=item_answer(reply.new),
        merged=item_answer(reply.merged) if reply.HasField("merged") else None,
    )


def edge_answer(e: memory_pb2.Edge) -> EdgeAnswer:
    return EdgeAnswer(
        id=e.id,
        src_id=e.src_id,
        dst_id=e.dst_id,
        type=e.type,
        created_by=_text(e.created_by),
        created_at=_time(e, "created_at"),
    )


def edges_answer(reply: recall_pb2.ListEdgesResponse) -> EdgesAnswer:
    return EdgesAnswer(id=reply.id, items=[edge_answer(e) for e in reply.edges])


def classify_answer(r: ingest_pb2.ClassifyResponse) -> ClassifyAnswer:
    return ClassifyAnswer(
        kind=r.kind,
        taxonomy_confidence=round(r.taxonomy_confidence, 4),
        retention=r.retention,
        retention_confidence=round(r.retention_confidence, 4),
        sensitivity=r.sensitivity,
        wing=_text(r.wing),
        room=_text(r.room),
        suggested_visibility=_text(r.suggested_visibility),
        reasons=list(r.reasons),
        classifier=r.classifier,
        fallback_reason=_text(r.fallback_reason),
    )


def readiness_answer(r: recall_pb2.PromotionReadinessResponse) -> ReadinessAnswer:
    return ReadinessAnswer(
        id=r.id,
        review_status=r.review_status,
        ready=r.ready,
        blockers=[Blocker(code=b.code, detail=b.detail) for b in r.blockers],
        gates=MessageToDict(r.gates),
    )


def feedback_answer(reply: ingest_pb2.FeedbackResponse) -> FeedbackAnswer:
    return FeedbackAnswer(
        item_id=reply.item_id,
        verdict=reply.verdict,
        previous=_text(reply.previous),
        importance=round(reply.importance, 4),
    )
