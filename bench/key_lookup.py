"""The API-key lookup every authenticated request makes (engram/db/keys.find), A/B: as it was until
2026-12-02 (a transaction: set the key id, read the key, set its tenant, read the principal) against the one
statement of migration 028 (``engram_find_key``). Wall time and this process's plus the server backend's CPU
per lookup, alternated in rounds, on its own embedded PostgreSQL (the development tenant's key).

    python bench/key_lookup.py [--lookups 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def before(pool: Any, key_id: str) -> object:
    """keys.find as it was at 6d7c5c2: five statements in a transaction."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT set_config('app.api_key_id', $1, true)", key_id)
        key = await conn.fetchrow(
            "SELECT tenant_id, principal_id, salt, secret_hash, scopes, revoked_at, "
            "coalesce(last_used_at < now() - interval '1 minute', true) AS stale FROM api_keys WHERE id = $1",
            key_id,
        )
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", str(key["tenant_id"]))
        return await conn.fetchrow(
            "SELECT type, disabled_at, platform_admin FROM principals WHERE id = $1", key["principal_id"]
        )


async def measure(lookup: Callable[[], Awaitable[object]], backend: Any, n: int) -> dict[str, float]:
    for _ in range(50):
        await lookup()
    server = sum(backend.cpu_times()[:2])
    mine, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        assert await lookup() is not None
    wall, mine = time.perf_counter() - wall, time.process_time() - mine
    server = sum(backend.cpu_times()[:2]) - server
    return {"wall_ms": wall / n * 1000, "client_cpu_ms": mine / n * 1000, "server_cpu_ms": server / n * 1000}


async def main(args: argparse.Namespace) -> None:
    import psutil

    from engram.config import Settings
    from engram.db import keys
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool
    from engram.domain.keys import parse_key
    from engram.runtime.dev_key import issue_admin_key
    from engram.runtime.postgres import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="key-lookup-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    try:
        url = server.start()
        settings = Settings(database_url=url)
        await migrate(url, settings)
        parsed = parse_key(await issue_admin_key(url, settings, "key lookup benchmark"))
        assert parsed is not None
        key_id = parsed[0]
        pool = await create_pool(url, role=settings.app_role, min_size=1, max_size=1)
        try:
            async with pool.acquire() as conn:
                backend = psutil.Process(await conn.fetchval("SELECT pg_backend_pid()"))
            variants = {
                "before (5 statements in a transaction)": lambda: before(pool, key_id),
                "after (engram_find_key, 1 statement)": lambda: keys.find(pool, key_id),
            }
            for round_ in range(1, args.rounds + 1):
                for name, lookup in variants.items():
                    figures = await measure(lookup, backend, args.lookups)
                    print(f"round {round_}, {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
        finally:
            await pool.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lookups", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
