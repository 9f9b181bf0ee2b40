"""Plain data the services pass around (no transport or database types)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID


@dataclass(frozen=True)
class CallerContext:
    """Who is calling, as the gateway authenticated it."""

    tenant_id: str
    principal_id: str
    principal_type: str
    scopes: frozenset[str] = frozenset()
    request_id: str = ""
    traceparent: str = ""  # W3C trace context of the request, carried into gRPC metadata and events


@dataclass(frozen=True)
class MemoryKind:
    name: str
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float
    enabled: bool


@dataclass
class MemoryItem:
    id: UUID
    tenant_id: UUID
    workspace_id: UUID
    principal_id: UUID
    content: str
    content_hash: bytes
    kind: str
    importance: float
    review_status: str
    authority: int
    source_type: str
    source_trust: float
    memory_confidence: float
    created_at: datetime
    subject: str | None = None
    wing: str | None = None
    room: str | None = None
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    visibility: str = "workspace"
    source_uri: str | None = None
    source_session: str | None = None
    human_verified: bool = False
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: UUID | None = None
    invalidated_at: datetime | None = None
    expires_at: datetime | None = None
    recall_count: int = 0
    external_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kind_explicit: bool = True
    taxonomy_confidence: float | None = None
    retention: str | None = None
    retention_confidence: float | None = None
    sensitivity: str | None = None
    classified_at: datetime | None = None
    recalls_since_useful: int = 0

    @classmethod
    def from_row(cls, row: Any) -> MemoryItem:
        """Build from a mapping (an asyncpg Record) holding at least the item's columns."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: row[k] for k in row.keys() if k in names}
        values["tags"] = list(values.get("tags") or [])
        return cls(**values)


@dataclass
class RankedItem:
    """A recall candidate with its score and the reasons it is here."""

    item: MemoryItem
    score: float
    origin: str
    reasons: list[str] = field(default_factory=list)
    matched_via: str = ""


@dataclass(frozen=True)
class Stage:
    name: str
    status: str
    detail: str
    updated_at: datetime | None
