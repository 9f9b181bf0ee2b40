"""Recall telemetry: the log of what was served, and the per-item counters recall keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class Served:
    tenant_id: str
    recall_id: str
    principal_id: str
    mode: str
    scoring_version: str
    item_ids: list[str]
    scores: list[float]
    omitted: int
    at: datetime


async def record(conn: asyncpg.Connection, served: list[Served]) -> None:
    """Log each recall of one tenant and count it on the items it served (recall_count, last_recalled_at, and
    the recalls since the last useful verdict that the startup penalty reads)."""
    await conn.executemany(
        "INSERT INTO recall_logs (tenant_id, id, principal_id, mode, scoring_version, item_ids, scores, omitted, "
        "created_at) VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7::real[], $8, $9) ON CONFLICT (id) DO NOTHING",
        [
            (s.tenant_id, s.recall_id, s.principal_id, s.mode, s.scoring_version, s.item_ids, s.scores, s.omitted, s.at)
            for s in served
        ],
    )
    counts: dict[str, int] = {}
    last: dict[str, datetime] = {}
    for s in served:
        for item_id in s.item_ids:
            counts[item_id] = counts.get(item_id, 0) + 1
            last[item_id] = max(last.get(item_id, s.at), s.at)
    if counts:
        await conn.execute(
            """UPDATE memory_items i SET recall_count = i.recall_count + c.n,
                   recalls_since_useful = i.recalls_since_useful + c.n,
                   last_recalled_at = greatest(i.last_recalled_at, c.at)
               FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) AS c(id, n, at)
               WHERE i.id = c.id AND i.tenant_id = engram_current_tenant()""",
            list(counts),
            list(counts.values()),
            [last[i] for i in counts],
        )


async def prune(conn: asyncpg.Connection, older_than_days: int, batch: int) -> int:
    """Delete at most ``batch`` of the tenant's recall log rows older than ``older_than_days``, oldest first;
    rows another sweep holds are skipped. Returns how many went."""
    status = await conn.execute(
        """WITH old AS (SELECT id FROM recall_logs WHERE created_at < now() - make_interval(days => $1)
                        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           DELETE FROM recall_logs r USING old WHERE r.id = old.id""",
        older_than_days,
        batch,
    )
    return int(status.split()[-1])
