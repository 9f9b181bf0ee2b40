"""The remember transaction in-process, A/B. ``--variants statements``: as it was until 2026-12-02 evening (the
item's insert, then one statement for its audit row, pending stages and outbox row) against the one statement
of ``engram.db.creation.insert``, and that once more through PostgreSQL's Unix socket instead of TCP on
127.0.0.1. ``--variants round-trips``: ``BEGIN`` and the tenant setting each in a round trip of its own, as
until 2026-12-02 (night), against ``BEGIN`` with the tenant in one (``engram.db.pool.tenant_tx``). Wall time and this
process's plus the server backend's CPU per remember, alternated in rounds, on its own embedded PostgreSQL (the
development tenant's admin, one connection, one writer, ``possible_supersedes_window`` 1 so that search does
not drown the difference). CPU time, not wall time, is the figure to compare on a loaded machine.

    python bench/remember_statements.py [--writes 500] [--rounds 4] [--variants statements|round-trips]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engram.db import items
from engram.db.outbox import NOTIFY_CHANNEL
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import PipelineStage, ReviewStatus
from services.ingest import service as ingest_service
from services.ingest.service import IngestService, created_event


@asynccontextmanager
async def tenant_tx_apart(pool: Any, tenant_id: str) -> AsyncIterator[Any]:
    """``tenant_tx`` as until the night of 2026-12-02: ``BEGIN``, then the tenant setting, each a round trip."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", str(tenant_id))
        yield conn


class Apart(IngestService):
    """The service as it is, run with ``tenant_tx_apart``."""


class TwoStatements(IngestService):
    """``_insert_created`` as two statements: ``items.insert``, then the audit row, stages and outbox row."""

    async def _insert_created(
        self, conn: Any, ctx: CallerContext, new: items.NewItem, now: datetime, redacted: list[str]
    ) -> MemoryItem | None:
        stored = await items.insert(conn, new)
        if stored is None:
            return None
        event = created_event(new, now, ctx.traceparent)
        await conn.execute(
            """WITH audit AS (
                    INSERT INTO item_events (tenant_id, item_id, actor_id, action, new_value, request_id)
                    VALUES ($1, $2, $3, 'created', $4::jsonb, $5)),
                pending AS (
                    INSERT INTO item_stages (tenant_id, item_id, stage, status, detail)
                    SELECT $1, $2, stage, 'pending', '' FROM unnest($6::text[]) AS stage
                    ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                               updated_at = now()),
                queued AS (
                    INSERT INTO outbox (tenant_id, event_id, subject, envelope) VALUES ($1, $7, $8, $9::jsonb))
               SELECT pg_notify($10, '')""",
            ctx.tenant_id,
            stored.id,
            ctx.principal_id,
            json.dumps({"review_status": new.review_status, "kind": new.kind}),
            ctx.request_id,
            [
                s
                for s in PipelineStage
                if s is not PipelineStage.PROMOTION or new.review_status == ReviewStatus.PROPOSED
            ],
            event.id,
            self._outbox.subject(event),
            json.dumps(event.to_json()),
            NOTIFY_CHANNEL,
        )
        return stored


async def main(args: argparse.Namespace) -> None:
    import psutil

    from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool
    from engram.runtime.postgres import EmbeddedPostgres
    from services.ingest.service import RememberCommand

    home = Path(tempfile.mkdtemp(prefix="remember-statements-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    try:
        url = server.start()
        settings = Settings(database_url=url, possible_supersedes_window=1)
        await migrate(url, settings)
        pool = await create_pool(url, role=settings.app_role, min_size=1, max_size=1)
        # the same server through its Unix socket (in the data directory) instead of TCP on 127.0.0.1
        unix_url = f"postgresql://postgres@/postgres?host={home / 'pgdata'}&port={server.port}"
        unix_pool = await create_pool(unix_url, role=settings.app_role, min_size=1, max_size=1)
        ctx = CallerContext(
            tenant_id=DEFAULT_TENANT_ID,
            principal_id=DEFAULT_ADMIN_ID,
            principal_type="admin",
            scopes=frozenset({"admin"}),
            request_id="bench",
            traceparent="00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        )
        try:
            backends = {}
            for one in (pool, unix_pool):
                async with one.acquire() as conn:
                    backends[id(one)] = psutil.Process(await conn.fetchval("SELECT pg_backend_pid()"))
            if args.variants == "statements":
                variants = {
                    "before (item, then its rows)": (TwoStatements(pool, settings), backends[id(pool)]),
                    "after (one statement)": (IngestService(pool, settings), backends[id(pool)]),
                    "after, Unix socket": (IngestService(unix_pool, settings), backends[id(unix_pool)]),
                }
            else:
                variants = {
                    "before (BEGIN, then the tenant)": (Apart(pool, settings), backends[id(pool)]),
                    "after (BEGIN with the tenant)": (IngestService(pool, settings), backends[id(pool)]),
                }
            serial = 0
            together = ingest_service.tenant_tx  # type: ignore[attr-defined]

            async def measure(service: IngestService, backend: Any, n: int) -> dict[str, float]:
                nonlocal serial
                ingest_service.tenant_tx = tenant_tx_apart if isinstance(service, Apart) else together  # type: ignore[attr-defined]
                texts = [
                    f"Memory {serial + i}: the build of service {serial + i} runs on host {i % 7}." for i in range(n)
                ]
                serial += n
                server_cpu = sum(backend.cpu_times()[:2])
                mine, wall = time.process_time(), time.perf_counter()
                for text in texts:
                    assert (await service.remember(ctx, RememberCommand(content=text))).status == "created"
                wall, mine = time.perf_counter() - wall, time.process_time() - mine
                server_cpu = sum(backend.cpu_times()[:2]) - server_cpu
                return {
                    "wall_ms": wall / n * 1000,
                    "client_cpu_ms": mine / n * 1000,
                    "server_cpu_ms": server_cpu / n * 1000,
                }

            for service, backend in variants.values():
                await measure(service, backend, 50)  # warm: statement caches, types
            for round_ in range(1, args.rounds + 1):
                for name, (service, backend) in variants.items():
                    figures = await measure(service, backend, args.writes)
                    print(
                        f"round {round_}, {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True
                    )
        finally:
            await pool.close()
            await unix_pool.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--variants", choices=("statements", "round-trips"), default="statements")
    asyncio.run(main(parser.parse_args()))
