"""Feedback: whether a recalled memory was useful or noise."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.v1 import ingest_pb2
from services.gateway.answers import FeedbackAnswer
from services.gateway.auth import context, policy
from services.gateway.limits import limited
from services.gateway.mapping import feedback_answer
from services.gateway.schemas import FeedbackBody

router = APIRouter()


@router.post("/feedback", summary="Say whether a recalled memory was useful or noise", **policy("write"))
@limited("feedback")
async def feedback(body: FeedbackBody, http: Request) -> FeedbackAnswer:
    """One current verdict per caller and item; a change of mind replaces it (history is kept). A daily
    allowance per caller answers 429 with Retry-After when used up."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.ingest.Feedback,
        ingest_pb2.FeedbackRequest(item_id=body.item_id, verdict=body.verdict, recall_id=body.recall_id or ""),
        ctx,
    )
    return feedback_answer(reply)
