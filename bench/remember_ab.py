"""The remember transaction of two checkouts in process, in turn: ingest's ``IngestService.remember`` (the
write context, the secret guard, the insert with its rows, possible_supersedes, the commit) against its own
embedded PostgreSQL, with no gateway, gRPC, relay or pipeline. Each checkout runs in a process of its own
(``PYTHONPATH`` the checkout) that starts its own PostgreSQL, migrates it and warms it with ``--warmup``
remembers; then the rounds alternate between the two processes (never at once), each round ``--writes``
remembers of ``bench/latency.py``'s templated texts (near each other, as in ``remember_cpu.py``: most have
candidates to score) by ``--writers`` concurrent writers. Per remember: this side's process CPU (the ingest
side) and its PostgreSQL's (the postmaster and every child: backends, WAL writer, autovacuum), from /proc.

    python bench/remember_ab.py /tmp/before . --writes 400 --rounds 8 [--writers 4] [--env K=V]

On a loaded machine the alternation is what makes the two comparable: both sides see the same drift.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


async def serve(writers: int, warmup: int) -> None:
    """The child: one checkout's IngestService over its own embedded PostgreSQL; a line ``N`` on stdin runs N
    remembers and answers one JSON line."""
    import shutil
    import tempfile

    import psutil

    from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool
    from engram.domain.models import CallerContext
    from engram.runtime.postgres import EmbeddedPostgres
    from services.ingest import service as ingest_service
    from services.ingest.service import IngestService, RememberCommand

    # bench/latency.py puts its own checkout first on sys.path: read only after this checkout's modules
    synthetic = importlib.import_module("latency").synthetic
    cpu = importlib.import_module("write_floor").cpu
    home = Path(tempfile.mkdtemp(prefix="remember-ab-", dir="/tmp"))
    server = EmbeddedPostgres(home / "pgdata")
    try:
        url = server.start()
        settings = Settings(database_url=url)
        await migrate(url, settings)
        pool = await create_pool(url, role=settings.app_role, min_size=writers, max_size=writers)
        ctx = CallerContext(
            tenant_id=DEFAULT_TENANT_ID,
            principal_id=DEFAULT_ADMIN_ID,
            principal_type="admin",
            scopes=frozenset({"admin"}),
            request_id="bench",
            traceparent="00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        )
        service = IngestService(pool, settings)
        async with pool.acquire() as conn:
            postmaster = psutil.Process(await conn.fetchval("SELECT pg_backend_pid()")).parent()
        assert postmaster is not None

        def server_cpu() -> float:
            return cpu(postmaster, children=True)

        serial = 0

        async def run(n: int) -> float:
            nonlocal serial
            texts = [f"ab {serial + i}: {t}" for i, t in enumerate(synthetic(n, seed=serial + 11))]
            serial += n
            queue: asyncio.Queue[str] = asyncio.Queue()
            for text in texts:
                queue.put_nowait(text)

            async def writer() -> None:
                while not queue.empty():
                    await service.remember(ctx, RememberCommand(content=queue.get_nowait()))

            started = time.perf_counter()
            await asyncio.gather(*(writer() for _ in range(writers)))
            return time.perf_counter() - started

        await run(warmup)
        loop = asyncio.get_running_loop()
        print(f"ready {ingest_service.__file__}", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            n = int(line)
            mine, theirs = time.process_time(), server_cpu()
            wall = await run(n)
            mine, theirs = time.process_time() - mine, server_cpu() - theirs
            print(
                json.dumps(
                    {
                        "ingest_cpu_ms": round(mine / n * 1000, 3),
                        "postgres_cpu_ms": round(theirs / n * 1000, 3),
                        "per_second": round(n / wall, 1),
                    }
                ),
                flush=True,
            )
        await pool.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def compare(checkouts: list[Path], args: argparse.Namespace) -> dict[str, Any]:
    env_extra = dict(item.split("=", 1) for item in args.env)
    workers = []
    for checkout in checkouts:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(env_extra)
        env["PYTHONPATH"] = f"{checkout}{os.pathsep}{HERE}"
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--serve",
                    *("--writers", str(args.writers)),
                    *("--warmup", str(args.warmup)),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=checkout,
            )
        )
    rounds: list[list[dict[str, float]]] = [[], []]
    try:
        for checkout, worker in zip(checkouts, workers, strict=True):
            assert worker.stdout is not None
            ready = worker.stdout.readline().split()
            assert ready[0] == "ready" and Path(ready[1]).resolve().is_relative_to(checkout), (checkout, ready)
        for round_ in range(args.rounds):
            order = (0, 1) if round_ % 2 == 0 else (1, 0)  # before first in even rounds, after first in odd ones
            for w in order:
                worker = workers[w]
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(f"{args.writes}\n")
                worker.stdin.flush()
                figures = json.loads(worker.stdout.readline())
                rounds[w].append(figures)
                print(f"round {round_ + 1}, {checkouts[w]}: {figures}", flush=True)
    finally:
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(timeout=120)

    def summary(side: list[dict[str, float]]) -> dict[str, Any]:
        return {
            key: {
                "median": round(statistics.median(r[key] for r in side), 3),
                "min": min(r[key] for r in side),
                "max": max(r[key] for r in side),
            }
            for key in side[0]
        }

    lower = {
        key: sum(a[key] < b[key] for a, b in zip(rounds[1], rounds[0], strict=True))
        for key in ("ingest_cpu_ms", "postgres_cpu_ms")
    }
    return {
        "before": {"checkout": str(checkouts[0]), **summary(rounds[0])},
        "after": {"checkout": str(checkouts[1]), **summary(rounds[1])},
        "after_lower_in_rounds": lower,
        "rounds": args.rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", type=Path, nargs="*", metavar="BEFORE AFTER", help="two checkouts")
    parser.add_argument("--writes", type=int, default=400, help="remembers per round")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per checkout, in turn")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=300, help="remembers before the first round")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for both sides (repeatable)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.writers, args.warmup))
        return
    if len(args.checkouts) != 2:
        parser.error("give two checkouts: BEFORE AFTER")
    result = compare([p.resolve() for p in args.checkouts], args)
    print(json.dumps({"load_average": [round(x, 1) for x in os.getloadavg()], **result}, indent=1))


if __name__ == "__main__":
    main()
