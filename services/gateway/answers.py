"""REST answers: the pydantic models the v1 routes return, so /openapi.json documents every response.

Each model lists every key the API returns, in the order it returns them. No field has a default except the
two that appear only sometimes (``matched_via``, ``cut``), so a key can neither be dropped nor filled in by
accident; ``extra="forbid"`` refuses a key the model does not declare. Times are ISO 8601 strings in UTC
with a ``Z`` suffix; text that is absent is ``null``, never ``""``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _absent(value: object) -> bool:
    return value is None


class ItemAnswer(Answer):
    """One stored memory, as ``GET /v1/items/{item_id}`` returns it."""

    id: str = Field(description="The memory's id (a UUID).")
    tenant_id: str = Field(description="The tenant that owns it.")
    workspace_id: str = Field(description="The workspace it lives in.")
    principal_id: str = Field(description="The author.")
    content: str = Field(description="The stored text (with secrets replaced when the tenant redacts them).")
    content_hash: str = Field(description="Hex SHA-256 of the canonical text (the dedup key).")
    kind: str = Field(description="Its memory kind; the classifier may change it when the writer named none.")
    tags: list[str] = Field(description="Its tags, trimmed and de-duplicated.")
    importance: float = Field(description="0–1, rounded to 4 places.")
    pinned: bool = Field(description="Startup recall puts it first; it never expires.")
    visibility: str = Field(description="`private`, `workspace`, `tenant` or `public`.")
    review_status: str = Field(description="`proposed`, `active`, `disputed`, `rejected`, `superseded` or `archived`.")
    authority: int = Field(description="From the source type and the principal (0–100).")
    source_type: str = Field(description="Where the claim came from, as written or defaulted.")
    source_trust: float = Field(description="authority / 50: 0.2, 0.4, 0.6, 0.8 or 1.0.")
    memory_confidence: float = Field(
        description="Starts at 0.7; no API changes it yet. Enters trust and the promotion gates."
    )
    human_verified: bool = Field(description="A reviewer verified it (`POST /v1/items/{item_id}/verify`).")
    recall_count: int | None = Field(
        description="How many recalls returned the item (updated shortly after each); null unless the caller is "
        "its author, holds a writing role in its workspace or is a tenant administrator."
    )
    kind_explicit: bool = Field(description="Whether the writer named the kind; only an unnamed kind is classified.")
    taxonomy_confidence: float | None = Field(description="null until the classifier has been by.")
    retention_confidence: float | None = Field(
        description="How sure the classifier is of `retention`; null until classified."
    )
    metadata: dict[str, Any] = Field(description="The JSON object the writer sent.")
    subject: str | None = Field(description="What it is about; names a singleton slot.")
    wing: str | None = Field(description="Its area, as written or placed by the classifier.")
    room: str | None = Field(description="The part of the wing, as written or placed by the classifier.")
    source_uri: str | None = Field(description="Where it came from, as written.")
    source_session: str | None = Field(description="The chat or run that wrote it.")
    superseded_by: str | None = Field(
        description="The memory that replaced it; null unless superseded, when the successor was deleted, and "
        "when the caller may not read the successor."
    )
    external_id: str | None = Field(description="The writer's own id for it.")
    retention: str | None = Field(
        description="`retain`, `uncertain`, `transient` or `noise`, from the classifier; null until classified."
    )
    sensitivity: str | None = Field(
        description="`normal`, `personal` or `secret`, from the classifier; null until classified."
    )
    valid_from: str | None = Field(description="When the claim became true, if given.")
    valid_to: str | None = Field(description="When the claim stopped being true, if given.")
    created_at: str | None = Field(description="When it was stored.")
    expires_at: str | None = Field(description="When it leaves recall and goes to the trash; null: never.")
    invalidated_at: str | None = Field(description="When it was declared no longer true; null unless invalidated.")
    classified_at: str | None = Field(description="When the classifier was by; null until then.")


class PossibleSupersede(Answer):
    """A live memory the new one may replace: reported only, never replaced."""

    id: str = Field(description="The live memory's id; send it in `supersedes` to replace it.")
    similarity: float = Field(description="Trigram similarity of the two contents, rounded to 4 places.")
    preview: str = Field(description="Its content, whitespace collapsed, cut to 120 characters (ending in … when cut).")


class RememberAnswer(Answer):
    """201 for ``created`` or ``superseded``; 200 for ``deduplicated``, with the item already stored."""

    id: str = Field(description="The new memory's id, or the existing one's for `deduplicated`.")
    status: str = Field(description="`created`, `superseded` or `deduplicated`.")
    review_status: str = Field(
        description="The memory's review status: `active`, or `proposed` for a kind that requires review or a"
        " singleton write that did not take the slot."
    )
    authority: int = Field(description="The memory's authority (0–100), from the source type and the principal.")
    possible_supersedes: list[PossibleSupersede] = Field(
        description="Live memories of the same kind the new one may replace, at most five, most similar first; "
        "reported only. Only the most recent memories of the kind are compared (ENGRAM_POSSIBLE_SUPERSEDES_WINDOW); "
        "older near-copies are flagged later as conflicts. Empty for `deduplicated`."
    )
    superseded: list[str] = Field(description="The ids this memory replaced, in the order given.")
    item: ItemAnswer = Field(description="The stored memory, as `GET /v1/items/{item_id}` returns it.")


class BatchResult(Answer):
    """What became of one memory of a batch: its answer, or the problem that refused it (nothing of it stored)."""

    index: int = Field(description="The memory's position in `items`, from 0.")
    status: int = Field(
        description="The status `POST /v1/remember` would have answered: 201, 200 (`deduplicated`), or the "
        "problem's status (422, 403, 404, 409)."
    )
    answer: RememberAnswer | None = Field(description="The remember answer; null when the memory was refused.")
    error: dict[str, Any] | None = Field(
        description="The problem+json object (`type`, `title`, `status`, `detail`, `code`, and `field` when one "
        "field is at fault); null when the memory was stored or deduplicated."
    )


class BatchAnswer(Answer):
    """One result per memory sent, in the order sent."""

    results: list[BatchResult] = Field(description="One per memory of `items`, by `index`.")


class ObserveAnswer(Answer):
    """201 for `created`; 200 for `deduplicated`, with the observation already stored."""

    id: str = Field(description="The observation's id, or the live one's with the same text for `deduplicated`.")
    status: str = Field(description="`created` or `deduplicated`.")
    expires_at: str | None = Field(
        description="When it expires (null: never, for one tagged `permanent`); the sweep then moves it to the trash."
    )


class RecalledAnswer(Answer):
    """A memory recall or search returned, with its score and why."""

    item: ItemAnswer = Field(description="The memory.")
    score: float = Field(description="Rounded to 6 places.")
    reasons: list[str] = Field(
        description="Why it ranks where it does, in plain text, in a fixed order (see docs/api.md, Reasons)."
    )
    origin: str = Field(description="The mode that found it, or `graph` or `session` for a memory recall added.")
    matched_via: str | None = Field(
        default=None,
        exclude_if=_absent,
        description="Only on an item that stands in for a superseded hit: the id of the superseded item that matched.",
    )


class CutAnswer(RecalledAnswer):
    """A candidate the budgets left out (``explain`` only)."""

    cut_because: str = Field(description="Which budget left it out, e.g. `over the item budget (10)`.")


class RecallAnswer(Answer):
    items: list[RecalledAnswer] = Field(description="The memories within the budgets, in rank order.")
    mode: str = Field(description="The mode that ran.")
    scoring_version: str = Field(description="The ranking rules' name, logged with each call.")
    recall_id: str = Field(description="Pass it to `POST /v1/feedback` as `recall_id`.")
    omitted: int = Field(description="Candidates the budgets left out.")
    cut: list[CutAnswer] | None = Field(
        default=None, exclude_if=_absent, description="Only when the request asked to `explain`."
    )


class SearchAnswer(Answer):
    items: list[RecalledAnswer] = Field(description="The top `limit` memories, in rank order.")
    mode: str = Field(description="The mode that ran.")


class StageAnswer(Answer):
    name: str = Field(description="`embedding`, `classification`, `conflict_check` or `promotion`.")
    status: str = Field(description="`pending`, `done` or `failed`.")
    detail: str | None = Field(
        description="What the stage found or why it failed or waits (e.g. the embedding profile, the "
        "promotion blockers)."
    )
    updated_at: str | None = Field(description="When the stage last changed.")


class StatusAnswer(Answer):
    id: str = Field(description="The memory's id.")
    review_status: str = Field(description="The memory's review status.")
    embedding: str = Field(description="The embedding stage's status (`pending` until it has one).")
    stages: list[StageAnswer] = Field(description="Every stage written for the memory, in pipeline order.")


class EventAnswer(Answer):
    id: int = Field(description="The row's number in the append-only audit table; increasing.")
    action: str = Field(
        description="What happened: `created`, `review.<action>`, `verified`, `superseded`, `invalidated`, "
        "`classified`, `feedback.<verdict>`, `deleted`, `expired`, `restored`, `linked` or "
        "`unlinked`."
    )
    actor_id: str | None = Field(
        description="The principal that did it; null for the pipeline's changes and `expired`."
    )
    old: dict[str, Any] | None = Field(description="What changed, before (whole numbers as integers).")
    new: dict[str, Any] | None = Field(description="What changed, after.")
    reason: str | None = Field(description="The reason given, or the pipeline's own.")
    request_id: str | None = Field(
        description="The request's `x-request-id` (or the id the gateway made); null for the pipeline's changes."
    )
    time: str | None = Field(description="When it happened.")


class EventsAnswer(Answer):
    """A memory's audit trail, oldest first."""

    id: str = Field(description="The memory's id.")
    events: list[EventAnswer] = Field(description="Its audit rows, oldest first.")


class DeletedAnswer(Answer):
    item_id: str = Field(description="The deleted memory's id; a restore keeps it.")
    trash_id: str = Field(description="Pass it to `POST /v1/trash/{trash_id}/restore`.")


class TrashEntryAnswer(Answer):
    id: str = Field(description="The trash id.")
    item_id: str = Field(description="The deleted memory's id; a restored memory keeps it.")
    kind: str = Field(description="The memory's kind when it went to the trash.")
    workspace_id: str = Field(description="The memory's workspace when it went to the trash.")
    author_id: str = Field(description="The memory's author (its `principal_id`).")
    visibility: str = Field(
        description="The memory's visibility when it went to the trash; who sees the entry follows from it."
    )
    review_status: str = Field(
        description="The memory's review status when it went to the trash; a restore brings it back."
    )
    invalidated: bool = Field(description="Whether the memory was invalidated; a restore keeps it so.")
    reason: str = Field(
        description="`deleted` (by a caller) or `expired` (its time to live ended); a caller's own reason is "
        "on the audit row."
    )
    deleted_by: str | None = Field(description="null when the sweep moved an expired memory.")
    deleted_at: str | None = Field(description="When it went to the trash.")
    purge_after: str | None = Field(
        description="`deleted_at` plus the tenant's current trash retention; the sweep empties the entry after it."
    )
    preview: str = Field(description="The content, whitespace collapsed, cut to 120 characters (ending in … when cut).")


class TrashPage(Answer):
    items: list[TrashEntryAnswer] = Field(description="The entries the caller may see, newest first.")
    next_cursor: str | None = Field(description="Pass it back as `cursor`; null on the last page.")


class BulkSkip(Answer):
    id: str = Field(description="The memory left alone.")
    code: str = Field(description="The refusal's problem code, as a single change would get it.")
    detail: str = Field(description="The refusal's readable detail.")


class BulkAnswer(Answer):
    action: str = Field(description="The action asked for.")
    dry_run: bool = Field(description="Whether nothing was written.")
    matched: int = Field(description="Matching memories looked at (at most `limit`).")
    affected: list[str] = Field(description="Ids changed (or that would be, in a dry run), oldest first.")
    truncated: bool = Field(description="More items matched than `limit`.")
    skipped: list[BulkSkip] = Field(
        description="Memories the caller may not change this way, each with the code a one-by-one call would get."
    )


class ItemsAnswer(Answer):
    items: list[ItemAnswer] = Field(description="The memories, in the shape of `GET /v1/items/{item_id}`.")


class ItemPage(Answer):
    items: list[ItemAnswer] = Field(
        description="The memories you may read that match every filter, in the `sort` order, each in the shape "
        "of `GET /v1/items/{item_id}`."
    )
    next_cursor: str | None = Field(
        description="Pass it back as `cursor` (with the same `sort`); null on the last page."
    )


class ItemCounts(Answer):
    total: int = Field(description="Memories you may read that are neither superseded nor invalidated.")
    by_review_status: dict[str, int] = Field(
        description="Those memories by review status; a status with none is left out."
    )
    by_kind: dict[str, int] = Field(description="Those memories by kind; a kind with none is left out.")


class ReviewQueueAnswer(Answer):
    proposed: int = Field(description="Proposals awaiting review (`GET /v1/items?review_status=proposed`).")
    disputed: int = Field(description="Disputed memories awaiting a decision.")
    oldest_proposed_at: str | None = Field(description="When the oldest waiting proposal was stored; null when none.")


class HygieneAnswer(Answer):
    open_conflicts: int = Field(description="Open conflicts whose two memories you may read (`GET /v1/conflicts`).")
    pending_stages: dict[str, int] = Field(
        description="Per pipeline stage (every stage, in pipeline order), your memories still waiting at it."
    )
    failed_stages: dict[str, int] = Field(
        description="Per pipeline stage (every stage, in pipeline order), your memories that failed in it."
    )
    expiring_within_7d: int = Field(
        description="Live memories whose time to live ends within 7 days, already expired ones not yet swept "
        "included (`GET /v1/items/expiry-candidates?within_days=7` lists them)."
    )
    trash: int = Field(description="Trash entries you may see (`GET /v1/trash`).")
    superseded: int = Field(description="Superseded memories that are not invalidated.")
    invalidated: int = Field(description="Invalidated memories, superseded or not.")


class StatsAnswer(Answer):
    """Counts over the memories you may read in your tenant, taken in one snapshot."""

    items: ItemCounts = Field(description="The memories in play, by review status and by kind.")
    review_queue: ReviewQueueAnswer = Field(description="What waits for a reviewer.")
    hygiene: HygieneAnswer = Field(
        description="What needs tidying: conflicts, stuck pipeline stages, expiry, "
        "the trash, and the replaced and withdrawn memories the counts above leave out."
    )


class ConflictAnswer(Answer):
    id: str = Field(description="The conflict's id.")
    existing_item_id: str = Field(
        description="The memory that was there first: the slot holder, or the older of a pair the conflicts "
        "consumer found."
    )
    new_item_id: str = Field(description="The other memory.")
    type: str = Field(
        description="`contradiction` or `refinement` (the schema also allows `duplicate` and `scope_overlap`,"
        " which nothing opens today)."
    )
    detector: str = Field(description="`singleton`, `rules:<rule>` or `llm:<model>`.")
    score: float | None = Field(
        description="The rule's confidence × the pair's cosine similarity; null for `singleton`."
    )
    rule: str | None = Field(description="`singleton`, a rule id such as `numbers_differ:duration`, or `llm_judge`.")
    explanation: str | None = Field(description="One sentence on what differs; it may quote both memories.")
    status: str = Field(description="`open` or `resolved`.")
    resolution: str | None = Field(
        description="`keep_existing`, `accept_new`, `keep_both` or `merge`; null while open."
    )
    resolver_id: str | None = Field(
        description="Who closed it: a reviewer, or the caller whose review action settled it."
    )
    reason: str | None = Field(description="The reason given when it was closed.")
    created_at: str | None = Field(description="When it was opened.")
    resolved_at: str | None = Field(description="When it was closed; null while open.")


class ConflictPage(Answer):
    items: list[ConflictAnswer] = Field(description="Conflicts whose two memories the caller may read, newest first.")
    next_cursor: str | None = Field(description="Pass it back as `cursor`; null on the last page.")


class ResolvedAnswer(Answer):
    conflict: ConflictAnswer = Field(description="The conflict, now resolved.")
    existing: ItemAnswer = Field(description="The existing memory as it is now.")
    new: ItemAnswer = Field(description="The new memory as it is now.")
    merged: ItemAnswer | None = Field(description="The memory a `merge` wrote; null otherwise.")


class EdgeAnswer(Answer):
    id: str = Field(description="The link's id.")
    src_id: str = Field(description="The source memory (for `supersedes`, the successor).")
    dst_id: str = Field(description="The memory it points to.")
    type: str = Field(description="The link type.")
    created_by: str | None = Field(description="Who made it; null for a supersession the conflicts consumer applied.")
    created_at: str | None = Field(description="When it was made.")


class EdgesAnswer(Answer):
    id: str = Field(description="The memory whose links these are.")
    items: list[EdgeAnswer] = Field(
        description="Links from and to it whose other end the caller may read, oldest first."
    )


class ClassifyAnswer(Answer):
    kind: str = Field(description="The suggested kind (a stored memory takes it only under the classifier's rules).")
    taxonomy_confidence: float = Field(description="How sure the classifier is of the kind (0–0.95).")
    retention: str = Field(description="`retain`, `uncertain`, `transient` or `noise`.")
    retention_confidence: float = Field(description="How sure the classifier is of the retention (0–0.95).")
    sensitivity: str = Field(description="`normal`, `personal` or `secret` (a credential the secret guard would find).")
    wing: str | None = Field(description="The area the tenant's placement rules give, if one matched.")
    room: str | None = Field(description="The room the matching placement rule gives, if any.")
    suggested_visibility: str | None = Field(description="`private` for personal or secret content; null otherwise.")
    reasons: list[str] = Field(
        description="Why, in plain text (e.g. `kind model: decision 0.93, …`, `nearest examples: …`, "
        "`kind cue 'we decided'`)."
    )
    classifier: str = Field(
        description="`rules` (no language model: the rules with the local kind model) or `llm:<model>`."
    )
    fallback_reason: str | None = Field(description="Why the model's answer was not used, when it was not.")


class Blocker(Answer):
    code: str = Field(description="The failing gate's stable code, e.g. `age`, `conflict`, `singleton_slot`.")
    detail: str = Field(description="What blocks, readably.")


class ReadinessAnswer(Answer):
    id: str = Field(description="The memory's id.")
    review_status: str = Field(description="The memory's review status; anything but `proposed` is never ready.")
    ready: bool = Field(description="Every promotion gate passes now.")
    blockers: list[Blocker] = Field(description="Every failing gate, in the order promotion checks them.")
    gates: dict[str, Any] = Field(description="The tenant's promotion thresholds in effect (numbers as floats).")


class FeedbackAnswer(Answer):
    item_id: str = Field(description="The memory.")
    verdict: str = Field(description="The verdict recorded.")
    previous: str | None = Field(description="The caller's verdict this one replaced, if any.")
    importance: float = Field(description="The item's importance after the feedback.")


class HealthAnswer(Answer):
    """``GET /health``: the process answers."""

    status: Literal["ok"] = Field(description="Always `ok`: the gateway process answered.")


class ReadyReport(Answer):
    """``GET /ready``: each dependency of the gateway, 200 when all are ``ok``, 503 otherwise."""

    status: Literal["ready", "not_ready"] = Field(description="`ready` when every check is `ok`.")
    checks: dict[str, str] = Field(
        description="`database`, `nats`, `ingest` and `recall`: `ok`, or why not (`unreachable: <error>`, "
        "`not migrated`, `not configured`, …)."
    )
