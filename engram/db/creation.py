"""A new memory and the rows it brings with it, written in one statement: the item, its ``created`` audit row,
its pending pipeline stages and its ``memory.created`` outbox row (the relay is woken when the transaction
commits). Row by row they are ``items.insert``, ``audit.record``, ``stages.record`` and ``outbox.add``. The
same statement can also score possible_supersedes' first candidates (``items.similar_among``), which saves
the remember a round trip."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from engram.db.items import INSERT_ITEM, Among, NewItem, Similar, among_sql, insert_args, row_to_item, similar_rows
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
    stored, _ = await insert_scoring(
        conn,
        item,
        actor_id=actor_id,
        audit_value=audit_value,
        request_id=request_id,
        stages=stages,
        event_id=event_id,
        subject=subject,
        envelope=envelope,
        among=None,
    )
    return stored


async def insert_scoring(
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
    among: Among | None,
) -> tuple[MemoryItem | None, list[Similar]]:
    """``insert``, and in the same statement ``items.similar_among(among)`` when ``among`` names candidates: its
    answer (the statement's snapshot does not hold the new item; ``among`` leaves it out all the same). Nothing
    is scored when nothing is written."""
    scoring = among is not None and bool(among.ids)
    scored = (
        f""",
            scored AS ({among_sql(36)})
           SELECT s.*, pg_notify($35, ''), a.similar_ids, a.similar_contents, a.similar_scores
           FROM stored s, LATERAL (SELECT array_agg(x.id ORDER BY x.s DESC, x.id) AS similar_ids,
                                          array_agg(x.content ORDER BY x.s DESC, x.id) AS similar_contents,
                                          array_agg(x.s ORDER BY x.s DESC, x.id) AS similar_scores
                                   FROM scored x) a"""
        if scoring
        else """
           SELECT s.*, pg_notify($35, '') FROM stored s"""
    )
    row = await conn.fetchrow(
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
                SELECT s.tenant_id, $32::uuid, $33::text, $34::jsonb FROM stored s){scored}""",
        *insert_args(item),
        actor_id,
        json.dumps(audit_value),
        request_id or None,
        stages,
        event_id,
        subject,
        json.dumps(envelope),
        NOTIFY_CHANNEL,
        *(among.args() if scoring and among is not None else []),
    )
    if not row:
        return None, []
    similar = similar_rows(row["similar_ids"], row["similar_contents"], row["similar_scores"]) if scoring else []
    return row_to_item(row), similar
