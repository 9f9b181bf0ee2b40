"""The trigram nearest-neighbour search behind ``possible_supersedes`` at 100k memories, for GiST signature
lengths: how long one search takes, what an insert costs, how large the index is.

    python bench/trigram_index.py                  # 100,000 distinct synthetic memories
    python bench/trigram_index.py --copies 50      # 2,000 texts × 50 identical copies (the --bulk store)

Starts an embedded PostgreSQL in a temp dir; a bare table of texts, no Engram schema, so only the index
differs between the rows of the table it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import asyncpg
from latency import synthetic

from engram.runtime.postgres import EmbeddedPostgres

SIGNATURES = (None, 64, 256, 1024)  # None: pg_trgm's default, 12 bytes
PROBES = 8
REPEATS = 5
INSERTS = 200


async def measure(url: str, texts: list[str]) -> list[dict[str, object]]:
    conn = await asyncpg.connect(url)
    out = []
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        await conn.execute("CREATE TABLE t (id bigserial PRIMARY KEY, content text NOT NULL)")
        await conn.copy_records_to_table("t", records=[(x,) for x in texts], columns=["content"])
        await conn.execute("ANALYZE t")
        probes = synthetic(PROBES, seed=99)
        for siglen in SIGNATURES:
            ops = "gist_trgm_ops" if siglen is None else f"gist_trgm_ops(siglen = {siglen})"
            started = time.perf_counter()
            await conn.execute(f"CREATE INDEX t_trgm ON t USING gist (content {ops})")
            build_s = time.perf_counter() - started
            size = await conn.fetchval("SELECT pg_size_pretty(pg_relation_size('t_trgm'))")
            medians = []
            for probe in probes:
                times = []
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    await conn.fetch("SELECT id, similarity(content, $1) FROM t ORDER BY content <-> $1 LIMIT 5", probe)
                    times.append((time.perf_counter() - started) * 1000)
                medians.append(statistics.median(times))
            started = time.perf_counter()
            for n in range(INSERTS):
                await conn.execute("INSERT INTO t (content) VALUES ($1)", f"{probes[n % PROBES]} (insert {n})")
            insert_ms = (time.perf_counter() - started) / INSERTS * 1000
            await conn.execute("DELETE FROM t WHERE content LIKE '%(insert %'")
            await conn.execute("DROP INDEX t_trgm")
            row = {"siglen": siglen or "default (12)", "build_s": round(build_s, 1), "size": size,
                   "search_median_ms": round(statistics.median(medians), 1), "search_worst_ms": round(max(medians), 1),
                   "insert_ms": round(insert_ms, 2)}
            print(row, flush=True)
            out.append(row)
    finally:
        await conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--copies", type=int, default=1, help="each distinct text this many times")
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
    print(f"{len(texts)} memories ({args.copies} copies each), {PROBES} probe texts, median of {REPEATS} runs each")
    print("| signature | build | size | search median of probes | slowest probe | insert |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['siglen']} | {r['build_s']} s | {r['size']} | {r['search_median_ms']} ms | "
              f"{r['search_worst_ms']} ms | {r['insert_ms']} ms |")


if __name__ == "__main__":
    main()
