"""What a caller is shown about memories beside the one it reads: the id of another memory only when it may
read that one too, and an item's ``recall_count`` only when it writes where the item lives.

A reader of one memory must learn nothing of a memory it cannot read: not its words, not its id. The pipeline
records ids in stage details and audit values (the successor, the other side of a conflict, a link's target),
so reads pass them through these rules with the set of ids the caller may read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from engram.domain.keys import allows
from engram.domain.models import CallerContext, ItemEvent, MemoryItem, Stage
from engram.domain.values import WRITING_ROLES

HIDDEN = "a memory you cannot see"
ID_KEYS = ("superseded_by", "dst_id")  # audit values that name another memory
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def mentioned_ids(texts: Iterable[str]) -> set[str]:
    """Every UUID written in ``texts``."""
    return {match for text in texts for match in _UUID.findall(text.lower())}


def hide_ids(text: str, readable: set[str]) -> str:
    """``text`` with each UUID the caller may not read replaced by ``a memory you cannot see``."""
    return _UUID.sub(lambda m: m.group(0) if m.group(0).lower() in readable else HIDDEN, text)


def stage_shown(stage: Stage, readable: set[str]) -> Stage:
    return replace(stage, detail=hide_ids(stage.detail, readable)) if stage.detail else stage


def event_ids(event: ItemEvent) -> set[str]:
    """The other memories an audit row names in its values."""
    values = [*(event.old_value or {}).items(), *(event.new_value or {}).items()]
    return {str(v) for k, v in values if k in ID_KEYS and v}


def event_shown(event: ItemEvent, readable: set[str]) -> ItemEvent:
    """An audit row with the ids of memories the caller may not read set to null."""

    def scrub(values: dict[str, object] | None) -> dict[str, object] | None:
        if values is None:
            return None
        return {k: (None if k in ID_KEYS and v and str(v) not in readable else v) for k, v in values.items()}

    return replace(event, old_value=scrub(event.old_value), new_value=scrub(event.new_value))


def sees_recall_count(ctx: CallerContext, item: MemoryItem, role: str | None) -> bool:
    """How often a memory is recalled tells who reads it: shown to its author, to writers of its workspace
    (``role``: the caller's role there) and to tenant administrators, never across tenants."""
    if str(item.tenant_id) != ctx.tenant_id:
        return False
    return str(item.principal_id) == ctx.principal_id or role in WRITING_ROLES or allows(ctx.scopes, "admin")


def needs_role(ctx: CallerContext, item: MemoryItem) -> bool:
    """Whether ``sees_recall_count`` depends on the caller's role in the item's workspace: an item of the caller's
    tenant that it did not write, for a caller that is not a tenant administrator."""
    return (
        str(item.tenant_id) == ctx.tenant_id
        and str(item.principal_id) != ctx.principal_id
        and not allows(ctx.scopes, "admin")
    )


def item_shown(item: MemoryItem, *, successor_readable: bool, sees_count: bool) -> MemoryItem:
    """The item as this caller is shown it: no successor it cannot read, no recall count it may not see."""
    return replace(
        item,
        superseded_by=item.superseded_by if successor_readable else None,
        recall_count=item.recall_count if sees_count else None,
    )
