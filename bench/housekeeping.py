"""The sweep's housekeeping at volume: how long one pass takes to delete published outbox rows (and inbox rows),
and how many it deletes a second, with the real migrations, policies and app role.

    python bench/housekeeping.py                    # 100,000 published outbox rows and 100,000 inbox rows
    python bench/housekeeping.py --rows 20000

Starts an embedded PostgreSQL in a temp dir, migrates it, loads ``--rows`` outbox rows published two days ago
(plus as many recent ones that must stay, and a realistic envelope each) and as many 60-day-old inbox rows,
then runs ``sweep`` until nothing more is due, timing each pass.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from engram.config import DEFAULT_TENANT_ID, Settings
from engram.db.migrate import migrate
from engram.db.pool import create_pool
from engram.runtime.postgres import EmbeddedPostgres
from services.ingest.trash import PRUNE_BATCH, sweep

ENVELOPE = json.dumps({"specversion": "1.0", "type": "engram.memory.created", "data": {"item_id": "x" * 36}})


async def measure(url: str, rows: int, batch: int) -> None:
    settings = Settings(database_url=url)
    await migrate(url, settings)
    owner = await create_pool(url, role=None)
    async with owner.acquire() as conn:
        for age in ("2 days", "1 hour"):  # due, and recent (kept)
            await conn.execute(
                "INSERT INTO outbox (tenant_id, event_id, subject, envelope, created_at, sent_at) "
                "SELECT $1, gen_random_uuid(), 'engram.events.t.memory.created', $2::jsonb, "
                "now() - $3::text::interval, now() - $3::text::interval FROM generate_series(1, $4)",
                DEFAULT_TENANT_ID,
                ENVELOPE,
                age,
                rows,
            )
        await conn.execute(
            "INSERT INTO consumer_inbox (tenant_id, consumer, event_id, processed_at) "
            "SELECT $1, 'embedder', gen_random_uuid(), now() - interval '60 days' FROM generate_series(1, $2)",
            DEFAULT_TENANT_ID,
            rows,
        )
        for table in ("outbox", "consumer_inbox"):
            await conn.execute(f"VACUUM ANALYZE {table}")
    await owner.close()
    app = await create_pool(url, role=settings.app_role)
    passes: list[tuple[float, int, int]] = []
    while True:
        started = time.perf_counter()
        report = await sweep(app, settings, prune_batch=batch)
        passes.append((time.perf_counter() - started, report.outbox, report.inbox))
        if not report.outbox and not report.inbox:
            break
    await app.close()
    working = passes[:-1]
    total_s = sum(p[0] for p in working)
    deleted = sum(p[1] + p[2] for p in working)
    print(f"{rows} published outbox rows + {rows} inbox rows due, batch {batch} per table per pass")
    for n, (elapsed, out, inbox) in enumerate(passes, 1):
        print(f"  pass {n}: {out} outbox + {inbox} inbox rows in {elapsed * 1000:.0f} ms")
    idle_ms = passes[-1][0] * 1000
    print(f"  total {deleted} rows in {total_s:.2f} s: {deleted / total_s:,.0f} rows/s; an idle pass {idle_ms:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=PRUNE_BATCH)
    args = parser.parse_args()
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="engram-housekeeping-", dir="/tmp")) / "pgdata")
    url = server.start()
    try:
        asyncio.run(measure(url, args.rows, args.batch))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
