"""The checks a write passes before anything is stored: the kind is enabled, the caller may write into the
workspace, the authority the write carries, which items it may supersede, and no credentials in the content."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from engram.db import identity, items, kinds, write_context
from engram.db.write_context import WriteContext
from engram.domain import lifecycle, secrets
from engram.domain.authority import Authority, derive_authority
from engram.domain.models import CallerContext, MemoryItem, MemoryKind
from engram.domain.values import WRITING_ROLES, SecretPolicy
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed


async def load_context(
    conn: asyncpg.Connection, ctx: CallerContext, kind: str, workspace_id: str | None, window: int = 0
) -> tuple[MemoryKind, WriteContext]:
    """What the write reads before it stores (one query: ``engram.db.write_context``, with the ``window`` most
    recent live items of the kind), with its kind checked: the named kind, which must be enabled for the tenant.
    The workspace is checked by ``writable_workspace``."""
    context = await write_context.load(conn, kind, workspace_id, ctx.principal_id, window)
    if context.kind is None or not context.kind.enabled:
        known = ", ".join(await kinds.enabled_kind_names(conn))
        raise ValidationFailed(f"unknown or disabled kind {kind!r}; known kinds: {known}", field="kind")
    return context.kind, context


def writable_workspace(context: WriteContext) -> str:
    """The workspace of the context (the requested one, else the tenant's default), where the caller may write."""
    return _writable(context.workspace_id, context.role)


async def resolve_workspace(conn: asyncpg.Connection, ctx: CallerContext, requested: str | None) -> str:
    """The workspace to write into (the requested one, else the tenant's default), where the caller may write."""
    workspace_id = requested or await items.default_workspace(conn)
    role = await items.workspace_role(conn, workspace_id, ctx.principal_id) if workspace_id else None
    return _writable(workspace_id, role)


def _writable(workspace_id: str | None, role: str | None) -> str:
    if workspace_id is None or role is None:  # missing and not-a-member look the same
        raise NotFound("no such workspace", field="workspace_id")
    if role not in WRITING_ROLES:
        raise PermissionDenied(
            f"a {role} cannot write into this workspace", field="workspace_id", code="workspace_read_only"
        )
    return workspace_id


def context_authority(ctx: CallerContext, context: WriteContext, source_type: str) -> Authority:
    """The authority the write carries: its source, the principal's type, and whether the principal is trusted."""
    return derive_authority(source_type, ctx.principal_type, trusted=context.trusted)


async def check_may_supersede(
    conn: asyncpg.Connection,
    ctx: CallerContext,
    supersedes: list[str],
    kind: MemoryKind,
    targets: list[MemoryItem],
    authority: Authority,
) -> None:
    """A proposal replaces nothing; each target needs a writing role in its workspace and no more authority
    than the write carries."""
    if supersedes and kind.requires_review:
        raise Conflict(
            f"a {kind.name} starts as a proposal and cannot replace anything before review",
            field="supersedes",
            code="proposal_cannot_supersede",
        )
    for target in targets:
        target_role = await items.workspace_role(conn, str(target.workspace_id), ctx.principal_id)
        if target_role not in WRITING_ROLES:
            raise PermissionDenied(
                f"superseding {target.id} needs a writing role in its workspace",
                field="supersedes",
                code="workspace_read_only",
            )
        if int(authority) < target.authority:
            raise PermissionDenied(
                f"authority {int(authority)} cannot supersede {target.id} (authority {target.authority}); "
                "propose the change for review instead",
                field="supersedes",
                code="authority_too_low",
            )


async def guard_secrets(conn: asyncpg.Connection, content: str) -> tuple[str, list[str]]:
    """Refuse content holding credentials (422 naming the kind of secret), or redact them when the tenant's
    ``secret_policy`` is ``redact``; returns the content to store and the kinds redacted."""
    findings = secrets.find_secrets(content)
    if not findings:
        return content, []
    if await identity.config_value(conn, "secret_policy") == SecretPolicy.REDACT:
        return secrets.redact(content, findings), sorted({f.kind for f in findings})
    raise ValidationFailed(secrets.refusal_message(findings), field="content", code="secret_detected")


async def live_target(conn: asyncpg.Connection, ctx: CallerContext, item_id: str) -> MemoryItem:
    """An item to supersede: visible to the caller (else 404) and still live (else 409), locked."""
    item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
    if item is None:
        raise NotFound(f"no item {item_id}", field="supersedes")
    state = lifecycle.not_live(item, datetime.now(UTC))
    if state is not None:
        raise Conflict(
            f"item {item_id} is {state}; only live items can be superseded", field="supersedes", code="not_live"
        )
    return item
