"""Links between memories: make one, remove one, list a memory's links."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from engram.v1 import ingest_pb2, recall_pb2
from services.gateway.answers import EdgeAnswer, EdgesAnswer
from services.gateway.auth import context, policy
from services.gateway.mapping import edge_answer, edges_answer
from services.gateway.schemas import EdgeBody

router = APIRouter()


@router.post(
    "/edges",
    status_code=201,
    summary="Link two memories",
    responses={200: {"model": EdgeAnswer, "description": "The same link already existed."}},
    **policy("write"),
)
async def link(body: EdgeBody, http: Request, response: Response) -> EdgeAnswer:
    """201 with the new link, or 200 with the existing one (src, dst and type are unique). You need a writing
    role where the source memory lives and must be able to read both."""
    ctx, ds = context(http)
    reply = await ds.call(
        ds.ingest.Link, ingest_pb2.LinkRequest(src_id=body.src_id, dst_id=body.dst_id, type=body.type), ctx
    )
    if not reply.created:
        response.status_code = 200
    return edge_answer(reply.edge)


@router.delete("/edges/{edge_id}", status_code=204, summary="Remove a link", **policy("write|review"))
async def unlink(edge_id: str, http: Request) -> Response:
    """Its creator, the source memory's author, or a reviewer; supersession links stay (409)."""
    ctx, ds = context(http)
    await ds.call(ds.ingest.Unlink, ingest_pb2.UnlinkRequest(id=edge_id), ctx)
    return Response(status_code=204)


@router.get("/items/{item_id}/edges", summary="A memory's links", **policy("read"))
async def list_edges(item_id: str, http: Request) -> EdgesAnswer:
    """Links from and to the memory whose other end you may read, supersession links included."""
    ctx, ds = context(http)
    reply = await ds.call(ds.recall.ListEdges, recall_pb2.GetItemRequest(id=item_id), ctx)
    return edges_answer(reply)
