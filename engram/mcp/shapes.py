"""The API's answers (``engram_client.models``) as the compact JSON objects the MCP tools return, and an error
answer as the one line an agent reads: its code, its field and what was wrong."""

from __future__ import annotations

from typing import Any

from engram_client import EngramError, RateLimited
from engram_client.models import Item, Recalled

SUMMARY_FIELDS = (
    "id",
    "kind",
    "content",
    "review_status",
    "subject",
    "tags",
    "importance",
    "pinned",
    "visibility",
    "workspace_id",
    "valid_from",
    "valid_to",
    "superseded_by",
    "invalidated_at",
    "created_at",
)
"""What an agent needs of an item in a listing; ``get`` answers the whole item."""


def summary(item: Item) -> dict[str, Any]:
    """The item's id, text and standing, without the empty fields."""
    data = item.model_dump(mode="json")
    return {name: data[name] for name in SUMMARY_FIELDS if data.get(name) not in (None, [], "")}


def hit(recalled: Recalled) -> dict[str, Any]:
    """One recall or search result: the item's summary with its score and the reasons it was chosen."""
    out = {"id": recalled.item.id, "score": recalled.score, "reasons": list(recalled.reasons)}
    if recalled.matched_via:
        out["matched_via"] = recalled.matched_via
    return {**out, **summary(recalled.item)}


def describe(error: EngramError) -> str:
    """``code: detail (field: x)``, plus the wait a rate limit asks for: what the agent must change."""
    text = f"{error.code}: {error.detail}"
    if error.field:
        text += f" (field: {error.field})"
    if isinstance(error, RateLimited) and error.retry_after is not None:
        text += f"; retry after {error.retry_after:g} s"
    return text
