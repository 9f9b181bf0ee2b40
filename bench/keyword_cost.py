"""The keyword statement's cost with rarity weighting, and whether a rewrite changes its answers: starts a
stack, loads one LoCoMo conversation (conv-26 by default) through the API, checks that ``search.keyword``
returns the same hits, scores and terms as ``engram/db/search.py`` at ``--before`` for each of the
conversation's questions, then times both with rarity weighting and the current one with ts_rank (two rounds),
the statement in process.

    cd bench && python keyword_cost.py --data <locomo10_evidence_corrected.json> --before 1832b18

With ``--memories N`` it needs no stack: an embedded PostgreSQL with the real migrations, conv-26's turns written
straight into a workspace of their own, then bench/latency.py's synthetic texts (``synthetic(2000, seed=3)`` +
" (bulk i)", each memory a second newer than the last) in the default workspace, the store grown to each of
``--sizes`` in turn. At each size it checks sameness for latency.py's eight queries (no filters) and the
conversation's questions (its workspace), then times the statement alone, current and ``--before`` alternating
for ``--rounds`` rounds: wall ms and the PostgreSQL backend's CPU ms (utime + stime from /proc) per query, first
with the words new (a fresh ``CountCache``: each word's rarity counted once, as for questions not asked in the
last minute), then with every word's rarity remembered (the statement alone; ``--recount``: no cache at all).
``--explain`` prints EXPLAIN (ANALYZE, BUFFERS) of the statement for one query of each set at each size.

    cd bench && python keyword_cost.py --memories 100000 --sizes 6000,100000 --before 8b617bf --rounds 3

LoCoMo (CC BY-NC 4.0) is read from where ``--data`` points at run time, never copied into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import locomo
from latency import start_stack, synthetic
from vector_filter import _search_at

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID, Settings
from engram.db import search
from engram.db.counts import CountCache
from engram.db.pool import service_pool, tenant_tx
from engram.db.search import Filters
from tests.support.bulk import ITEM_COLUMNS, fact_row

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # the first bulk memory's time; the conversation's turns come before


async def measure(args: argparse.Namespace, url: str, key: str, database_url: str) -> None:
    conv = locomo.load(args.data, [args.conversation])[0]
    async with httpx.AsyncClient(base_url=url, timeout=120, headers={"authorization": f"Bearer {key}"}) as client:
        await locomo.ingest(client, conv)
    owner = await asyncpg.connect(database_url)
    tenant = str(await owner.fetchval("SELECT tenant_id FROM workspaces WHERE id = $1", conv.workspace_id))
    await owner.close()
    pool = await service_pool(Settings(database_url=database_url), max_size=1)
    filters = Filters(workspace_id=conv.workspace_id)
    questions = [str(q["question"]) for q in conv.questions]
    old = _search_at(args.before)

    async def hits(module: Any, question: str, **options: Any) -> list[tuple[str, float, Any]]:
        async with tenant_tx(pool, tenant) as conn:
            found = await module.keyword(conn, question, filters, locomo.ADMIN_ID, 50, **options)
        return [(str(item.id), round(rank, 9), terms) for item, rank, terms in found]

    try:
        same = sum([await hits(search, q) == await hits(old, q) for q in questions])
        print(f"identical hits, scores and terms: {same} of {len(questions)} questions", flush=True)
        variants = (
            ("rarity, current", search, {"rarity": True}),
            (f"rarity, at {args.before}", old, {"rarity": True}),
            ("ts_rank, current", search, {"rarity": False}),
        )
        for round_ in (1, 2):
            for label, module, options in variants:
                started = time.perf_counter()
                for q in questions:
                    await hits(module, q, **options)
                mean = (time.perf_counter() - started) / len(questions) * 1000
                print(f"round {round_}, {label}: {mean:.2f} ms per question", flush=True)
    finally:
        await pool.close()


async def copy_items(conn: asyncpg.Connection, rows: list[tuple[object, ...]]) -> None:
    """Memories straight into ``memory_items`` as the owner (the term table's trigger fills ``memory_terms``)."""
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", DEFAULT_TENANT_ID)
        await conn.copy_records_to_table("memory_items", records=rows, columns=[*ITEM_COLUMNS, "created_at"])


async def load_conversation(conn: asyncpg.Connection, conv: locomo.Conversation) -> str:
    """The conversation's turns, in order, as facts of a workspace of their own the admin belongs to."""
    workspace = str(uuid.uuid4())
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", DEFAULT_TENANT_ID)
        await conn.execute(
            "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, $3)",
            DEFAULT_TENANT_ID,
            workspace,
            conv.sample_id,
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')",
            DEFAULT_TENANT_ID,
            workspace,
            DEFAULT_ADMIN_ID,
        )
    start = EPOCH - timedelta(seconds=len(conv.turns) + 1)
    await copy_items(
        conn,
        [
            (
                *fact_row(DEFAULT_TENANT_ID, uuid.uuid4(), workspace, DEFAULT_ADMIN_ID, t.content),
                start + timedelta(seconds=n),
            )
            for n, t in enumerate(conv.turns)
        ],
    )
    return workspace


async def grow_to(conn: asyncpg.Connection, loaded: int, size: int) -> None:
    """Bulk memories ``loaded`` … ``size - 1`` in the default workspace, each a second after the last."""
    texts = synthetic(2000, seed=3)
    for first in range(loaded, size, 5000):
        await copy_items(
            conn,
            [
                (
                    *fact_row(
                        DEFAULT_TENANT_ID,
                        uuid.uuid4(),
                        DEFAULT_WORKSPACE_ID,
                        DEFAULT_ADMIN_ID,
                        f"{texts[i % len(texts)]} (bulk {i})",
                    ),
                    EPOCH + timedelta(seconds=i),
                )
                for i in range(first, min(first + 5000, size))
            ],
        )
    # as autovacuum leaves a settled store: statistics, and the visibility map the index-only scans rely on
    await conn.execute("VACUUM ANALYZE memory_items")
    await conn.execute("VACUUM ANALYZE memory_terms")


def backend_cpu_ms(pid: int) -> float:
    """CPU (user + system) a PostgreSQL backend has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


class Capture:
    """A connection stand-in that records the keyword statement (the one ``fetch`` of ``search.keyword``)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn, self.statement = conn, ("", ())

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self.conn.fetchrow(sql, *args)

    async def fetch(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().startswith("WITH recent") or "FROM memory_terms p JOIN" in sql:
            self.statement = (sql, args)
        return await self.conn.fetch(sql, *args)


async def at_size(args: argparse.Namespace, pool: asyncpg.Pool, size: int, sets: dict[str, Any], old: Any) -> None:
    """Sameness, then the alternating timing, at one store size."""
    async with pool.acquire() as conn:
        pid = int(await conn.fetchval("SELECT pg_backend_pid()"))

    async def run(module: Any, query: str, filters: Filters, counts: CountCache | None) -> list[Any]:
        async with tenant_tx(pool, DEFAULT_TENANT_ID) as conn:
            found = await module.keyword(conn, query, filters, DEFAULT_ADMIN_ID, 50, counts=counts)
        return [(str(item.id), round(rank, 9), terms) for item, rank, terms in found]

    for name, (queries, filters) in sets.items():
        same = sum([await run(search, q, filters, None) == await run(old, q, filters, None) for q in queries])
        print(f"{size}: {name}: identical hits, scores and terms: {same} of {len(queries)} queries", flush=True)
        if args.explain:
            for module, label in ((old, f"at {args.before}"), (search, "current")):
                async with tenant_tx(pool, DEFAULT_TENANT_ID) as conn:
                    capture = Capture(conn)
                    await module.keyword(capture, queries[0], filters, DEFAULT_ADMIN_ID, 50, counts=CountCache())
                    sql, params = capture.statement
                    plan = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", *params)
                print(f"--- {size}, {name}, {label}: {queries[0]!r}")
                print("\n".join(r[0] for r in plan), flush=True)
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}

    async def timed(
        module: Any, queries: list[str], filters: Filters, counts: CountCache | None, name: str, label: str
    ) -> None:
        cpu, started = backend_cpu_ms(pid), time.perf_counter()
        for q in queries:
            await run(module, q, filters, counts)
        wall = (time.perf_counter() - started) * 1000 / len(queries)
        used = (backend_cpu_ms(pid) - cpu) / len(queries)
        results.setdefault((name, label), []).append((wall, used))
        print(
            f"{size}: {name}, {label}: {wall:.2f} ms, PostgreSQL CPU {used:.2f} ms a query "
            f"(load {os.getloadavg()[0]:.1f})",
            flush=True,
        )

    for round_ in range(1, args.rounds + 1):
        order = ((f"at {args.before}", old), ("current", search))
        for label, module in order if round_ % 2 else order[::-1]:
            for name, (queries, filters) in sets.items():
                for words in ("words new", "words remembered"):
                    # a fresh CountCache, as for questions not asked in the last minute; then, with every
                    # word's rarity remembered, the statement alone
                    counts = None if args.recount else CountCache()
                    if words == "words remembered" and counts is not None:
                        for q in queries:
                            await run(module, q, filters, counts)
                    await timed(module, queries, filters, counts, f"{name}, {words}", label)
    for (name, label), samples in results.items():
        walls, cpus = [w for w, _ in samples], [c for _, c in samples]
        print(
            f"{size}: {name}, {label}: median of {len(samples)} rounds {statistics.median(walls):.2f} ms, "
            f"CPU {statistics.median(cpus):.2f} ms a query",
            flush=True,
        )


async def measure_store(args: argparse.Namespace) -> None:
    from engram.db.migrate import migrate
    from engram.runtime.postgres import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="keyword-cost-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    try:
        url = server.start()
        await migrate(url, Settings(database_url=url))
        conv = locomo.load(args.data, [args.conversation])[0]
        owner = await asyncpg.connect(url)
        workspace = await load_conversation(owner, conv)
        pool = await service_pool(Settings(database_url=url), max_size=1)
        old = _search_at(args.before)
        from tests.support.queries import QUERIES

        sets = {
            "latency.py queries": (QUERIES, Filters()),
            f"{args.conversation} questions": (
                [str(q["question"]) for q in conv.questions],
                Filters(workspace_id=workspace),
            ),
        }
        loaded = 0
        try:
            for size in args.sizes:
                started = time.perf_counter()
                await grow_to(owner, loaded, size)
                loaded = size
                print(f"store: {size} bulk memories + {len(conv.turns)} turns ({time.perf_counter() - started:.0f}s)")
                await at_size(args, pool, size, sets, old)
        finally:
            await pool.close()
            await owner.close()
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=locomo.DATA)
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--before", required=True, help="the commit whose engram/db/search.py to compare with")
    parser.add_argument("--memories", type=int, default=0, help="no stack: a store grown to --sizes (the largest)")
    parser.add_argument("--sizes", type=lambda t: [int(x) for x in t.split(",")], default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--recount", action="store_true", help="count the words' rarities on every query")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the store's directory")
    args = parser.parse_args()
    if args.memories:
        args.sizes = sorted(s for s in (args.sizes or [args.memories]) if s <= args.memories)
        asyncio.run(measure_store(args))
        return
    home = Path(tempfile.mkdtemp(prefix="keyword-cost-", dir="/tmp")) / "home"
    process, url, key = start_stack(home)
    try:
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        asyncio.run(measure(args, url, key, database_url))
    finally:
        process.terminate()
        process.wait(timeout=60)


if __name__ == "__main__":
    main()
