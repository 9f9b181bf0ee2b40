"""The floor of each part a remember and a recall must cross, on this host: the CPU each costs per operation
when it does nothing else (trivial payloads, many iterations), against issue #17's targets.

Parts (each alone, with 1 client, then with 4 concurrent clients as `latency.py` loads the stack):

- **embed**: the e5 query embedding as recall runs it (`LocalE5Provider.embed_queries`, one query a call, the
  benchmark's eight questions), one OpenMP thread and two; then recall's configured query path
  (`create_query_embedder`: 2 workers × 1 thread, micro-batches, the cache off).
- **http**: uvicorn + FastAPI/Starlette (the pinned versions, httptools as the gateway gets it), one GET route
  answering a constant small JSON; the client is httpx's AsyncClient, as `latency.py` drives the gateway.
- **grpc**: a grpc.aio unary call with a 1-byte message, a grpc.aio server in another process.
- **postgres**: asyncpg, one row inserted into a table with a primary key and one btree index, in a
  transaction (BEGIN, INSERT, COMMIT: three round trips) and, second, as one autocommitted statement;
  ``synchronous_commit`` on; an embedded PostgreSQL started for the run. Also COMMIT's own wall time at 1
  client (the WAL flush).
- **writes**: the rows a remember must write to be acknowledged, on Engram's migrated schema (its own migration
  code), in Engram's own statement (``engram.db.creation.insert``: the memory_items row, whose tsvector column,
  indexes and ``memory_terms`` trigger come with it, its audit row, its pending pipeline stages and its outbox
  row, with the relay's ``pg_notify``, in one statement of CTEs) inside ``tenant_tx`` (BEGIN and the tenant
  setting in one round trip, the statement, COMMIT), as the services' non-owner role, so Row Level Security
  applies. None of remember's reads (the secret policy, the write context, possible_supersedes). Chat-length
  contents of 20 words, each distinct. First one real ``IngestService.remember`` in process: the rows it adds
  to each table are printed (``# rows one remember writes``), and the measured writes copy its item, audit
  value and stages. Second (**writes_owner**), the same as the tables' owner: no Row Level Security.
- **nats**: a JetStream publish awaited for its ack (nats-py, a file-stored stream, a ``Nats-Msg-Id`` header),
  as the outbox relay publishes; an embedded nats-server started for the run.
- **vector**: one HNSW nearest-neighbour query (pgvector, cosine, ``LIMIT 20``, pgvector's default ``ef_search``
  of 40, what recall sets for 10 results; no filter, so no iterative scan) over ``--vectors`` random unit
  vectors of 384 dimensions (harder for HNSW than e5's clustered ones), in the same PostgreSQL.

CPU is user + system time from /proc (psutil) of the client (this process) and of the server's processes
(PostgreSQL: the postmaster and every backend), over each measured interval, per operation. Wall figures are
the machine's, and only meaningful when it is quiet; the load average is printed with each row.

    cd bench && python floors.py [--parts embed,http,grpc,postgres,writes,nats,vector] [--requests 2000] \\
        [--vectors 100000] [--out F.json]

Ports from BENCH_PORT (default 18700) upward. `python floors.py bounds FILE.json` prints the sums and bounds
of a saved run again.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from write_floor import GRPC_SERVER, cpu  # noqa: E402  (a grpc.aio echo server: port, event loop)

CORES = 2
CLIENTS = 4
BASE_PORT = int(os.environ.get("BENCH_PORT", "18700"))

HTTP_SERVER = """
import socket, sys, uvicorn
from fastapi import FastAPI

app = FastAPI()

@app.get("/floor")
async def floor() -> dict[str, object]:
    return {"ok": True, "id": "5b0f6c9e-8f0e-4d55-9d43-3f1c1f0b6a10"}

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen(128)
print("ready", flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
uvicorn.Server(config).run(sockets=[sock])
"""


# ---------------------------------------------------------------------------------------------------------------
# pure arithmetic: sums, the rate two cores allow, the latency bound of a closed loop


def max_rate(cpu_ms_per_op: float, cores: int = CORES) -> float:
    """Operations per second the cores allow when each costs ``cpu_ms_per_op`` of CPU, all of it counted."""
    return cores * 1000.0 / cpu_ms_per_op


def closed_loop_latency_bound(cpu_ms_per_op: float, clients: int = CLIENTS, cores: int = CORES) -> float:
    """The least mean latency (ms) of ``clients`` closed-loop clients when every operation costs
    ``cpu_ms_per_op`` of CPU on ``cores`` busy cores: by Little's law the clients' operations are served at most
    ``cores / cpu`` a millisecond, so each waits ``clients * cpu / cores`` on average. A p95 is at least the mean.
    With fewer clients than cores the bound is one operation's own CPU time."""
    return max(cpu_ms_per_op, clients * cpu_ms_per_op / cores)


def sums(parts: dict[str, float]) -> dict[str, dict[str, float]]:
    """The floor of one remember and one semantic recall from the parts' CPU ms per operation (client + server
    of each, but the HTTP client apart: it is the load generator, which runs on the same cores in
    `latency.py`), with the rate two cores allow and the 4-client latency bound, both with the load generator
    counted. The remember writes the rows its design requires (``writes``, as the services' role under Row Level
    Security); the row beside it keeps the earlier floor, one trivial insert in a transaction (``postgres_tx``).
    Missing parts count 0."""
    get = parts.get
    remember = {
        "http server": get("http_server", 0.0),
        "grpc": get("grpc", 0.0),
        "required writes": get("writes", 0.0),
        "publish": get("nats", 0.0),
    }
    trivial = {
        "http server": get("http_server", 0.0),
        "grpc": get("grpc", 0.0),
        "transaction": get("postgres_tx", 0.0),
        "publish": get("nats", 0.0),
    }
    recall = {
        "http server": get("http_server", 0.0),
        "grpc": get("grpc", 0.0),
        "embedding": get("embed", 0.0),
        "vector query": get("vector", 0.0),
    }
    out = {}
    for name, items in (
        ("remember", remember),
        ("remember, one trivial insert (the earlier floor)", trivial),
        ("semantic recall", recall),
    ):
        stack = sum(items.values())
        total = stack + get("http_client", 0.0)
        out[name] = {
            **{k: round(v, 3) for k, v in items.items()},
            "stack_cpu_ms": round(stack, 3),
            "load_generator_cpu_ms": round(get("http_client", 0.0), 3),
            "total_cpu_ms": round(total, 3),
            "max_per_second_on_2_cores": round(max_rate(total), 1) if total else 0.0,
            "mean_latency_bound_ms_4_clients": round(closed_loop_latency_bound(total), 1),
        }
    return out


# ---------------------------------------------------------------------------------------------------------------
# measuring


def cpu_s(pids: list[int], children: bool = False) -> float:
    """CPU seconds (user + system) of these processes so far, with their children when asked."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            total += cpu(psutil.Process(pid), children)
        except psutil.Error:
            continue
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(
    part: str,
    variant: str,
    call: Callable[[], Awaitable[Any]],
    requests: int,
    clients: int,
    server_pids: list[int],
    server_children: bool = False,
) -> dict[str, Any]:
    """``requests`` calls by ``clients`` concurrent closed-loop clients: CPU ms per call of this process and of
    the servers, wall p50/p95 and the rate."""
    remaining = requests
    walls: list[float] = []

    async def client() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            await call()
            walls.append((time.perf_counter() - started) * 1000)

    me = os.getpid()
    client_before, server_before = cpu_s([me]), cpu_s(server_pids, server_children)
    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    seconds = time.perf_counter() - started
    client_cpu, server_cpu = cpu_s([me]) - client_before, cpu_s(server_pids, server_children) - server_before
    row = {
        "part": part,
        "variant": variant,
        "clients": clients,
        "requests": requests,
        "client_cpu_ms": round(client_cpu / requests * 1000, 3),
        "server_cpu_ms": round(server_cpu / requests * 1000, 3),
        "cpu_ms": round((client_cpu + server_cpu) / requests * 1000, 3),
        "p50_ms": round(statistics.median(walls), 2),
        "p95_ms": round(percentile(walls, 0.95), 2),
        "per_second": round(requests / seconds, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(row), flush=True)
    return row


def start_script(code: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout
    if process.stdout.readline().strip() != "ready":
        process.kill()
        raise RuntimeError("the server did not start")
    return process


def stop_script(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


async def both(
    part: str, variant: str, call: Callable[[], Awaitable[Any]], args: argparse.Namespace, **kw: Any
) -> list:
    for _ in range(args.warm):
        await call()
    rows = []
    for clients in (1, CLIENTS):
        rows.append(await measure(part, variant, call, args.requests, clients, **kw))
    return rows


async def embed(args: argparse.Namespace) -> list[dict[str, Any]]:
    from engram.config import Settings
    from engram.embeddings.provider import LocalE5Provider
    from engram.embeddings.queries import create_query_embedder
    from tests.support.queries import QUERIES

    settings = Settings(query_embedding_cache_size=0)
    rows: list[dict[str, Any]] = []
    n = max(40, args.requests // 25)  # a query costs ~50x an HTTP request
    counter = iter(range(10**9))

    def query() -> str:
        return QUERIES[next(counter) % len(QUERIES)]

    for threads in (1, 2):
        provider = LocalE5Provider(settings.embedding_profile, settings.embedding_dimensions, 1, threads)

        async def one(provider: LocalE5Provider = provider) -> None:
            await provider.embed_queries([query()])

        for _ in range(5):
            await one()
        rows.append(await measure("embed", f"one call at a time, {threads} OpenMP thread(s)", one, n, 1, []))
        await provider.close()
    embedder = create_query_embedder(settings)
    label = (
        f"recall's query path: {settings.query_embedding_workers} workers x {settings.query_embedding_threads} "
        f"thread(s), batches <= {settings.query_embedding_batch_size}, cache off"
    )

    async def configured() -> None:
        await embedder.embed_query(query())

    for _ in range(5):
        await configured()
    for clients in (1, CLIENTS):
        rows.append(await measure("embed", label, configured, n, clients, []))
    await embedder.close()
    return rows


async def http(args: argparse.Namespace) -> list[dict[str, Any]]:
    import httpx

    port = BASE_PORT
    server = start_script(HTTP_SERVER, str(port))
    try:
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=60) as client:

            async def call() -> None:
                response = await client.get("/floor")
                assert response.status_code == 200

            return await both(
                "http", "uvicorn + FastAPI GET, constant JSON; httpx", call, args, server_pids=[server.pid]
            )
    finally:
        stop_script(server)


async def grpc_call(args: argparse.Namespace) -> list[dict[str, Any]]:
    import grpc

    port = BASE_PORT + 1
    server = start_script(GRPC_SERVER, str(port), "asyncio")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary("/bench.Floor/Echo")

            async def call() -> None:
                assert await echo(b"x") == b"x"

            return await both("grpc", "grpc.aio unary, 1-byte message", call, args, server_pids=[server.pid])
    finally:
        stop_script(server)


async def postgres_parts(args: argparse.Namespace, parts: set[str]) -> list[dict[str, Any]]:
    import asyncpg

    from engram.runtime.postgres import EmbeddedPostgres

    data = Path(tempfile.mkdtemp(prefix="floors-pg-", dir="/tmp")) / "pgdata"
    server = EmbeddedPostgres(data, port=BASE_PORT + 2)
    url = server.start()
    rows: list[dict[str, Any]] = []
    try:
        assert server.process is not None
        postmaster = server.process.pid
        pool = await asyncpg.create_pool(url, min_size=CLIENTS, max_size=CLIENTS, reset=_no_reset)
        async with pool.acquire() as conn:
            assert await conn.fetchval("SHOW synchronous_commit") == "on"
        if "postgres" in parts:
            rows += await transactions(args, pool, postmaster)
        if "writes" in parts:
            rows += await required_writes(args, url, postmaster)
        if "vector" in parts:
            rows += await vectors(args, pool, postmaster)
        await pool.close()
    finally:
        server.stop()
        import shutil

        shutil.rmtree(data.parent, ignore_errors=True)
    return rows


async def _no_reset(conn: Any) -> None:
    """As Engram's pools: nothing sent when a connection goes back to the pool."""


async def transactions(args: argparse.Namespace, pool: Any, postmaster: int) -> list[dict[str, Any]]:
    async with pool.acquire() as conn:
        await conn.execute(
            "CREATE TABLE floor (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, content text NOT NULL,"
            " created_at timestamptz NOT NULL DEFAULT now())"
        )
        await conn.execute("CREATE INDEX floor_recent ON floor (tenant_id, created_at)")
    tenant = uuid.uuid4()
    insert = "INSERT INTO floor (id, tenant_id, content) VALUES ($1, $2, $3)"
    content = "a small memory of about the benchmark's length, seventy-odd characters long"
    commits: list[float] = []

    async def tx() -> None:
        async with pool.acquire() as conn:
            await conn.execute("BEGIN")
            await conn.execute(insert, uuid.uuid4(), tenant, content)
            started = time.perf_counter()
            await conn.execute("COMMIT")
            commits.append((time.perf_counter() - started) * 1000)

    async def single() -> None:
        async with pool.acquire() as conn:
            await conn.execute(insert, uuid.uuid4(), tenant, content)

    kw = {"server_pids": [postmaster], "server_children": True}
    rows = []
    for _ in range(args.warm):
        await tx()
    commits.clear()
    rows.append(await measure("postgres_tx", "BEGIN; INSERT (pk + btree); COMMIT", tx, args.requests, 1, **kw))
    rows[-1]["commit_p50_ms"] = round(statistics.median(commits), 3)
    rows[-1]["commit_p95_ms"] = round(percentile(commits, 0.95), 3)
    rows.append(await measure("postgres_tx", "BEGIN; INSERT (pk + btree); COMMIT", tx, args.requests, CLIENTS, **kw))
    rows += await both("postgres_single", "one autocommitted INSERT (pk + btree)", single, args, **kw)
    return rows


CHAT = [
    "{name} told me in the {place} standup that {thing} has to be checked again before Friday's release.",
    "Please remember that {name} usually asks for {thing} whenever the team meets in {place} on Monday mornings.",
    "Last week {name} complained that {thing} in {place} was slow again, so we agreed to look next sprint.",
    "{name} mentioned over lunch in {place} that {thing} should stay out of the budget review until March.",
    "According to {name}, the people in {place} rely on {thing} every day and would notice any outage quickly.",
    "When {name} travels to {place} next month, make sure {thing} is ready before the first customer meeting.",
]
"""Chat-length contents (~20 words once filled), as a user tells an assistant something worth keeping."""


def chat_texts(seed: int = 17) -> Iterator[str]:
    """Distinct chat-length contents without end: a template filled at random, numbered."""
    from latency import NAMES, PLACES, THINGS

    rng = random.Random(seed)
    for i in itertools.count():
        template = rng.choice(CHAT)
        yield template.format(name=rng.choice(NAMES), thing=rng.choice(THINGS), place=rng.choice(PLACES)) + f" #{i}"


async def table_rows(conn: Any) -> dict[str, int]:
    """Rows of every table of the public schema (as the superuser: no Row Level Security)."""
    names = [r[0] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    return {name: int(await conn.fetchval(f'SELECT count(*) FROM "{name}"')) for name in sorted(names)}


STATS_FLUSH_S = 11.0
"""An idle backend's table statistics reach the shared ones within 10 s (PostgreSQL's ``PGSTAT_IDLE_INTERVAL``)."""


async def tuple_changes(conn: Any) -> dict[str, tuple[int, int, int]]:
    """Rows inserted, updated and deleted so far in each table, from the statistics (``STATS_FLUSH_S`` late)."""
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    rows = await conn.fetch("SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables")
    return {r["relname"]: (r["n_tup_ins"], r["n_tup_upd"], r["n_tup_del"]) for r in rows}


async def required_writes(args: argparse.Namespace, url: str, postmaster: int) -> list[dict[str, Any]]:
    """The rows a remember must write, as Engram writes them, measured as the services' role (RLS) and as owner."""
    import asyncpg

    from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
    from engram.db import creation
    from engram.db.items import NewItem
    from engram.db.migrate import migrate
    from engram.db.pool import create_pool, tenant_tx
    from engram.domain.content import content_hash
    from engram.domain.models import CallerContext
    from engram.events.outbox import Outbox
    from services.ingest.service import IngestService, RememberCommand, created_event

    settings = Settings(database_url=url)
    await migrate(url, settings)
    admin = await asyncpg.connect(url)  # the superuser that migrated: owner of the tables, above RLS
    pools = []
    try:
        app = await create_pool(url, role=settings.app_role, min_size=CLIENTS, max_size=CLIENTS)
        pools.append(app)
        ctx = CallerContext(
            tenant_id=DEFAULT_TENANT_ID,
            principal_id=DEFAULT_ADMIN_ID,
            principal_type="admin",
            scopes=frozenset({"admin"}),
            request_id="floors",
            traceparent="00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        )
        texts = chat_texts()
        service = IngestService(app, settings)
        await service.remember(ctx, RememberCommand(content=next(texts)))  # the first write of the tenant: warm
        await asyncio.sleep(STATS_FLUSH_S)
        before, changes_before = await table_rows(admin), await tuple_changes(admin)
        first = (await service.remember(ctx, RememberCommand(content=next(texts)))).item
        await asyncio.sleep(STATS_FLUSH_S)
        after, changes_after = await table_rows(admin), await tuple_changes(admin)
        added = {name: after[name] - before[name] for name in after if after[name] != before[name]}
        changed = {
            name: [a - b for a, b in zip(changes_after[name], changes_before.get(name, (0, 0, 0)), strict=True)]
            for name in changes_after
            if changes_after[name] != changes_before.get(name)
        }
        print(f"# rows one remember writes (IngestService.remember in process): {json.dumps(added)}", flush=True)
        print(f"# inserted, updated, deleted by it (pg_stat_user_tables): {json.dumps(changed)}", flush=True)
        stages = [r[0] for r in await admin.fetch("SELECT stage FROM item_stages WHERE item_id = $1", first.id)]
        audit = json.loads(await admin.fetchval("SELECT new_value FROM item_events WHERE item_id = $1", first.id))
        context = await admin.fetchval("SELECT index_context FROM memory_items WHERE id = $1", first.id)
        outbox = Outbox(settings.events_subject_prefix)

        def new_item(content: str) -> NewItem:
            return NewItem(
                id=uuid.uuid4(),
                tenant_id=ctx.tenant_id,
                workspace_id=str(first.workspace_id),
                principal_id=ctx.principal_id,
                content=content,
                content_hash=content_hash(content),
                kind=first.kind,
                importance=first.importance,
                review_status=first.review_status,
                authority=first.authority,
                source_type=first.source_type,
                source_trust=first.source_trust,
                subject=first.subject,
                wing=first.wing,
                room=first.room,
                tags=list(first.tags),
                pinned=first.pinned,
                visibility=first.visibility,
                source_uri=first.source_uri,
                source_session=first.source_session,
                valid_from=first.valid_from,
                valid_to=first.valid_to,
                expires_at=first.expires_at,
                external_id=first.external_id,
                metadata=dict(first.metadata),
                kind_explicit=first.kind_explicit,
                index_context=context,
            )

        def writer(pool: Any) -> Callable[[], Awaitable[None]]:
            async def write() -> None:
                new = new_item(next(texts))
                event = created_event(new, datetime.now(UTC), ctx.traceparent)
                async with tenant_tx(pool, ctx.tenant_id) as conn:
                    stored = await creation.insert(
                        conn,
                        new,
                        actor_id=ctx.principal_id,
                        audit_value=audit,
                        request_id=ctx.request_id,
                        stages=stages,
                        event_id=event.id,
                        subject=outbox.subject(event),
                        envelope=event.to_json(),
                    )
                assert stored is not None

            return write

        kw = {"server_pids": [postmaster], "server_children": True}
        shape = f"item + audit + {len(stages)} stages + outbox in one statement, in tenant_tx"
        rows = await both("writes", f"{shape}, as {settings.app_role} (RLS)", writer(app), args, **kw)
        owner = await create_pool(url, role=None, min_size=CLIENTS, max_size=CLIENTS)
        pools.append(owner)
        rows += await both("writes_owner", f"{shape}, as the owner (no RLS)", writer(owner), args, **kw)
        items, terms = (
            await admin.fetchval("SELECT count(*) FROM memory_items"),
            await admin.fetchval("SELECT count(*) FROM memory_terms"),
        )
        words = statistics.fmean(len(r[0].split()) for r in await admin.fetch("SELECT content FROM memory_items"))
        print(f"# {items} memories: {words:.1f} words and {terms / items:.1f} memory_terms rows each", flush=True)
        return rows
    finally:
        for pool in pools:
            await pool.close()
        await admin.close()


async def vectors(args: argparse.Namespace, pool: Any, postmaster: int) -> list[dict[str, Any]]:
    import numpy as np
    from pgvector.asyncpg import register_vector

    dims = 384
    rng = np.random.default_rng(17)
    started = time.perf_counter()
    async with pool.acquire() as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await register_vector(conn)
        await conn.execute(f"CREATE TABLE floor_vectors (id bigint PRIMARY KEY, embedding vector({dims}) NOT NULL)")
        step = 10_000
        for first in range(0, args.vectors, step):
            block = rng.standard_normal((min(step, args.vectors - first), dims)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            await conn.copy_records_to_table(
                "floor_vectors", records=[(first + i, v) for i, v in enumerate(block)], columns=["id", "embedding"]
            )
        await conn.execute("SET maintenance_work_mem = '512MB'")
        await conn.execute("CREATE INDEX ON floor_vectors USING hnsw (embedding vector_cosine_ops)")
        await conn.execute("ANALYZE floor_vectors")
    print(f"# {args.vectors} vectors loaded and indexed in {time.perf_counter() - started:.0f} s", flush=True)
    queries = rng.standard_normal((64, dims)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    counter = iter(range(10**9))
    for conn in [await pool.acquire() for _ in range(CLIENTS)]:  # register the codec on every pooled connection
        await register_vector(conn)
        await pool.release(conn)

    async def query() -> None:
        vector = queries[next(counter) % len(queries)]
        async with pool.acquire() as conn:
            found = await conn.fetch(
                "SELECT id, embedding <=> $1 AS distance FROM floor_vectors ORDER BY embedding <=> $1 LIMIT 20", vector
            )
            assert len(found) == 20

    async with pool.acquire() as conn:
        plan = "\n".join(
            r[0]
            for r in await conn.fetch(
                "EXPLAIN SELECT id FROM floor_vectors ORDER BY embedding <=> $1 LIMIT 20", queries[0]
            )
        )
    assert "hnsw" in plan.lower() or "floor_vectors_embedding_idx" in plan, plan
    n = max(200, args.requests // 5)
    for _ in range(args.warm):
        await query()
    rows = []
    for clients in (1, CLIENTS):
        rows.append(
            await measure(
                "vector",
                f"HNSW cosine LIMIT 20, ef_search 40, {args.vectors} random unit vectors",
                query,
                n,
                clients,
                server_pids=[postmaster],
                server_children=True,
            )
        )
    return rows


async def nats_publish(args: argparse.Namespace) -> list[dict[str, Any]]:
    import nats
    from nats.js.api import RetentionPolicy, StorageType, StreamConfig

    from engram.runtime.nats import EmbeddedNats

    store = Path(tempfile.mkdtemp(prefix="floors-nats-", dir="/tmp")) / "js"
    server = EmbeddedNats(store, port=BASE_PORT + 3, monitor_port=BASE_PORT + 4)
    server.start()
    try:
        assert server.process is not None
        client = await nats.connect(server.url)
        js = client.jetstream()
        await js.add_stream(
            StreamConfig(
                name="FLOOR",
                subjects=["floor.>"],
                retention=RetentionPolicy.LIMITS,
                storage=StorageType.FILE,
                duplicate_window=120.0,
            )
        )
        envelope = json.dumps({"specversion": "1.0", "type": "memory.created", "id": "x" * 36}).encode()

        async def publish() -> None:
            await js.publish("floor.created", envelope, headers={"Nats-Msg-Id": uuid.uuid4().hex}, timeout=5.0)

        try:
            return await both(
                "nats", "JetStream publish + ack, file stream", publish, args, server_pids=[server.process.pid]
            )
        finally:
            await client.close()
    finally:
        server.stop()
        import shutil

        shutil.rmtree(store.parent, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------------


def floors_of(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Each part's floor: the least CPU ms per operation (client + server) over its rows (variants, 1 or 4
    clients); for HTTP the server's and the client's CPU of its cheapest row apart (``http_server``,
    ``http_client``)."""
    cheapest: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["part"] not in cheapest or row["cpu_ms"] < cheapest[row["part"]]["cpu_ms"]:
            cheapest[row["part"]] = row
    out = {part: float(row["cpu_ms"]) for part, row in cheapest.items() if part != "http"}
    if "http" in cheapest:
        out["http_server"] = float(cheapest["http"]["server_cpu_ms"])
        out["http_client"] = float(cheapest["http"]["client_cpu_ms"])
    return out


def print_bounds(rows: list[dict[str, Any]]) -> dict[str, Any]:
    floors = floors_of(rows)
    result = {"floors_cpu_ms": floors, "sums": sums(floors)}
    print(json.dumps(result, indent=2))
    return result


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    parts = set(args.parts.split(","))
    rows: list[dict[str, Any]] = []
    if "embed" in parts:
        rows += await embed(args)
    if "http" in parts:
        rows += await http(args)
    if "grpc" in parts:
        rows += await grpc_call(args)
    if parts & {"postgres", "writes", "vector"}:
        rows += await postgres_parts(args, parts)
    if "nats" in parts:
        rows += await nats_publish(args)
    return rows


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "bounds":
        print_bounds(json.loads(Path(sys.argv[2]).read_text())["rows"])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="embed,http,grpc,postgres,writes,nats,vector")
    parser.add_argument("--requests", type=int, default=2000, help="operations per part and client count")
    parser.add_argument("--warm", type=int, default=50)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--out", type=Path, help="write the rows and the sums as JSON here")
    args = parser.parse_args()
    import platform

    print(f"# {platform.node()} {os.cpu_count()} cpus, load {os.getloadavg()}, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    rows = asyncio.run(run(args))
    result = print_bounds(rows)
    if args.out:
        args.out.write_text(json.dumps({"load_average": os.getloadavg(), "rows": rows, **result}, indent=2) + "\n")


if __name__ == "__main__":
    main()
