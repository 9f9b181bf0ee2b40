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
    platform_admin: bool = False  # the principal's explicit flag (migration 015), never implied by its type


@dataclass(frozen=True)
class StoredKey:
    """An API key as authentication reads it: whom it speaks for, its salted hash, and whether it may be used."""

    key_id: str
    tenant_id: str
    principal_id: str
    principal_type: str
    salt: bytes
    secret_hash: bytes
    scopes: tuple[str, ...]
    usable: bool  # not revoked, principal not disabled
    last_used_stale: bool  # last_used_at is unset or older than a minute
    platform_admin: bool = False  # the principal's flag: the platform administrator


@dataclass(frozen=True)
class ApiKeyInfo:
    """An API key as the admin API lists it (never its secret)."""

    key_id: str
    principal_id: str
    scopes: list[str]
    label: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class TenantConfig:
    """A tenant's configuration document, its version (0: never set) and whether its public items are shared."""

    tenant_id: str
    config: dict[str, Any]
    version: int
    public_enabled: bool


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
    recall_count: int | None = 0  # None: not shown to this caller (engram.domain.disclosure)
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
        values = {k: v for k, v in row.items() if k in _ITEM_FIELDS}
        values["tags"] = list(values.get("tags") or [])
        return cls(**values)


# read once: recall builds a hundred items per query
_ITEM_FIELDS = frozenset(f.name for f in dataclasses.fields(MemoryItem))


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


@dataclass(frozen=True)
class ItemEvent:
    """One row of an item's audit trail (old and new values as they were recorded)."""

    id: int
    action: str
    actor_id: str | None
    old_value: dict[str, Any] | None
    new_value: dict[str, Any] | None
    reason: str | None
    request_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class Edge:
    """A typed link between two memories (src → dst)."""

    id: str
    src_id: str
    dst_id: str
    type: str
    created_by: str | None
    created_at: datetime


@dataclass(frozen=True)
class Tunnel:
    """A connection between two (wing, room) areas; an empty room covers the whole wing."""

    id: str
    from_wing: str
    from_room: str
    to_wing: str
    to_room: str
    created_by: str | None
    created_at: datetime


@dataclass(frozen=True)
class ConflictRecord:
    """A conflict between two memories: ``item_a`` the existing one, ``item_b`` the new one."""

    id: str
    item_a: str
    item_b: str
    type: str
    detector: str
    score: float | None
    rule: str | None
    explanation: str | None
    status: str
    resolution: str | None
    resolver_id: str | None
    reason: str | None
    created_at: datetime
    resolved_at: datetime | None
