"""Ingest logic: validation, authority, dedup, and item + audit + outbox in one transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from engram.config import Settings
from engram.db import creation, identity, items, kinds
from engram.db.pool import savepoint, tenant_tx
from engram.domain import keys, ttl, validation
from engram.domain.authority import Authority, default_source_type, may_pin, source_trust
from engram.domain.classification import Classification
from engram.domain.content import content_hash, index_context
from engram.domain.models import CallerContext, MemoryItem, MemoryKind
from engram.domain.values import EventType, PipelineStage, ReviewStatus
from engram.errors import Conflict, EngramError, NotFound, PermissionDenied, ValidationFailed
from engram.events.backlog import Backlog
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.llm import JsonChat
from engram.pipeline import changes, classify
from engram.telemetry.metrics import REMEMBER_STAGE, REMEMBERED, SplitStage, timed
from services.ingest import checks, idempotency
from services.ingest.idempotency import Once, Replayed
from services.ingest.supersedes import PossibleSupersedes
from services.ingest.trash import discard

DEFAULT_KIND = "fact"
MAX_SUPERSEDES = 20
MAX_BATCH = 100


@dataclass
class RememberCommand:
    content: str
    kind: str = ""
    importance: float | None = None
    tags: list[str] = field(default_factory=list)
    subject: str = ""
    wing: str = ""
    room: str = ""
    pinned: bool = False
    visibility: str = ""
    source_type: str = ""
    source_uri: str = ""
    source_session: str = ""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    external_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    workspace_id: str = ""
    supersedes: list[str] = field(default_factory=list)


@dataclass
class RememberResult:
    status: str  # created | deduplicated | superseded
    item: MemoryItem
    superseded: list[str] = field(default_factory=list)
    possible_supersedes: list[items.Similar] = field(default_factory=list)


@dataclass
class BatchOutcome:
    """One memory of a batch: what remember did, or why it refused it."""

    index: int
    result: RememberResult | None = None
    error: EngramError | None = None


@dataclass(frozen=True)
class _Checked:
    """What validation settled about a command before any read."""

    tags: list[str]
    visibility: str
    source_type: str


@dataclass
class _Slot:
    """What the singleton slot of the new memory says: the items it replaces, or the holder it contests."""

    targets: list[MemoryItem]
    rival: MemoryItem | None = None  # a holder it may not replace: the new memory is a proposal in conflict with it


class IngestService:
    def __init__(
        self, pool: asyncpg.Pool, settings: Settings, llm: JsonChat | None = None, backlog: Backlog | None = None
    ) -> None:
        self._pool = pool
        self._settings = settings
        self._llm = llm
        self._backlog = backlog
        self._outbox = Outbox(settings.events_subject_prefix)
        self._changes = changes.Changes(self._outbox)
        self._supersedes = PossibleSupersedes(
            settings.possible_supersedes_threshold,
            settings.possible_supersedes_window,
            settings.possible_supersedes_cache_entries,
        )

    async def classify(self, ctx: CallerContext, content: str) -> tuple[Classification, str | None]:
        """What the classifier would say about ``content`` under the tenant's rules; writes nothing."""
        validation.validate_content(content, self._settings.max_content_bytes)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            rules = classify.stored_placement_rules(await identity.config_value(conn, "placement_rules"))
            enabled = await kinds.enabled_kind_names(conn)
        return await classify.classify(content, rules, enabled, self._llm, local=self._settings.classifier_local_model)

    async def remember(self, ctx: CallerContext, cmd: RememberCommand) -> RememberResult:
        """Store one memory; the same canonical content again answers ``deduplicated`` with the first item.
        While the outbox backlog is over its bound, nothing: ``Unavailable`` (``backlog_full``)."""
        result = await self.remember_once(ctx, cmd, None)
        assert isinstance(result, RememberResult)  # no key, nothing to replay
        return result

    async def remember_once(
        self, ctx: CallerContext, cmd: RememberCommand, once: Once[RememberResult] | None
    ) -> RememberResult | Replayed:
        """``remember`` under an idempotency key: the stored answer of an earlier request with the same key, or
        the write with its answer stored in the same transaction."""
        checked = self._validate(ctx, cmd)
        self.admit()
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            replayed = await idempotency.claim(conn, ctx, once, self._settings.idempotency_ttl_hours)
            if replayed is not None:
                return replayed
            result = await self._remember(conn, ctx, cmd, checked)
            await idempotency.keep(conn, ctx, once, result)
        return result

    def admit(self) -> None:
        """Refuse a new memory (``Unavailable``, ``backlog_full``) while the outbox backlog is over its bound."""
        if self._backlog is not None:
            self._backlog.admit()

    async def remember_batch(
        self, ctx: CallerContext, commands: list[tuple[int, RememberCommand]], once: Once[list[BatchOutcome]] | None
    ) -> list[BatchOutcome] | Replayed:
        """Up to ``MAX_BATCH`` memories in one transaction, each in its own savepoint: a memory that breaks a
        rule is reported with its error and rolled back alone; every other one is stored. An error no memory
        causes (the database lost, a bug) fails the whole batch."""
        if len(commands) > MAX_BATCH:
            raise ValidationFailed(f"a batch holds at most {MAX_BATCH} memories", field="items")
        self.admit()
        outcomes: list[BatchOutcome] = []
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            replayed = await idempotency.claim(conn, ctx, once, self._settings.idempotency_ttl_hours)
            if replayed is not None:
                return replayed
            for index, cmd in commands:
                try:
                    checked = self._validate(ctx, cmd)
                    async with savepoint(conn):  # a savepoint: a refused memory leaves the others
                        outcomes.append(BatchOutcome(index, await self._remember(conn, ctx, cmd, checked)))
                except (ValidationFailed, NotFound, PermissionDenied, Conflict) as exc:
                    outcomes.append(BatchOutcome(index, error=exc))
            await idempotency.keep(conn, ctx, once, outcomes)
        return outcomes

    async def _remember(
        self, conn: asyncpg.Connection, ctx: CallerContext, cmd: RememberCommand, checked: _Checked
    ) -> RememberResult:
        """One memory, inside the caller's transaction."""
        content, redacted = await checks.guard_secrets(conn, cmd.content)
        digest = content_hash(content)
        kind, context = await checks.load_context(
            conn, ctx, cmd.kind or DEFAULT_KIND, cmd.workspace_id or None, self._supersedes.window
        )
        targets = [await checks.live_target(conn, ctx, target_id) for target_id in cmd.supersedes]
        if targets and not cmd.workspace_id:  # the replacement goes where the first item it replaces is
            workspace_id = await checks.resolve_workspace(conn, ctx, str(targets[0].workspace_id))
        else:
            workspace_id = checks.writable_workspace(context)
        authority = checks.context_authority(ctx, context, checked.source_type)
        slot = _Slot(targets)
        if kind.singleton and cmd.subject and not targets:
            holder = await items.live_singleton(conn, workspace_id, cmd.subject, kind.name, ctx.principal_id)
            if holder is not None and holder.content_hash == digest:
                return _deduplicated(holder)
            slot = _singleton_slot(holder, authority, kind)
        await checks.check_may_supersede(conn, ctx, cmd.supersedes, kind, slot.targets, authority)
        now = context.now
        new = self._new_item(
            ctx,
            cmd,
            checked,
            content=content,
            digest=digest,
            kind=kind,
            workspace_id=workspace_id,
            authority=authority,
            now=now,
            ttl_overrides=context.ttl_days,
            proposed=kind.requires_review or slot.rival is not None,
        )
        replaced = [str(t.id) for t in slot.targets]
        searching = SplitStage("possible_supersedes", REMEMBER_STAGE, "remember")  # before and after the insert
        with searching.part():
            scoring = await self._supersedes.prepare(
                conn, context.window, str(new.id), new.content, new.kind, ctx.principal_id, replaced
            )
        inserted = await self._insert(
            conn, ctx, new, now, redacted, superseding=bool(slot.targets), among=scoring.among
        )
        if isinstance(inserted, RememberResult):
            return inserted
        stored, first = inserted
        await self._apply_slot(conn, ctx, stored, slot)
        with searching.part():
            similar = await self._supersedes.finish(conn, scoring, first)
        searching.observe()
        status = "superseded" if slot.targets else "created"
        REMEMBERED.labels(status).inc()
        return RememberResult(status, stored, replaced, similar)

    async def store_new(
        self, conn: asyncpg.Connection, ctx: CallerContext, new: items.NewItem, now: datetime, redacted: list[str]
    ) -> MemoryItem | RememberResult:
        """Insert a new item with its audit row, pending stages and ``memory.created`` (for writes other than
        ``remember`` that store a memory, such as ``observe``), or the live duplicate (``deduplicated``)."""
        inserted = await self._insert(conn, ctx, new, now, redacted, superseding=False)
        return inserted if isinstance(inserted, RememberResult) else inserted[0]

    def _validate(self, ctx: CallerContext, cmd: RememberCommand) -> _Checked:
        """Every check that needs no read; returns what it settled."""
        validation.validate_content(cmd.content, self._settings.max_content_bytes)
        validation.validate_importance(cmd.importance)
        tags = validation.validate_tags(cmd.tags)
        visibility = cmd.visibility or "workspace"
        validation.validate_visibility(visibility)
        keys.require_publish(ctx.scopes, visibility)
        source_type = cmd.source_type or default_source_type(ctx.principal_type)
        validation.validate_source_type(source_type)
        for name in ("subject", "wing", "room", "external_id", "source_session"):
            validation.validate_label(getattr(cmd, name), name)
        if cmd.pinned and not may_pin(ctx.principal_type, ctx.scopes):
            raise PermissionDenied(
                "an agent pins memories only with the review scope: a pinned memory enters every startup recall",
                field="pinned",
                code="pin_not_allowed",
            )
        validation.validate_source_uri(cmd.source_uri or "", self._settings.max_source_uri_length)
        validation.validate_metadata(
            cmd.metadata or {}, self._settings.max_metadata_bytes, self._settings.max_metadata_depth
        )
        validation.validate_validity(cmd.valid_from, cmd.valid_to)
        if cmd.workspace_id:
            validation.require_uuid(cmd.workspace_id, "workspace_id")
        if len(cmd.supersedes) > MAX_SUPERSEDES or len(set(cmd.supersedes)) != len(cmd.supersedes):
            raise ValidationFailed(f"supersedes takes up to {MAX_SUPERSEDES} distinct ids", field="supersedes")
        for target_id in cmd.supersedes:
            validation.require_uuid(target_id, "supersedes")
        return _Checked(tags, visibility, source_type)

    def _new_item(
        self,
        ctx: CallerContext,
        cmd: RememberCommand,
        checked: _Checked,
        *,
        content: str,
        digest: bytes,
        kind: MemoryKind,
        workspace_id: str,
        authority: Authority,
        now: datetime,
        ttl_overrides: Any,
        proposed: bool,
    ) -> items.NewItem:
        """The row to insert: the command's fields with the kind's defaults and the time to live applied."""
        importance = cmd.importance if cmd.importance is not None else kind.default_importance
        expires_at = ttl.expiry(
            kind=kind.name,
            importance=importance,
            pinned=cmd.pinned,
            tags=checked.tags,
            requested=cmd.expires_at,
            now=now,
            overrides=ttl_overrides,
        )
        return items.NewItem(
            id=uuid.uuid4(),
            tenant_id=ctx.tenant_id,
            workspace_id=workspace_id,
            principal_id=ctx.principal_id,
            content=content,
            content_hash=digest,
            kind=kind.name,
            importance=importance,
            review_status="proposed" if proposed else "active",
            authority=int(authority),
            source_type=checked.source_type,
            source_trust=source_trust(authority),
            subject=cmd.subject or None,
            wing=cmd.wing or None,
            room=cmd.room or None,
            tags=checked.tags,
            pinned=cmd.pinned,
            visibility=checked.visibility,
            source_uri=cmd.source_uri or None,
            source_session=cmd.source_session or None,
            valid_from=cmd.valid_from,
            valid_to=cmd.valid_to,
            kind_explicit=bool(cmd.kind),
            index_context=index_context(cmd.subject, cmd.valid_from),
            expires_at=expires_at,
            external_id=cmd.external_id or None,
            metadata=cmd.metadata,
        )

    async def _insert(
        self,
        conn: asyncpg.Connection,
        ctx: CallerContext,
        new: items.NewItem,
        now: datetime,
        redacted: list[str],
        *,
        superseding: bool,
        among: items.Among | None = None,
    ) -> tuple[MemoryItem, list[items.Similar]] | RememberResult:
        """Insert the item with its audit row, pending stages and ``memory.created`` (one statement, which also
        answers ``among``, possible_supersedes' first candidates), or answer ``deduplicated`` with the live item
        holding the same content. A duplicate whose time is up but that the sweep has not reached goes to the
        trash first, and the new one is stored."""
        with timed("insert", REMEMBER_STAGE, "remember"):
            stored, similar = await self._insert_created(conn, ctx, new, now, redacted, among)
        if stored is not None:
            return stored, similar
        existing = await items.find_live_duplicate(conn, new.workspace_id, ctx.principal_id, new.content_hash)
        if existing is not None and existing.expires_at is not None and existing.expires_at <= now:
            await discard(
                conn,
                self._outbox,
                existing,
                reason="expired",
                actor_id=None,
                request_id=ctx.request_id,
                traceparent=ctx.traceparent,
                why="time to live ended",
            )
            stored, similar = await self._insert_created(conn, ctx, new, now, redacted, among)
            if stored is not None:
                return stored, similar
            existing = None
        if existing is not None and superseding:
            raise Conflict(
                f"this content is already live as {existing.id}; nothing to supersede with",
                field="content",
                code="duplicate_live_item",
            )
        if existing is not None:
            return _deduplicated(existing)
        raise Conflict("a concurrent write of the same content changed its state; retry", code="concurrent_write")

    async def _insert_created(
        self,
        conn: asyncpg.Connection,
        ctx: CallerContext,
        new: items.NewItem,
        now: datetime,
        redacted: list[str],
        among: items.Among | None,
    ) -> tuple[MemoryItem | None, list[items.Similar]]:
        """The item, its ``created`` audit row, its pending pipeline stages and ``memory.created`` on the outbox,
        in one statement, with ``among``'s answer; None (nothing written) when a live item holds the same content.
        ``now`` is the transaction's ``now()``, the item's ``created_at``."""
        event = created_event(new, now, ctx.traceparent)
        return await creation.insert_scoring(
            conn,
            new,
            actor_id=ctx.principal_id,
            audit_value={
                "review_status": new.review_status,
                "kind": new.kind,
                **({"redacted_secrets": redacted} if redacted else {}),
                "authority": new.authority,
                "visibility": new.visibility,
            },
            request_id=ctx.request_id,
            stages=[
                stage
                for stage in PipelineStage
                if stage is not PipelineStage.PROMOTION or new.review_status == ReviewStatus.PROPOSED
            ],
            event_id=event.id,
            subject=self._outbox.subject(event),
            envelope=event.to_json(),
            among=among,
        )

    async def _apply_slot(self, conn: asyncpg.Connection, ctx: CallerContext, stored: MemoryItem, slot: _Slot) -> None:
        """The new memory replaces its targets, or, below a singleton holder's authority, opens a conflict with it."""
        actor = changes.Actor(ctx.tenant_id, ctx.principal_id, request_id=ctx.request_id, traceparent=ctx.traceparent)
        for target in slot.targets:
            await self._changes.supersede(conn, actor, target, stored)
        if slot.rival is not None:  # lower authority: a proposal with an open conflict, never a swap
            await self._changes.open_conflict(
                conn,
                actor,
                slot.rival,
                stored,
                "contradiction",
                "singleton",
                rule="singleton",
                explanation=f"both claim the {stored.kind} slot for {stored.subject!r}",
            )


def created_event(item: items.NewItem, created_at: datetime, traceparent: str) -> Event:
    """``memory.created``: ids and metadata only, never the content."""
    return Event(
        type=EventType.MEMORY_CREATED.cloud_type,
        tenant_id=str(item.tenant_id),
        subject=str(item.id),
        traceparent=traceparent,
        data={
            "item_id": str(item.id),
            "workspace_id": str(item.workspace_id),
            "principal_id": str(item.principal_id),
            "kind": item.kind,
            "review_status": item.review_status,
            "authority": item.authority,
            "visibility": item.visibility,
            "content_hash": item.content_hash.hex(),
            "created_at": created_at.isoformat(),
        },
    )


def _deduplicated(existing: MemoryItem) -> RememberResult:
    REMEMBERED.labels("deduplicated").inc()
    return RememberResult("deduplicated", existing)


def _singleton_slot(holder: MemoryItem | None, authority: Authority, kind: MemoryKind) -> _Slot:
    """One live item per (workspace, subject, kind): at or above the holder's authority (and with no review
    needed) the new one replaces it; below, it becomes a proposal in conflict with it."""
    if holder is not None and int(authority) >= holder.authority and not kind.requires_review:
        return _Slot([holder])
    return _Slot([], rival=holder)
