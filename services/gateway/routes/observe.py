"""Observations: the cheap capture path for hooks that record every turn (``POST /v1/observe``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from engram.domain.values import RememberStatus
from engram.rpc.convert import timestamp
from engram.v1 import ingest_pb2
from services.gateway.answers import ObserveAnswer
from services.gateway.auth import context, policy
from services.gateway.idempotency import KeyHeader, idempotency, mark
from services.gateway.limits import limited
from services.gateway.mapping import observe_answer
from services.gateway.routes.items import metadata_message
from services.gateway.schemas import ObserveBody

router = APIRouter()

_DEDUPLICATED: dict[int | str, dict[str, Any]] = {
    200: {"model": ObserveAnswer, "description": "The same text is live for this author and workspace."}
}


@router.post("/observe", status_code=201, summary="Record an observation", responses=_DEDUPLICATED, **policy("write"))
@limited("remember")
async def observe(
    body: ObserveBody, http: Request, response: Response, idempotency_key: KeyHeader = None
) -> ObserveAnswer:
    """Stored as kind ``observation``, active at once, with no classification gate and no possible-supersedes
    search; keyword search finds it as soon as this answers, semantic recall once the embedder has run. It
    expires after ENGRAM_OBSERVE_TTL_HOURS (72) unless ``expires_at`` says otherwise. Counts against the
    remember rate limit."""
    ctx, ds = context(http)
    metadata = metadata_message(body.metadata, body.source_uri, ds.settings)
    request = ingest_pb2.ObserveRequest(
        content=body.content,
        source_session=body.source_session or "",
        workspace_id=body.workspace_id or "",
        tags=body.tags,
        metadata=metadata,
        source_uri=body.source_uri or "",
        expires_at=timestamp(body.expires_at),
    )
    once = idempotency(idempotency_key, body)
    if once is not None:
        request.idempotency.CopyFrom(once)
    reply = await ds.call(ds.ingest.Observe, request, ctx)
    mark(response, reply.replayed)
    if reply.status == RememberStatus.DEDUPLICATED:
        response.status_code = 200
    return observe_answer(reply)
