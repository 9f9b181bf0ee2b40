"""Graph expansion of a ranking: memories linked to the best hits come along, and candidates in an area a
tunnel connects to the best hits' areas are lifted. Bounded: a few seeds, a few links each."""

from __future__ import annotations

import asyncpg

from engram.db import edges
from engram.db.search import Filters
from engram.domain import scoring
from engram.domain.models import MemoryItem, RankedItem

SEEDS = 5  # how many of the best hits are expanded
PER_SEED = 2  # links followed from each
EDGE_DECAY = 0.5  # a linked memory ranks at this share of its seed's score (times its own trust)
TUNNEL_LIFT = 0.1  # candidates across a tunnel gain this much
SESSION_SEEDS = 3  # how many of the best hits bring their session neighbours


async def expand(conn: asyncpg.Connection, ranked: list[RankedItem], viewer: str, filters: Filters,
                 session_decay: float = 0.0, links: bool = True) -> list[RankedItem]:
    """``ranked`` with linked memories added and tunnel-connected candidates lifted, re-sorted. With
    ``session_decay``, the memories recorded next to each of the best hits in its session come along too."""
    seeds = ranked[:SEEDS]
    if not seeds:
        return ranked
    by_id = {str(r.item.id): r for r in ranked}
    if session_decay > 0:
        for seed in seeds[:SESSION_SEEDS]:
            for item in await edges.session_neighbours(conn, seed.item, viewer):
                if str(item.id) in by_id or not _matches(item, filters):
                    continue
                added = RankedItem(item=item, score=round(seed.score * session_decay, 6), origin="session",
                                   reasons=[f"recorded next to {seed.item.id} in session {item.source_session}"])
                by_id[str(item.id)] = added
                ranked.append(added)
    linked = await edges.neighbours(conn, [str(s.item.id) for s in seeds], viewer, PER_SEED) if links else []
    for from_id, edge_type, item in linked:
        if not _matches(item, filters):
            continue
        reason = f"linked via {edge_type} from {from_id}"
        if str(item.id) in by_id:
            by_id[str(item.id)].reasons.append(reason)
            continue
        seed = by_id[from_id]
        trust = scoring.trust_score(item)  # its own standing counts, as it would for any hit
        added = RankedItem(item=item, score=round(seed.score * EDGE_DECAY * trust, 6), origin="graph",
                           reasons=[reason, f"trust {trust:.2f} (authority {item.authority}, {item.source_type})"])
        by_id[str(item.id)] = added
        ranked.append(added)
    routes = await edges.through_tunnels(conn, sorted({_area(s.item) for s in seeds if s.item.wing})) if links else []
    if routes:
        above: set[tuple[str, str]] = set()  # the areas of the seeds ranked above the candidate
        for r in list(ranked):
            route = next(((fw, fr) for fw, fr, tw, tr in routes if (fw, fr) in above and r.item.wing == tw
                          and (not tr or tr == (r.item.room or "")) and (fw, fr) != _area(r.item)), None)
            if route is not None:
                r.score = round(r.score * (1 + TUNNEL_LIFT), 6)
                r.reasons.append(f"linked via tunnel from {route[0]}{'/' + route[1] if route[1] else ''}")
            if r in seeds and r.item.wing:
                above.add(_area(r.item))
    ranked.sort(key=lambda r: (-r.score, -r.item.created_at.timestamp()))
    return ranked


def _area(item: MemoryItem) -> tuple[str, str]:
    return item.wing or "", item.room or ""


def _matches(item: MemoryItem, filters: Filters) -> bool:
    """A linked memory joins only if the recall's filters would have let it in."""
    return ((not filters.kinds or item.kind in filters.kinds) and set(filters.tags) <= set(item.tags)
            and (not filters.workspace_id or str(item.workspace_id) == filters.workspace_id)
            and (not filters.wing or item.wing == filters.wing) and (not filters.room or item.room == filters.room))
