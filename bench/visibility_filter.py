"""The visibility filter (``visible_to`` in engram/db/items.py) applied to every memory of one tenant, as the
listing, the keyword candidates and the conflicts' reads apply it row by row: the current form against the one
at ``--before COMMIT``, alternating in one process, over one embedded PostgreSQL filled by bench/latency.py's
bulk loader.

    python bench/visibility_filter.py --rows 6000 --before 3a1b2c4

Per round and form: the mean wall time of ``--repeat`` ``SELECT count(*) FROM memory_items i WHERE …`` in one
tenant transaction (the same backend for both forms). Prints the figures; writes nothing.
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

from latency import development_owner, grow
from vector_filter import _module_at


async def main_async(args: argparse.Namespace) -> None:
    from engram.config import Settings
    from engram.db import items
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool, tenant_tx
    from engram.runtime.postgres import EmbeddedPostgres

    forms = {f"at {args.before}": _module_at(args.before, "engram/db/items.py").visible_to, "current": items.visible_to}
    home = Path(tempfile.mkdtemp(prefix="visibility-filter-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    url = server.start()
    try:
        await migrate(url, Settings(database_url=url))
        me = development_owner()
        await grow(url, [me], [0], args.rows)
        pool = await create_pool(url, role=Settings(database_url=url).app_role, max_size=1)
        times: dict[str, list[float]] = {name: [] for name in forms}
        try:
            for round_ in range(args.rounds):
                for name, visible_to in forms.items():
                    sql = f"SELECT count(*) FROM memory_items i WHERE {visible_to('$1')}"
                    async with tenant_tx(pool, str(me.tenant_id)) as conn:
                        seen = await conn.fetchval(sql, str(me.principal_id))  # warm, and the count
                        started = time.perf_counter()
                        for _ in range(args.repeat):
                            await conn.fetchval(sql, str(me.principal_id))
                    times[name].append((time.perf_counter() - started) / args.repeat * 1000)
                    print(
                        json.dumps({"form": name, "round": round_ + 1, "rows": seen, "ms": round(times[name][-1], 2)})
                    )
        finally:
            await pool.close()
        print(json.dumps({"median_ms": {name: round(statistics.median(t), 2) for name, t in times.items()}}))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=6000, help="memories of the one tenant")
    parser.add_argument("--before", required=True, help="the commit whose visible_to is compared")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=20, help="statements per round and form")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
