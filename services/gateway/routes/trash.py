"""The trash: delete a memory into it, list it, restore from it."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from engram.v1 import ingest_pb2, recall_pb2
from services.gateway.answers import DeletedAnswer, ItemAnswer, TrashPage
from services.gateway.auth import context, policy
from services.gateway.mapping import deleted_answer, item_answer, trash_page
from services.gateway.schemas import INT32_MAX, INT32_MIN

router = APIRouter()
CURSOR = "The previous page's `next_cursor`; a value the API did not return answers 422."


@router.delete("/items/{item_id}", summary="Move a memory to the trash", **policy("write|review"))
async def delete_item(
    item_id: str,
    http: Request,
    reason: str = Query(
        default="", max_length=2000, description="Why; trimmed, kept on the audit row, never in the event."
    ),
) -> DeletedAnswer:
    """Its author or a reviewer. The item, its edges and embeddings are kept as one snapshot in the trash
    (``trash_id``) and can be restored until the sweep empties it (30 days by default)."""
    ctx, ds = context(http)
    reply = await ds.call(ds.ingest.Delete, ingest_pb2.DeleteRequest(id=item_id, reason=reason), ctx)
    return deleted_answer(reply)


@router.get("/trash", summary="Deleted and expired memories you can restore", **policy("read"))
async def list_trash(
    http: Request,
    limit: int = Query(ge=INT32_MIN, le=INT32_MAX, default=50, description="The most entries on a page: 1–500."),
    cursor: str | None = Query(default=None, description=CURSOR),
) -> TrashPage:
    """Newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.ListTrash, recall_pb2.ListTrashRequest(limit=limit, cursor=cursor or ""), ctx)
    return trash_page(reply)


@router.post("/trash/{trash_id}/restore", summary="Bring a memory back from the trash", **policy("write|review"))
async def restore(trash_id: str, http: Request) -> ItemAnswer:
    """As it was, state included (an invalidated memory stays invalidated), with its embeddings and the links
    whose other end still exists. An expired memory comes back without its expiry."""
    ctx, ds = context(http)
    reply = await ds.call(ds.ingest.Restore, ingest_pb2.RestoreRequest(trash_id=trash_id), ctx)
    return item_answer(reply.item)
