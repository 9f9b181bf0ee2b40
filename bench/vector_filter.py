"""The vector candidate query (engram/db/search.semantic) on a store shared by many tenants, without the rest
of the stack: its time, its EXPLAIN (ANALYZE, BUFFERS), and its recall of the exact nearest neighbours within
the measured tenant (the same query with index scans off: a sequential scan and a sort).

    python bench/vector_filter.py --tenants 20 --per-tenant 5000          # ~4 min to load, ~1 min to measure
    python bench/vector_filter.py --tenants 1 --per-tenant 5000           # the single-tenant baseline
    python bench/vector_filter.py --database-url postgresql://… --before 24f99e0   # a loaded store, A/B

Starts its own embedded PostgreSQL in a temporary directory, migrates it and fills it with bench/latency.py's
bulk loader (every tenant gets copies of the same synthetic texts with their own noise, so the other tenants'
memories are as near to the queries as the measured tenant's: the hard case for a filtered index scan). The
queries are bench/latency.py's, embedded with the configured model. Besides wall time it reports the
server's CPU time per query (the backend's utime + stime from /proc: the stack must run on this machine),
which a loaded machine disturbs far less. ``--before COMMIT`` also measures engram/db/search.py (and the
SQL helpers it takes from engram/db/items.py) as they were at that commit, alternating with the current ones.
Prints the figures; writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from latency import QUERIES, ROOT, Owner, create_tenants, development_owner, grow


def _module_at(commit: str, path: str) -> ModuleType:
    """``path`` as it was at ``commit``, as a module of its own."""
    source = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True, cwd=ROOT)
    module = ModuleType(f"{Path(path).stem}_{commit}")
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    exec(compile(source.stdout, f"{path}@{commit}", "exec"), module.__dict__)
    return module


def _search_at(commit: str) -> ModuleType:
    """engram/db/search.py as it was at ``commit``, with the SQL helpers it imports from engram/db/items.py
    (``visible_to``, ``ACCEPTS_PUBLIC``…) as they were at that commit too."""
    from engram.db import items

    search = _module_at(commit, "engram/db/search.py")
    old_items = _module_at(commit, "engram/db/items.py")
    for name, value in list(search.__dict__.items()):
        if getattr(items, name, None) is value and name in old_items.__dict__:
            search.__dict__[name] = old_items.__dict__[name]
    return search


async def main_async(args: argparse.Namespace) -> None:
    from engram.config import Settings
    from engram.db import search
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool
    from engram.embeddings.provider import create_provider
    from engram.runtime.postgres import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="vector-filter-", dir="/tmp"))
    server = None
    url = args.database_url
    try:
        if url is None:
            server = EmbeddedPostgres(home / "pgdata")
            url = server.start()
            await migrate(url, Settings(database_url=url))
            started = time.perf_counter()
            owners: list[Owner] = [development_owner()]
            if args.tenants > 1:
                owners += await create_tenants(url, args.tenants - 1)
            await grow(url, owners, [0] * len(owners), args.per_tenant * len(owners))
            print(f"loaded {args.per_tenant} x {len(owners)} tenants in {time.perf_counter() - started:.0f}s")
        settings = Settings(database_url=url)
        provider = create_provider(settings)
        vectors = [await provider.embed_query(q) for q in QUERIES]
        await provider.close()
        pool = await create_pool(url, role=settings.app_role, max_size=2)
        me = development_owner()
        variants = {"current": search}
        if args.before:
            variants = {f"at {args.before}": _search_at(args.before), **variants}
        try:
            exact = [await _ids(search, pool, me, v, settings, args.limit, exact=True) for v in vectors]
            for rep in range(args.rounds):
                for name, module in variants.items():
                    report = await _measure(module, pool, me, vectors, exact, settings, args)
                    print(json.dumps({"variant": name, "round": rep + 1, **report}))
            if args.explain:
                print("\n".join(await _explain(pool, me, vectors[0], settings, args.limit)))
        finally:
            await pool.close()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(home, ignore_errors=True)


async def _measure(
    module: Any, pool: Any, me: Owner, vectors: list[Any], exact: list[list[str]], settings: Any, args: Any
) -> dict[str, Any]:
    """Wall and server CPU time of each query (``args.repeat`` times), and the share of the exact top k found."""
    from engram.db.pool import tenant_tx

    times: list[float] = []
    cpu: list[float] = []
    recalls: list[float] = []
    for vector, truth in zip(vectors, exact, strict=True):
        for _ in range(args.repeat):
            async with tenant_tx(pool, str(me.tenant_id)) as conn:
                backend = await conn.fetchval("SELECT pg_backend_pid()")
                cpu_before, started = _cpu_s(backend), time.perf_counter()
                found = await module.semantic(
                    conn,
                    vector,
                    settings.embedding_profile,
                    settings.embedding_dimensions,
                    module.Filters(),
                    str(me.principal_id),
                    args.limit,
                )
                times.append(time.perf_counter() - started)
                cpu.append(_cpu_s(backend) - cpu_before)
        assert all(item.tenant_id == me.tenant_id for item, _ in found), "a foreign memory was returned"
        recalls.append(len({str(item.id) for item, _ in found} & set(truth)) / max(len(truth), 1))
    return {
        "wall_ms_p50": round(statistics.median(times) * 1000, 1),
        "wall_ms_p95": round(sorted(times)[int(0.95 * (len(times) - 1))] * 1000, 1),
        "server_cpu_ms_mean": round(statistics.fmean(cpu) * 1000, 1),
        "recall_of_exact_top_k": {"mean": round(statistics.fmean(recalls), 4), "min": min(recalls)},
        "queries": len(times),
    }


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a server process so far (clock ticks of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _ids(search: Any, pool: Any, me: Owner, vector: Any, settings: Any, limit: int, exact: bool) -> list[str]:
    """The nearest ``limit`` of the tenant's memories; ``exact``: with index scans off (every distance, sorted)."""
    from engram.db.pool import tenant_tx

    async with tenant_tx(pool, str(me.tenant_id)) as conn:
        if exact:
            await conn.execute("SET LOCAL enable_indexscan = off")
            await conn.execute("SET LOCAL enable_bitmapscan = off")
            await conn.execute("SET LOCAL enable_indexonlyscan = off")
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

        async def fetchval(self, sql: str, *args: Any) -> Any:
            return await self.conn.fetchval(sql, *args)

        async def fetchrow(self, sql: str, *args: Any) -> Any:
            return await self.conn.fetchrow(sql, *args)

        async def fetch(self, sql: str, *args: Any) -> list[Any]:
            lines.extend(row[0] for row in await self.conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args))
            return list(await self.conn.fetch(sql, *args))

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
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the variants, alternated")
    parser.add_argument("--before", help="also measure engram/db/search.py as it was at this commit")
    parser.add_argument("--database-url", help="a store already loaded (as by this script); nothing is started")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN (ANALYZE, BUFFERS) of the first query")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
