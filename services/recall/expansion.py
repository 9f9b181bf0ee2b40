"""Graph expansion of a ranking: memories linked to the best hits come along, and candidates in an area a
tunnel connects to the best hits' areas are lifted. Bounded: a few seeds, a few links each."""

from __future__ import annotations

import asyncpg

from engram.db import edges, search
from engram.db.search import Filters
from engram.domain import scoring, validity
from engram.domain.models import MemoryItem, RankedItem

SEEDS = 5  # how many of the best hits are expanded
PER_SEED = 2  # links followed from each
EDGE_DECAY = 0.5  # a linked memory ranks at this share of its seed's score (times its own trust)
TUNNEL_LIFT = 0.1  # candidates across a tunnel gain this much
SESSION_SEEDS = 10  # how many of the best hits lift the memories recorded near them in their sessions


async def expand(
    conn: asyncpg.Connection,
    ranked: list[RankedItem],
    viewer: str,
    filters: Filters,
    session_weight: float = 0.0,
    links: bool = True,
    *,
    tenant_id: str,
    replies: bool = False,
) -> list[RankedItem]:
    """``ranked`` with linked memories added and tunnel-connected candidates lifted, re-sorted. With
    ``session_weight``, the memories recorded near the best hits in their sessions are lifted (or join); with
    ``replies``, the one right after a hit that asks a question more (``scoring.context_lift``). ``tenant_id``:
    the recalling tenant, whose trust cap applies to another tenant's memories."""
    seeds = ranked[:SEEDS]
    if not seeds:
        return ranked
    by_id = {str(r.item.id): r for r in ranked}
    if session_weight > 0:
        lifts = await _session_context(conn, ranked, viewer, filters, session_weight, tenant_id, replies)
        _lift_session_context(lifts, by_id, ranked, tenant_id)
    linked = await edges.neighbours(conn, [str(s.item.id) for s in seeds], viewer, PER_SEED) if links else []
    for from_id, edge_type, item in linked:
        if not _matches(item, filters):
            continue
        reason = f"linked via {edge_type} from {from_id}"
        if str(item.id) in by_id:
            by_id[str(item.id)].reasons.append(reason)
            continue
        seed = by_id[from_id]
        trust = scoring.trust_score_for(item, tenant_id)  # its own standing counts, as it would for any hit
        added = RankedItem(
            item=item,
            score=round(seed.score * EDGE_DECAY * trust, 6),
            origin="graph",
            reasons=[reason, scoring.trust_reason(item, trust)],
        )
        by_id[str(item.id)] = added
        ranked.append(added)
    routes = await edges.through_tunnels(conn, sorted({_area(s.item) for s in seeds if s.item.wing})) if links else []
    if routes:
        above: set[tuple[str, str]] = set()  # the areas of the seeds ranked above the candidate
        for r in list(ranked):
            route = next(
                (
                    (fw, fr)
                    for fw, fr, tw, tr in routes
                    if (fw, fr) in above
                    and r.item.wing == tw
                    and (not tr or tr == (r.item.room or ""))
                    and (fw, fr) != _area(r.item)
                ),
                None,
            )
            if route is not None:
                r.score = round(r.score * (1 + TUNNEL_LIFT), 6)
                r.reasons.append(f"linked via tunnel from {route[0]}{'/' + route[1] if route[1] else ''}")
            if r in seeds and r.item.wing:
                above.add(_area(r.item))
    ranked.sort(key=lambda r: (-r.score, -r.item.created_at.timestamp()))
    return ranked


async def _session_context(
    conn: asyncpg.Connection,
    ranked: list[RankedItem],
    viewer: str,
    filters: Filters,
    weight: float,
    tenant_id: str,
    replies: bool = False,
) -> dict[str, tuple[float, str, int, MemoryItem]]:
    """For each memory near one of the best hits in a session, its best lift: (lift, hit id, offset, memory)."""
    seeds = {str(r.item.id): r.score for r in ranked[:SESSION_SEEDS] if r.item.source_session}
    asking = {str(r.item.id) for r in ranked[:SESSION_SEEDS] if replies and scoring.asks(r.item.content)}
    best: dict[str, tuple[float, str, int, MemoryItem]] = {}
    for seed_id, offset, item in await search.session_window(
        conn, list(seeds), filters, viewer, scoring.SESSION_CONTEXT_WIDTH
    ):
        lift = scoring.context_lift(
            seeds[seed_id], offset, weight, hit_asks=seed_id in asking
        ) * scoring.trust_score_for(item, tenant_id)
        if lift > best.get(str(item.id), (0.0,))[0]:
            best[str(item.id)] = (lift, seed_id, offset, item)
    return best


def _lift_session_context(
    lifts: dict[str, tuple[float, str, int, MemoryItem]],
    by_id: dict[str, RankedItem],
    ranked: list[RankedItem],
    tenant_id: str,
) -> None:
    """Adds each lift to the memory's score (computed from the scores before any lift); a memory that was not a
    candidate joins with the lift alone."""
    for key, (lift, seed_id, offset, item) in lifts.items():
        reason = (
            f"recorded {abs(offset)} {'after' if offset > 0 else 'before'} {seed_id} in session "
            f"{item.source_session} (+{lift:.3f})"
        )
        if key in by_id:
            by_id[key].score = round(by_id[key].score + lift, 6)
            by_id[key].reasons.append(reason)
            continue
        trust = scoring.trust_score_for(item, tenant_id)
        added = RankedItem(
            item=item, score=round(lift, 6), origin="session", reasons=[reason, scoring.trust_reason(item, trust)]
        )
        by_id[key] = added
        ranked.append(added)


def _area(item: MemoryItem) -> tuple[str, str]:
    return item.wing or "", item.room or ""


def _matches(item: MemoryItem, filters: Filters) -> bool:
    """A linked memory joins only if the recall's filters would have let it in."""
    return (
        (not filters.kinds or item.kind in filters.kinds)
        and set(filters.tags) <= set(item.tags)
        and (not filters.workspace_id or str(item.workspace_id) == filters.workspace_id)
        and (not filters.wing or item.wing == filters.wing)
        and (not filters.room or item.room == filters.room)
        and validity.overlaps(item.valid_from, item.valid_to, filters.time_start, filters.time_end)
    )
