"""The remember transaction of two checkouts in process, in turn: ingest's ``IngestService.remember`` (the
write context, the secret guard, the insert with its rows, possible_supersedes, the commit) against its own
embedded PostgreSQL, with no gateway, gRPC, relay or pipeline. Each checkout runs in a process of its own
(``PYTHONPATH`` the checkout) that starts its own PostgreSQL, migrates it and warms it with ``--warmup``
remembers; then the rounds alternate between the two processes (never at once), each round ``--writes``
remembers of ``bench/latency.py``'s templated texts (near each other, as in ``remember_cpu.py``: most have
candidates to score) by ``--writers`` concurrent writers. Per remember: this side's process CPU (the ingest
side) and its PostgreSQL's (the postmaster and every child: backends, WAL writer, autovacuum), from /proc.

    python bench/remember_ab.py /tmp/before . --writes 400 --rounds 8 [--writers 4] [--env K=V] [--store N]
    python bench/remember_ab.py . --sizes 6000,100000 --writes 300 --rounds 6 --statements --cache /tmp/ab-stores

On a loaded machine the alternation is what makes the two comparable: both sides see the same drift.

``--store N`` bulk-loads N memories into the writer's tenant before the warm-up (``load_store``: COPY of
``bench/latency.py``'s templated texts, so the keyword postings, the GIN tsvector index and the btree indexes
hold them as after real writes; no vectors: the remember transaction reads none), then ``VACUUM ANALYZE`` as
autovacuum would leave a settled store (``--no-vacuum``: measured right after the load). ``--sizes A,B`` runs
one checkout twice, at A and at B memories (or two checkouts, each at its size). ``--cache DIR`` keeps each
loaded data directory (``DIR/store-N[-novacuum]``) and copies it for later runs instead of loading again.
``--statements`` loads ``pg_stat_statements``: each round also reports each statement's execution ms per
remember, and the summary their medians. ``--explain PREFIX`` logs EXPLAIN (ANALYZE, BUFFERS) of one statement
in fifty (``auto_explain``, nested statements and triggers too) to ``PREFIX-<store>.log``.
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
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


STORE_TEXTS = 2000  # distinct templated texts of a bulk-loaded store, each copy numbered


async def load_store(url: str, n: int, vacuum: bool) -> None:
    """``n`` active facts in the development tenant's default workspace, 5,000 rows a COPY (the keyword
    postings' trigger runs for each row as it does for an insert), then ``VACUUM ANALYZE`` (``vacuum``)."""
    import asyncpg

    from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID
    from tests.support.bulk import ITEM_COLUMNS, fact_row

    texts = importlib.import_module("latency").synthetic(STORE_TEXTS, seed=3)
    conn = await asyncpg.connect(url)
    try:
        for first in range(0, n, 5000):
            rows = [
                fact_row(
                    DEFAULT_TENANT_ID,
                    uuid.uuid4(),
                    DEFAULT_WORKSPACE_ID,
                    DEFAULT_ADMIN_ID,
                    f"{texts[i % STORE_TEXTS]} (bulk {i})",
                )
                for i in range(first, min(first + 5000, n))
            ]
            async with conn.transaction():
                await conn.execute("SELECT set_config('app.tenant_id', $1, true)", DEFAULT_TENANT_ID)
                await conn.copy_records_to_table("memory_items", records=rows, columns=list(ITEM_COLUMNS))
        if vacuum:
            await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()


def copy_tree(source: Path, target: Path) -> None:
    """A data directory copied with its owner and modes (``cp -a``)."""
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def statement_times(rows: list[Any], n: int, least: float = 0.5) -> dict[str, float]:
    """Execution ms per remember of each statement called at least ``least`` times a remember."""
    return {
        " ".join(r["query"].split())[:120]: round(r["total_exec_time"] / n, 4)
        for r in rows
        if r["calls"] >= n * least and "pg_stat_statements" not in r["query"]
    }


EXPLAIN_SETTINGS = """
auto_explain.log_min_duration = 0
auto_explain.sample_rate = 0.02
auto_explain.log_analyze = on
auto_explain.log_buffers = on
auto_explain.log_triggers = on
auto_explain.log_nested_statements = on
"""
"""``--explain``: EXPLAIN (ANALYZE, BUFFERS) of one statement in fifty, nested ones too, in PostgreSQL's log (the
instrumentation costs CPU: a run with it measures plans, not cost)."""


async def serve(
    writers: int,
    warmup: int,
    store: int = 0,
    vacuum: bool = True,
    statements: bool = False,
    cache: Path | None = None,
    explain: Path | None = None,
) -> None:
    """The child: one checkout's IngestService over its own embedded PostgreSQL (with ``store`` memories
    bulk-loaded first); a line ``N`` on stdin runs N remembers and answers one JSON line."""
    import shutil
    import tempfile

    import asyncpg
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
    cached = cache / f"store-{store}{'' if vacuum else '-novacuum'}" if cache and store else None
    if cached is not None and (cached / "PG_VERSION").exists():
        copy_tree(cached, home / "pgdata")
    if statements or explain:
        server.prepare()
        libraries = ",".join(name for name, on in (("pg_stat_statements", statements), ("auto_explain", explain)) if on)
        with (home / "pgdata" / "postgresql.conf").open("a") as conf:
            conf.write(f"\nshared_preload_libraries = '{libraries}'\npg_stat_statements.track = all\n")
            if explain:
                conf.write(EXPLAIN_SETTINGS)
    try:
        url = server.start()
        settings = Settings(database_url=url)
        await migrate(url, settings)
        if store and not (cached is not None and cached.exists()):
            await load_store(url, store, vacuum)
            if cached is not None:
                server.stop()
                cached.parent.mkdir(parents=True, exist_ok=True)
                copy_tree(home / "pgdata", cached)
                url = server.start()
        admin = await asyncpg.connect(url)  # the superuser: pg_stat_statements and the store's size
        if statements:
            await admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        await admin.execute("SET app.system_scope = 'on'")
        live = int(await admin.fetchval("SELECT count(*) FROM memory_items"))
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
            return float(cpu(postmaster, children=True))

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
        print(f"ready {ingest_service.__file__} {live}", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            n = int(line)
            if statements:
                await admin.execute("SELECT pg_stat_statements_reset()")
            mine, theirs = time.process_time(), server_cpu()
            wall = await run(n)
            mine, theirs = time.process_time() - mine, server_cpu() - theirs
            figures: dict[str, Any] = {
                "ingest_cpu_ms": round(mine / n * 1000, 3),
                "postgres_cpu_ms": round(theirs / n * 1000, 3),
                "per_second": round(n / wall, 1),
            }
            if statements:
                rows = await admin.fetch("SELECT query, calls, total_exec_time FROM pg_stat_statements")
                figures["statements"] = statement_times(rows, n)
            print(json.dumps(figures), flush=True)
        await admin.close()
        await pool.close()
    finally:
        server.stop()
        if explain is not None:
            shutil.copy(server.log_path, f"{explain}-{store}.log")
        shutil.rmtree(home, ignore_errors=True)


def compare(checkouts: list[Path], stores: list[int], args: argparse.Namespace) -> dict[str, Any]:
    """Alternating rounds of the two sides: ``checkouts[i]`` over a store of ``stores[i]`` bulk memories."""
    env_extra = dict(item.split("=", 1) for item in args.env)
    workers = []
    for checkout, store in zip(checkouts, stores, strict=True):
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
                    *("--store", str(store)),
                    *(["--no-vacuum"] if args.no_vacuum else []),
                    *(["--statements"] if args.statements else []),
                    *(["--cache", str(args.cache.resolve())] if args.cache else []),
                    *(["--explain", str(args.explain.resolve())] if args.explain else []),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=checkout,
            )
        )
    rounds: list[list[dict[str, Any]]] = [[], []]
    live = [0, 0]
    try:
        for w, (checkout, worker) in enumerate(zip(checkouts, workers, strict=True)):
            assert worker.stdout is not None
            ready = worker.stdout.readline().split()
            assert ready[0] == "ready" and Path(ready[1]).resolve().is_relative_to(checkout), (checkout, ready)
            live[w] = int(ready[2])
        for round_ in range(args.rounds):
            order = (0, 1) if round_ % 2 == 0 else (1, 0)  # before first in even rounds, after first in odd ones
            for w in order:
                worker = workers[w]
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(f"{args.writes}\n")
                worker.stdin.flush()
                figures = json.loads(worker.stdout.readline())
                rounds[w].append(figures)
                shown = {k: v for k, v in figures.items() if k != "statements"}
                print(f"round {round_ + 1}, {checkouts[w]} at {stores[w]}: {shown}", flush=True)
    finally:
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(timeout=300)

    def summary(side: list[dict[str, Any]]) -> dict[str, Any]:
        figures: dict[str, Any] = {
            key: {
                "median": round(statistics.median(r[key] for r in side), 3),
                "min": min(r[key] for r in side),
                "max": max(r[key] for r in side),
            }
            for key in side[0]
            if key != "statements"
        }
        if "statements" in side[0]:
            queries = {q for r in side for q in r["statements"]}
            medians = {q: round(statistics.median(r["statements"].get(q, 0.0) for r in side), 4) for q in queries}
            figures["statement_ms_per_remember"] = dict(sorted(medians.items(), key=lambda kv: -kv[1]))
        return figures

    lower = {
        key: sum(a[key] < b[key] for a, b in zip(rounds[1], rounds[0], strict=True))
        for key in ("ingest_cpu_ms", "postgres_cpu_ms")
    }
    return {
        "before": {"checkout": str(checkouts[0]), "store": stores[0], "memories": live[0], **summary(rounds[0])},
        "after": {"checkout": str(checkouts[1]), "store": stores[1], "memories": live[1], **summary(rounds[1])},
        "after_lower_in_rounds": lower,
        "rounds": args.rounds,
    }


def sides(checkouts: list[Path], store: int, sizes: str | None) -> tuple[list[Path], list[int]]:
    """The two sides' checkouts and store sizes: two checkouts at ``store``, or one checkout (or two) at each of
    ``sizes`` (``"A,B"``)."""
    if sizes is None:
        if len(checkouts) != 2:
            raise ValueError("give two checkouts: BEFORE AFTER (or one with --sizes A,B)")
        return checkouts, [store, store]
    stores = [int(x) for x in sizes.split(",")]
    if len(stores) != 2 or len(checkouts) not in (1, 2):
        raise ValueError("--sizes takes two sizes, A,B, for one checkout (or two)")
    return (checkouts * 2)[:2], stores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", type=Path, nargs="*", metavar="BEFORE AFTER", help="two checkouts")
    parser.add_argument("--writes", type=int, default=400, help="remembers per round")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per checkout, in turn")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=300, help="remembers before the first round")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for both sides (repeatable)")
    parser.add_argument("--store", type=int, default=0, help="memories bulk-loaded into the tenant first")
    parser.add_argument("--sizes", help="A,B: the store size of each side (one checkout measured at both)")
    parser.add_argument("--no-vacuum", action="store_true", help="no VACUUM ANALYZE after the bulk load")
    parser.add_argument("--statements", action="store_true", help="pg_stat_statements: ms per remember by statement")
    parser.add_argument("--cache", type=Path, help="keep loaded data directories here and reuse them")
    parser.add_argument("--explain", type=Path, help="PREFIX: auto_explain's plans to PREFIX-<store>.log")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(
            serve(args.writers, args.warmup, args.store, not args.no_vacuum, args.statements, args.cache, args.explain)
        )
        return
    try:
        checkouts, stores = sides([p.resolve() for p in args.checkouts], args.store, args.sizes)
    except ValueError as exc:
        parser.error(str(exc))
    result = compare(checkouts, stores, args)
    print(json.dumps({"load_average": [round(x, 1) for x in os.getloadavg()], **result}, indent=1))


if __name__ == "__main__":
    main()
