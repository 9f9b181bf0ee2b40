"""Observe: the cheap capture path for hooks that record every turn. An observation is stored as kind
``observation``, ``active`` at once (no review or classification gate), with no singleton slot and no
possible-supersedes search, and expires after ``ENGRAM_OBSERVE_TTL_HOURS`` unless the caller says otherwise.
Keyword search finds it as soon as the write commits; the embedder picks it up from ``memory.created``.

What the pipeline does with observations: the embedder embeds them; the classifier records retention,
sensitivity and confidences and may narrow the visibility or fill wing and room, but never changes the kind
(the kind is explicit); the conflicts consumer compares no episodic memory (observation, diary entry), so an
observation opens no conflict and is never superseded by it; promotion has nothing to decide (it is active)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from engram.config import Settings
from engram.db.items import NewItem
from engram.db.pool import tenant_tx
from engram.domain import ttl, validation
from engram.domain.authority import default_source_type, source_trust
from engram.domain.content import content_hash, index_context
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import ReviewStatus, Visibility
from services.ingest import checks, idempotency
from services.ingest.idempotency import Once, Replayed
from services.ingest.service import IngestService, RememberResult

KIND = "observation"


@dataclass
class ObserveCommand:
    content: str
    source_session: str = ""
    workspace_id: str = ""
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    source_uri: str = ""
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Observed:
    status: str  # created | deduplicated
    item: MemoryItem


class ObserveService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, ingest: IngestService) -> None:
        self._pool = pool
        self._settings = settings
        self._ingest = ingest

    async def observe(
        self, ctx: CallerContext, cmd: ObserveCommand, once: Once[Observed] | None
    ) -> Observed | Replayed:
        validation.validate_content(cmd.content, self._settings.max_content_bytes)
        tags = validation.validate_tags(cmd.tags)
        validation.validate_label(cmd.source_session, "source_session")
        validation.validate_source_uri(cmd.source_uri or "", self._settings.max_source_uri_length)
        validation.validate_metadata(cmd.metadata, self._settings.max_metadata_bytes, self._settings.max_metadata_depth)
        if cmd.workspace_id:
            validation.require_uuid(cmd.workspace_id, "workspace_id")
        source_type = default_source_type(ctx.principal_type)
        self._ingest.admit()
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            replayed = await idempotency.claim(conn, ctx, once, self._settings.idempotency_ttl_hours)
            if replayed is not None:
                return replayed
            content, redacted = await checks.guard_secrets(conn, cmd.content)
            kind, context = await checks.load_context(conn, ctx, KIND, cmd.workspace_id or None)
            workspace_id = checks.writable_workspace(context)
            authority = checks.context_authority(ctx, context, source_type)
            now = context.now
            new = NewItem(
                id=uuid.uuid4(),
                tenant_id=ctx.tenant_id,
                workspace_id=workspace_id,
                principal_id=ctx.principal_id,
                content=content,
                content_hash=content_hash(content),
                kind=kind.name,
                importance=kind.default_importance,
                review_status=ReviewStatus.ACTIVE,
                authority=int(authority),
                source_type=source_type,
                source_trust=source_trust(authority),
                subject=None,
                wing=None,
                room=None,
                tags=tags,
                pinned=False,
                visibility=Visibility.WORKSPACE,
                source_uri=cmd.source_uri or None,
                source_session=cmd.source_session or None,
                valid_from=None,
                valid_to=None,
                expires_at=ttl.observation_expiry(
                    tags=tags, requested=cmd.expires_at, now=now, hours=self._settings.observe_ttl_hours
                ),
                external_id=None,
                metadata=cmd.metadata,
                kind_explicit=True,  # the classifier keeps the kind
                index_context=index_context(None, None),
            )
            stored = await self._ingest.store_new(conn, ctx, new, now, redacted)
            result = (
                Observed(stored.status, stored.item)
                if isinstance(stored, RememberResult)
                else Observed("created", stored)
            )
            await idempotency.keep(conn, ctx, once, result)
        return result
