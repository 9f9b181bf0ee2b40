"""The trigram nearest-neighbour search behind ``possible_supersedes`` at 100k memories, for the index shapes
it could use: how long one search takes, what an insert costs, how large the index is.

    python bench/trigram_index.py                  # 2,000 texts × 50 copies, as latency.py --bulk loads
    python bench/trigram_index.py --copies 1       # 100,000 distinct synthetic memories

Starts an embedded PostgreSQL in a temp dir with a bare table shaped like the part of memory_items the
search reads: nine in ten memories belong to tenant A, one in ten to tenant B; two in three are facts,
one in three notes. The search is the one ``similar_live`` makes: one tenant, one kind, nearest text first,
five rows. Three cases: a common kind in the big tenant, the small tenant, and a kind with no memories yet.
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

import asyncpg
from latency import synthetic

from engram.runtime.postgres import EmbeddedPostgres

INDEXES = (
    ("text, default signature (12 bytes)", "content gist_trgm_ops"),
    ("text, 64-byte signature", "content gist_trgm_ops(siglen = 64)"),
    ("tenant, kind, text, 64-byte signature", "tenant_id, kind, content gist_trgm_ops(siglen = 64)"),
)
SEARCH = "SELECT id FROM t WHERE tenant_id = $2 AND kind = $3 ORDER BY content <-> $1 LIMIT 5"
PROBES = 8
REPEATS = 3
INSERTS = 200


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
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS btree_gist")
        await conn.execute(
            "CREATE TABLE t (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, kind text NOT NULL, "
            "content text NOT NULL)"
        )
        await conn.copy_records_to_table(
            "t",
            records=[
                (small if n % 10 == 0 else big, "note" if n % 3 == 0 else "fact", f"{x} (copy {n})")
                for n, x in enumerate(texts)
            ],
            columns=["tenant_id", "kind", "content"],
        )
        await conn.execute("ANALYZE t")
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
    args = parser.parse_args()
    texts = synthetic(args.memories // args.copies) * args.copies
    home = Path(tempfile.mkdtemp(prefix="engram-trgm-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    url = server.start()
    try:
        rows = asyncio.run(measure(url, texts))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(
        f"\n{len(texts)} memories ({args.copies} copies of each text); median over {PROBES} probe texts of the "
        f"median of {REPEATS} searches"
    )
    keys = [k for k in rows[0] if k != "index"]
    print("| index | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for r in rows:
        print(f"| {r['index']} | " + " | ".join(str(r[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
