"""The vector candidate query (engram/db/search.semantic) on a store shared by many tenants, without the rest
of the stack: its time, its EXPLAIN (ANALYZE, BUFFERS), and its recall of the exact nearest neighbours within
the measured tenant (the same query with index scans off: a sequential scan and a sort).

    python bench/vector_filter.py --tenants 20 --per-tenant 5000          # ~4 min to load, ~1 min to measure
    python bench/vector_filter.py --tenants 1 --per-tenant 5000           # the single-tenant baseline

Starts its own embedded PostgreSQL in a temporary directory, migrates it and fills it with bench/latency.py's
bulk loader (every tenant gets copies of the same synthetic texts with their own noise, so the other tenants'
memories are as near to the queries as the measured tenant's: the hard case for a filtered index scan). The
queries are bench/latency.py's, embedded with the configured model. Prints the figures; writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from latency import QUERIES, Owner, create_tenants, development_owner, grow


async def main_async(args: argparse.Namespace) -> None:
    import numpy as np

    from engram.config import Settings
    from engram.db import search
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool, tenant_tx
    from engram.embeddings.provider import create_provider
    from engram.runtime.postgres import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="vector-filter-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    url = server.start()
    try:
        settings = Settings(database_url=url)
        await migrate(url, settings)
        started = time.perf_counter()
        owners: list[Owner] = [development_owner()]
        if args.tenants > 1:
            owners += await create_tenants(url, args.tenants - 1)
        await grow(url, owners, [0] * len(owners), args.per_tenant * len(owners))
        print(f"loaded {args.per_tenant} x {len(owners)} tenants in {time.perf_counter() - started:.0f}s")
        provider = create_provider(settings)
        vectors = [np.asarray(v) for v in [await provider.embed_query(q) for q in QUERIES]]
        await provider.close()
        pool = await create_pool(url, role=settings.app_role, max_size=2)
        me = owners[0]
        report: dict[str, Any] = {"tenants": len(owners), "per_tenant": args.per_tenant, "limit": args.limit}
        try:
            times: list[float] = []
            recalls: list[float] = []
            for vector in vectors:
                exact = await _ids(pool, me, vector, settings, args.limit, exact=True)
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    async with tenant_tx(pool, str(me.tenant_id)) as conn:
                        found = await search.semantic(
                            conn,
                            vector,
                            settings.embedding_profile,
                            settings.embedding_dimensions,
                            search.Filters(),
                            str(me.principal_id),
                            args.limit,
                        )
                    times.append(time.perf_counter() - started)
                assert all(item.tenant_id == me.tenant_id for item, _ in found), "a foreign memory was returned"
                recalls.append(len({str(item.id) for item, _ in found} & set(exact)) / len(exact))
            report["semantic_ms"] = {
                "p50": round(statistics.median(times) * 1000, 2),
                "p95": round(sorted(times)[int(0.95 * (len(times) - 1))] * 1000, 2),
                "n": len(times),
            }
            report["recall_of_exact_top_k"] = {"mean": round(statistics.fmean(recalls), 4), "min": min(recalls)}
            if args.explain:
                report["explain"] = await _explain(pool, me, vectors[0], settings, args.limit)
        finally:
            await pool.close()
        print(json.dumps({k: v for k, v in report.items() if k != "explain"}, indent=2))
        if args.explain:
            print("\n".join(report["explain"]))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


async def _ids(pool: Any, me: Owner, vector: Any, settings: Any, limit: int, exact: bool) -> list[str]:
    from engram.db import search
    from engram.db.pool import tenant_tx

    async with tenant_tx(pool, str(me.tenant_id)) as conn:
        if exact:
            await conn.execute("SET LOCAL enable_indexscan = off")
            await conn.execute("SET LOCAL enable_bitmapscan = off")
        found = await search.semantic(
            conn,
            vector,
            settings.embedding_profile,
            settings.embedding_dimensions,
            search.Filters(),
            str(me.principal_id),
            limit,
        )
    return [str(item.id) for item, _ in found]


async def _explain(pool: Any, me: Owner, vector: Any, settings: Any, limit: int) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of the statement search.semantic sends, captured by wrapping fetch."""
    from engram.db import search
    from engram.db.pool import tenant_tx

    lines: list[str] = []

    class Explaining:
        """Passes ``execute`` through and turns ``fetch`` into EXPLAIN (ANALYZE, BUFFERS) of the same statement."""

        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def execute(self, sql: str, *args: Any) -> Any:
            return await self.conn.execute(sql, *args)

        async def fetch(self, sql: str, *args: Any) -> list[Any]:
            lines.extend(row[0] for row in await self.conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args))
            return []

    async with tenant_tx(pool, str(me.tenant_id)) as conn:
        await search.semantic(
            Explaining(conn),  # type: ignore[arg-type]
            vector,
            settings.embedding_profile,
            settings.embedding_dimensions,
            search.Filters(),
            str(me.principal_id),
            limit,
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int, default=20)
    parser.add_argument("--per-tenant", type=int, default=5000)
    parser.add_argument("--limit", type=int, default=50, help="candidates asked for (recall asks for at least 50)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each query")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN (ANALYZE, BUFFERS) of the first query")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
