"""The API's answers as typed models. They follow the OpenAPI document's answer schemas (``GET /openapi.json``);
keys a newer server adds are kept (``extra="allow"``) rather than refused, so an older client keeps working.
Times are ISO 8601 strings, as the API sends them; ``model_dump(mode="json")`` gives back the JSON answer."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class Item(Model):
    """One stored memory (``GET /v1/items/{id}``)."""

    id: str
    tenant_id: str
    workspace_id: str
    principal_id: str
    content: str
    content_hash: str
    kind: str
    tags: list[str]
    importance: float
    pinned: bool
    visibility: str
    review_status: str
    authority: int
    source_type: str
    source_trust: float
    memory_confidence: float
    human_verified: bool
    recall_count: int
    kind_explicit: bool
    taxonomy_confidence: float | None = None
    retention_confidence: float | None = None
    metadata: dict[str, Any] = {}
    subject: str | None = None
    wing: str | None = None
    room: str | None = None
    source_uri: str | None = None
    source_session: str | None = None
    superseded_by: str | None = None
    external_id: str | None = None
    retention: str | None = None
    sensitivity: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    created_at: str | None = None
    expires_at: str | None = None
    invalidated_at: str | None = None
    classified_at: str | None = None


class Page(Model, Generic[T]):
    """One page of a cursor-paged listing; pass ``next_cursor`` back as ``cursor`` (None on the last page)."""

    items: list[T]
    next_cursor: str | None = None


class PossibleSupersede(Model):
    id: str
    similarity: float
    preview: str


class Remembered(Model):
    """``remember`` and ``supersede``: ``status`` is ``created``, ``superseded`` or ``deduplicated``."""

    id: str
    status: str
    review_status: str
    authority: int
    possible_supersedes: list[PossibleSupersede] = []
    superseded: list[str] = []
    item: Item


class Recalled(Model):
    item: Item
    score: float
    reasons: list[str]
    origin: str
    matched_via: str | None = None


class CutCandidate(Recalled):
    cut_because: str


class Recall(Model):
    items: list[Recalled]
    mode: str
    scoring_version: str
    recall_id: str
    omitted: int
    cut: list[CutCandidate] | None = None


class SearchResult(Model):
    items: list[Recalled]
    mode: str


class Stage(Model):
    name: str
    status: str
    detail: str | None = None
    updated_at: str | None = None


class ItemStatus(Model):
    id: str
    review_status: str
    embedding: str
    stages: list[Stage]


class AuditEvent(Model):
    id: int
    action: str
    actor_id: str | None = None
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None
    reason: str | None = None
    request_id: str | None = None
    time: str | None = None


class AuditTrail(Model):
    id: str
    events: list[AuditEvent]


class Deleted(Model):
    item_id: str
    trash_id: str


class TrashEntry(Model):
    id: str
    item_id: str
    kind: str
    workspace_id: str
    author_id: str
    visibility: str
    review_status: str
    invalidated: bool
    reason: str
    deleted_by: str | None = None
    deleted_at: str | None = None
    purge_after: str | None = None
    preview: str


class BulkSkip(Model):
    id: str
    code: str
    detail: str


class BulkResult(Model):
    action: str
    dry_run: bool
    matched: int
    affected: list[str]
    truncated: bool
    skipped: list[BulkSkip]


class Items(Model):
    items: list[Item]


class MemoryConflict(Model):
    """A conflict between two memories (``GET /v1/conflicts``)."""

    id: str
    existing_item_id: str
    new_item_id: str
    type: str
    detector: str
    score: float | None = None
    rule: str | None = None
    explanation: str | None = None
    status: str
    resolution: str | None = None
    resolver_id: str | None = None
    reason: str | None = None
    created_at: str | None = None
    resolved_at: str | None = None


class Resolved(Model):
    conflict: MemoryConflict
    existing: Item
    new: Item
    merged: Item | None = None


class Edge(Model):
    id: str
    src_id: str
    dst_id: str
    type: str
    created_by: str | None = None
    created_at: str | None = None


class Edges(Model):
    id: str
    items: list[Edge]


class Classification(Model):
    kind: str
    taxonomy_confidence: float
    retention: str
    retention_confidence: float
    sensitivity: str
    wing: str | None = None
    room: str | None = None
    suggested_visibility: str | None = None
    reasons: list[str]
    classifier: str
    fallback_reason: str | None = None


class Blocker(Model):
    code: str
    detail: str


class Readiness(Model):
    id: str
    review_status: str
    ready: bool
    blockers: list[Blocker]
    gates: dict[str, Any]


class FeedbackResult(Model):
    item_id: str
    verdict: str
    previous: str | None = None
    importance: float


class ItemCounts(Model):
    total: int = 0
    by_review_status: dict[str, int] = {}
    by_kind: dict[str, int] = {}


class ReviewQueue(Model):
    proposed: int = 0
    disputed: int = 0
    oldest_proposed_at: str | None = None


class Hygiene(Model):
    open_conflicts: int = 0
    pending_stages: dict[str, int] = {}
    failed_stages: dict[str, int] = {}
    expiring_within_7d: int = 0
    trash: int = 0
    superseded: int = 0
    invalidated: int = 0


class Stats(Model):
    """``GET /v1/stats``: counts over the items the caller may read (zero counts may be left out)."""

    items: ItemCounts
    review_queue: ReviewQueue
    hygiene: Hygiene


class Observed(Model):
    """``POST /v1/observe``: ``status`` is ``created`` or ``deduplicated``."""

    id: str
    status: str
    expires_at: str | None = None


class BatchResult(Model):
    """One item of ``remember_batch``: ``answer`` when stored (201/200), ``error`` (a problem) otherwise."""

    index: int
    status: int
    answer: Remembered | None = None
    error: dict[str, Any] | None = None


class Batch(Model):
    results: list[BatchResult]


# The admin API


class Created(Model):
    id: str


class Membership(Model):
    workspace_id: str
    principal_id: str
    role: str


class IssuedKey(Model):
    id: str
    key: str
    tenant_id: str
    principal_id: str
    scopes: list[str]
    label: str


class ApiKey(Model):
    id: str
    principal_id: str
    scopes: list[str]
    label: str
    created_at: str | None = None
    revoked_at: str | None = None
    last_used_at: str | None = None


class ApiKeys(Model):
    items: list[ApiKey]


class TenantConfig(Model):
    tenant_id: str
    config: dict[str, Any]
    version: int
    public_enabled: bool


class Kind(Model):
    name: str
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float
    enabled: bool
    built_in: bool


class Kinds(Model):
    items: list[Kind]


class Promotion(Model):
    tenant_id: str
    dry_run: bool
    decided: int
    counts: dict[str, int]


class Tunnel(Model):
    id: str
    from_wing: str
    from_room: str | None = None
    to_wing: str
    to_room: str | None = None
    created_by: str | None = None
    created_at: str | None = None


class Tunnels(Model):
    items: list[Tunnel]
