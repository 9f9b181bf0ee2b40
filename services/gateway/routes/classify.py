"""Classify: what the classifier would say about a text, storing nothing."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.v1 import ingest_pb2
from services.gateway.answers import ClassifyAnswer
from services.gateway.auth import context, policy
from services.gateway.limits import limited
from services.gateway.mapping import classify_answer
from services.gateway.schemas import ClassifyBody

router = APIRouter()


@router.post("/classify", summary="What the classifier would say about a text (writes nothing)", **policy("read"))
@limited("recall")
async def classify(body: ClassifyBody, http: Request) -> ClassifyAnswer:
    """Kind, retention, sensitivity, placement (from the tenant's rules) and a suggested visibility, with the
    reasons; with ``ENGRAM_LLM_BASE_URL`` set, the model's answer (or why it was not used)."""
    ctx, ds = context(http)
    reply = await ds.call(ds.ingest.Classify, ingest_pb2.ClassifyRequest(content=body.content), ctx)
    return classify_answer(reply)
