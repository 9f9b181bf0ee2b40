"""REST request bodies. Each field's meaning and the rules the schema cannot state are in its description,
which /openapi.json carries. Unknown fields are refused, naming the field."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

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
from engram.rpc.convert import OUTSIDE_YEARS, in_range

REASON = "Why; at most 2000 characters, trimmed. Kept on the audit row, never in the event."
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
"""The range of a count that crosses gRPC as an int32: outside it the gateway answers 422 naming the field (the
service checks the range each field really allows); before, such a value failed building the request (a 500)."""


NEEDS_OFFSET = "a time needs a timezone offset (Z or ±HH:MM)"
"""The one rule for every time a client sends (bodies, query parameters, hence the SDK and the MCP tools): one
without an offset is refused (422 naming the field), never read in the gateway host's local time, which made what
was stored depend on the host's TZ setting. A date alone (``2026-01-01``) has no offset either."""


def _with_offset(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise PydanticCustomError("timezone_aware", NEEDS_OFFSET)
    return value


def _in_utc_range(value: datetime) -> datetime:
    if not in_range(value):
        raise ValueError(OUTSIDE_YEARS)
    return value


Instant = Annotated[datetime, AfterValidator(_with_offset), AfterValidator(_in_utc_range)]
"""A time the gateway sends on as a protobuf Timestamp (UTC, years 1–9999), with a timezone offset
(``NEEDS_OFFSET``; a number is Unix seconds, UTC). One whose offset takes it past either end
(``9999-12-31T23:00:00-05:00``), or onto one (``0001-01-01T00:00:00Z``, stored as -infinity), is refused naming its
field; before, converting it, or reading the stored item back, failed (a 500)."""


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberBody(Body):
    """A memory to store (also the body of `POST /v1/items/{item_id}/supersede`). An empty string has the
    same effect as leaving a field out."""

    content: str = Field(
        description="The memory text: not blank, at most ENGRAM_MAX_CONTENT_BYTES (16384) UTF-8 bytes. "
        "Scanned by the secret guard before anything else is looked at.",
        examples=["Never force-push to main."],
    )
    kind: str | None = Field(
        default=None,
        description="An enabled kind, built-in or the tenant's own; `fact` when left out. An unknown or "
        "disabled kind answers 422 listing the enabled kinds.",
        examples=["doctrine"],
    )
    importance: float | None = Field(default=None, description="0–1; the kind's `default_importance` when left out.")
    tags: list[str] = Field(
        default_factory=list,
        description="At most 32; each trimmed and 1–64 characters; duplicates are dropped. The tag `permanent` "
        "protects the memory from expiry.",
    )
    subject: str | None = Field(
        default=None,
        description="What the memory is about, at most 200 characters. With a singleton kind it names the slot "
        "the memory fills; recall boosts a memory whose subject the query names.",
        examples=["bob.drink"],
    )
    wing: str | None = Field(
        default=None, description="An area (at most 200 characters); an exact-match filter of recall and search."
    )
    room: str | None = Field(
        default=None, description="A part of the wing (at most 200 characters); an exact-match filter."
    )
    pinned: bool = Field(
        default=False,
        description="Startup recall puts pinned memories first; a pinned memory never expires. An agent "
        "principal needs the review scope to pin (403 `pin_not_allowed`).",
    )
    visibility: Visibility | None = Field(default=None, description="Who may read the memory; `workspace` by default.")
    source_type: SourceType | None = Field(
        default=None,
        description="Where the claim comes from; decides the authority with the caller's principal type. "
        "`agent` for agent principals by default, `explicit` for the others.",
    )
    source_uri: str | None = Field(
        default=None,
        description="Where the memory came from (a URL, a file), as given; at most ENGRAM_MAX_SOURCE_URI_LENGTH "
        "(2048) characters.",
    )
    source_session: str | None = Field(
        default=None,
        description="The chat or run that wrote it (at most 200 characters); recall lifts memories recorded "
        "next to a hit in the same session.",
    )
    valid_from: Instant | None = Field(
        default=None,
        description="When the claim became true (send a timezone offset). Recall and search filter on it with "
        "`as_of` or `time_start`/`time_end`, the item listing with `valid_start`/`valid_end`; its date is also "
        "indexed.",
    )
    valid_to: Instant | None = Field(
        default=None,
        description="When the claim stopped being true (with a timezone offset); not earlier than `valid_from`.",
    )
    expires_at: Instant | None = Field(
        default=None,
        description="When the memory expires (with a timezone offset); by default from the time-to-live matrix "
        "of its kind and importance. Must be in the future; refused (422) on a memory protected from expiry.",
    )
    external_id: str | None = Field(
        default=None, description="The caller's own id for the memory, at most 200 characters; stored as given."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Any JSON object, stored and returned as given: at most ENGRAM_MAX_METADATA_BYTES (16384) "
        "UTF-8 bytes as compact JSON and ENGRAM_MAX_METADATA_DEPTH (8) levels of nested objects and lists. "
        "It counts against recall's byte budget.",
    )
    workspace_id: str | None = Field(
        default=None,
        description="A UUID. By default the workspace of the first id in `supersedes`, otherwise the tenant's "
        "`default` one. 404 when the caller is not a member; 403 `workspace_read_only` for a `viewer`.",
    )
    supersedes: list[str] = Field(
        default_factory=list,
        description="Ids this memory replaces, atomically: at most 20 distinct UUIDs, each live, readable, in "
        "a workspace where the caller may write, and with authority at most this memory's.",
    )


MAX_BATCH = 100


class RememberBatchBody(Body):
    """Up to 100 memories stored in one transaction, each on its own: one that breaks a rule is reported in its
    result and every other one is stored."""

    items: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description="1–100 memories, each a `RememberBody` (the body of `POST /v1/remember`). Each is checked on its "
        "own: one the schema refuses gets a 422 result and the others go on.",
    )


class ObserveBody(Body):
    """A raw observation: stored as kind `observation`, active at once, searchable by keyword as soon as the
    answer comes back, embedded shortly after, and gone after ENGRAM_OBSERVE_TTL_HOURS (72) by default."""

    content: str = Field(
        description="What was observed: not blank, at most ENGRAM_MAX_CONTENT_BYTES (16384) UTF-8 bytes; the "
        "secret guard applies as for remember.",
        examples=["The user asked to rerun the failing deploy."],
    )
    source_session: str | None = Field(
        default=None, description="The chat or run it was seen in, at most 200 characters."
    )
    workspace_id: str | None = Field(
        default=None, description="A UUID where the caller may write; the tenant's `default` workspace otherwise."
    )
    tags: list[str] = Field(
        default_factory=list,
        description="At most 32, each 1–64 characters; `permanent` keeps it from expiring.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Any JSON object, stored and returned as given.")
    source_uri: str | None = Field(default=None, description="Where it came from (a URL, a file), as given.")
    expires_at: Instant | None = Field(
        default=None,
        description="When it expires (in the future, with a timezone offset); now + ENGRAM_OBSERVE_TTL_HOURS "
        "when left out.",
    )


_NOT_NULL = ("tags", "importance", "pinned", "visibility")


class PatchBody(Body):
    """The metadata to correct; at least one field. Fields left out stay as they are. The content is never
    patched: supersede the memory instead."""

    tags: list[str] | None = Field(
        default=None, description="Replaces the tags: at most 32, each 1–64 characters; duplicates are dropped."
    )
    importance: float | None = Field(default=None, description="0–1.")
    pinned: bool | None = Field(default=None, description="Pinned memories come first in startup recall.")
    visibility: Visibility | None = Field(
        default=None,
        description="Who may read it. Widening needs a writing role in the workspace, as remember does; "
        "widening another's memory also needs the review scope and a non-agent principal.",
    )
    subject: str | None = Field(
        default=None, description="At most 200 characters; null clears it. Not for singleton kinds (409)."
    )
    valid_to: Instant | None = Field(
        default=None,
        description="When the claim stopped being true (with a timezone offset), not before `valid_from`; null "
        "clears it.",
    )
    content: SkipJsonSchema[Any] = Field(default=None, exclude=True)

    @field_validator("content", mode="before")
    @classmethod
    def _no_content(cls, value: Any) -> Any:
        raise ValueError("content is never patched; supersede the memory instead")

    @field_validator(*_NOT_NULL, mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("may not be null")
        return value

    @model_validator(mode="after")
    def _something(self) -> PatchBody:
        if not self.model_fields_set:
            raise ValueError("name at least one field to change")
        return self


class FilterFields(Body):
    as_of: Instant | None = Field(
        default=None,
        description="Answer as of this time: what was valid and known then (send a timezone offset).",
    )
    time_start: Instant | None = Field(
        default=None,
        description="Only items whose validity interval [valid_from, valid_to) overlaps [time_start, time_end]; "
        "a bound left out, and an empty valid_from or valid_to, is open-ended. With a timezone offset.",
    )
    time_end: Instant | None = Field(
        default=None, description="The end of the validity range (with a timezone offset); not before `time_start`."
    )
    kinds: list[str] = Field(
        default_factory=list,
        description="Items of any of these kinds; each must be an enabled kind (otherwise 422 listing them).",
    )
    tags: list[str] = Field(default_factory=list, description="Items carrying all of these tags.")
    workspace_id: str | None = Field(
        default=None, description="Only items in this workspace (a UUID); it narrows what the caller may read."
    )
    wing: str | None = Field(default=None, description="Only items with exactly this wing.")
    room: str | None = Field(default=None, description="Only items with exactly this room.")


class RecallBody(FilterFields):
    """What to recall, with filters and budgets."""

    mode: RecallMode = Field(
        default=RecallMode.HYBRID,
        description="`keyword`, `semantic` or `hybrid` rank by the query; `startup` builds a session's working set.",
    )
    query: str | None = Field(
        default=None,
        description="Required (not blank, at most 2000 characters) in every mode but `startup`, which ignores it.",
        examples=["what food must Alice avoid?"],
    )
    item_budget: int | None = Field(
        default=None, ge=INT32_MIN, le=INT32_MAX, description="Most items to return: 1–200, default 10."
    )
    byte_budget: int | None = Field(
        default=None,
        ge=INT32_MIN,
        le=INT32_MAX,
        description="Most UTF-8 bytes of content and metadata (as compact JSON) in the answer: at least 1, "
        "default 32768.",
    )
    token_budget: int | None = Field(
        default=None,
        ge=INT32_MIN,
        le=INT32_MAX,
        description="Most estimated tokens (characters / 4) in the answer: at least 1, default 4000.",
    )
    include_superseded: bool = Field(
        default=False,
        description="Show superseded items (history) instead of redirecting hits on them to their successors.",
    )
    explain: bool = Field(default=False, description="Also return the best candidates the budgets cut, and why.")


class SearchBody(FilterFields):
    """What to search for, with the filters of recall."""

    query: str = Field(description="Not blank, at most 2000 characters.", examples=["deploys tuesday"])
    mode: SearchMode = Field(default=SearchMode.HYBRID, description="Rank by keyword, by meaning, or both.")
    limit: int | None = Field(
        default=None, ge=INT32_MIN, le=INT32_MAX, description="How many items to return: 1–200, default 10."
    )


class ReviewBody(Body):
    """One review action; who may take it from which state is the review lifecycle's table."""

    action: ReviewAction = Field(description="The transition to take.")
    reason: str = Field(default="", max_length=2000, description=REASON)


class VerifyBody(Body):
    reason: str = Field(default="", max_length=2000, description=REASON)


class InvalidateBody(Body):
    reason: str = Field(
        min_length=1,
        max_length=2000,
        description="Why the memory is no longer true; not only whitespace. Kept with the item and on the audit row.",
    )


class FeedbackBody(Body):
    """A verdict on a memory the caller may read."""

    item_id: str = Field(description="The memory (a UUID); 404 when the caller may not read it.")
    verdict: FeedbackVerdict = Field(description="`useful` raises importance by 0.05, `noise` lowers it by 0.10.")
    recall_id: str | None = Field(
        default=None, description="The recall that served the item, if any (a UUID); stored, not checked."
    )


class BulkFilterBody(Body):
    """Which memories: those the caller may read that match every criterion given. An empty list or string
    counts as not given."""

    kinds: list[str] = Field(
        default_factory=list, description="Items of any of these kinds (not checked against the kinds registry)."
    )
    tags: list[str] = Field(default_factory=list, description="Items carrying all of these tags.")
    workspace_id: str | None = Field(default=None, description="Items in this workspace (a UUID).")
    wing: str | None = Field(default=None, description="Items with exactly this wing.")
    room: str | None = Field(default=None, description="Items with exactly this room.")
    review_status: list[ReviewStatus] = Field(
        default_factory=list,
        description="Items in any of these states. For `archive`, when left out, `proposed`, `active` and "
        "`disputed`, which then does not count as a criterion.",
    )
    author_id: str | None = Field(default=None, description="Items written by this principal (a UUID).")
    created_before: Instant | None = Field(default=None, description="Items created before this time (with an offset).")
    created_after: Instant | None = Field(
        default=None, description="Items created at or after this time (with an offset)."
    )


class BulkBody(Body):
    """A bulk archive or delete."""

    action: BulkAction = Field(description="Each item goes through the rules of the one-by-one action.")
    filter: BulkFilterBody = Field(description="At least one criterion; every given criterion must match.")
    dry_run: bool = Field(default=True, description="Report what would change and write nothing (the default).")
    limit: int = Field(default=100, ge=1, le=1000, description="The most items looked at, oldest first.")
    reason: str = Field(default="", max_length=2000, description="Kept on each changed item's audit row.")


class ClassifyBody(Body):
    content: str = Field(
        description="The text to classify (not blank, at most ENGRAM_MAX_CONTENT_BYTES UTF-8 bytes); nothing is "
        "stored.",
        examples=["We decided to move the ledger to Postgres 16."],
    )


class ResolveBody(Body):
    """A reviewer's decision on an open conflict."""

    resolution: Resolution = Field(
        description="Keep the existing memory, accept the new one, keep both, or merge them into `content`."
    )
    reason: str = Field(
        default="", max_length=2000, description="Trimmed; kept on the conflict and in the audit rows' reasons."
    )
    content: str | None = Field(
        default=None,
        description="Required for `merge` and refused for the others: the memory that replaces both.",
    )


class EdgeBody(Body):
    """A typed link from one memory to another."""

    src_id: str = Field(description="The source memory (a UUID); the caller needs a writing role in its workspace.")
    dst_id: str = Field(description="The memory it points to (a UUID); not the source itself.")
    type: LinkType = Field(description="`supersedes` links come from supersession only, never from this route.")
