"""REST request bodies (field names as in docs/api.md). Unknown fields are refused, naming the field."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engram.domain.values import (
    BulkAction,
    FeedbackVerdict,
    LinkType,
    RecallMode,
    Resolution,
    ReviewAction,
    ReviewStatus,
    SearchMode,
    SourceType,
    Visibility,
)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberBody(Body):
    content: str = Field(description="The memory text (1 byte … ENGRAM_MAX_CONTENT_BYTES).")
    kind: str | None = Field(default=None, description="A registered memory kind; default `fact`.")
    importance: float | None = Field(default=None, description="0–1; default from the kind.")
    tags: list[str] = Field(default_factory=list)
    subject: str | None = None
    wing: str | None = None
    room: str | None = None
    pinned: bool = False
    visibility: Visibility | None = None
    source_type: SourceType | None = None
    source_uri: str | None = None
    source_session: str | None = None
    valid_from: datetime | None = Field(default=None, description="When the claim became true.")
    valid_to: datetime | None = Field(default=None, description="When the claim stopped being true.")
    expires_at: datetime | None = None
    external_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    workspace_id: str | None = None
    supersedes: list[str] = Field(
        default_factory=list, description="Ids this memory replaces (atomically; each needs authority ≤ this memory's)."
    )


class FilterFields(Body):
    as_of: datetime | None = Field(default=None, description="Answer as of this time: what was valid and known then.")
    kinds: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    workspace_id: str | None = None
    wing: str | None = None
    room: str | None = None


class RecallBody(FilterFields):
    mode: RecallMode = RecallMode.HYBRID
    query: str | None = Field(default=None, description="Required except in startup mode.")
    item_budget: int | None = Field(default=None, description="Most items to return (default 10, max 200).")
    byte_budget: int | None = None
    token_budget: int | None = None
    include_superseded: bool = Field(
        default=False,
        description="Show superseded items (history) instead of redirecting hits on them to their successors.",
    )
    explain: bool = Field(default=False, description="Also return the best candidates the budgets cut, and why.")


class SearchBody(FilterFields):
    query: str
    mode: SearchMode = SearchMode.HYBRID
    limit: int | None = Field(default=None, description="1–200, default 10.")


class ReviewBody(Body):
    action: ReviewAction
    reason: str = Field(default="", max_length=2000)


class VerifyBody(Body):
    reason: str = Field(default="", max_length=2000)


class InvalidateBody(Body):
    reason: str = Field(min_length=1, max_length=2000, description="Why the memory is no longer true.")


class FeedbackBody(Body):
    item_id: str
    verdict: FeedbackVerdict
    recall_id: str | None = Field(default=None, description="The recall that served the item, if any.")


class BulkFilterBody(Body):
    kinds: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list, description="Items carrying all of these tags.")
    workspace_id: str | None = None
    wing: str | None = None
    room: str | None = None
    review_status: list[ReviewStatus] = Field(default_factory=list)
    author_id: str | None = None
    created_before: datetime | None = None
    created_after: datetime | None = None


class BulkBody(Body):
    action: BulkAction
    filter: BulkFilterBody = Field(description="At least one criterion; every given criterion must match.")
    dry_run: bool = Field(default=True, description="Report what would change and write nothing (the default).")
    limit: int = Field(default=100, ge=1, le=1000)
    reason: str = Field(default="", max_length=2000)


class ClassifyBody(Body):
    content: str = Field(description="The text to classify; nothing is stored.")


class ResolveBody(Body):
    resolution: Resolution
    reason: str = Field(default="", max_length=2000)
    content: str | None = Field(default=None, description="merge only: the memory that replaces both.")


class EdgeBody(Body):
    src_id: str
    dst_id: str
    type: LinkType = Field(description="supersedes links come from POST /v1/items/{id}/supersede.")
