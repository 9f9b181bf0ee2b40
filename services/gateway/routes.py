"""The v1 REST routes: thin mappings from JSON to gRPC and back."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict

from engram.domain.models import CallerContext
from engram.domain.validation import require_item_id
from engram.rpc.convert import timestamp
from engram.v1 import ingest_pb2, memory_pb2, recall_pb2
from services.gateway.auth import Caller, policy
from services.gateway.clients import Downstream, Services
from services.gateway.limits import FeedbackCaller, RecallCaller, RememberCaller
from services.gateway.mapping import (
    conflict_json,
    edge_json,
    events_json,
    item_json,
    recalled_json,
    status_json,
    trash_json,
)
from services.gateway.schemas import (
    BulkBody,
    ClassifyBody,
    EdgeBody,
    FeedbackBody,
    FilterFields,
    InvalidateBody,
    RecallBody,
    RememberBody,
    ResolveBody,
    ReviewBody,
    SearchBody,
    VerifyBody,
)

router = APIRouter(prefix="/v1")


def _filters(body: FilterFields) -> memory_pb2.RecallFilters:
    return memory_pb2.RecallFilters(
        kinds=body.kinds,
        tags=body.tags,
        workspace_id=body.workspace_id or "",
        wing=body.wing or "",
        room=body.room or "",
        as_of=timestamp(body.as_of),
    )


@router.post("/remember", status_code=201, summary="Store a memory", **policy("write"))
async def remember(
    body: RememberBody,
    ctx: RememberCaller,
    ds: Services,
) -> JSONResponse:
    """201 with the new item (``status: created``, or ``superseded`` when it replaced ``supersedes``), or 200
    with ``status: deduplicated`` and the first item when the same canonical content is already stored."""
    return await _remember(body, ctx, ds)


@router.post(
    "/items/{item_id}/supersede", status_code=201, summary="Replace a memory with a new one", **policy("write")
)
async def supersede(
    item_id: str,
    body: RememberBody,
    ctx: RememberCaller,
    ds: Services,
) -> JSONResponse:
    """Atomic: the new memory is stored and the old one marked superseded, or nothing is written (403
    ``authority_too_low`` when the caller's authority is below the old memory's)."""
    require_item_id(item_id)
    if item_id not in body.supersedes:
        body = body.model_copy(update={"supersedes": [item_id, *body.supersedes]})
    return await _remember(body, ctx, ds)


@router.post("/items/{item_id}/invalidate", summary="Declare a memory no longer true", **policy("write|review"))
async def invalidate(
    item_id: str,
    body: InvalidateBody,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """Nothing replaces it: it leaves recall (and ends any supersession chain into it) but stays readable
    for audit. Its author or a reviewer."""
    reply = await ds.call(ds.ingest.Invalidate, ingest_pb2.InvalidateRequest(id=item_id, reason=body.reason), ctx)
    return item_json(reply.item)


async def _remember(body: RememberBody, ctx: CallerContext, ds: Downstream) -> JSONResponse:
    metadata = struct_pb2.Struct()
    metadata.update(body.metadata)
    request = ingest_pb2.RememberRequest(
        content=body.content,
        kind=body.kind or "",
        tags=body.tags,
        subject=body.subject or "",
        wing=body.wing or "",
        room=body.room or "",
        pinned=body.pinned,
        visibility=body.visibility or "",
        source_type=body.source_type or "",
        source_uri=body.source_uri or "",
        source_session=body.source_session or "",
        valid_from=timestamp(body.valid_from),
        valid_to=timestamp(body.valid_to),
        expires_at=timestamp(body.expires_at),
        external_id=body.external_id or "",
        metadata=metadata,
        workspace_id=body.workspace_id or "",
        supersedes=body.supersedes,
    )
    if body.importance is not None:
        request.importance = body.importance
    reply = await ds.call(ds.ingest.Remember, request, ctx)
    payload = {
        "id": reply.id,
        "status": reply.status,
        "review_status": reply.review_status,
        "authority": reply.authority,
        "possible_supersedes": [
            {"id": p.id, "similarity": p.similarity, "preview": p.preview} for p in reply.possible_supersedes
        ],
        "superseded": list(reply.superseded),
        "item": item_json(reply.item),
    }
    return JSONResponse(payload, status_code=200 if reply.status == "deduplicated" else 201)


@router.get("/conflicts", summary="Conflicts between memories you can read", **policy("read"))
async def list_conflicts(
    ctx: Caller,
    ds: Services,
    status: str | None = "open",
    type: str | None = None,
    item_id: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    """Open ones by default (``status=resolved`` or ``status=`` for the others), newest first; only conflicts
    whose two memories you may read are listed."""
    reply = await ds.call(
        ds.recall.ListConflicts,
        recall_pb2.ListConflictsRequest(
            status=status or "", type=type or "", item_id=item_id or "", limit=limit, cursor=cursor or ""
        ),
        ctx,
    )
    return {"items": [conflict_json(c) for c in reply.conflicts], "next_cursor": reply.next_cursor or None}


@router.post("/conflicts/{conflict_id}/resolve", summary="Decide a conflict", **policy("review"))
async def resolve_conflict(
    conflict_id: str,
    body: ResolveBody,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """A reviewer (review scope, not an agent) keeps the existing memory, accepts the new one, keeps both, or
    merges them into a new memory (``content``) that replaces both."""
    reply = await ds.call(
        ds.ingest.ResolveConflict,
        ingest_pb2.ResolveConflictRequest(
            id=conflict_id, resolution=body.resolution, reason=body.reason, content=body.content or ""
        ),
        ctx,
    )
    return {
        "conflict": conflict_json(reply.conflict),
        "existing": item_json(reply.existing),
        "new": item_json(reply.new),
        "merged": item_json(reply.merged) if reply.HasField("merged") else None,
    }


@router.post("/edges", status_code=201, summary="Link two memories", **policy("write"))
async def link(
    body: EdgeBody,
    ctx: Caller,
    ds: Services,
) -> JSONResponse:
    """201 with the new link, or 200 with the existing one (src, dst and type are unique). You need a writing
    role where the source memory lives and must be able to read both."""
    reply = await ds.call(
        ds.ingest.Link, ingest_pb2.LinkRequest(src_id=body.src_id, dst_id=body.dst_id, type=body.type), ctx
    )
    return JSONResponse(edge_json(reply.edge), status_code=201 if reply.created else 200)


@router.delete("/edges/{edge_id}", status_code=204, summary="Remove a link", **policy("write|review"))
async def unlink(
    edge_id: str,
    ctx: Caller,
    ds: Services,
) -> Response:
    """Its creator, the source memory's author, or a reviewer; supersession links stay (409)."""
    await ds.call(ds.ingest.Unlink, ingest_pb2.UnlinkRequest(id=edge_id), ctx)
    return Response(status_code=204)


@router.get("/items/{item_id}/edges", summary="A memory's links", **policy("read"))
async def list_edges(
    item_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """Links from and to the memory whose other end you may read, supersession links included."""
    reply = await ds.call(ds.recall.ListEdges, recall_pb2.GetItemRequest(id=item_id), ctx)
    return {"id": reply.id, "items": [edge_json(e) for e in reply.edges]}


@router.post("/classify", summary="What the classifier would say about a text (writes nothing)", **policy("read"))
async def classify(
    body: ClassifyBody,
    ctx: RecallCaller,
    ds: Services,
) -> dict[str, Any]:
    """Kind, retention, sensitivity, placement (from the tenant's rules) and a suggested visibility, with the
    reasons; with ``ENGRAM_LLM_BASE_URL`` set, the model's answer (or why it was not used)."""
    r = await ds.call(ds.ingest.Classify, ingest_pb2.ClassifyRequest(content=body.content), ctx)
    return {
        "kind": r.kind,
        "taxonomy_confidence": round(r.taxonomy_confidence, 4),
        "retention": r.retention,
        "retention_confidence": round(r.retention_confidence, 4),
        "sensitivity": r.sensitivity,
        "wing": r.wing or None,
        "room": r.room or None,
        "suggested_visibility": r.suggested_visibility or None,
        "reasons": list(r.reasons),
        "classifier": r.classifier,
        "fallback_reason": r.fallback_reason or None,
    }


@router.post("/recall", summary="Recall memories for a task or a session start", **policy("read"))
async def recall(
    body: RecallBody,
    ctx: RecallCaller,
    ds: Services,
) -> dict[str, Any]:
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
    answer = {
        "items": [recalled_json(r) for r in reply.items],
        "mode": reply.mode,
        "scoring_version": reply.scoring_version,
        "recall_id": reply.recall_id,
        "omitted": reply.omitted,
    }
    if body.explain:
        answer["cut"] = [{**recalled_json(c.item), "cut_because": c.reason} for c in reply.cut]
    return answer


@router.post("/search", summary="Search memories by keyword, meaning, or both", **policy("read"))
async def search(
    body: SearchBody,
    ctx: RecallCaller,
    ds: Services,
) -> dict[str, Any]:
    request = recall_pb2.SearchRequest(query=body.query, mode=body.mode, filters=_filters(body))
    if body.limit is not None:
        request.limit = body.limit
    reply = await ds.call(ds.recall.Search, request, ctx)
    return {"items": [recalled_json(r) for r in reply.items], "mode": reply.mode}


@router.get("/items/expiry-candidates", summary="Memories whose time to live ends soon", **policy("read"))
async def expiry_candidates(
    ctx: Caller,
    ds: Services,
    within_days: int = 7,
    limit: int = 50,
    workspace_id: str | None = None,
) -> dict[str, Any]:
    """Live items you can see that expire within ``within_days`` (1–3650), soonest first; already expired ones
    that the sweep has not moved to the trash yet come first."""
    reply = await ds.call(
        ds.recall.ExpiryCandidates,
        recall_pb2.ExpiryCandidatesRequest(within_days=within_days, limit=limit, workspace_id=workspace_id or ""),
        ctx,
    )
    return {"items": [item_json(i) for i in reply.items]}


@router.post("/items/bulk", summary="Archive or delete every memory matching a filter", **policy("write|review"))
async def bulk(
    body: BulkBody,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """One transaction. ``dry_run`` (the default) answers the same and writes nothing. Items you may not
    change are listed in ``skipped`` with the refusal's code; the rest are ``affected``."""
    f = body.filter
    request = ingest_pb2.BulkRequest(
        action=body.action,
        dry_run=body.dry_run,
        limit=body.limit,
        reason=body.reason,
        filter=ingest_pb2.BulkFilter(
            kinds=f.kinds,
            tags=f.tags,
            workspace_id=f.workspace_id or "",
            wing=f.wing or "",
            room=f.room or "",
            review_statuses=f.review_status,
            author_id=f.author_id or "",
            created_before=timestamp(f.created_before),
            created_after=timestamp(f.created_after),
        ),
    )
    reply = await ds.call(ds.ingest.Bulk, request, ctx)
    return {
        "action": reply.action,
        "dry_run": reply.dry_run,
        "matched": reply.matched,
        "affected": list(reply.affected),
        "truncated": reply.truncated,
        "skipped": [{"id": s.id, "code": s.code, "detail": s.detail} for s in reply.skipped],
    }


@router.delete("/items/{item_id}", summary="Move a memory to the trash", **policy("write|review"))
async def delete_item(
    item_id: str,
    ctx: Caller,
    ds: Services,
    reason: str = Query(default="", max_length=2000),
) -> dict[str, Any]:
    """Its author or a reviewer. The item, its edges and embeddings are kept as one snapshot in the trash
    (``trash_id``) and can be restored until the sweep empties it (30 days by default)."""
    reply = await ds.call(ds.ingest.Delete, ingest_pb2.DeleteRequest(id=item_id, reason=reason), ctx)
    return {"item_id": reply.item_id, "trash_id": reply.trash_id}


@router.get("/trash", summary="Deleted and expired memories you can restore", **policy("read"))
async def list_trash(
    ctx: Caller,
    ds: Services,
    limit: int = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    """Newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
    reply = await ds.call(ds.recall.ListTrash, recall_pb2.ListTrashRequest(limit=limit, cursor=cursor or ""), ctx)
    return {"items": [trash_json(e) for e in reply.entries], "next_cursor": reply.next_cursor or None}


@router.post("/trash/{trash_id}/restore", summary="Bring a memory back from the trash", **policy("write|review"))
async def restore(
    trash_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """As it was, state included (an invalidated memory stays invalidated), with its embeddings and the links
    whose other end still exists. An expired memory comes back without its expiry."""
    reply = await ds.call(ds.ingest.Restore, ingest_pb2.RestoreRequest(trash_id=trash_id), ctx)
    return item_json(reply.item)


@router.get("/items/{item_id}", summary="Read one memory", **policy("read"))
async def get_item(
    item_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    reply = await ds.call(ds.recall.GetItem, recall_pb2.GetItemRequest(id=item_id), ctx)
    return item_json(reply.item)


@router.get("/items/{item_id}/status", summary="Where a memory is in the processing pipeline", **policy("read"))
async def get_status(
    item_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    reply = await ds.call(ds.recall.GetStatus, recall_pb2.GetStatusRequest(id=item_id), ctx)
    return status_json(reply)


@router.post("/items/{item_id}/review", summary="Move a memory through the review lifecycle", **policy("write|review"))
async def review(
    item_id: str,
    body: ReviewBody,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """Who may take which action from which state is the table in ``engram/domain/lifecycle.py``."""
    reply = await ds.call(
        ds.ingest.Review, ingest_pb2.ReviewRequest(id=item_id, action=body.action, reason=body.reason), ctx
    )
    return item_json(reply.item)


@router.post("/items/{item_id}/verify", summary="Mark a memory as verified by a human", **policy("review"))
async def verify(
    item_id: str,
    body: VerifyBody,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    reply = await ds.call(ds.ingest.Verify, ingest_pb2.VerifyRequest(id=item_id, reason=body.reason), ctx)
    return item_json(reply.item)


@router.get(
    "/items/{item_id}/promotion-readiness", summary="What stands between a proposal and promotion", **policy("read")
)
async def promotion_readiness(
    item_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    """``ready`` when every gate passes now; otherwise each failing gate with a stable ``code``."""
    r = await ds.call(ds.recall.PromotionReadiness, recall_pb2.GetItemRequest(id=item_id), ctx)
    return {
        "id": r.id,
        "review_status": r.review_status,
        "ready": r.ready,
        "blockers": [{"code": b.code, "detail": b.detail} for b in r.blockers],
        "gates": MessageToDict(r.gates),
    }


@router.get("/items/{item_id}/events", summary="A memory's audit trail", **policy("read"))
async def get_events(
    item_id: str,
    ctx: Caller,
    ds: Services,
) -> dict[str, Any]:
    reply = await ds.call(ds.recall.GetEvents, recall_pb2.GetEventsRequest(id=item_id), ctx)
    return events_json(reply)


@router.post("/feedback", summary="Say whether a recalled memory was useful or noise", **policy("write"))
async def feedback(
    body: FeedbackBody,
    ctx: FeedbackCaller,
    ds: Services,
) -> dict[str, Any]:
    """One current verdict per caller and item; a change of mind replaces it (history is kept). A daily
    allowance per caller answers 429 with Retry-After when used up."""
    reply = await ds.call(
        ds.ingest.Feedback,
        ingest_pb2.FeedbackRequest(item_id=body.item_id, verdict=body.verdict, recall_id=body.recall_id or ""),
        ctx,
    )
    return {
        "item_id": reply.item_id,
        "verdict": reply.verdict,
        "previous": reply.previous or None,
        "importance": round(reply.importance, 4),
    }
