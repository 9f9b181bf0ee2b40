"""Memories: write one, replace one, invalidate one, read one with its status and audit trail, and the
routes over many (bulk changes, expiry candidates).

The literal paths (``/items/expiry-candidates``, ``/items/bulk``) are added before the templated
``/items/{item_id}`` ones, which would otherwise take them.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from google.protobuf import struct_pb2
from pydantic import ValidationError

from engram.config import Settings
from engram.domain import validation
from engram.domain.models import CallerContext
from engram.domain.validation import require_item_id
from engram.domain.values import RememberStatus
from engram.errors import ValidationFailed
from engram.rpc.convert import timestamp
from engram.v1 import ingest_pb2, recall_pb2
from services.gateway.answers import (
    BatchAnswer,
    BulkAnswer,
    EventsAnswer,
    ItemAnswer,
    ItemsAnswer,
    RememberAnswer,
    StatusAnswer,
)
from services.gateway.auth import context, policy
from services.gateway.clients import Downstream
from services.gateway.idempotency import KeyHeader, idempotency, mark
from services.gateway.limits import limited
from services.gateway.mapping import (
    batch_answer,
    bulk_answer,
    events_answer,
    expiry_answer,
    item_answer,
    remember_answer,
    status_answer,
)
from services.gateway.problems import error_body, validation_body
from services.gateway.schemas import (
    INT32_MAX,
    INT32_MIN,
    BulkBody,
    InvalidateBody,
    PatchBody,
    RememberBatchBody,
    RememberBody,
)

router = APIRouter()

_DEDUPLICATED: dict[int | str, dict[str, Any]] = {
    200: {"model": RememberAnswer, "description": "The same content was already stored (`deduplicated`)."}
}


@router.post("/remember", status_code=201, summary="Store a memory", responses=_DEDUPLICATED, **policy("write"))
@limited("remember")
async def remember(
    body: RememberBody, http: Request, response: Response, idempotency_key: KeyHeader = None
) -> RememberAnswer:
    """201 with the new item (``status: created``, or ``superseded`` when it replaced ``supersedes``), or 200
    with ``status: deduplicated`` and the first item when the same canonical content is already stored."""
    ctx, ds = context(http)
    request = _remember_request(body, ds.settings)
    once = idempotency(idempotency_key, body)
    if once is not None:
        request.idempotency.CopyFrom(once)
    # a plain remember is safe to repeat: a retry of one that committed but whose reply was lost finds the same
    # content live and answers `deduplicated` with the first item (or, with an Idempotency-Key, the stored
    # answer); a supersede's retry would be refused instead
    reply = await ds.call(ds.ingest.Remember, request, ctx, retry_unreachable=not body.supersedes)
    mark(response, reply.replayed)
    if reply.status == RememberStatus.DEDUPLICATED:
        response.status_code = 200
    return remember_answer(reply)


@router.post("/remember/batch", summary="Store up to 100 memories", **policy("write"))
async def remember_batch(
    body: RememberBatchBody,
    request: Request,
    response: Response,
    idempotency_key: KeyHeader = None,
) -> BatchAnswer:
    """One transaction, each memory in its own savepoint: one result per memory, in order, with the status
    ``POST /v1/remember`` would have answered it; a refused memory (its problem in ``error``) leaves the others
    stored. Counts as one remember per memory against the rate limit."""
    ctx, ds = context(request)
    await request.app.state.limits.check(ctx, "remember", cost=len(body.items))
    refused: dict[int, dict[str, Any]] = {}
    entries: list[ingest_pb2.BatchEntry] = []
    seen: list[Any] = []
    for index, raw in enumerate(body.items):
        try:
            memory = RememberBody.model_validate(raw)
            entry = ingest_pb2.BatchEntry(index=index, memory=_remember_request(memory, ds.settings))
        except ValidationError as exc:
            refused[index] = validation_body(exc.errors())
            seen.append(raw)
            continue
        except ValidationFailed as exc:
            refused[index] = error_body(exc)
            seen.append(raw)
            continue
        entries.append(entry)
        seen.append(memory.model_dump(mode="json"))
    call = ingest_pb2.RememberBatchRequest(items=entries)
    once = idempotency(idempotency_key, seen)
    if once is not None:
        call.idempotency.CopyFrom(once)
    reply = await ds.call(ds.ingest.RememberBatch, call, ctx)
    mark(response, reply.replayed)
    return batch_answer(reply, refused)


@router.post(
    "/items/{item_id}/supersede",
    status_code=201,
    summary="Replace a memory with a new one",
    responses=_DEDUPLICATED,
    **policy("write"),
)
@limited("remember")
async def supersede(item_id: str, body: RememberBody, http: Request, response: Response) -> RememberAnswer:
    """Atomic: the new memory is stored and the old one marked superseded, or nothing is written (403
    ``authority_too_low`` when the caller's authority is below the old memory's)."""
    ctx, ds = context(http)
    require_item_id(item_id)
    if item_id not in body.supersedes:
        body = body.model_copy(update={"supersedes": [item_id, *body.supersedes]})
    return await _remember(body, ctx, ds, response)


async def _remember(body: RememberBody, ctx: CallerContext, ds: Downstream, response: Response) -> RememberAnswer:
    reply = await ds.call(ds.ingest.Remember, _remember_request(body, ds.settings), ctx)
    if reply.status == RememberStatus.DEDUPLICATED:
        response.status_code = 200
    return remember_answer(reply)


def metadata_message(metadata: dict[str, Any], source_uri: str | None, settings: Settings) -> struct_pb2.Struct:
    """A memory's ``metadata`` as the protobuf Struct the write carries, once it and ``source_uri`` keep their
    caps (checked here too, before the copy; ingest checks again)."""
    validation.validate_source_uri(source_uri or "", settings.max_source_uri_length)
    validation.validate_metadata(metadata, settings.max_metadata_bytes, settings.max_metadata_depth)
    message = struct_pb2.Struct()
    message.update(metadata)
    return message


def _remember_request(body: RememberBody, settings: Settings) -> ingest_pb2.RememberRequest:
    metadata = metadata_message(body.metadata, body.source_uri, settings)
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
    return request


@router.post("/items/{item_id}/invalidate", summary="Declare a memory no longer true", **policy("write|review"))
@limited("review")
async def invalidate(item_id: str, body: InvalidateBody, http: Request) -> ItemAnswer:
    """Nothing replaces it: it leaves recall (and ends any supersession chain into it) but stays readable
    for audit. Its author or a reviewer."""
    ctx, ds = context(http)
    reply = await ds.call(ds.ingest.Invalidate, ingest_pb2.InvalidateRequest(id=item_id, reason=body.reason), ctx)
    return item_answer(reply.item)


@router.get("/items/expiry-candidates", summary="Memories whose time to live ends soon", **policy("read"))
async def expiry_candidates(
    http: Request,
    within_days: int = Query(
        ge=INT32_MIN, le=INT32_MAX, default=7, description="Expiring within this many days: 1–3650."
    ),
    limit: int = Query(ge=INT32_MIN, le=INT32_MAX, default=50, description="The most memories listed: 1–500."),
    workspace_id: str | None = Query(default=None, description="Only memories in this workspace (a UUID)."),
) -> ItemsAnswer:
    """Live items you can see that expire within ``within_days`` (1–3650), soonest first; already expired ones
    that the sweep has not moved to the trash yet come first."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.recall.ExpiryCandidates,
        recall_pb2.ExpiryCandidatesRequest(within_days=within_days, limit=limit, workspace_id=workspace_id or ""),
        ctx,
    )
    return expiry_answer(reply)


@router.post("/items/bulk", summary="Archive or delete every memory matching a filter", **policy("write|review"))
@limited("bulk")
async def bulk(body: BulkBody, http: Request) -> BulkAnswer:
    """One transaction. ``dry_run`` (the default) answers the same and writes nothing. Items you may not
    change are listed in ``skipped`` with the refusal's code; the rest are ``affected``."""
    ctx, ds = context(http)
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
    return bulk_answer(reply)


@router.get("/items/{item_id}", summary="Read one memory", **policy("read"))
async def get_item(item_id: str, http: Request) -> ItemAnswer:
    """In any state, if you may read it; otherwise 404, as if it did not exist."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.GetItem, recall_pb2.GetItemRequest(id=item_id), ctx)
    return item_answer(reply.item)


@router.patch("/items/{item_id}", summary="Correct a memory's metadata", **policy("write"))
async def patch_item(item_id: str, body: PatchBody, http: Request) -> ItemAnswer:
    """Tags, importance, pinned, visibility, subject, valid_to; never the content (supersede instead). Needs a
    writing role in the item's workspace; the item must be live (409 ``not_live``). One ``patched`` audit row
    with the old and new values of what changed, and ``memory.updated``; a patch that changes nothing writes
    nothing."""
    ctx, ds = context(http)
    fields = sorted(body.model_fields_set)
    request = ingest_pb2.PatchRequest(
        id=item_id,
        fields=fields,
        tags=body.tags or [],
        importance=body.importance or 0.0,
        pinned=bool(body.pinned),
        visibility=body.visibility or "",
        subject=body.subject or "",
        valid_to=timestamp(body.valid_to),
    )
    reply = await ds.call(ds.ingest.Patch, request, ctx)
    return item_answer(reply.item)


@router.get("/items/{item_id}/status", summary="Where a memory is in the processing pipeline", **policy("read"))
async def get_status(item_id: str, http: Request) -> StatusAnswer:
    """Each pipeline stage in pipeline order, with ``embedding`` as a shortcut for the embedding stage."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.GetStatus, recall_pb2.GetStatusRequest(id=item_id), ctx)
    return status_answer(reply)


@router.get("/items/{item_id}/events", summary="A memory's audit trail", **policy("read"))
async def get_events(item_id: str, http: Request) -> EventsAnswer:
    """Oldest first; still readable while the memory is in the trash."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.GetEvents, recall_pb2.GetEventsRequest(id=item_id), ctx)
    return events_answer(reply)
