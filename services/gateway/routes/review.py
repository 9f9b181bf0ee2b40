"""Review: move a memory through its lifecycle, verify it, and see what stands before its promotion."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.v1 import ingest_pb2, recall_pb2
from services.gateway.answers import ItemAnswer, ReadinessAnswer
from services.gateway.auth import context, policy
from services.gateway.limits import limited
from services.gateway.mapping import item_answer, readiness_answer
from services.gateway.schemas import ReviewBody, VerifyBody

router = APIRouter()


@router.post("/items/{item_id}/review", summary="Move a memory through the review lifecycle", **policy("write|review"))
@limited("review")
async def review(item_id: str, body: ReviewBody, http: Request) -> ItemAnswer:
    """Who may take which action from which state is the table in ``engram/domain/lifecycle.py``."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.ingest.Review, ingest_pb2.ReviewRequest(id=item_id, action=body.action, reason=body.reason), ctx
    )
    return item_answer(reply.item)


@router.post("/items/{item_id}/verify", summary="Mark a memory as verified by a human", **policy("review"))
@limited("review")
async def verify(item_id: str, body: VerifyBody, http: Request) -> ItemAnswer:
    """A reviewer (not an agent) sets `human_verified`, which raises the memory's trust; the review status
    does not change. Verifying again changes nothing."""
    ctx, ds = context(http)
    reply = await ds.call(ds.ingest.Verify, ingest_pb2.VerifyRequest(id=item_id, reason=body.reason), ctx)
    return item_answer(reply.item)


@router.get(
    "/items/{item_id}/promotion-readiness", summary="What stands between a proposal and promotion", **policy("read")
)
async def promotion_readiness(item_id: str, http: Request) -> ReadinessAnswer:
    """``ready`` when every gate passes now; otherwise each failing gate with a stable ``code``."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.PromotionReadiness, recall_pb2.GetItemRequest(id=item_id), ctx)
    return readiness_answer(reply)
