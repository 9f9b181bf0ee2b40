"""How long ingest's inventory pass (the gauges engram_items, engram_pipeline_items, engram_proposals_pending)
takes as the store grows, with its memories spread over many tenants.

    python bench/inventory.py                          # 20 tenants × 5,000 memories
    python bench/inventory.py --tenants 200 --per-tenant 500

Starts an embedded PostgreSQL in a temp dir, migrates it, loads the memories directly with SQL (one in ten
proposed, one in twenty with a pending embedding stage), then times ``refresh`` (services/ingest/inventory.py)
as the app role, the way ingest runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from engram.config import Settings
from engram.db.migrate import migrate
from engram.db.pool import create_pool
from engram.runtime.postgres import EmbeddedPostgres
from services.ingest.inventory import refresh

KINDS = ("fact", "decision", "procedure", "preference", "observation")


async def load(url: str, tenants: int, per_tenant: int) -> None:
    pool = await create_pool(url, role=None, max_size=2)
    async with pool.acquire() as conn:
        for _ in range(tenants):
            tenant, workspace, principal = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
            await conn.execute("INSERT INTO tenants (id, name) VALUES ($1, $2)", tenant, f"t-{tenant}")
            await conn.execute(
                "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'default')", tenant, workspace
            )
            await conn.execute(
                "INSERT INTO principals (tenant_id, id, name, type) VALUES ($1, $2, 'p', 'user')", tenant, principal
            )
            await conn.execute(
                """INSERT INTO memory_items (tenant_id, id, workspace_id, principal_id, content, content_hash, kind,
                       importance, review_status, authority, source_type, source_trust)
                   SELECT $1::uuid, gen_random_uuid(), $2, $3, 'memory ' || n,
                          sha256(convert_to($1::uuid::text || n, 'UTF8')),
                          ($5::text[])[1 + n % 5], 0.5, CASE WHEN n % 10 = 0 THEN 'proposed' ELSE 'active' END,
                          30, 'explicit', 0.8
                   FROM generate_series(1, $4) AS n""",
                tenant,
                workspace,
                principal,
                per_tenant,
                list(KINDS),
            )
            await conn.execute(
                """INSERT INTO item_stages (tenant_id, item_id, stage, status)
                   SELECT tenant_id, id, 'embedding', CASE WHEN random() < 0.05 THEN 'pending' ELSE 'done' END
                   FROM memory_items WHERE tenant_id = $1""",
                tenant,
            )
        await conn.execute("VACUUM ANALYZE memory_items, item_stages")
    await pool.close()


async def main(tenants: int, per_tenant: int, repeats: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="engram-inventory-"))
    server = EmbeddedPostgres(root / "pgdata")
    url = server.start()
    try:
        settings = Settings(database_url=url)
        await migrate(url, settings)
        started = time.perf_counter()
        await load(url, tenants, per_tenant)
        print(f"loaded {tenants} tenants × {per_tenant} memories in {time.perf_counter() - started:.1f} s")
        pool = await create_pool(url, role=settings.app_role, max_size=2)
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            await refresh(pool, settings)
            timings.append((time.perf_counter() - started) * 1000)
        await pool.close()
        print(
            f"inventory pass over {tenants * per_tenant:,} memories: median {statistics.median(timings):.0f} ms, "
            f"min {min(timings):.0f} ms, max {max(timings):.0f} ms ({repeats} passes)"
        )
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int, default=20)
    parser.add_argument("--per-tenant", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.tenants, args.per_tenant, args.repeats))
