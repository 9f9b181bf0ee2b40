"""A new memory and the rows it brings with it, written in one statement: the item, its ``created`` audit row,
its pending pipeline stages and its ``memory.created`` outbox row (the relay is woken when the transaction
commits). Row by row they are ``items.insert``, ``audit.record``, ``stages.record`` and ``outbox.add``."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from engram.db.items import INSERT_ITEM, LIVE, NewItem, insert_args, row_to_item
from engram.db.outbox import NOTIFY_CHANNEL
from engram.domain.models import MemoryItem


async def insert(
    conn: asyncpg.Connection,
    item: NewItem,
    *,
    actor_id: str | None,
    audit_value: dict[str, Any],
    request_id: str | None,
    stages: list[str],
    event_id: str,
    subject: str,
    envelope: dict[str, Any],
) -> MemoryItem | None:
    """The new item with its audit row, pending stages and
    outbox row, or nothing at all (None) when a live item holds the same content. The envelope is built before
    the insert, so its ``created_at`` must be the transaction's ``now()``, the item's default."""
    row = await _insert(conn, item, actor_id, audit_value, request_id, stages, event_id, subject, envelope, None)
    return row_to_item(row) if row else None


async def insert_seeing_window(
    conn: asyncpg.Connection,
    item: NewItem,
    *,
    window: int,
    actor_id: str | None,
    audit_value: dict[str, Any],
    request_id: str | None,
    stages: list[str],
    event_id: str,
    subject: str,
    envelope: dict[str, Any],
) -> tuple[MemoryItem, bytes] | None:
    """``insert``, and in the same statement (no round trip of its own) ``items.live_window(conn, item.kind,
    window)`` as it stands once the item is written, less the item itself: the ids (16 bytes each, newest first)
    of the ``window`` most recent live items of its tenant and kind, the new one counted. The statement's
    snapshot does not hold the row it inserts, so it reads the ``window`` most recent others and leaves out the
    oldest when the new item (created at the transaction's ``now()``) is newer than it; an older item that
    shares the oldest one's ``created_at`` is as likely as the new one to be left out of the window, as in
    ``live_window``. None when a live item holds the same content."""
    row = await _insert(conn, item, actor_id, audit_value, request_id, stages, event_id, subject, envelope, window)
    if row is None:
        return None
    stored = row_to_item(row)
    ids = bytes(row["window_ids"])
    if len(ids) == 16 * window and row["window_oldest"] < stored.created_at:
        ids = ids[:-16]  # the new item is in the window: the oldest other leaves it
    return stored, ids


async def _insert(
    conn: asyncpg.Connection,
    item: NewItem,
    actor_id: str | None,
    audit_value: dict[str, Any],
    request_id: str | None,
    stages: list[str],
    event_id: str,
    subject: str,
    envelope: dict[str, Any],
    window: int | None,
) -> asyncpg.Record | None:
    seeing = (
        f""", w.ids AS window_ids, w.oldest AS window_oldest FROM stored s, LATERAL (
                SELECT coalesce(string_agg(uuid_send(r.id), ''::bytea ORDER BY r.created_at DESC), ''::bytea) AS ids,
                       min(r.created_at) AS oldest
                FROM (SELECT id, created_at FROM memory_items
                      WHERE tenant_id = engram_current_tenant() AND kind = s.kind AND {LIVE}
                      ORDER BY created_at DESC LIMIT $36) r) w"""
        if window is not None
        else " FROM stored s"
    )
    return await conn.fetchrow(
        f"""WITH stored AS ({INSERT_ITEM}),
            audit AS (
                INSERT INTO item_events (tenant_id, item_id, actor_id, action, new_value, request_id)
                SELECT s.tenant_id, s.id, $28::uuid, 'created', $29::jsonb, $30::text FROM stored s),
            pending AS (
                INSERT INTO item_stages (tenant_id, item_id, stage, status, detail)
                SELECT s.tenant_id, s.id, stage, 'pending', '' FROM stored s, unnest($31::text[]) AS stage
                ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                           updated_at = now()),
            queued AS (
                INSERT INTO outbox (tenant_id, event_id, subject, envelope)
                SELECT s.tenant_id, $32::uuid, $33::text, $34::jsonb FROM stored s)
           SELECT s.*, pg_notify($35, ''){seeing}""",
        *insert_args(item),
        actor_id,
        json.dumps(audit_value),
        request_id or None,
        stages,
        event_id,
        subject,
        json.dumps(envelope),
        NOTIFY_CHANNEL,
        *([window] if window is not None else []),
    )
