"""The keyword statement's cost with rarity weighting, and whether a rewrite changes its answers (a prototype
kept for the record, docs/benchmarks.md 2026-12-02): starts a stack, loads conv-26, checks that
``search.keyword`` returns the same hits and scores as a previous copy of ``engram/db/search.py`` saved at
/tmp/q-multihop-search-old.py, then times both and ts_rank. Run from bench/ with PYTHONPATH=. and BENCH_PORT."""

import asyncio
import json
import tempfile
import time
from pathlib import Path

import asyncpg
import httpx
import locomo
from latency import start_stack

from engram.config import Settings
from engram.db import search
from engram.db.pool import service_pool, tenant_tx
from engram.db.search import Filters


async def main(url, key, dburl):
    convs = locomo.load(Path("/work/shared/bench/locomo/locomo10_evidence_corrected.json"), ["conv-26"])
    async with httpx.AsyncClient(base_url=url, timeout=120, headers={"authorization": f"Bearer {key}"}) as client:
        await locomo.ingest(client, convs[0])
    conv = convs[0]
    owner = await asyncpg.connect(dburl)
    tenant = str(await owner.fetchval("SELECT tenant_id FROM workspaces WHERE id = $1", conv.workspace_id))
    await owner.close()
    pool = await service_pool(Settings(database_url=dburl), max_size=1)
    f = Filters(workspace_id=conv.workspace_id)
    qs = [str(q["question"]) for q in conv.questions]
    import importlib.util

    spec = importlib.util.spec_from_file_location("oldsearch", "/tmp/q-multihop-search-old.py")
    import sys

    old = importlib.util.module_from_spec(spec)
    sys.modules["oldsearch"] = old
    spec.loader.exec_module(old)
    same = 0
    for q in qs:
        async with tenant_tx(pool, tenant) as conn:
            a = [(str(i.id), round(r, 9), t) for i, r, t in await search.keyword(conn, q, f, locomo.ADMIN_ID, 50)]
            b = [(str(i.id), round(r, 9), t) for i, r, t in await old.keyword(conn, q, f, locomo.ADMIN_ID, 50)]
        same += a == b
    print("identical", same, "of", len(qs), flush=True)
    for label, fn, kw in (
        ("rarity new", search.keyword, dict(rarity=True)),
        ("rarity old", old.keyword, dict(rarity=True)),
        ("ts_rank", search.keyword, dict(rarity=False)),
    ) * 2:
        t = 0.0
        for q in qs:
            async with tenant_tx(pool, tenant) as conn:
                s = time.perf_counter()
                await fn(conn, q, f, locomo.ADMIN_ID, 50, **kw)
                t += time.perf_counter() - s
        print(label, round(1000 * t / len(qs), 2), "ms", flush=True)
    await pool.close()


home = Path(tempfile.mkdtemp(prefix="q-multihop-prof-", dir="/tmp")) / "home"
process, url, key = start_stack(home)
print("stack pid", process.pid, flush=True)
try:
    dburl = json.loads((home / "stack.json").read_text())["database_url"]
    asyncio.run(main(url, key, dburl))
finally:
    process.terminate()
    process.wait(timeout=60)
