"""The catalog: the memories you may read, listed in pages with filters (the review queue among them), and
counted. ``GET /items`` has no path segment after ``/items``, so no templated item route can take it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from engram.domain.values import ItemSort
from engram.rpc.convert import timestamp
from engram.v1 import recall_pb2
from services.gateway.answers import ItemPage, StatsAnswer
from services.gateway.auth import context, policy
from services.gateway.mapping import item_page, stats_answer
from services.gateway.schemas import INT32_MAX, INT32_MIN, Instant

router = APIRouter()
WITH_OFFSET = "ISO 8601 with a timezone offset (`Z`, or `%2B01:00` in a URL: a bare `+` reads as a space)"


def _listed(value: str | None) -> list[str]:
    """A comma-separated parameter as its trimmed, non-empty parts."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@router.get("/items", summary="List the memories you can read, with filters", **policy("read"))
async def list_items(
    http: Request,
    kind: str | None = Query(
        default=None,
        description="Comma-separated kinds (`fact,decision`): memories of any of them. Each must be a kind the "
        "tenant has, enabled or not (otherwise 422 listing them).",
    ),
    review_status: str | None = Query(
        default=None,
        description="Comma-separated review statuses: memories in any of them. The review queue is "
        "`proposed,disputed`.",
    ),
    workspace_id: str | None = Query(default=None, description="Only memories in this workspace (a UUID)."),
    author: str | None = Query(default=None, description="Only memories written by this principal (a UUID)."),
    tag: str | None = Query(default=None, description="Only memories carrying this tag."),
    subject: str | None = Query(default=None, description="Only memories with exactly this subject."),
    created_after: Annotated[
        Instant | None, Query(description=f"Only memories stored at or after this time; {WITH_OFFSET}.")
    ] = None,
    created_before: Annotated[
        Instant | None, Query(description=f"Only memories stored before this time; {WITH_OFFSET}.")
    ] = None,
    valid_start: Annotated[
        Instant | None,
        Query(
            description="With `valid_end`: only memories whose validity interval [valid_from, valid_to) overlaps "
            "[valid_start, valid_end]; a bound left out, and an empty valid_from or valid_to, is open-ended. "
            f"{WITH_OFFSET}."
        ),
    ] = None,
    valid_end: Annotated[
        Instant | None,
        Query(description=f"The end of the validity range; not before `valid_start`. {WITH_OFFSET}."),
    ] = None,
    include_superseded: bool = Query(
        default=False, description="Also superseded and invalidated memories (left out by default)."
    ),
    sort: Annotated[
        ItemSort,
        Query(
            description="`-created_at` newest first, `created_at` oldest first, or `-importance` most important "
            "first (then newest first)."
        ),
    ] = ItemSort.NEWEST,
    limit: int = Query(ge=INT32_MIN, le=INT32_MAX, default=50, description="The most memories on a page: 1–500."),
    cursor: str | None = Query(
        default=None,
        description="The previous page's `next_cursor`, with the same `sort`; a value the API did not return "
        "for that sort answers 422.",
    ),
) -> ItemPage:
    """Only your tenant's memories that you may read (never another tenant's, public ones included); never
    those in the trash. Pass ``next_cursor`` back as ``cursor`` for the next page: each memory comes once,
    in order, even while memories are added between pages."""
    ctx, ds = context(http)
    request = recall_pb2.ListItemsRequest(
        kinds=_listed(kind),
        review_statuses=_listed(review_status),
        workspace_id=workspace_id or "",
        author_id=author or "",
        tag=tag or "",
        subject=subject or "",
        created_after=timestamp(created_after),
        created_before=timestamp(created_before),
        valid_start=timestamp(valid_start),
        valid_end=timestamp(valid_end),
        include_superseded=include_superseded,
        sort=sort.value,
        limit=limit,
        cursor=cursor or "",
    )
    return item_page(await ds.call(ds.recall.ListItems, request, ctx))


@router.get("/stats", summary="Counts over the memories you can read", **policy("read"))
async def stats(http: Request) -> StatsAnswer:
    """Your tenant's memories that you may read, counted in one snapshot: by review status and kind (neither
    superseded nor invalidated), the review queue, and hygiene figures (conflicts, pipeline stages, expiry,
    trash, superseded, invalidated)."""
    ctx, ds = context(http)
    return stats_answer(await ds.call(ds.recall.GetStats, recall_pb2.GetStatsRequest(), ctx))
