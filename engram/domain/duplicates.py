"""Near-duplicates in a ranking: memories the conflicts consumer recorded as duplicates of each other (an open
``duplicate`` conflict) take one result slot between them.

Of each group of duplicates among the hits, the stronger keeps the slot: the higher trust (authority, source
trust, review state, as ``scoring.trust_score_for`` says), then the higher authority, then the newer. It
takes the best score of the group, so the place is the one its best-matching paraphrase earned, and its
reasons name each duplicate it stands for. A duplicate that is not among the hits is named too. The caller is
told the id of a duplicate only when it may read it (``disclosure.HIDDEN`` otherwise); one it may not read is
never among its hits, so it never takes part in a collapse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engram.domain import scoring
from engram.domain.disclosure import HIDDEN
from engram.domain.models import RankedItem


def strength(hit: RankedItem, tenant_id: str) -> tuple[float, int, float, str]:
    """How a duplicate is preferred to another: trust, authority, recency (the id breaks a last tie)."""
    item = hit.item
    return (scoring.trust_score_for(item, tenant_id), int(item.authority), item.created_at.timestamp(), str(item.id))


def collapse(ranked: Sequence[RankedItem], duplicates: Mapping[str, list[str]], tenant_id: str) -> list[RankedItem]:
    """``ranked`` (best first) with each group of recorded duplicates in one slot, that of its best-ranked
    member, held by its stronger member; ``duplicates`` maps an item id to the ids of its duplicates ("" for one
    the caller may not read)."""
    if not duplicates:
        return list(ranked)
    by_id = {str(r.item.id): r for r in ranked}
    parent = {key: key for key in by_id}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for key in by_id:
        for other in duplicates.get(key, []):
            if other in by_id:
                parent[root(other)] = root(key)
    groups: dict[str, list[RankedItem]] = {}
    for r in ranked:
        groups.setdefault(root(str(r.item.id)), []).append(r)
    out: list[RankedItem] = []
    placed: set[str] = set()
    for r in ranked:
        group_key = root(str(r.item.id))
        if group_key in placed:
            continue
        placed.add(group_key)
        group = groups[group_key]
        keeper = max(group, key=lambda g: strength(g, tenant_id))
        keeper.score = max(g.score for g in group)
        members = {str(g.item.id) for g in group}
        for g in group:
            if g is not keeper:
                keeper.reasons.append(f"duplicate of {g.item.id}, shown once: this is the stronger")
        for g in group:  # duplicates that are not among the hits, of the keeper or of those it stands for
            for other in duplicates.get(str(g.item.id), []):
                reason = f"duplicate of {other or HIDDEN}"
                if other not in members and reason not in keeper.reasons:
                    keeper.reasons.append(reason)
        out.append(keeper)
    return out
