"""REST answers: the pydantic models the v1 routes return, so /openapi.json documents every response.

Each model lists every key the API returns, in the order it returns them. No field has a default except the
two that appear only sometimes (``matched_via``, ``cut``), so a key can neither be dropped nor filled in by
accident; ``extra="forbid"`` refuses a key the model does not declare. Times are ISO 8601 strings in UTC
with a ``Z`` suffix; text that is absent is ``null``, never ``""``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _absent(value: object) -> bool:
    return value is None


class ItemAnswer(Answer):
    """One stored memory, as ``GET /v1/items/{item_id}`` returns it."""

    id: str
    tenant_id: str
    workspace_id: str
    principal_id: str = Field(description="The author.")
    content: str
    content_hash: str = Field(description="Hex SHA-256 of the canonical text (the dedup key).")
    kind: str
    tags: list[str]
    importance: float = Field(description="0–1, rounded to 4 places.")
    pinned: bool
    visibility: str = Field(description="`private`, `workspace`, `tenant` or `public`.")
    review_status: str = Field(description="`proposed`, `active`, `disputed`, `rejected`, `superseded` or `archived`.")
    authority: int = Field(description="From the source type and the principal (0–100).")
    source_type: str
    source_trust: float
    memory_confidence: float
    human_verified: bool
    recall_count: int = Field(description="How many recalls returned the item (updated shortly after each).")
    kind_explicit: bool = Field(description="Whether the writer named the kind; only an unnamed kind is classified.")
    taxonomy_confidence: float | None = Field(description="null until the classifier has been by.")
    retention_confidence: float | None
    metadata: dict[str, Any]
    subject: str | None
    wing: str | None
    room: str | None
    source_uri: str | None
    source_session: str | None
    superseded_by: str | None
    external_id: str | None
    retention: str | None
    sensitivity: str | None
    valid_from: str | None
    valid_to: str | None
    created_at: str | None
    expires_at: str | None
    invalidated_at: str | None
    classified_at: str | None


class PossibleSupersede(Answer):
    """A live memory the new one may replace: reported only, never replaced."""

    id: str
    similarity: float
    preview: str


class RememberAnswer(Answer):
    """201 for ``created`` or ``superseded``; 200 for ``deduplicated``, with the item already stored."""

    id: str
    status: str = Field(description="`created`, `superseded` or `deduplicated`.")
    review_status: str
    authority: int
    possible_supersedes: list[PossibleSupersede]
    superseded: list[str] = Field(description="The ids this memory replaced, in the order given.")
    item: ItemAnswer


class RecalledAnswer(Answer):
    """A memory recall or search returned, with its score and why."""

    item: ItemAnswer
    score: float = Field(description="Rounded to 6 places.")
    reasons: list[str]
    origin: str = Field(description="The mode that found it, or `graph` or `session` for a memory recall added.")
    matched_via: str | None = Field(
        default=None,
        exclude_if=_absent,
        description="Only on an item that stands in for a superseded hit: the id of the superseded item that matched.",
    )


class CutAnswer(RecalledAnswer):
    """A candidate the budgets left out (``explain`` only)."""

    cut_because: str


class RecallAnswer(Answer):
    items: list[RecalledAnswer]
    mode: str
    scoring_version: str
    recall_id: str = Field(description="Pass it to `POST /v1/feedback` as `recall_id`.")
    omitted: int = Field(description="Candidates the budgets left out.")
    cut: list[CutAnswer] | None = Field(
        default=None, exclude_if=_absent, description="Only when the request asked to `explain`."
    )


class SearchAnswer(Answer):
    items: list[RecalledAnswer]
    mode: str


class StageAnswer(Answer):
    name: str = Field(description="`embedding`, `classification`, `conflict_check` or `promotion`.")
    status: str = Field(description="`pending`, `done` or `failed`.")
    detail: str | None
    updated_at: str | None


class StatusAnswer(Answer):
    id: str
    review_status: str
    embedding: str = Field(description="The embedding stage's status (`pending` until it has one).")
    stages: list[StageAnswer]


class EventAnswer(Answer):
    id: int = Field(description="The row's number in the append-only audit table; increasing.")
    action: str
    actor_id: str | None
    old: dict[str, Any] | None = Field(description="What changed, before (whole numbers as integers).")
    new: dict[str, Any] | None = Field(description="What changed, after.")
    reason: str | None
    request_id: str | None
    time: str | None


class EventsAnswer(Answer):
    """A memory's audit trail, oldest first."""

    id: str
    events: list[EventAnswer]


class DeletedAnswer(Answer):
    item_id: str
    trash_id: str = Field(description="Pass it to `POST /v1/trash/{trash_id}/restore`.")


class TrashEntryAnswer(Answer):
    id: str = Field(description="The trash id.")
    item_id: str
    kind: str
    workspace_id: str
    author_id: str
    visibility: str
    review_status: str
    invalidated: bool
    reason: str
    deleted_by: str | None = Field(description="null when the sweep moved an expired memory.")
    deleted_at: str | None
    purge_after: str | None
    preview: str


class TrashPage(Answer):
    items: list[TrashEntryAnswer]
    next_cursor: str | None = Field(description="Pass it back as `cursor`; null on the last page.")


class BulkSkip(Answer):
    id: str
    code: str = Field(description="The refusal's problem code, as a single change would get it.")
    detail: str


class BulkAnswer(Answer):
    action: str
    dry_run: bool
    matched: int
    affected: list[str]
    truncated: bool = Field(description="More items matched than `limit`.")
    skipped: list[BulkSkip]


class ItemsAnswer(Answer):
    items: list[ItemAnswer]


class ConflictAnswer(Answer):
    id: str
    existing_item_id: str
    new_item_id: str
    type: str
    detector: str
    score: float | None
    rule: str | None
    explanation: str | None
    status: str = Field(description="`open` or `resolved`.")
    resolution: str | None
    resolver_id: str | None
    reason: str | None
    created_at: str | None
    resolved_at: str | None


class ConflictPage(Answer):
    items: list[ConflictAnswer]
    next_cursor: str | None = Field(description="Pass it back as `cursor`; null on the last page.")


class ResolvedAnswer(Answer):
    conflict: ConflictAnswer
    existing: ItemAnswer
    new: ItemAnswer
    merged: ItemAnswer | None = Field(description="The memory a `merge` wrote; null otherwise.")


class EdgeAnswer(Answer):
    id: str
    src_id: str
    dst_id: str
    type: str
    created_by: str | None
    created_at: str | None


class EdgesAnswer(Answer):
    id: str = Field(description="The memory whose links these are.")
    items: list[EdgeAnswer]


class ClassifyAnswer(Answer):
    kind: str
    taxonomy_confidence: float
    retention: str
    retention_confidence: float
    sensitivity: str
    wing: str | None
    room: str | None
    suggested_visibility: str | None
    reasons: list[str]
    classifier: str = Field(description="`rules` or `llm:<model>`.")
    fallback_reason: str | None = Field(description="Why the model's answer was not used, when it was not.")


class Blocker(Answer):
    code: str
    detail: str


class ReadinessAnswer(Answer):
    id: str
    review_status: str
    ready: bool = Field(description="Every promotion gate passes now.")
    blockers: list[Blocker]
    gates: dict[str, Any] = Field(description="The tenant's promotion thresholds in effect (numbers as floats).")


class FeedbackAnswer(Answer):
    item_id: str
    verdict: str
    previous: str | None = Field(description="The caller's verdict this one replaced, if any.")
    importance: float = Field(description="The item's importance after the feedback.")
