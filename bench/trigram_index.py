"""The trigram nearest-neighbour search behind ``possible_supersedes`` at 100k memories, for the index shapes
it could use: how long one search takes, what an insert costs, how large the index is.

    python bench/trigram_index.py                  # 2,000 texts × 50 copies, as latency.py --bulk loads
    python bench/trigram_index.py --copies 1       # 100,000 distinct synthetic memories
    python bench/trigram_index.py --window-ab      # the 012 nearest-first scan vs the recent window (025)

Starts an embedded PostgreSQL in a temp dir with a bare table shaped like the part of memory_items the
search reads: nine in ten memories belong to tenant A, one in ten to tenant B; two in three are facts,
one in three notes. The search is the one ``similar_live`` makes: one tenant, one kind, nearest text first,
five rows. Three cases: a common kind in the big tenant, the small tenant, and a kind with no memories yet.

``--window-ab`` compares, in the same run and on the same table, the nearest-first scan of the index from
migration 012 with the bounded search of migration 025: similarity() on the N most recent rows of the tenant
and kind, read through a btree on (tenant, kind, created_at DESC), for each N of ``--windows``. It also
prints EXPLAIN (ANALYZE, BUFFERS) of one search of each, and what an insert costs with and without the
trigram index.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
from latency import synthetic

from engram.runtime.postgres import EmbeddedPostgres

INDEXES = (
    ("text, default signature (12 bytes)", "content gist_trgm_ops"),
    ("text, 64-byte signature", "content gist_trgm_ops(siglen = 64)"),
    ("tenant, kind, text, 64-byte signature", "tenant_id, kind, content gist_trgm_ops(siglen = 64)"),
)
SEARCH = "SELECT id FROM t WHERE tenant_id = $2 AND kind = $3 ORDER BY content <-> $1 LIMIT 5"
WINDOWED = (
    "SELECT id, s FROM (SELECT id, similarity(content, $1) AS s FROM ("
    "SELECT id, content FROM t WHERE tenant_id = $2 AND kind = $3 ORDER BY created_at DESC LIMIT $4) recent) w "
    "WHERE s >= 0.35 ORDER BY s DESC LIMIT 5"
)
NEAREST = (
    "SELECT id, s FROM (SELECT id, similarity(content, $1) AS s FROM t WHERE tenant_id = $2 AND kind = $3 "
    "ORDER BY content <-> $1 LIMIT 5) nearest WHERE s >= 0.35 ORDER BY s DESC"
)
TRIGRAM = "tenant_id, kind, content gist_trgm_ops(siglen = 64)"
RECENT = "tenant_id, kind, created_at DESC"
PROBES = 8
REPEATS = 3
INSERTS = 200


async def load(conn: asyncpg.Connection, texts: list[str], big: uuid.UUID, small: uuid.UUID) -> None:
    """The bare table, one row a second, the newest last."""
    await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS btree_gist")
    await conn.execute(
        "CREATE TABLE t (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, kind text NOT NULL, "
        "content text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
    )
    start = datetime.now(UTC) - timedelta(seconds=len(texts) + 10)
    await conn.copy_records_to_table(
        "t",
        records=[
            (
                small if n % 10 == 0 else big,
                "note" if n % 3 == 0 else "fact",
                f"{x} (copy {n})",
                start + timedelta(seconds=n),
            )
            for n, x in enumerate(texts)
        ],
        columns=["tenant_id", "kind", "content", "created_at"],
    )
    await conn.execute("ANALYZE t")


async def timed_searches(conn: asyncpg.Connection, sql: str, probes: list[str], *args: object) -> str:
    medians = []
    for probe in probes:
        times = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            await conn.fetch(sql, probe, *args)
            times.append((time.perf_counter() - started) * 1000)
        medians.append(statistics.median(times))
    return f"{statistics.median(medians):.1f} ms (slowest {max(medians):.1f})"


async def insert_cost(conn: asyncpg.Connection, tenant: uuid.UUID, probes: list[str]) -> str:
    started = time.perf_counter()
    for n in range(INSERTS):
        await conn.execute(
            "INSERT INTO t (tenant_id, kind, content) VALUES ($1, 'fact', $2)",
            tenant,
            f"{probes[n % PROBES]} (insert {n})",
        )
    cost = f"{(time.perf_counter() - started) / INSERTS * 1000:.2f} ms"
    await conn.execute("DELETE FROM t WHERE content LIKE '%(insert %'")
    return cost


async def explain(conn: asyncpg.Connection, sql: str, *args: object) -> str:
    rows = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", *args)
    return "\n".join("    " + r[0] for r in rows)


async def window_ab(url: str, texts: list[str], windows: list[int]) -> list[dict[str, object]]:
    """The 012 nearest-first scan and the 025 recent window, alternated on the same table."""
    conn = await asyncpg.connect(url)
    big, small = uuid.uuid4(), uuid.uuid4()
    cases = (("tenant A (90%), facts", big, "fact"), ("tenant B (10%), notes", small, "note"))
    probes = synthetic(PROBES, seed=99)
    out: list[dict[str, object]] = []
    try:
        await load(conn, texts, big, small)
        await conn.execute(f"CREATE INDEX t_trgm ON t USING gist ({TRIGRAM})")
        await conn.execute(f"CREATE INDEX t_recent ON t ({RECENT})")
        await conn.execute("ANALYZE t")
        sizes = await conn.fetchrow(
            "SELECT pg_size_pretty(pg_relation_size('t_trgm')) AS trgm, "
            "pg_size_pretty(pg_relation_size('t_recent')) AS recent"
        )
        print(f"index sizes: trigram GiST {sizes['trgm']}, btree (tenant, kind, created_at) {sizes['recent']}")
        print("EXPLAIN, tenant A facts, nearest-first (012):")
        print(await explain(conn, NEAREST, probes[0], big, "fact"))
        for n in windows:
            print(f"EXPLAIN, tenant A facts, window {n} (025):")
            print(await explain(conn, WINDOWED, probes[0], big, "fact", n))
        for round_ in range(2):  # alternated, twice, so that drift in machine load shows
            row: dict[str, object] = {"search": f"nearest-first, GiST (012), round {round_ + 1}"}
            for label, tenant, kind in cases:
                row[label] = await timed_searches(conn, NEAREST, probes, tenant, kind)
            print(row, flush=True)
            out.append(row)
            for n in windows:
                row = {"search": f"window {n}, btree (025), round {round_ + 1}"}
                for label, tenant, kind in cases:
                    row[label] = await timed_searches(conn, WINDOWED, probes, tenant, kind, n)
                print(row, flush=True)
                out.append(row)
        with_trgm = await insert_cost(conn, big, probes)
        await conn.execute("DROP INDEX t_trgm")
        without = await insert_cost(conn, big, probes)
        print(f"insert: {with_trgm} with the trigram GiST and the btree, {without} with the btree alone")
    finally:
        await conn.close()
    return out


async def measure(url: str, texts: list[str]) -> list[dict[str, object]]:
    conn = await asyncpg.connect(url)
    big, small = uuid.uuid4(), uuid.uuid4()
    cases = (
        ("tenant A (90%), facts", big, "fact"),
        ("tenant B (10%), notes", small, "note"),
        ("tenant A, a kind with no memories", big, "procedure"),
    )
    out = []
    try:
        await load(conn, texts, big, small)
        probes = synthetic(PROBES, seed=99)
        for name, columns in INDEXES:
            started = time.perf_counter()
            await conn.execute(f"CREATE INDEX t_trgm ON t USING gist ({columns})")
            row: dict[str, object] = {
                "index": name,
                "build_s": round(time.perf_counter() - started, 1),
                "size": await conn.fetchval("SELECT pg_size_pretty(pg_relation_size('t_trgm'))"),
            }
            for label, tenant, kind in cases:
                medians = []
                for probe in probes:
                    times = []
                    for _ in range(REPEATS):
                        started = time.perf_counter()
                        await conn.fetch(SEARCH, probe, tenant, kind)
                        times.append((time.perf_counter() - started) * 1000)
                    medians.append(statistics.median(times))
                row[label] = f"{statistics.median(medians):.1f} ms (slowest {max(medians):.1f})"
            started = time.perf_counter()
            for n in range(INSERTS):
                await conn.execute(
                    "INSERT INTO t (tenant_id, kind, content) VALUES ($1, 'fact', $2)",
                    big,
                    f"{probes[n % PROBES]} (insert {n})",
                )
            row["insert"] = f"{(time.perf_counter() - started) / INSERTS * 1000:.2f} ms"
            await conn.execute("DELETE FROM t WHERE content LIKE '%(insert %'")
            await conn.execute("DROP INDEX t_trgm")
            print(row, flush=True)
            out.append(row)
    finally:
        await conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--copies", type=int, default=50, help="each distinct text this many times")
    parser.add_argument("--window-ab", action="store_true", help="the 012 scan vs the 025 recent window")
    parser.add_argument("--windows", default="500,1000,2000", help="window sizes for --window-ab")
    args = parser.parse_args()
    texts = synthetic(args.memories // args.copies) * args.copies
    home = Path(tempfile.mkdtemp(prefix="engram-trgm-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    url = server.start()
    try:
        if args.window_ab:
            rows = asyncio.run(window_ab(url, texts, [int(n) for n in args.windows.split(",")]))
        else:
            rows = asyncio.run(measure(url, texts))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(
        f"\n{len(texts)} memories ({args.copies} copies of each text); median over {PROBES} probe texts of the "
        f"median of {REPEATS} searches"
    )
    first = next(iter(rows[0]))
    keys = [k for k in rows[0] if k != first]
    print(f"| {first} | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for r in rows:
        print(f"| {r[first]} | " + " | ".join(str(r[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
