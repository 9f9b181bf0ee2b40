"""The keyword statement's cost with rarity weighting, and whether a rewrite changes its answers: starts a
stack, loads one LoCoMo conversation (conv-26 by default) through the API, checks that ``search.keyword``
returns the same hits, scores and terms as ``engram/db/search.py`` at ``--before`` for each of the
conversation's questions, then times both with rarity weighting and the current one with ts_rank (two rounds),
the statement in process.

    cd bench && python keyword_cost.py --data <locomo10_evidence_corrected.json> --before 1832b18

LoCoMo (CC BY-NC 4.0) is read from where ``--data`` points at run time, never copied into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import locomo
from latency import start_stack
from vector_filter import _search_at

from engram.config import Settings
from engram.db import search
from engram.db.pool import service_pool, tenant_tx
from engram.db.search import Filters


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=locomo.DATA)
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--before", required=True, help="the commit whose engram/db/search.py to compare with")
    args = parser.parse_args()
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
