"""Whether any statement that filters on ``memory_items.content_tsv`` uses the GIN index ``memory_items_tsv``, and
what the index costs: an embedded PostgreSQL with the real migrations (the index built back if a migration dropped
it), three tenants and ``--memories`` memories (bench/latency.py's synthetic texts, numbered): the development
tenant 60% of them, accepting public memories; a second tenant 25%, publishing ``--public`` of its memories; a
third 15%, not accepting them. In order:

1. the index's size beside ``memory_items``'s and ``memory_terms``'s, right after the load and a vacuum;
2. the deferred part of its cost: ``--pending`` more memories written with a pending list large enough to hold
   them, then the merge of that list into the index timed (what the writer that overflows
   ``gin_pending_list_limit``, 4 MB, or a vacuum pays);
3. the immediate part: ``--write-rounds`` rounds of ``--writes`` single-row inserts (one transaction each), with
   the index and without it in turn (dropped or built again between rounds, then a checkpoint): the backend's CPU,
   wall time and WAL bytes per insert, and the GIN index's own WAL (``pg_walinspect``);
4. the reads: ``search.keyword``, the one statement of Engram's that filters on ``content_tsv`` (its
   public-memory branch tests ``@@``), for latency.py's eight queries, in the first tenant (public branch live)
   and the third (public branch off), with and without rarity weighting: whether the index is in the plan of
   EXPLAIN (ANALYZE, BUFFERS) as the services' role, and as the owner (the embedded server's superuser, which Row
   Level Security does not bind); then the index dropped, the same hits, scores and terms, and the same plans,
   as the services' role (execution ms before and after, median over the set: one run each, noisy).

With ``--public-branch`` only the load and a fifth step run (the GIN index is not built back): the keyword
statement's public-memory branch without the partial index ``memory_items_public_recent`` (migration 033) and with
it, for latency.py's eight queries and ``--extra-queries`` more drawn from its words, in the same cases as step 4:
whether the index is in the plan as the services' role, the rows the public branch's scan of ``memory_items`` read
(returned and removed by its filter), its shared buffers, execution ms, and whether the hits, scores and terms are
identical. The index is dropped for the "without" side and built back from the migration's own file.

    python bench/tsv_index_use.py --memories 100000 --public 2000 --pending 18000 --writes 3000 --write-rounds 8
    python bench/tsv_index_use.py --memories 100000 --public 2000 --public-branch --extra-queries 40
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import psutil
from latency import NAMES, PLACES, THINGS, synthetic

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID, Settings
from engram.db import search
from engram.db.counts import CountCache
from engram.db.pool import service_pool, tenant_tx
from engram.db.search import Filters
from tests.support.bulk import ITEM_COLUMNS, fact_row
from tests.support.queries import QUERIES

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
INDEX = "memory_items_tsv"
PUBLIC_INDEX = "memory_items_public_recent"
MIGRATIONS = Path(__file__).resolve().parent.parent / "engram" / "db" / "migrations"


class Capture:
    """A connection stand-in that records the keyword statement (the ``fetch`` that starts ``WITH recent``)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn, self.statement = conn, ("", ())

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self.conn.fetchrow(sql, *args)

    async def fetch(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().startswith("WITH recent"):
            self.statement = (sql, args)
        return await self.conn.fetch(sql, *args)


async def add_tenant(conn: asyncpg.Connection, name: str) -> tuple[str, str, str]:
    """A tenant with one workspace and one admin principal, as the owner: (tenant, workspace, principal)."""
    tenant, workspace, principal = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
        await conn.execute("INSERT INTO tenants (id, name) VALUES ($1, $2)", tenant, name)
        await conn.execute("INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'default')", tenant, workspace)
        await conn.execute(
            "INSERT INTO principals (tenant_id, id, name, type) VALUES ($1, $2, 'admin', 'admin')", tenant, principal
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')",
            tenant,
            workspace,
            principal,
        )
    return tenant, workspace, principal


async def load(conn: asyncpg.Connection, who: tuple[str, str, str], first: int, n: int, public: int) -> None:
    """``n`` active facts for ``who`` (the last ``public`` of them public), a second apart, 5,000 rows a COPY."""
    texts = synthetic(2000, seed=3)
    tenant, workspace, principal = who
    for start in range(first, first + n, 5000):
        rows = [
            (
                *fact_row(tenant, uuid.uuid4(), workspace, principal, f"{texts[i % len(texts)]} (bulk {i})"),
                "public" if i >= first + n - public else "tenant",
                EPOCH + timedelta(seconds=i),
            )
            for i in range(start, min(start + 5000, first + n))
        ]
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
            await conn.copy_records_to_table(
                "memory_items", records=rows, columns=[*ITEM_COLUMNS, "visibility", "created_at"]
            )


async def statement(pool: asyncpg.Pool, tenant: str, viewer: str, query: str, rarity: bool) -> tuple[str, tuple]:
    """The keyword statement (SQL and parameters) ``search.keyword`` sends for ``query`` in ``tenant``."""
    async with tenant_tx(pool, tenant) as conn:
        capture = Capture(conn)
        await search.keyword(capture, query, Filters(), viewer, 50, rarity=rarity, counts=CountCache())  # type: ignore[arg-type]
    return capture.statement


async def plan(conn: asyncpg.Connection, tenant: str, sql: str, params: tuple) -> tuple[bool, float, str]:
    """EXPLAIN (ANALYZE, BUFFERS) in a transaction of ``tenant``: whether the index is in it, execution ms, plan."""
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
        rows = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", *params)
    text = "\n".join(r[0] for r in rows)
    ms = float(text.rsplit("Execution Time: ", 1)[1].split()[0])
    return INDEX in text, ms, text


def shape(text: str) -> list[str]:
    """A plan's nodes and conditions without its estimates, timings, buffers and counters."""
    drop = (
        "Buffers:",
        "Planning",
        "Execution Time",
        "Rows Removed",
        "Heap Fetches",
        "Index Searches",
        "Sort Method",
        "Memory:",
        "Storage:",
        "Full-sort",
        "I/O Timings",
        "Worker",
    )
    lines = [re.sub(r"\s*\((cost|actual|never)[^)]*\)", "", line) for line in text.splitlines()]
    return [line for line in lines if not line.strip().startswith(drop)]


async def answers(pool: asyncpg.Pool, tenant: str, viewer: str, query: str, rarity: bool) -> list[Any]:
    async with tenant_tx(pool, tenant) as conn:
        found = await search.keyword(conn, query, Filters(), viewer, 50, rarity=rarity)
    return [(str(item.id), round(rank, 9), terms) for item, rank, terms in found]


def backend_cpu_ms(pid: int) -> float:
    """CPU (user + system) a PostgreSQL backend has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def server_cpu_ms(postmaster: psutil.Process) -> float:
    """CPU (user + system) the postmaster and its children (backends, I/O workers, WAL writer, ...) have used."""
    total = 0.0
    for part in [postmaster, *postmaster.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = part.cpu_times()
            total += times.user + times.system
    return total * 1000


async def pending_list(owner: asyncpg.Connection, who: tuple[str, str, str], first: int, n: int) -> None:
    """The index's deferred work: ``n`` more memories written with a pending list large enough to hold them all,
    then the merge of that list into the index (``gin_clean_pending_list``, what the writer that overflows
    ``gin_pending_list_limit`` or a vacuum does), timed in the backend."""
    await owner.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    await owner.execute("SET gin_pending_list_limit = '2GB'")
    await load(owner, who, first, n, 0)
    await owner.execute("RESET gin_pending_list_limit")
    pages, tuples = await owner.fetchrow(f"SELECT pending_pages, pending_tuples FROM pgstatginindex('{INDEX}')")
    pid = int(await owner.fetchval("SELECT pg_backend_pid()"))
    postmaster = psutil.Process(pid).parent()
    assert postmaster is not None
    cpu, everything, started = backend_cpu_ms(pid), server_cpu_ms(postmaster), time.perf_counter()
    await owner.execute(f"SELECT gin_clean_pending_list('{INDEX}')")
    wall, used = (time.perf_counter() - started) * 1000, backend_cpu_ms(pid) - cpu
    server = server_cpu_ms(postmaster) - everything
    print(
        f"pending list of {n} memories ({pages} pages, {tuples} rows, {pages * 8192 / n:.0f} bytes a memory):"
        f" merged in {wall:.0f} ms, {used:.0f} ms of the backend's CPU, {server:.0f} ms of the server's:"
        f" {server / n:.3f} ms a memory (load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


async def write_rounds(owner: asyncpg.Connection, who: tuple[str, str, str], first: int, n: int, rounds: int) -> int:
    """The index's part of a write: rounds of ``n`` single-row inserts (each its own transaction, as a remember)
    into ``memory_items`` with the index and without it, in turn (dropped, or built again, between rounds, then a
    checkpoint): the backend's CPU, wall time and WAL bytes per insert. Returns the number of memories written."""
    tenant, workspace, principal = who
    texts = synthetic(2000, seed=5)
    insert = await owner.prepare(
        f"INSERT INTO memory_items ({', '.join(ITEM_COLUMNS)}, created_at)"
        f" VALUES ({', '.join(f'${k}' for k in range(1, len(ITEM_COLUMNS) + 2))})"
    )
    await owner.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    pid = int(await owner.fetchval("SELECT pg_backend_pid()"))
    figures: dict[str, list[tuple[float, float, float, float]]] = {"with the index": [], "without": []}
    at = first
    for round_ in range(rounds):
        for side in ("with the index", "without") if round_ % 2 == 0 else ("without", "with the index"):
            if side == "without":
                await owner.execute(f"DROP INDEX IF EXISTS {INDEX}")
            else:
                await owner.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON memory_items USING gin (content_tsv)")
            await owner.execute("CHECKPOINT")
            wal = await owner.fetchval("SELECT pg_current_wal_lsn()")
            cpu, started = backend_cpu_ms(pid), time.perf_counter()
            for i in range(at, at + n):
                row = fact_row(tenant, uuid.uuid4(), workspace, principal, f"{texts[i % len(texts)]} (write {i})")
                await insert.fetch(*row, EPOCH + timedelta(seconds=i))
            wall, used = (time.perf_counter() - started) * 1000 / n, (backend_cpu_ms(pid) - cpu) / n
            written, gin = await owner.fetchrow(
                """SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn),
                          (SELECT coalesce(sum(record_length), 0)
                           FROM pg_get_wal_records_info($1::pg_lsn, pg_current_wal_lsn())
                           WHERE resource_manager = 'Gin')""",
                wal,
            )
            at += n
            figures[side].append((used, wall, float(written) / n, float(gin) / n))
            print(
                f"writes, round {round_ + 1}, {side}: {used:.3f} ms CPU, {wall:.3f} ms, {float(written) / n:.0f} WAL"
                f" bytes an insert, of which GIN {float(gin) / n:.0f} (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    for side, rows in figures.items():
        print(
            f"writes, {side}: median of {rounds} rounds {statistics.median(r[0] for r in rows):.3f} ms CPU,"
            f" {statistics.median(r[1] for r in rows):.3f} ms, {statistics.median(r[2] for r in rows):.0f} WAL bytes"
            f" an insert, of which GIN {statistics.median(r[3] for r in rows):.0f}",
            flush=True,
        )
    lower = sum(a[0] < b[0] for a, b in zip(figures["without"], figures["with the index"], strict=True))
    print(f"writes: CPU lower without the index in {lower} of {rounds} rounds", flush=True)
    await owner.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON memory_items USING gin (content_tsv)")
    return at - first


def extra_queries(n: int, seed: int = 11) -> list[str]:
    """``n`` more questions from latency.py's names, places and things, and a word no memory has (seeded)."""
    rng = random.Random(seed)
    shapes = [
        "what does {name} do with {thing}?",
        "{thing} in {place}",
        "who in {place} knows {name}?",
        "{name}",
        "{place} zanzibar",
        "is {thing} used on Fridays?",
    ]
    return [
        rng.choice(shapes).format(name=rng.choice(NAMES), place=rng.choice(PLACES), thing=rng.choice(THINGS))
        for _ in range(n)
    ]


def public_scan(node: dict[str, Any]) -> tuple[str, int, int] | None:
    """In a JSON plan, the public branch's scan of ``memory_items`` (the one whose filter tests ``@@``): its node
    type and index, the rows it read (returned and removed by its filter, over every loop) and its shared
    buffers (hit and read)."""
    if node.get("Relation Name") == "memory_items" and "@@" in node.get("Filter", ""):
        loops = int(node.get("Actual Loops", 1))
        rows = round((node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops)
        buffers = int(node.get("Shared Hit Blocks", 0)) + int(node.get("Shared Read Blocks", 0))
        return f"{node['Node Type']} {node.get('Index Name', '')}".strip(), rows, buffers
    for child in node.get("Plans", []):
        found = public_scan(child)
        if found:
            return found
    return None


def items_read(node: dict[str, Any]) -> int:
    """Rows every scan of ``memory_items`` in a JSON plan read (returned, and removed by its filter or recheck,
    over every loop): both branches, the shares and the final lookup."""
    own = 0
    if node.get("Relation Name") == "memory_items":
        removed = node.get("Rows Removed by Filter", 0) + node.get("Rows Removed by Index Recheck", 0)
        own = round((node.get("Actual Rows", 0) + removed) * int(node.get("Actual Loops", 1)))
    return own + sum(items_read(child) for child in node.get("Plans", []))


async def public_branch(
    owner: asyncpg.Connection,
    pool: asyncpg.Pool,
    cases: list[tuple[str, tuple[str, str, str], bool]],
    queries: list[str],
    show: int = 0,
) -> None:
    """Step 5: the keyword statement's public branch without ``PUBLIC_INDEX`` and with it (see the docstring); the
    plans of the first ``show`` queries printed."""
    create = (MIGRATIONS / "033_public_recent_index.sql").read_text()
    figures: dict[tuple[str, str], list[tuple[float, int, int, int]]] = {}
    hits: dict[tuple[str, str], list[Any]] = {}
    scans: dict[tuple[str, str], set[str]] = {}
    same = 0
    for side in ("without", "with"):
        await owner.execute(f"DROP INDEX IF EXISTS {PUBLIC_INDEX}" if side == "without" else create)
        await owner.execute("ANALYZE memory_items")
        for label, who, rarity in cases:
            for query in queries:
                sql, params = await statement(pool, who[0], who[2], query, rarity)
                async with pool.acquire() as conn, conn.transaction():
                    await conn.execute("SELECT set_config('app.tenant_id', $1, true)", who[0])
                    raw = await conn.fetchval(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", *params)
                top = json.loads(raw)[0]
                if show and query in queries[:show]:
                    async with pool.acquire() as conn, conn.transaction():
                        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", who[0])
                        text = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", *params))
                    print(f"--- {side} {PUBLIC_INDEX}, {label}: {query!r}\n{text}", flush=True)
                scan = public_scan(top["Plan"])
                node, rows, buffers = scan if scan else ("(branch not run)", 0, 0)
                everything = items_read(top["Plan"])
                figures.setdefault((label, side), []).append((float(top["Execution Time"]), rows, buffers, everything))
                scans.setdefault((label, side), set()).add(node)
                found = await answers(pool, who[0], who[2], query, rarity)
                if side == "without":
                    hits[(label, query)] = found
                else:
                    same += found == hits[(label, query)]
            values = figures[(label, side)]
            print(
                f"public branch, {side} {PUBLIC_INDEX}, {label}: scan {sorted(scans[(label, side)])};"
                f" rows read median {statistics.median(v[1] for v in values):.0f} (max {max(v[1] for v in values)}),"
                f" shared buffers median {statistics.median(v[2] for v in values):.0f};"
                f" memory_items rows the statement read: median {statistics.median(v[3] for v in values):.0f}"
                f" (max {max(v[3] for v in values)}),"
                f" execution median {statistics.median(v[0] for v in values):.2f} ms"
                f" (min {min(v[0] for v in values):.2f}, max {max(v[0] for v in values):.2f})"
                f" over {len(values)} queries (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    print(f"public branch: identical hits, scores and terms with and without the index for {same} of {len(hits)}")


async def measure(args: argparse.Namespace) -> None:
    from engram.db.migrate import migrate
    from engram.runtime.postgres import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="tsv-index-use-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    try:
        url = server.start()
        await migrate(url, Settings(database_url=url))
        owner = await asyncpg.connect(url)
        if not args.public_branch:
            await owner.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON memory_items USING gin (content_tsv)")
        first = (DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID, DEFAULT_ADMIN_ID)
        publisher, other = await add_tenant(owner, "publisher"), await add_tenant(owner, "other")
        await owner.execute("UPDATE tenants SET public_enabled = true WHERE id = $1", publisher[0])
        await owner.execute(
            """INSERT INTO tenant_config (tenant_id, config) VALUES ($1, '{"recall": {"accept_public": true}}')
               ON CONFLICT (tenant_id) DO UPDATE SET config = excluded.config""",
            DEFAULT_TENANT_ID,
        )
        shares = [(first, 0.60, 0), (publisher, 0.25, args.public), (other, 0.15, 0)]
        started, at = time.perf_counter(), 0
        for who, share, public in shares:
            n = int(args.memories * share)
            await load(owner, who, at, n, public)
            at += n
        await owner.execute("VACUUM ANALYZE")
        print(f"store: {at} memories, {args.public} public ({time.perf_counter() - started:.0f}s)", flush=True)
        if args.public_branch:
            pool = await service_pool(Settings(database_url=url), max_size=1)
            cases = [
                (f"{label}, {'rarity' if rarity else 'ts_rank'}", who, rarity)
                for label, who in (("tenant accepting public", first), ("tenant not accepting public", other))
                for rarity in (True, False)
            ]
            await public_branch(
                owner, pool, cases, list(dict.fromkeys(QUERIES + extra_queries(args.extra_queries))), args.show_plans
            )
            await pool.close()
            await owner.close()
            return
        sizes = await owner.fetchrow(
            f"""SELECT pg_relation_size('{INDEX}') AS gin, pg_relation_size('memory_items') AS items,
                       pg_total_relation_size('memory_items') AS items_total,
                       pg_total_relation_size('memory_terms') AS terms_total"""
        )
        print(
            "sizes (MB): " + ", ".join(f"{k} {v / 2**20:.1f}" for k, v in dict(sizes).items()) + f" ({at} memories)",
            flush=True,
        )
        if args.pending:
            await pending_list(owner, first, at, args.pending)
            at += args.pending
            await owner.execute("VACUUM ANALYZE")
        if args.writes:
            at += await write_rounds(owner, first, at, args.writes, args.write_rounds)
            await owner.execute("VACUUM ANALYZE")
        pool = await service_pool(Settings(database_url=url), max_size=1)
        cases = [
            (f"{label}, {'rarity' if rarity else 'ts_rank'}", who, rarity)
            for label, who in (("tenant accepting public", first), ("tenant not accepting public", other))
            for rarity in (True, False)
        ]
        before: dict[tuple[str, str], Any] = {}
        shapes: dict[tuple[str, str], list[str]] = {}
        timings: dict[str, list[float]] = {}
        for label, who, rarity in cases:
            used = {"service role": 0, "owner": 0}
            for query in QUERIES:
                sql, params = await statement(pool, who[0], who[2], query, rarity)
                async with pool.acquire() as conn:
                    in_plan, ms, text = await plan(conn, who[0], sql, params)
                used["service role"] += in_plan
                shapes[(label, query)] = shape(text)
                timings.setdefault(f"{label}, with the index", []).append(ms)
                in_owner_plan, _, owner_text = await plan(owner, who[0], sql, params)
                used["owner"] += in_owner_plan
                if args.plans and query == QUERIES[0]:
                    print(f"--- {label}, services' role: {query!r}\n{text}\n--- owner:\n{owner_text}", flush=True)
                before[(label, query)] = await answers(pool, who[0], who[2], query, rarity)
            print(
                f"{label}: {INDEX} in the plan of {used['service role']} of {len(QUERIES)} queries as the services'"
                f" role, {used['owner']} as the owner",
                flush=True,
            )
        adhoc = "SELECT count(*) FROM memory_items WHERE content_tsv @@ to_tsquery('simple', 'lisbon | vpn')"
        for label, who in (("owner, ad hoc, one tenant", first),):
            async with owner.transaction():
                rows = await owner.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {adhoc} AND tenant_id = $1", uuid.UUID(who[0]))
            text = "\n".join(r[0] for r in rows)
            print(f"{label}: {INDEX} in the plan: {INDEX in text}; {text.splitlines()[-1]}", flush=True)
        await owner.execute(f"DROP INDEX {INDEX}")
        await owner.execute("ANALYZE memory_items")
        same = same_plan = 0
        for label, who, rarity in cases:
            for query in QUERIES:
                same += await answers(pool, who[0], who[2], query, rarity) == before[(label, query)]
                sql, params = await statement(pool, who[0], who[2], query, rarity)
                async with pool.acquire() as conn:
                    _, ms, text = await plan(conn, who[0], sql, params)
                timings.setdefault(f"{label}, without", []).append(ms)
                same_plan += shape(text) == shapes[(label, query)]
        print(
            f"without the index: identical hits, scores and terms for {same} of {len(before)} queries;"
            f" the same plan (nodes and conditions) as the services' role for {same_plan}",
            flush=True,
        )
        for key, values in timings.items():
            print(f"{key}: execution median {statistics.median(values):.2f} ms a query (EXPLAIN ANALYZE)", flush=True)
        await pool.close()
        await owner.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--public", type=int, default=2_000, help="public memories of the publishing tenant")
    parser.add_argument("--pending", type=int, default=10_000, help="memories for the pending-list merge (0: none)")
    parser.add_argument("--writes", type=int, default=2_000, help="single-row inserts a round (0: none)")
    parser.add_argument("--write-rounds", type=int, default=6, help="rounds with and without the index, in turn")
    parser.add_argument("--plans", action="store_true", help="print the plans of the first query of each case")
    parser.add_argument("--public-branch", action="store_true", help="only the load and step 5 (the partial index)")
    parser.add_argument("--extra-queries", type=int, default=40, help="step 5: questions beyond latency.py's eight")
    parser.add_argument("--show-plans", type=int, default=0, help="step 5: print the plans of the first N queries")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
