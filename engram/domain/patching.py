"""Correcting an item's metadata: which fields a patch may name, what it changes, and when a visibility change
widens the audience. The content is never patched: a correction of the text supersedes the memory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.domain.models import MemoryItem
from engram.domain.values import PatchField, Visibility, listed
from engram.errors import ValidationFailed

CONTENT_REFUSAL = "content is never patched; supersede the memory instead"


@dataclass(frozen=True)
class PatchValues:
    """The values a patch sets; only those of the fields it names count."""

    tags: list[str]
    importance: float
    pinned: bool
    visibility: str
    subject: str | None
    valid_to: datetime | None


def check_fields(fields: Sequence[str]) -> list[PatchField]:
    """The named fields, each patchable: 422 naming ``content`` or any other field a patch may not touch."""
    if not fields:
        raise ValidationFailed(f"name at least one field to change: {listed(tuple(PatchField))}", field="body")
    for name in fields:
        if name == "content":
            raise ValidationFailed(CONTENT_REFUSAL, field="content")
        if name not in tuple(PatchField):
            raise ValidationFailed(f"{name} cannot be patched; patchable: {listed(tuple(PatchField))}", field=name)
    return [PatchField(name) for name in dict.fromkeys(fields)]


def changes(item: MemoryItem, wanted: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{field: (old, new)}`` for the wanted values that differ from the item's."""
    return {
        name: (getattr(item, name), value) for name, value in wanted.items() if not _same(getattr(item, name), value)
    }


def widens(old: str, new: str) -> bool:
    """Whether ``new`` lets more principals read than ``old`` (private < workspace < tenant < public)."""
    order = list(Visibility)
    return order.index(Visibility(new)) > order.index(Visibility(old))


def plain(value: Any) -> Any:
    """A value as the audit trail keeps it (JSON): times in ISO-8601, reals to 4 places."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return round(value, 4)
    return value


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, float) and isinstance(new, float):
        return math.isclose(old, new, abs_tol=1e-6)  # importance is stored as a real
    return bool(old == new)
