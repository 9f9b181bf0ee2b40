"""Ingest logic: validation, authority, dedup, and item + audit + outbox in one transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg

from engram.config import Settings
from engram.db import identity, items, kinds, outbox
from engram.db.pool import tenant_tx
from engram.domain import lifecycle, secrets, ttl, validation
from engram.domain.authority import default_source_type, derive_authority, source_trust
from engram.domain.classification import Classification, parse_placement_rules
from engram.domain.content import content_hash, index_context
from engram.domain.models import CallerContext, MemoryItem
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from engram.events.envelope import Event
from engram.llm import JsonChat
from engram.pipeline import changes, classify
from engram.telemetry.metrics import REMEMBER_STAGE, REMEMBERED, timed
from services.ingest.trash import discard

DEFAULT_KIND = "fact"
WRITING_ROLES = ("owner", "admin", "member")
MAX_SUPERSEDES = 20


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


class IngestService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, llm: JsonChat | None = None) -> None:
        self._pool = pool
        self._settings = settings
        self._llm = llm

    async def classify(self, ctx: CallerContext, content: str) -> tuple[Classification, str | None]:
        """What the classifier would say about ``content`` under the tenant's rules; writes nothing."""
        validation.validate_content(content, self._settings.max_content_bytes)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            rules = parse_placement_rules(await identity.config_value(conn, "placement_rules"))
            enabled = await kinds.enabled_kind_names(conn)
        return await classify.classify(content, rules, enabled, self._llm)

    async def remember(self, ctx: CallerContext, cmd: RememberCommand) -> RememberResult:
        """Store one memory; the same canonical content again answers ``deduplicated`` with the first item."""
        validation.validate_content(cmd.content, self._settings.max_content_bytes)
        validation.validate_importance(cmd.importance)
        tags = validation.validate_tags(cmd.tags)
        visibility = cmd.visibility or "workspace"
        validation.validate_visibility(visibility)
        source_type = cmd.source_type or default_source_type(ctx.principal_type)
        validation.validate_source_type(source_type)
        for name in ("subject", "wing", "room", "external_id", "source_session"):
            validation.validate_label(getattr(cmd, name), name)
        validation.validate_validity(cmd.valid_from, cmd.valid_to)
        if cmd.workspace_id:
            validation.require_uuid(cmd.workspace_id, "workspace_id")
        if len(cmd.supersedes) > MAX_SUPERSEDES or len(set(cmd.supersedes)) != len(cmd.supersedes):
            raise ValidationFailed(f"supersedes takes up to {MAX_SUPERSEDES} distinct ids", field="supersedes")
        for target_id in cmd.supersedes:
            validation.require_uuid(target_id, "supersedes")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            content, redacted = await _guard_secrets(conn, cmd.content)
            digest = content_hash(content)
            kind_name = cmd.kind or DEFAULT_KIND
            kind = await kinds.get_kind(conn, kind_name)
            if kind is None or not kind.enabled:
                known = ", ".join(await kinds.enabled_kind_names(conn))
                raise ValidationFailed(f"unknown or disabled kind {kind_name!r}; known kinds: {known}", field="kind")
            targets = [await _live_target(conn, ctx, target_id) for target_id in cmd.supersedes]
            workspace_id = (cmd.workspace_id or (str(targets[0].workspace_id) if targets else None)
                            or await items.default_workspace(conn))
            role = await items.workspace_role(conn, workspace_id, ctx.principal_id) if workspace_id else None
            if workspace_id is None or role is None:  # missing and not-a-member look the same
                raise NotFound("no such workspace", field="workspace_id")
            if role not in WRITING_ROLES:
                raise PermissionDenied(f"a {role} cannot write into this workspace", field="workspace_id",
                                       code="workspace_read_only")
            trusted = bool(await conn.fetchval("SELECT trusted FROM principals WHERE id = $1", ctx.principal_id))
            authority = derive_authority(source_type, ctx.principal_type, trusted=trusted)
            singleton_rival = None
            if kind.singleton and cmd.subject and not targets:
                current = await items.live_singleton(conn, workspace_id, cmd.subject, kind.name, ctx.principal_id)
                if current is not None and current.content_hash == digest:
                    REMEMBERED.labels("deduplicated").inc()
                    return RememberResult("deduplicated", current)
                if current is not None and int(authority) >= current.authority and not kind.requires_review:
                    targets = [current]  # one live item per (workspace, subject, kind): the new one replaces it
                elif current is not None:
                    singleton_rival = current  # lower authority: a proposal with an open conflict, never a swap
            if cmd.supersedes and kind.requires_review:
                raise Conflict(f"a {kind.name} starts as a proposal and cannot replace anything before review",
                               field="supersedes", code="proposal_cannot_supersede")
            for target in targets:
                target_role = await items.workspace_role(conn, str(target.workspace_id), ctx.principal_id)
                if target_role not in WRITING_ROLES:
                    raise PermissionDenied(f"superseding {target.id} needs a writing role in its workspace",
                                           field="supersedes", code="workspace_read_only")
                if int(authority) < target.authority:
                    raise PermissionDenied(
                        f"authority {int(authority)} cannot supersede {target.id} (authority {target.authority}); "
                        "propose the change for review instead", field="supersedes", code="authority_too_low")
            importance = cmd.importance if cmd.importance is not None else kind.default_importance
            now = await conn.fetchval("SELECT now()")
            expires_at = ttl.expiry(kind=kind.name, importance=importance, pinned=cmd.pinned, tags=tags,
                                    requested=cmd.expires_at, now=now,
                                    overrides=await identity.config_value(conn, "ttl_days"))
            new = items.NewItem(
                id=uuid.uuid4(), tenant_id=ctx.tenant_id, workspace_id=workspace_id, principal_id=ctx.principal_id,
                content=content, content_hash=digest, kind=kind.name,
                importance=importance,
                review_status="proposed" if kind.requires_review or singleton_rival else "active",
                authority=int(authority),
                source_type=source_type, source_trust=source_trust(authority), subject=cmd.subject or None,
                wing=cmd.wing or None, room=cmd.room or None, tags=tags, pinned=cmd.pinned,
                visibility=visibility, source_uri=cmd.source_uri or None,
                source_session=cmd.source_session or None, valid_from=cmd.valid_from, valid_to=cmd.valid_to,
                kind_explicit=bool(cmd.kind), index_context=index_context(cmd.subject, cmd.valid_from),
                expires_at=expires_at, external_id=cmd.external_id or None,
                metadata=cmd.metadata,
            )
            with timed("insert", REMEMBER_STAGE):
                stored = await items.insert(conn, new)
            if stored is None:
                existing = await items.find_live_duplicate(conn, workspace_id, ctx.principal_id, digest)
                if existing is not None and existing.expires_at is not None and existing.expires_at <= now:
                    # its time is up but the sweep has not been by: it goes to the trash now, and this is new
                    await discard(conn, self._settings, existing, reason="expired", actor_id=None,
                                  request_id=ctx.request_id, traceparent=ctx.traceparent, why="time to live ended")
                    stored = await items.insert(conn, new)
                    existing = None
            if stored is None:
                if existing is not None and targets:
                    raise Conflict(f"this content is already live as {existing.id}; nothing to supersede with",
                                   field="content", code="duplicate_live_item")
                if existing is not None:
                    REMEMBERED.labels("deduplicated").inc()
                    return RememberResult("deduplicated", existing)
                raise Conflict("a concurrent write of the same content changed its state; retry",
                               code="concurrent_write")
            await items.add_event(
                conn, tenant_id=ctx.tenant_id, item_id=stored.id, actor_id=ctx.principal_id, action="created",
                new_value={"review_status": stored.review_status, "kind": stored.kind,
                           **({"redacted_secrets": redacted} if redacted else {}),
                           "authority": stored.authority, "visibility": stored.visibility},
                request_id=ctx.request_id,
            )
            for stage in ("embedding", "classification", "conflict_check") + (
                    ("promotion",) if stored.review_status == "proposed" else ()):
                await items.set_stage(conn, tenant_id=ctx.tenant_id, item_id=stored.id, stage=stage,
                                      status="pending")
            await outbox.add(conn, created_event(stored, ctx.traceparent), self._settings.events_subject_prefix)
            actor = changes.Actor(ctx.tenant_id, ctx.principal_id, request_id=ctx.request_id,
                                  traceparent=ctx.traceparent)
            for target in targets:
                await changes.supersede(conn, self._settings.events_subject_prefix, actor, target, stored)
            if singleton_rival is not None:  # lower authority: a proposal with an open conflict, never a swap
                await changes.open_conflict(conn, self._settings.events_subject_prefix, actor, singleton_rival, stored,
                                            "contradiction", "singleton", rule="singleton",
                                            explanation=f"both claim the {stored.kind} slot for {stored.subject!r}")
            with timed("possible_supersedes", REMEMBER_STAGE):
                similar = await items.similar_live(  # reported, never applied
                    conn, stored.content, stored.kind, ctx.principal_id,
                    [str(stored.id), *(str(t.id) for t in targets)], self._settings.possible_supersedes_threshold)
        status = "superseded" if targets else "created"
        REMEMBERED.labels(status).inc()
        return RememberResult(status, stored, [str(t.id) for t in targets], similar)


def created_event(item: MemoryItem, traceparent: str) -> Event:
    """``memory.created``: ids and metadata only, never the content."""
    return Event(
        type="engram.memory.created", tenant_id=str(item.tenant_id), subject=str(item.id), traceparent=traceparent,
        data={
            "item_id": str(item.id), "workspace_id": str(item.workspace_id), "principal_id": str(item.principal_id),
            "kind": item.kind, "review_status": item.review_status, "authority": item.authority,
            "visibility": item.visibility, "content_hash": item.content_hash.hex(),
            "created_at": item.created_at.isoformat(),
        },
    )


async def _guard_secrets(conn: asyncpg.Connection, content: str) -> tuple[str, list[str]]:
    """Refuse content holding credentials (422 naming the kind of secret), or redact them when the tenant's
    ``secret_policy`` is ``redact``; returns the content to store and the kinds redacted."""
    findings = secrets.find_secrets(content)
    if not findings:
        return content, []
    if await identity.config_value(conn, "secret_policy") == "redact":
        return secrets.redact(content, findings), sorted({f.kind for f in findings})
    raise ValidationFailed(secrets.refusal_message(findings), field="content", code="secret_detected")


async def _live_target(conn: asyncpg.Connection, ctx: CallerContext, item_id: str) -> MemoryItem:
    """An item to supersede: visible to the caller (else 404) and still live (else 409), locked."""
    item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
    if item is None:
        raise NotFound(f"no item {item_id}", field="supersedes")
    expired = item.expires_at is not None and item.expires_at <= datetime.now(UTC)
    if (item.invalidated_at is not None or item.superseded_by is not None
            or item.review_status not in lifecycle.LIVE_STATES or expired):
        state = "invalidated" if item.invalidated_at is not None else "expired" if expired else item.review_status
        raise Conflict(f"item {item_id} is {state}; only live items can be superseded", field="supersedes",
                       code="not_live")
    return item

